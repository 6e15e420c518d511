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
 * A table's own row in {@link JdbcCatalog}'s {@code iceberg_tables}: which metadata file
 * it names now, and its removal, by unregistering (the spec's {@code unregisterTable}:
 * the catalog forgets the table, its metadata and data files stay where they are) or
 * dropping the table. Iceberg 1.12.0 has no handler for unregistering.
 * <p>
 * A removal answers the table's last metadata: unregistering answers it to the client,
 * from which the table can be registered again, here or in another catalog; both tell the
 * caller which table (its UUID) is gone, so that what belongs to it can go too. The spec
 * asks that the metadata returned include every commit made before the unregistration and
 * that every commit after it fail. So, in one database transaction (nested: a savepoint
 * inside a caller's), the table's catalog row is locked first
 * ({@code SELECT ... FOR UPDATE} on {@code JdbcCatalog}'s own {@code iceberg_tables}, by
 * its whole primary key), its metadata is read from the location in that locked row, and
 * the row is deleted with {@link JdbcCatalog#dropTable(TableIdentifier, boolean)}. A
 * concurrent commit waits on the lock and then finds no row to swap: it fails. The
 * metadata is read from the locked row's location rather than through {@code loadTable},
 * whose plain read may see an older snapshot of the row (MariaDB's repeatable read). A
 * drop is the same removal, with the table's files deleted when the client asks for a
 * purge.
 */
public final class CatalogTableRows {

	private static final String SELECT_TABLE_ROW = "SELECT metadata_location FROM iceberg_tables"
			+ " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?";

	private static final String LOCK_TABLE_ROW = SELECT_TABLE_ROW + " FOR UPDATE";

	private final JdbcCatalog catalog;

	private final JdbcClient jdbc;

	private final TransactionTemplate transaction;

	public CatalogTableRows(JdbcCatalog catalog, DataSource dataSource, PlatformTransactionManager transactionManager) {
		this.catalog = catalog;
		this.jdbc = JdbcClient.create(dataSource);
		this.transaction = new TransactionTemplate(transactionManager);
		this.transaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
	}

	/**
	 * The metadata file the table's catalog row names, as the current transaction (if
	 * any) reads it; {@code null} if the catalog has no such row.
	 */
	public @Nullable String metadataLocation(TableIdentifier identifier) {
		return first(query(SELECT_TABLE_ROW, identifier));
	}

	/**
	 * Removes the table from the catalog, deleting none of its files, and returns its
	 * last metadata (its {@link TableMetadata#metadataFileLocation()} the file it was
	 * read from).
	 * @throws NoSuchTableException if the catalog has no such table
	 */
	public TableMetadata unregister(TableIdentifier identifier) {
		return remove(identifier, false);
	}

	/**
	 * Drops the table, with its files if {@code purge}, and returns its last metadata.
	 * @throws NoSuchTableException if the catalog has no such table
	 */
	public TableMetadata drop(TableIdentifier identifier, boolean purge) {
		return remove(identifier, purge);
	}

	private TableMetadata remove(TableIdentifier identifier, boolean purge) {
		TableMetadata metadata = this.transaction.execute(status -> removeLocked(identifier, purge));
		if (metadata == null) {
			throw new IllegalStateException("The removal of " + identifier + " returned nothing");
		}
		return metadata;
	}

	private TableMetadata removeLocked(TableIdentifier identifier, boolean purge) {
		String location = first(query(LOCK_TABLE_ROW, identifier));
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
		if (!this.catalog.dropTable(identifier, purge)) {
			throw new NoSuchTableException("Table does not exist: %s", identifier);
		}
		return metadata;
	}

	private List<@Nullable String> query(String sql, TableIdentifier identifier) {
		return this.jdbc.sql(sql)
			.params(this.catalog.name(), identifier.namespace().toString(), identifier.name())
			.query(String.class)
			.list();
	}

	private static @Nullable String first(List<@Nullable String> locations) {
		return locations.isEmpty() ? null : locations.get(0);
	}

}
