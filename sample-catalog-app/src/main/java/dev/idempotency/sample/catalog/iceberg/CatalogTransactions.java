package dev.idempotency.sample.catalog.iceberg;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;

/**
 * Commits a multi-table transaction ({@code POST /v1/{prefix}/transactions/commit}).
 * Iceberg has no public handler for it.
 * <p>
 * Every table's requirements are checked and its updates applied in memory first; only
 * when all tables pass are the tables committed, one after the other. The JDBC catalog
 * commits each table on its own, so a failure (a concurrent writer) between two table
 * commits leaves the earlier ones committed: this is the same guarantee as Iceberg's
 * reference server, not true atomicity.
 */
public final class CatalogTransactions {

	private CatalogTransactions() {
	}

	public static void commit(Catalog catalog, CommitTransactionRequest request) {
		Set<TableIdentifier> seen = new HashSet<>();
		List<Transaction> transactions = new ArrayList<>();
		for (UpdateTableRequest change : request.tableChanges()) {
			TableIdentifier identifier = change.identifier();
			if (!seen.add(identifier)) {
				throw new IllegalArgumentException("Table appears more than once in the transaction: " + identifier);
			}
			Table table = catalog.loadTable(identifier);
			if (!(table instanceof BaseTable baseTable)) {
				throw new IllegalStateException("Catalog does not produce BaseTable: " + table.getClass().getName());
			}
			Transaction transaction = Transactions.newTransaction(identifier.toString(), baseTable.operations());
			stage(((HasTableOperations) transaction.table()).operations(), change);
			transactions.add(transaction);
		}
		transactions.forEach(Transaction::commitTransaction);
	}

	/**
	 * Validates the requirements and applies the updates to the transaction's in-memory
	 * state.
	 */
	private static void stage(TableOperations operations, UpdateTableRequest change) {
		TableMetadata base = operations.current();
		change.requirements().forEach(requirement -> requirement.validate(base));
		TableMetadata.Builder builder = TableMetadata.buildFrom(base);
		change.updates().forEach(update -> update.applyTo(builder));
		TableMetadata updated = builder.build();
		if (!updated.changes().isEmpty()) {
			operations.commit(base, updated);
		}
	}

}
