package dev.idempotency.test.servers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import java.util.function.IntFunction;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A database of its own for one test class, on the shared servers of the machine
 * (PostgreSQL: a schema, or a whole database where the application looks across schemas;
 * MariaDB: a database) or in H2's memory. {@link #drop()} removes only what
 * {@link #create} made. The servers are expected to be up (CI runs
 * {@code /work/shared/ci/services.sh postgres mariadb}); a test fails when they are not.
 */
public final class JdbcTestDatabase {

	private static final int POSTGRES_PORT = 5432;

	private static final String POSTGRES_ADMIN_URL = postgresUrl(POSTGRES_PORT, "test");

	private static final int MARIADB_PORT = 3306;

	private static final String MARIADB_ADMIN_URL = mariadbUrl(MARIADB_PORT, "test");

	/** The port of a database without a server (H2 in memory). */
	private static final int NO_SERVER = 0;

	private final String name;

	private final String user;

	private final String password;

	private final int port;

	/** Where {@link #create} and {@link #drop} run their statement. */
	private final String adminUrl;

	/** {@code null}: nothing to create (H2 makes the database on first connection). */
	private final String createSql;

	private final String dropSql;

	private final IntFunction<String> urlThroughPort;

	private JdbcTestDatabase(String name, String user, String password, int port, String adminUrl, String createSql,
			String dropSql, IntFunction<String> urlThroughPort) {
		this.name = name;
		this.user = user;
		this.password = password;
		this.port = port;
		this.adminUrl = adminUrl;
		this.createSql = createSql;
		this.dropSql = dropSql;
		this.urlThroughPort = urlThroughPort;
	}

	private static String randomName() {
		return "idem_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
	}

	/** A schema of its own in PostgreSQL's database {@code test}. */
	public static JdbcTestDatabase postgres() {
		String name = randomName();
		return new JdbcTestDatabase(name, "postgres", "", POSTGRES_PORT, POSTGRES_ADMIN_URL, "CREATE SCHEMA " + name,
				"DROP SCHEMA IF EXISTS " + name + " CASCADE",
				(port) -> postgresUrl(port, "test") + "?currentSchema=" + name);
	}

	/**
	 * A PostgreSQL database of its own, for an application that looks for its tables in
	 * every schema of its database (Iceberg's {@code JdbcCatalog} does). Dropped with
	 * {@code FORCE}: sessions still open (a pool not yet closed, a killed node's) end.
	 */
	public static JdbcTestDatabase postgresDatabase() {
		return postgresDatabase(randomName());
	}

	/**
	 * As {@link #postgresDatabase()}, named {@code name} (lower case letters, digits and
	 * {@code _}), which must be the caller's own.
	 */
	public static JdbcTestDatabase postgresDatabase(String name) {
		return new JdbcTestDatabase(name, "postgres", "", POSTGRES_PORT, POSTGRES_ADMIN_URL, "CREATE DATABASE " + name,
				"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", (port) -> postgresUrl(port, name));
	}

	/** A MariaDB database of its own. */
	public static JdbcTestDatabase mariadb() {
		return mariadb(randomName());
	}

	/**
	 * As {@link #mariadb()}, named {@code name} (lower case letters, digits and
	 * {@code _}), which must be the caller's own.
	 */
	public static JdbcTestDatabase mariadb(String name) {
		return new JdbcTestDatabase(name, "root", "", MARIADB_PORT, MARIADB_ADMIN_URL, "CREATE DATABASE " + name,
				"DROP DATABASE IF EXISTS " + name, (port) -> mariadbUrl(port, name));
	}

	/** A database in H2's memory, gone with {@link #drop()}. */
	public static JdbcTestDatabase h2() {
		String name = randomName();
		String url = "jdbc:h2:mem:" + name.toLowerCase(Locale.ROOT) + ";DB_CLOSE_DELAY=-1";
		return new JdbcTestDatabase(name, "sa", "", NO_SERVER, url, null, "SHUTDOWN", (port) -> url);
	}

	private static String postgresUrl(int port, String database) {
		return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
	}

	private static String mariadbUrl(int port, String database) {
		return "jdbc:mariadb://127.0.0.1:" + port + "/" + database;
	}

	/** The name of the schema or database made for this run. */
	public String name() {
		return this.name;
	}

	/** Creates the schema or database. */
	public JdbcTestDatabase create() throws SQLException {
		if (this.createSql != null) {
			execute(this.createSql);
		}
		return this;
	}

	/** Drops what {@link #create} made. */
	public void drop() throws SQLException {
		execute(this.dropSql);
	}

	private void execute(String sql) throws SQLException {
		try (Connection connection = DriverManager.getConnection(this.adminUrl, this.user, this.password);
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	/** The JDBC URL of the created schema or database. */
	public String url() {
		return this.urlThroughPort.apply(this.port);
	}

	/**
	 * The JDBC URL of the created schema or database reached through a link (a TCP proxy)
	 * listening on {@code port} of 127.0.0.1 that forwards to the server.
	 * @throws UnsupportedOperationException for H2 in memory, which has no server
	 */
	public String url(int port) {
		if (this.port == NO_SERVER) {
			throw new UnsupportedOperationException("no server to reach through a link: " + url());
		}
		return this.urlThroughPort.apply(port);
	}

	/**
	 * The server's port on 127.0.0.1, which a link forwards to.
	 * @throws UnsupportedOperationException for H2 in memory, which has no server
	 */
	public int port() {
		if (this.port == NO_SERVER) {
			throw new UnsupportedOperationException("no server to reach: " + url());
		}
		return this.port;
	}

	/**
	 * The R2DBC URL of the created schema or database, without its user
	 * ({@link #user()}): PostgreSQL's schema as the driver's {@code schema} option, H2's
	 * in-memory database by name (the same database as {@link #url()} in this JVM).
	 */
	public String r2dbcUrl() {
		String url = url();
		if (url.startsWith("jdbc:h2:mem:")) {
			return "r2dbc:h2:mem:///" + url.substring("jdbc:h2:mem:".length(), url.indexOf(';'));
		}
		return r2dbc(url);
	}

	/**
	 * The R2DBC URL of the created schema or database reached through a link listening on
	 * {@code port} of 127.0.0.1 ({@link #url(int)}).
	 * @throws UnsupportedOperationException for H2 in memory, which has no server
	 */
	public String r2dbcUrl(int port) {
		return r2dbc(url(port));
	}

	private static String r2dbc(String jdbcUrl) {
		return jdbcUrl.replace("jdbc:", "r2dbc:").replace("?currentSchema=", "?schema=");
	}

	/** The user of {@link #url()}. */
	public String user() {
		return this.user;
	}

	/**
	 * A pool on the created schema or database; {@code initSql} runs on every new
	 * connection.
	 */
	public HikariDataSource dataSource(int maxConnections, String initSql) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url());
		config.setUsername(this.user);
		config.setPassword(this.password);
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

}
