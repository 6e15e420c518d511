package dev.idempotency.test.servers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A database of its own for one test class, on the shared servers of the machine
 * (PostgreSQL: a schema, MariaDB: a database) or in H2's memory. {@link #drop()} removes
 * only what {@link #create} made. The servers are expected to be up (CI runs
 * {@code /work/shared/ci/services.sh postgres mariadb}); a test fails when they are not.
 */
public abstract class JdbcTestDatabase {

	private final String name = "idem_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);

	/** The name of the schema or database made for this run. */
	public String name() {
		return this.name;
	}

	/** Creates the schema or database. */
	public abstract JdbcTestDatabase create() throws SQLException;

	/**
	 * A pool on the created schema or database; {@code initSql} runs on every new
	 * connection.
	 */
	public HikariDataSource dataSource(int maxConnections, String initSql) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url());
		config.setUsername(username());
		config.setPassword(password());
		config.setMaximumPoolSize(maxConnections);
		config.setConnectionTimeout(30_000);
		config.setPoolName(this.name);
		if (initSql != null) {
			config.setConnectionInitSql(initSql);
		}
		return new HikariDataSource(config);
	}

	/** A pool on the created schema or database. */
	public HikariDataSource dataSource(int maxConnections) {
		return dataSource(maxConnections, null);
	}

	/** Drops what {@link #create} made. */
	public abstract void drop() throws SQLException;

	/** The JDBC URL of the created schema or database. */
	public abstract String url();

	/**
	 * Makes this schema or database the application's {@code DataSource} (a pool of 4)
	 * and the JDBC store's, the table made by the starter's changelog.
	 */
	public void registerAsApplicationStore(DynamicPropertyRegistry registry) {
		registry.add("idempotency.store.type", () -> "jdbc");
		registry.add("idempotency.store.jdbc.initialize-schema", () -> "always");
		registry.add("spring.datasource.url", this::url);
		registry.add("spring.datasource.username", this::user);
		registry.add("spring.datasource.hikari.maximum-pool-size", () -> "4");
	}

	/** The user of {@link #url()}. */
	public String user() {
		return username();
	}

	protected String username() {
		return null;
	}

	protected String password() {
		return null;
	}

	protected static void execute(String url, String user, String sql) throws SQLException {
		try (Connection connection = DriverManager.getConnection(url, user, "");
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	public static JdbcTestDatabase postgres() {
		return new JdbcTestDatabase() {

			private static final String ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/test";

			@Override
			public JdbcTestDatabase create() throws SQLException {
				execute(ADMIN_URL, "postgres", "CREATE SCHEMA " + name());
				return this;
			}

			@Override
			public void drop() throws SQLException {
				execute(ADMIN_URL, "postgres", "DROP SCHEMA IF EXISTS " + name() + " CASCADE");
			}

			@Override
			public String url() {
				return ADMIN_URL + "?currentSchema=" + name();
			}

			@Override
			protected String username() {
				return "postgres";
			}

		};
	}

	public static JdbcTestDatabase mariadb() {
		return new JdbcTestDatabase() {

			private static final String ADMIN_URL = "jdbc:mariadb://127.0.0.1:3306/test";

			@Override
			public JdbcTestDatabase create() throws SQLException {
				execute(ADMIN_URL, "root", "CREATE DATABASE " + name());
				return this;
			}

			@Override
			public void drop() throws SQLException {
				execute(ADMIN_URL, "root", "DROP DATABASE IF EXISTS " + name());
			}

			@Override
			public String url() {
				return "jdbc:mariadb://127.0.0.1:3306/" + name();
			}

			@Override
			protected String username() {
				return "root";
			}

			@Override
			protected String password() {
				return "";
			}

		};
	}

	public static JdbcTestDatabase h2() {
		return new JdbcTestDatabase() {

			@Override
			public JdbcTestDatabase create() {
				return this;
			}

			@Override
			public void drop() throws SQLException {
				execute(url(), "sa", "SHUTDOWN");
			}

			@Override
			public String url() {
				return "jdbc:h2:mem:" + name().toLowerCase(Locale.ROOT) + ";DB_CLOSE_DELAY=-1";
			}

			@Override
			protected String username() {
				return "sa";
			}

			@Override
			protected String password() {
				return "";
			}

		};
	}

}
