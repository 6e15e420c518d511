package dev.idempotency.resilience;

import java.sql.SQLException;

import dev.idempotency.test.servers.JdbcTestDatabase;

/** {@link JdbcStoreOutageTests} on the shared MariaDB, in a database of its own. */
class MariaDbJdbcStoreOutageTests extends JdbcStoreOutageTests {

	@Override
	protected JdbcTestDatabase createDatabase() throws SQLException {
		return JdbcTestDatabase.mariadb().create();
	}

}
