package dev.idempotency.resilience;

import java.sql.SQLException;

import dev.idempotency.test.servers.JdbcTestDatabase;

/** {@link JdbcStoreOutageTests} on the shared PostgreSQL, in a schema of its own. */
class PostgresJdbcStoreOutageTests extends JdbcStoreOutageTests {

	@Override
	protected JdbcTestDatabase createDatabase() throws SQLException {
		return JdbcTestDatabase.postgres().create();
	}

}
