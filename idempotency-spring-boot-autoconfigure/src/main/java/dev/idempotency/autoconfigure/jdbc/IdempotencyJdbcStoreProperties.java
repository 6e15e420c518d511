package dev.idempotency.autoconfigure.jdbc;

import java.time.Duration;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore.ReserveCommit;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Configuration of the JDBC idempotency store ({@code idempotency.store.type=jdbc}).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.store.jdbc")
public class IdempotencyJdbcStoreProperties {

	/**
	 * Name of the table that holds the records: a plain SQL identifier (letters, digits
	 * and underscores, at most 50 characters). The table is looked up in the connection's
	 * current schema.
	 */
	private String tableName = "idempotency_record";

	/**
	 * SQL dialect of the store's database. Detected from the database product name when
	 * not set; MARIADB also serves MySQL.
	 */
	private @Nullable JdbcIdempotencyDialect dialect;

	/**
	 * When to create the table with the starter's own Liquibase changelog: 'always'
	 * (applies what is missing, nothing when the table is there), 'embedded' (H2, HSQL,
	 * Derby only) or 'never'. Needs liquibase-core on the classpath. Whatever the mode,
	 * the application does not start when the table is then missing.
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.ALWAYS;

	/**
	 * Whether the record of an answer is written in the transaction of the operation's
	 * own writes, so both commit together or not at all (atomic completion): completing
	 * or recording a record joins a Spring transaction active on the store's data source,
	 * and the HTTP door runs each protected synchronous handler inside a transaction of
	 * the application's transaction manager. Not set: on when the store uses the
	 * application's DataSource, off with a dedicated one (url or
	 * '@IdempotencyDataSource'). Off: every store call runs in its own short transaction.
	 */
	private @Nullable Boolean transactionalCompletion;

	/**
	 * JDBC URL of a dedicated database for the records. Not set: an
	 * '@IdempotencyDataSource' bean, or else the application's DataSource.
	 */
	private @Nullable String url;

	/**
	 * Login user of the dedicated database.
	 */
	private @Nullable String username;

	/**
	 * Login password of the dedicated database.
	 */
	private @Nullable String password;

	/**
	 * Longest a store statement may run before the driver cancels it and the request is
	 * answered as for an unavailable store (503 when fail-closed). Whole seconds, rounded
	 * up (JDBC's unit); 0 for none.
	 */
	private Duration queryTimeout = Duration.ofSeconds(2);

	private final Purge purge = new Purge();

	private final Postgresql postgresql = new Postgresql();

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public @Nullable JdbcIdempotencyDialect getDialect() {
		return this.dialect;
	}

	public void setDialect(@Nullable JdbcIdempotencyDialect dialect) {
		this.dialect = dialect;
	}

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public @Nullable Boolean getTransactionalCompletion() {
		return this.transactionalCompletion;
	}

	public void setTransactionalCompletion(@Nullable Boolean transactionalCompletion) {
		this.transactionalCompletion = transactionalCompletion;
	}

	public @Nullable String getUrl() {
		return this.url;
	}

	public void setUrl(@Nullable String url) {
		this.url = url;
	}

	public @Nullable String getUsername() {
		return this.username;
	}

	public void setUsername(@Nullable String username) {
		this.username = username;
	}

	public @Nullable String getPassword() {
		return this.password;
	}

	public void setPassword(@Nullable String password) {
		this.password = password;
	}

	public Duration getQueryTimeout() {
		return this.queryTimeout;
	}

	public void setQueryTimeout(Duration queryTimeout) {
		this.queryTimeout = queryTimeout;
	}

	public Purge getPurge() {
		return this.purge;
	}

	public Postgresql getPostgresql() {
		return this.postgresql;
	}

	/**
	 * Settings that exist on PostgreSQL only.
	 */
	public static class Postgresql {

		/**
		 * Which reservations commit without waiting for their WAL flush
		 * (synchronous_commit set to 'off' for the reservation's own transaction only;
		 * completion, release and heartbeat stay durable). 'with-atomic-completion': only
		 * a reservation whose answer the HTTP door then records in the handler's
		 * transaction on this database; that durable commit comes after it in the same
		 * WAL, so a crash of the server cannot lose the reservation and keep the
		 * handler's writes there (it can only free the key of a run whose other effects,
		 * outside this database, may still happen). 'on': every reservation; a crash of
		 * the PostgreSQL server (not of the application) within about 3 x
		 * wal_writer_delay (600 ms by default) after a reservation can lose it, so a
		 * retry may run the operation a second time ('true' is read as 'on'; start-up
		 * fails when it is set on another database). 'off' ('false'): every reservation
		 * is durable.
		 */
		private ReserveCommit reserveAsynchronousCommit = ReserveCommit.WITH_ATOMIC_COMPLETION;

		public ReserveCommit getReserveAsynchronousCommit() {
			return this.reserveAsynchronousCommit;
		}

		public void setReserveAsynchronousCommit(ReserveCommit reserveAsynchronousCommit) {
			this.reserveAsynchronousCommit = reserveAsynchronousCommit;
		}

	}

	/**
	 * The scheduled removal of expired records.
	 */
	public static class Purge {

		/**
		 * Whether expired records are deleted on a schedule. Safe on every node at once.
		 */
		private boolean enabled = true;

		/**
		 * Time between the end of one purge run and the start of the next.
		 */
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * Most records one DELETE removes; a run repeats batches until one comes back
		 * short.
		 */
		private int batchSize = 1000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

	}

}
