package dev.idempotency.autoconfigure.r2dbc;

/**
 * Thrown at start-up when the R2DBC idempotency store's table does not exist after schema
 * set-up: an application that started anyway would look healthy and refuse every
 * protected request. {@link IdempotencyR2dbcTableMissingFailureAnalyzer} reports it.
 */
final class IdempotencyR2dbcTableMissingException extends IllegalStateException {

	private final String tableName;

	private final String database;

	private final String notCreatedBecause;

	IdempotencyR2dbcTableMissingException(String tableName, String database, String notCreatedBecause,
			Throwable cause) {
		super("Idempotency table '" + tableName + "' not found in " + database + " (" + notCreatedBecause + ")", cause);
		this.tableName = tableName;
		this.database = database;
		this.notCreatedBecause = notCreatedBecause;
	}

	String getTableName() {
		return this.tableName;
	}

	String getDatabase() {
		return this.database;
	}

	String getNotCreatedBecause() {
		return this.notCreatedBecause;
	}

}
