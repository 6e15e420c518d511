package dev.idempotency.web.atomic;

import dev.idempotency.test.servers.JdbcTestDatabase;

/** Atomic completion of the HTTP door on MariaDB. */
class MariaDbAtomicCompletionOverHttpTests extends AbstractAtomicCompletionOverHttpTests {

	@Override
	protected JdbcTestDatabase database() {
		return JdbcTestDatabase.mariadb();
	}

}
