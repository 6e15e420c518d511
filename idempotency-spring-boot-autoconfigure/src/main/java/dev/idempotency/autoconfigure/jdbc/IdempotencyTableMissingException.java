package dev.idempotency.autoconfigure.jdbc;

/**
 * Thrown at start-up when the JDBC idempotency store's table does not exist once schema
 * set-up is over: an application that started anyway would look healthy and refuse every
 * protected request. {@link IdempotencyTableMissingFailureAnalyzer} turns it into a
 * report that names the table, the database and what to set.
 */
final class IdempotencyTableMissingException extends IllegalStateException {

	private final String tableName;

	private final String database;

	private final String notCreatedBecause;

	IdempotencyTableMissingException(String tableName, String database, String notCreatedBecause) {
		super("Idempotency table '" + tableName + "' not found in " + database + " (" + notCreatedBecause + ")");
		this.tableName = tableName;
		this.database = database;
		this.notCreatedBecause = notCreatedBecause;
	}

	/** The table that was looked for. */
	String getTableName() {
		return this.tableName;
	}

	/** The database product and JDBC URL where it was looked for. */
	String getDatabase() {
		return this.database;
	}

	/** Why schema set-up did not create it. */
	String getNotCreatedBecause() {
		return this.notCreatedBecause;
	}

}
