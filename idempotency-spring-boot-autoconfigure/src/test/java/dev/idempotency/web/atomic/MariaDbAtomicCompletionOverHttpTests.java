package dev.idempotency.web.atomic;

import dev.idempotency.store.jdbc.JdbcTestDatabase;

/** Atomic completion of the HTTP door on MariaDB. */
class MariaDbAtomicCompletionOverHttpTests extends AbstractAtomicCompletionOverHttpTests {

	@Override
	protected JdbcTestDatabase database() {
		return JdbcTestDatabase.mariadb();
	}

}
