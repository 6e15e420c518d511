package dev.idempotency.autoconfigure.jdbc;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a missing idempotency table at start-up: which table, in which database, why
 * the starter did not create it, and the properties that fix it.
 */
class IdempotencyTableMissingFailureAnalyzer extends AbstractFailureAnalyzer<IdempotencyTableMissingException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotencyTableMissingException cause) {
		String description = "The JDBC idempotency store (idempotency.store.type=jdbc) needs the table '"
				+ cause.getTableName() + "', which does not exist in " + cause.getDatabase() + ": "
				+ cause.getNotCreatedBecause() + ".";
		String action = "Let the starter create it: put liquibase-core 4.33.0 on the classpath (under Spring Boot's"
				+ " parent: <liquibase.version>4.33.0</liquibase.version>) and keep"
				+ " idempotency.store.jdbc.initialize-schema=always (the default). Or create it yourself by including"
				+ " classpath:db/idempotency/changelog-master.yaml in your own Liquibase changelog"
				+ " (docs/jdbc-store.md), or set idempotency.store.jdbc.table-name to a table that exists.";
		return new FailureAnalysis(description, action, cause);
	}

}
