package dev.idempotency.autoconfigure.r2dbc;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a missing table of the R2DBC store at start-up: which table, in which database,
 * why the starter did not create it, and the properties that fix it.
 */
class IdempotencyR2dbcTableMissingFailureAnalyzer
		extends AbstractFailureAnalyzer<IdempotencyR2dbcTableMissingException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotencyR2dbcTableMissingException cause) {
		String description = "The R2DBC idempotency store (idempotency.store.type=r2dbc) needs the table '"
				+ cause.getTableName() + "', which does not exist in " + cause.getDatabase() + ": "
				+ cause.getNotCreatedBecause() + ".";
		String action = "Let the starter create it: set idempotency.store.r2dbc.initialize-schema=always. Or create it"
				+ " yourself (the starter's Liquibase changelog classpath:db/idempotency/changelog-master.yaml, or the"
				+ " DDL in docs/r2dbc-store.md, section Schema), or set idempotency.store.r2dbc.table-name to a table that exists.";
		return new FailureAnalysis(description, action, cause);
	}

}
