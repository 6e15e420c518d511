package dev.idempotency.sample.catalog.iceberg;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Commits a multi-table transaction ({@code POST /v1/{prefix}/transactions/commit})
 * atomically: every table's metadata pointer is swapped in one database transaction, and
 * a conflict on any table rolls back the swaps of all. Iceberg has no public handler for
 * it.
 * <p>
 * One attempt loads every table, checks its requirements and applies its updates in
 * memory; only when all pass does it swap the pointers, one table after the other, in the
 * transaction ({@link DataSourceJdbcClientPool} runs the catalog's statements on the
 * transaction's connection). A requirement that fails ends the commit with
 * {@link CommitFailedException} and nothing changed. A swap that finds a table changed
 * since it was loaded (a concurrent writer won) rolls the attempt back and runs it again
 * on the tables as they are now, at most {@value #MAX_ATTEMPTS} times, as Iceberg's
 * {@code CatalogHandlers.updateTable} does for one table: the requirements decide whether
 * the change still applies.
 * <p>
 * The transaction is nested ({@code PROPAGATION_NESTED}): alone it is a transaction of
 * its own; inside a caller's transaction on the same database (one around the whole
 * request, which also holds the idempotency record) it is a savepoint, so a conflict
 * rolls back the table swaps and leaves the caller's transaction usable for its answer.
 * <p>
 * Each swap writes the table's new metadata file before its pointer moves; the files of
 * an attempt that rolls back stay in the warehouse unreferenced.
 */
public final class CatalogTransactions {

	/**
	 * Attempts of one commit: the first and up to four after conflicts (Iceberg's
	 * default).
	 */
	static final int MAX_ATTEMPTS = 5;

	private final Catalog catalog;

	private final TransactionTemplate transaction;

	public CatalogTransactions(Catalog catalog, PlatformTransactionManager transactionManager) {
		this.catalog = catalog;
		this.transaction = new TransactionTemplate(transactionManager);
		this.transaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
	}

	public void commit(CommitTransactionRequest request) {
		for (int attempt = 1;; attempt++) {
			try {
				this.transaction.executeWithoutResult(status -> commitOnce(request));
				return;
			}
			catch (SwapConflict conflict) {
				if (attempt >= MAX_ATTEMPTS) {
					throw conflict.getCause();
				}
			}
		}
	}

	private void commitOnce(CommitTransactionRequest request) {
		Set<TableIdentifier> seen = new HashSet<>();
		List<Staged> staged = new ArrayList<>();
		for (UpdateTableRequest change : request.tableChanges()) {
			TableIdentifier identifier = change.identifier();
			if (!seen.add(identifier)) {
				throw new IllegalArgumentException("Table appears more than once in the transaction: " + identifier);
			}
			Table table = this.catalog.loadTable(identifier);
			if (!(table instanceof BaseTable baseTable)) {
				throw new IllegalStateException("Catalog does not produce BaseTable: " + table.getClass().getName());
			}
			staged.add(stage(baseTable.operations(), change));
		}
		for (Staged table : staged) {
			if (table.base() != table.updated()) {
				try {
					table.operations().commit(table.base(), table.updated());
				}
				catch (CommitFailedException ex) {
					throw new SwapConflict(ex);
				}
			}
		}
	}

	/**
	 * Validates the requirements against the table as loaded and applies the updates in
	 * memory.
	 */
	private static Staged stage(TableOperations operations, UpdateTableRequest change) {
		TableMetadata base = operations.current();
		change.requirements().forEach(requirement -> requirement.validate(base));
		TableMetadata.Builder builder = TableMetadata.buildFrom(base);
		change.updates().forEach(update -> update.applyTo(builder));
		TableMetadata updated = builder.build();
		return new Staged(operations, base, updated.changes().isEmpty() ? base : updated);
	}

	private record Staged(TableOperations operations, TableMetadata base, TableMetadata updated) {
	}

	/** A pointer swap that lost to a concurrent writer: the attempt runs again. */
	private static final class SwapConflict extends RuntimeException {

		private final CommitFailedException conflict;

		SwapConflict(CommitFailedException cause) {
			super(cause);
			this.conflict = cause;
		}

		@Override
		public synchronized CommitFailedException getCause() {
			return this.conflict;
		}

	}

}
