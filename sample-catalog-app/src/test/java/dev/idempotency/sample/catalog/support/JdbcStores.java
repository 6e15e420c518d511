package dev.idempotency.sample.catalog.support;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import dev.idempotency.store.jdbc.JdbcTestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The JDBC idempotency store on a shared server, in a PostgreSQL schema or a MariaDB
 * database of one test context's own ({@link JdbcTestDatabase}: created here, dropped by
 * the test class); the catalog itself stays on H2.
 */
public final class JdbcStores {

	private JdbcStores() {
	}

	/** Points the store at a fresh schema on 127.0.0.1:5432. */
	public static Store postgres(DynamicPropertyRegistry registry) throws SQLException {
		return use(new Store(JdbcTestDatabase.postgres(), "postgres"), registry);
	}

	/** Points the store at a fresh database on 127.0.0.1:3306. */
	public static Store mariadb(DynamicPropertyRegistry registry) throws SQLException {
		return use(new Store(JdbcTestDatabase.mariadb(), "root"), registry);
	}

	private static Store use(Store store, DynamicPropertyRegistry registry) throws SQLException {
		store.database.create();
		registry.add("idempotency.store.type", () -> "jdbc");
		registry.add("idempotency.store.jdbc.url", store.database::url);
		registry.add("idempotency.store.jdbc.username", () -> store.user);
		registry.add("idempotency.store.jdbc.initialize-schema", () -> "always");
		return store;
	}

	/**
	 * The schema or database of one context's store.
	 *
	 * @param database what was created for it
	 * @param user the server's user
	 */
	public record Store(JdbcTestDatabase database, String user) {

		/** How many records the store wrote. */
		public long records() {
			try (Connection connection = DriverManager.getConnection(this.database.url(), this.user, "");
					Statement statement = connection.createStatement();
					ResultSet count = statement.executeQuery("SELECT count(*) FROM idempotency_record")) {
				count.next();
				return count.getLong(1);
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/** Drops the schema or database. */
		public void drop() throws SQLException {
			this.database.drop();
		}

	}

}
