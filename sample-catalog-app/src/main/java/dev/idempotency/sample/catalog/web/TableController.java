package dev.idempotency.sample.catalog.web;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

import dev.idempotency.Idempotent;
import dev.idempotency.sample.catalog.iceberg.CatalogTableRows;
import dev.idempotency.sample.catalog.iceberg.CatalogTransactions;
import dev.idempotency.sample.catalog.planning.ScanPlanning;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties.SnapshotMode;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ImmutableLoadCredentialsResponse;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.iceberg.rest.responses.LoadCredentialsResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** The table routes of the Iceberg REST catalog spec, and the multi-table transaction. */
@RestController
@RequestMapping(path = { CatalogPaths.V1, CatalogPaths.V1_PREFIX }, produces = MediaType.APPLICATION_JSON_VALUE)
public class TableController {

	private static final String TABLES = "/namespaces/{namespace}/tables";

	private static final String TABLE = TABLES + "/{table}";

	private final Catalog catalog;

	private final CatalogTransactions transactions;

	private final CatalogTableRows tableRows;

	private final ScanPlanning planning;

	public TableController(Catalog catalog, CatalogTransactions transactions, CatalogTableRows tableRows,
			ScanPlanning planning) {
		this.catalog = catalog;
		this.transactions = transactions;
		this.tableRows = tableRows;
		this.planning = planning;
	}

	@GetMapping(TABLES)
	public ListTablesResponse listTables(@PathVariable String namespace,
			@RequestParam(required = false) String pageToken, @RequestParam(required = false) String pageSize) {
		Namespace parent = CatalogPaths.namespace(namespace);
		return Pages.list(pageToken, pageSize, () -> CatalogHandlers.listTables(this.catalog, parent),
				(token, size) -> CatalogHandlers.listTables(this.catalog, parent, token, size));
	}

	/**
	 * Creates a table, or with {@code stage-create} only returns the metadata a later
	 * commit creates.
	 */
	@Idempotent(operation = "createTable")
	@PostMapping(TABLES)
	public ResponseEntity<LoadTableResponse> createTable(@PathVariable String namespace,
			@RequestBody CreateTableRequest request) {
		if (request.stageCreate()) {
			return ResponseEntity
				.ok(CatalogHandlers.stageTableCreate(this.catalog, CatalogPaths.namespace(namespace), request));
		}
		return withETag(CatalogHandlers.createTable(this.catalog, CatalogPaths.namespace(namespace), request),
				SnapshotMode.ALL);
	}

	@Idempotent(operation = "registerTable")
	@PostMapping("/namespaces/{namespace}/register")
	public ResponseEntity<LoadTableResponse> registerTable(@PathVariable String namespace,
			@RequestBody RegisterTableRequest request) {
		return withETag(CatalogHandlers.registerTable(this.catalog, CatalogPaths.namespace(namespace), request),
				SnapshotMode.ALL);
	}

	/**
	 * Loads a table; answers 304 when the client's {@code If-None-Match} names the
	 * current metadata.
	 */
	@GetMapping(TABLE)
	public ResponseEntity<LoadTableResponse> loadTable(@PathVariable String namespace, @PathVariable String table,
			@RequestParam(required = false) String snapshots,
			@RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) String ifNoneMatch) {
		SnapshotMode mode = snapshotMode(snapshots);
		LoadTableResponse response = CatalogHandlers.loadTable(this.catalog, CatalogPaths.identifier(namespace, table),
				mode);
		String etag = etag(response.metadataLocation(), mode);
		if (etag.equals(ifNoneMatch)) {
			return ResponseEntity.status(HttpStatus.NOT_MODIFIED).eTag(etag).build();
		}
		return ResponseEntity.ok().eTag(etag).body(response);
	}

	@RequestMapping(method = RequestMethod.HEAD, path = TABLE)
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void tableExists(@PathVariable String namespace, @PathVariable String table) {
		CatalogHandlers.tableExists(this.catalog, CatalogPaths.identifier(namespace, table));
	}

	/**
	 * The storage credentials a client needs to read and write a table's files. The local
	 * warehouse needs none: an existing table gets an empty list, a missing one 404
	 * ({@code NoSuchTableException}). The spec's {@code planId} and {@code referenced-by}
	 * parameters change nothing here and are ignored.
	 */
	@GetMapping(TABLE + "/credentials")
	public LoadCredentialsResponse loadCredentials(@PathVariable String namespace, @PathVariable String table) {
		CatalogHandlers.tableExists(this.catalog, CatalogPaths.identifier(namespace, table));
		return ImmutableLoadCredentialsResponse.builder().build();
	}

	/** Commits updates to a table (or creates a staged table). */
	@Idempotent(operation = "updateTable")
	@PostMapping(TABLE)
	public ResponseEntity<LoadTableResponse> updateTable(@PathVariable String namespace, @PathVariable String table,
			@RequestBody UpdateTableRequest request) {
		return withETag(CatalogHandlers.updateTable(this.catalog, CatalogPaths.identifier(namespace, table), request),
				SnapshotMode.ALL);
	}

	/** Drops a table (with its files on {@code purgeRequested}), and its scan plans. */
	@Idempotent(operation = "dropTable")
	@DeleteMapping(TABLE)
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void dropTable(@PathVariable String namespace, @PathVariable String table,
			@RequestParam(defaultValue = "false") boolean purgeRequested) {
		endPlansOf(this.tableRows.drop(CatalogPaths.identifier(namespace, table), purgeRequested));
	}

	/**
	 * Removes a table from the catalog without deleting any of its files, and answers its
	 * last metadata location and metadata: the opposite of {@code registerTable}. Its
	 * scan plans end with it.
	 */
	@Idempotent(operation = "unregisterTable")
	@PostMapping(TABLE + "/unregister")
	public UnregisterTableResponse unregisterTable(@PathVariable String namespace, @PathVariable String table) {
		return new UnregisterTableResponse(
				endPlansOf(this.tableRows.unregister(CatalogPaths.identifier(namespace, table))));
	}

	@Idempotent(operation = "renameTable")
	@PostMapping("/tables/rename")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void renameTable(@RequestBody RenameTableRequest request) {
		CatalogHandlers.renameTable(this.catalog, request);
	}

	/** Accepts a scan or commit report; this sample keeps no metrics of its own. */
	@PostMapping(TABLE + "/metrics")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void reportMetrics(@PathVariable String namespace, @PathVariable String table,
			@RequestBody ReportMetricsRequest request) {
		// Reading the body validated it; there is nothing else to do.
	}

	@Idempotent(operation = "commitTransaction")
	@PostMapping("/transactions/commit")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void commitTransaction(@RequestBody CommitTransactionRequest request) {
		this.transactions.commit(request);
	}

	/**
	 * Ends the scan plans of a table that is gone; a table registered again from its
	 * metadata starts without them.
	 */
	private TableMetadata endPlansOf(TableMetadata removed) {
		this.planning.endPlansOf(removed.uuid());
		return removed;
	}

	private static SnapshotMode snapshotMode(String snapshots) {
		if (snapshots == null || snapshots.isEmpty()) {
			return SnapshotMode.ALL;
		}
		try {
			return SnapshotMode.valueOf(snapshots.toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid snapshots mode: " + snapshots + " (expected all or refs)");
		}
	}

	private static ResponseEntity<LoadTableResponse> withETag(LoadTableResponse response, SnapshotMode mode) {
		return ResponseEntity.ok().eTag(etag(response.metadataLocation(), mode)).body(response);
	}

	/**
	 * A strong ETag naming the metadata file and the snapshot mode it was loaded with.
	 */
	static String etag(String metadataLocation, SnapshotMode mode) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest((metadataLocation + "\n" + mode.name()).getBytes(StandardCharsets.UTF_8));
			return "\"" + HexFormat.of().formatHex(digest, 0, 16) + "\"";
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

}
