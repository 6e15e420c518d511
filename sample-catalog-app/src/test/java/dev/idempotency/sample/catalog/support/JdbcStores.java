package dev.idempotency.sample.catalog.support;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import dev.idempotency.test.servers.JdbcTestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The sample's configuration on a shared database server: the Iceberg catalog and the
 * JDBC idempotency store on the application's one {@code DataSource}, in a database of
 * one test context's own (created here, dropped by the test class), so that a Spring
 * transaction on that {@code DataSource} holds catalog rows and idempotency records
 * alike. A database, not a PostgreSQL schema: Iceberg's {@code JdbcCatalog} looks for its
 * tables in every schema of the database when it starts
 * ({@code DatabaseMetaData.getTables(null, null, "iceberg_tables", null)}). On MariaDB
 * the same look-up covers every database of the server unless the URL says
 * {@link #MARIADB_CURRENT_DATABASE_ONLY}: without it, a catalog started while another
 * test's database held an {@code iceberg_tables} found that one, did not create its own,
 * and failed on its first query ("Table 'idem_….iceberg_tables' doesn't exist").
 */
public final class JdbcStores {

	/**
	 * MariaDB Connector/J's option that makes a {@code null} catalog in
	 * {@code DatabaseMetaData} look-ups mean the connection's database, not every
	 * database of the server.
	 */
	public static final String MARIADB_CURRENT_DATABASE_ONLY = "nullDatabaseMeansCurrent=true";

	/** Set by Spring Boot while it processes the test contexts ahead of time. */
	private static final String AOT_PROCESSING = "spring.aot.processing";

	private JdbcStores() {
	}

	/** Points catalog and store at a fresh database on 127.0.0.1:5432. */
	public static Store postgres(DynamicPropertyRegistry registry) throws SQLException {
		return use(new Store(JdbcTestDatabase.postgresDatabase()), registry);
	}

	/** Points catalog and store at a fresh database on 127.0.0.1:3306. */
	public static Store mariadb(DynamicPropertyRegistry registry) throws SQLException {
		return use(new Store(JdbcTestDatabase.mariadb()), "?" + MARIADB_CURRENT_DATABASE_ONLY, registry);
	}

	private static Store use(Store store, DynamicPropertyRegistry registry) throws SQLException {
		return use(store, "", registry);
	}

	private static Store use(Store store, String urlOptions, DynamicPropertyRegistry registry) throws SQLException {
		// Build-time AOT processing (process-test-aot) only prepares the context's bean
		// definitions and never connects: a database made then would be left behind. The
		// tests, run later with spring.aot.enabled=true, call this again and create
		// theirs.
		if (!Boolean.getBoolean(AOT_PROCESSING)) {
			store.database.create();
		}
		registry.add("spring.datasource.url", () -> store.database.url() + urlOptions);
		registry.add("spring.datasource.username", store.database::user);
		registry.add("spring.datasource.password", () -> "");
		registry.add("idempotency.store.type", () -> "jdbc");
		registry.add("idempotency.store.jdbc.initialize-schema", () -> "always");
		return store;
	}

	/**
	 * The database of one context's catalog and store.
	 *
	 * @param database what was created for it
	 */
	public record Store(JdbcTestDatabase database) {

		/** How many records the store wrote. */
		public long records() {
			try (Connection connection = DriverManager.getConnection(this.database.url(), this.database.user(), "");
					Statement statement = connection.createStatement();
					ResultSet count = statement.executeQuery("SELECT count(*) FROM idempotency_record")) {
				count.next();
				return count.getLong(1);
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/** Drops the database. */
		public void drop() throws SQLException {
			this.database.drop();
		}

	}

}
