package dev.idempotency.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import liquibase.Scope;
import liquibase.changelog.FastCheckService;
import liquibase.database.Database;
import liquibase.database.jvm.JdbcConnection;
import liquibase.exception.DatabaseException;
import liquibase.integration.spring.SpringLiquibase;
import liquibase.resource.ResourceAccessor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.context.ResourceLoaderAware;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.ResourceLoader;

/**
 * Creates the idempotency table with the starter's Liquibase changelog, before the store
 * is used. Liquibase records what it applied in tables of its own
 * ({@value #CHANGELOG_TABLE}, {@value #CHANGELOG_LOCK_TABLE}), so this runs beside an
 * application's own changelog without touching it. Running it again applies nothing.
 * <p>
 * A database that cannot be reached at start-up does not stop the application: the
 * changelog is then applied in the background once it answers (see {@link #isPending()}),
 * and until then the store answers as unavailable.
 * <p>
 * This deliberately is not a {@link SpringLiquibase} bean: Boot's Liquibase
 * auto-configuration backs off when one exists, and would then skip the application's own
 * changelog.
 */
class IdempotencyJdbcSchemaInitializer implements InitializingBean, ResourceLoaderAware {

	/** The changelog shipped in the starter's jar. */
	static final String CHANGELOG = "classpath:db/idempotency/changelog-master.yaml";

	/** Liquibase's record of applied change sets for this changelog. */
	static final String CHANGELOG_TABLE = "IDEMPOTENCY_DATABASECHANGELOG";

	/** Liquibase's lock for this changelog. */
	static final String CHANGELOG_LOCK_TABLE = "IDEMPOTENCY_DATABASECHANGELOGLOCK";

	/** The changelog parameter that names the table. */
	static final String TABLE_NAME_PARAMETER = "idempotency.table-name";

	private static final Log logger = LogFactory.getLog(IdempotencyJdbcSchemaInitializer.class);

	private final DataSource dataSource;

	/** Whether the changelog is still to be applied, because the database was down. */
	private volatile boolean pending;

	/** Whether a background attempt is running. */
	private final AtomicBoolean attempting = new AtomicBoolean();

	private final String tableName;

	private final DatabaseInitializationMode mode;

	private ResourceLoader resourceLoader = new DefaultResourceLoader(getClass().getClassLoader());

	IdempotencyJdbcSchemaInitializer(DataSource dataSource, String tableName, DatabaseInitializationMode mode) {
		this.dataSource = dataSource;
		this.tableName = JdbcIdempotencyDialect.validateTableName(tableName);
		this.mode = mode;
	}

	@Override
	public void setResourceLoader(ResourceLoader resourceLoader) {
		this.resourceLoader = resourceLoader;
	}

	@Override
	public void afterPropertiesSet() throws Exception {
		if (this.mode != DatabaseInitializationMode.NEVER && !reachable()) {
			this.pending = true;
			logger.warn("The idempotency store's database cannot be reached: its table '" + this.tableName
					+ "' will be set up in the background once it answers; until then keyed requests are"
					+ " answered as for an unavailable store");
			return;
		}
		initializeSchema();
	}

	/**
	 * Whether schema set-up still waits for a database that could not be reached at
	 * start-up.
	 */
	boolean isPending() {
		return this.pending;
	}

	/**
	 * Starts one background attempt to apply the changelog, unless one is running or
	 * nothing is pending. The attempt clears {@link #isPending()} when it succeeds.
	 */
	void initializeInBackground() {
		if (!this.pending || !this.attempting.compareAndSet(false, true)) {
			return;
		}
		Thread attempt = new Thread(() -> {
			try {
				if (this.pending && reachable()) {
					initializeSchema();
					this.pending = false;
					logger.info("The idempotency store's database answers: table '" + this.tableName + "' is set up");
				}
			}
			catch (Exception ex) {
				logger.warn("Setting up the idempotency table '" + this.tableName + "' failed; retried on the next"
						+ " store call", ex);
			}
			finally {
				this.attempting.set(false);
			}
		}, "idempotency-schema-initializer");
		attempt.setDaemon(true);
		attempt.start();
	}

	private boolean reachable() {
		try (Connection connection = this.dataSource.getConnection()) {
			return true;
		}
		catch (SQLException ex) {
			return false;
		}
	}

	/**
	 * Applies the changelog if the mode says so for this database.
	 * @return whether the changelog was run
	 * @throws liquibase.exception.LiquibaseException if Liquibase fails
	 */
	boolean initializeSchema() throws Exception {
		if (!isEnabled()) {
			return false;
		}
		SpringLiquibase liquibase = new SpringLiquibase() {

			@Override
			protected Database createDatabase(Connection connection, ResourceAccessor resourceAccessor)
					throws DatabaseException {
				// Liquibase's H2 support expects names in upper case (see
				// CaseMatchingH2Database).
				Database database = CaseMatchingH2Database.forConnection(connection);
				if (database == null) {
					return super.createDatabase(connection, resourceAccessor);
				}
				database.setConnection(new JdbcConnection(connection));
				database.setDatabaseChangeLogTableName(getDatabaseChangeLogTable());
				database.setDatabaseChangeLogLockTableName(getDatabaseChangeLogLockTable());
				return database;
			}

		};
		liquibase.setDataSource(this.dataSource);
		liquibase.setChangeLog(CHANGELOG);
		liquibase.setChangeLogParameters(Map.of(TABLE_NAME_PARAMETER, this.tableName));
		liquibase.setDatabaseChangeLogTable(CHANGELOG_TABLE);
		liquibase.setDatabaseChangeLogLockTable(CHANGELOG_LOCK_TABLE);
		liquibase.setResourceLoader(this.resourceLoader);
		// Liquibase remembers per JVM that a changelog at a URL was up to date, whatever
		// its parameters: without this, a second table on the same database would be
		// skipped.
		Scope.getCurrentScope().getSingleton(FastCheckService.class).clearCache();
		liquibase.afterPropertiesSet();
		return true;
	}

	/**
	 * Why this initializer leaves the table alone, or may have, for a start-up report.
	 */
	String whyNotCreated() {
		return switch (this.mode) {
			case NEVER -> "idempotency.store.jdbc.initialize-schema=never";
			case EMBEDDED -> "idempotency.store.jdbc.initialize-schema=embedded and this database is not embedded";
			case ALWAYS -> "the starter's changelog is recorded as applied in " + CHANGELOG_TABLE
					+ ", yet the table is not in the connection's current schema";
		};
	}

	private boolean isEnabled() {
		return switch (this.mode) {
			case ALWAYS -> true;
			case NEVER -> false;
			case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(this.dataSource);
		};
	}

}
