package dev.idempotency.sample.catalog;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The JDBC store on the shared PostgreSQL server (127.0.0.1:5432), in a schema of this
 * run's own that the test drops at the end; the catalog itself stays on H2.
 */
class PostgresStoreEndToEndTests extends SharedStoreEndToEndTests {

	private static final String ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private static final String SCHEMA = "idem_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		execute("CREATE SCHEMA " + SCHEMA);
		registry.add("idempotency.store.type", () -> "jdbc");
		registry.add("idempotency.store.jdbc.url", () -> ADMIN_URL + "?currentSchema=" + SCHEMA);
		registry.add("idempotency.store.jdbc.username", () -> "postgres");
		registry.add("idempotency.store.jdbc.initialize-schema", () -> "always");
	}

	@AfterAll
	static void dropSchema() throws SQLException {
		execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
	}

	@Override
	String expectedStore() {
		return "jdbc";
	}

	@Override
	long recordsInServer() {
		try (Connection connection = DriverManager.getConnection(ADMIN_URL, "postgres", "");
				Statement statement = connection.createStatement();
				ResultSet count = statement.executeQuery("SELECT count(*) FROM " + SCHEMA + ".idempotency_record")) {
			count.next();
			return count.getLong(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void execute(String sql) throws SQLException {
		try (Connection connection = DriverManager.getConnection(ADMIN_URL, "postgres", "");
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

}
