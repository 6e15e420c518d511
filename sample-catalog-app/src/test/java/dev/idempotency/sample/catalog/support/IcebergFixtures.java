package dev.idempotency.sample.catalog.support;

import java.util.UUID;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/** Schemas and files for the client-side round trips. */
public final class IcebergFixtures {

	public static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
			Types.NestedField.optional(2, "data", Types.StringType.get()));

	private IcebergFixtures() {
	}

	/** A data file entry; the file itself need not exist for the catalog to commit it. */
	public static DataFile dataFile(Table table) {
		return DataFiles.builder(table.spec())
			.withPath(table.location() + "/data/" + UUID.randomUUID() + ".parquet")
			.withFormat(FileFormat.PARQUET)
			.withFileSizeInBytes(1024)
			.withRecordCount(10)
			.build();
	}

	public static TableMetadata metadata(Table table) {
		return ((BaseTable) table).operations().current();
	}

	/**
	 * Stages an append client-side (manifests written, nothing committed) as one table's
	 * part of a transaction.
	 */
	public static TableCommit appendInTransaction(Catalog client, TableIdentifier identifier) {
		Table table = client.loadTable(identifier);
		Transaction transaction = table.newTransaction();
		transaction.newAppend().appendFile(dataFile(table)).commit();
		BaseTransaction staged = (BaseTransaction) transaction;
		return TableCommit.create(identifier, staged.startMetadata(), staged.currentMetadata());
	}

}
