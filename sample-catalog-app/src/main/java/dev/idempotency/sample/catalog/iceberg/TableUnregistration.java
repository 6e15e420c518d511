package dev.idempotency.sample.catalog.iceberg;

import java.util.List;

import javax.sql.DataSource;

import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Unregisters a table (the spec's {@code unregisterTable}): the catalog forgets it, its
 * metadata and data files stay where they are, and the answer is the table's last
 * metadata, from which it can be registered again, here or in another catalog. Iceberg
 * 1.12.0 has no handler for it.
 * <p>
 * The spec asks that the metadata returned include every commit made before the
 * unregistration and that every commit after it fail. So, in one database transaction
 * (nested: a savepoint inside a caller's), the table's catalog row is locked first
 * ({@code SELECT ... FOR UPDATE} on {@code JdbcCatalog}'s own {@code iceberg_tables}, by
 * its whole primary key), its metadata is read from the location in that locked row, and
 * the row is deleted with {@link JdbcCatalog#dropTable(TableIdentifier, boolean)} without
 * purge. A concurrent commit waits on the lock and then finds no row to swap: it fails.
 * The metadata is read from the locked row's location rather than through
 * {@code loadTable}, whose plain read may see an older snapshot of the row (MariaDB's
 * repeatable read).
 */
public final class TableUnregistration {

	private static final String LOCK_TABLE_ROW = "SELECT metadata_location FROM iceberg_tables"
			+ " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? FOR UPDATE";

	private final JdbcCatalog catalog;

	private final JdbcClient jdbc;

	private final TransactionTemplate transaction;

	public TableUnregistration(JdbcCatalog catalog, DataSource dataSource,
			PlatformTransactionManager transactionManager) {
		this.catalog = catalog;
		this.jdbc = JdbcClient.create(dataSource);
		this.transaction = new TransactionTemplate(transactionManager);
		this.transaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
	}

	/**
	 * Removes the table from the catalog and returns its last metadata (its
	 * {@link TableMetadata#metadataFileLocation()} the file it was read from).
	 * @throws NoSuchTableException if the catalog has no such table
	 */
	public TableMetadata unregister(TableIdentifier identifier) {
		TableMetadata metadata = this.transaction.execute(status -> unregisterLocked(identifier));
		if (metadata == null) {
			throw new IllegalStateException("The unregistration of " + identifier + " returned nothing");
		}
		return metadata;
	}

	private TableMetadata unregisterLocked(TableIdentifier identifier) {
		List<@Nullable String> locations = this.jdbc.sql(LOCK_TABLE_ROW)
			.params(this.catalog.name(), identifier.namespace().toString(), identifier.name())
			.query(String.class)
			.list();
		String location = locations.isEmpty() ? null : locations.get(0);
		if (location == null) {
			throw new NoSuchTableException("Table does not exist: %s", identifier);
		}
		// Loading checks that the row is a table (not a view) and gives the table's
		// FileIO.
		Table table = this.catalog.loadTable(identifier);
		if (!(table instanceof HasTableOperations operations)) {
			throw new IllegalStateException(
					"Catalog does not produce HasTableOperations: " + table.getClass().getName());
		}
		TableMetadata metadata = TableMetadataParser.read(operations.operations().io(), location);
		if (!this.catalog.dropTable(identifier, false)) {
			throw new NoSuchTableException("Table does not exist: %s", identifier);
		}
		return metadata;
	}

}
