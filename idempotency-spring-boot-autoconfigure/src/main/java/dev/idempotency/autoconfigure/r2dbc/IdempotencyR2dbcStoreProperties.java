package dev.idempotency.autoconfigure.r2dbc;

import java.time.Duration;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreProperties;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Configuration of the R2DBC idempotency store ({@code idempotency.store.type=r2dbc}).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.store.r2dbc")
public class IdempotencyR2dbcStoreProperties {

	/**
	 * Name of the table that holds the records: a plain SQL identifier (letters, digits
	 * and underscores, at most 50 characters), in the connection's current schema.
	 */
	private String tableName = "idempotency_record";

	/**
	 * When the starter creates the table (with its primary key and indexes) through the
	 * ConnectionFactory at start-up: 'embedded' (an in-memory H2 only), 'always' (creates
	 * what is missing, leaves an existing table alone) or 'never'. Whatever the mode, the
	 * application does not start when the table is then missing.
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

	/**
	 * Longest one store call (a transition, with the attempts it runs again) waits for
	 * the database before the request is answered as for an unavailable store (503 when
	 * fail-closed); 0 for none, in record-after-success mode only (in lease mode the
	 * start-up refuses it: a heartbeat could wait longer than the lease).
	 */
	private Duration timeout = Duration.ofSeconds(2);

	/**
	 * Whether the WebFlux door runs each protected handler inside a reactive transaction
	 * on the store's ConnectionFactory and records its answer in it, so the handler's
	 * writes and the record commit together or not at all (atomic completion). Off: the
	 * handler runs in no transaction of the door's and its answer is recorded after it,
	 * in a statement of its own.
	 */
	private boolean transactionalCompletion = true;

	/**
	 * Deleting expired records on a schedule, as the JDBC store does.
	 */
	@NestedConfigurationProperty
	private final IdempotencyJdbcStoreProperties.Purge purge = new IdempotencyJdbcStoreProperties.Purge();

	/**
	 * Settings that exist on PostgreSQL only, as the JDBC store's.
	 */
	@NestedConfigurationProperty
	private final IdempotencyJdbcStoreProperties.Postgresql postgresql = new IdempotencyJdbcStoreProperties.Postgresql();

	public IdempotencyJdbcStoreProperties.Purge getPurge() {
		return this.purge;
	}

	public IdempotencyJdbcStoreProperties.Postgresql getPostgresql() {
		return this.postgresql;
	}

	public boolean isTransactionalCompletion() {
		return this.transactionalCompletion;
	}

	public void setTransactionalCompletion(boolean transactionalCompletion) {
		this.transactionalCompletion = transactionalCompletion;
	}

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

}
