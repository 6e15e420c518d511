package dev.idempotency.sample.catalog.planning;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Semaphore;

import dev.idempotency.sample.catalog.iceberg.CatalogTableRows;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Scan;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchPlanIdException;
import org.apache.iceberg.exceptions.NoSuchPlanTaskException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.PlanStatus;
import org.apache.iceberg.rest.requests.FetchScanTasksRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.responses.FetchPlanningResultResponse;
import org.apache.iceberg.rest.responses.FetchScanTasksResponse;
import org.apache.iceberg.rest.responses.FetchScanTasksResponseParser;
import org.apache.iceberg.rest.responses.PlanTableScanResponse;
import org.apache.iceberg.types.Types;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Plans table scans on the server and keeps the plans in the catalog's database, so that
 * any node answers for any plan id and a plan survives what the catalog survives.
 * <p>
 * A plan is made synchronously on {@code POST .../plan} and answered {@code completed}:
 * with its file scan tasks inline when they fit in one plan task, otherwise with the ids
 * of its plan tasks, which the client fetches with {@code POST .../tasks}. Every plan
 * task's answer is stored when the plan is made, so memory holds at most two plan tasks'
 * worth of file scan tasks, whatever the table.
 * <p>
 * Bounds: a plan may have at most {@code max-file-scan-tasks} file scan tasks (more is
 * 406, {@link UnsupportedOperationException}); at most {@code max-live-plans} plans may
 * be planning or completed at once, over all nodes, and one node plans at most
 * {@code max-concurrent-plans} scans at once (one more is 503,
 * {@link ServiceUnavailableException}); a plan expires after {@code plan-lifetime}, and
 * expired plans are removed when the next plan is reserved. Cancelling a plan drops its
 * tasks and keeps its row (so a second cancel is answered like the first) until it
 * expires.
 * <p>
 * Transactions: the reservation (lock row, count, insert) commits in a transaction of its
 * own, so the count is exact across nodes without holding the lock while planning; it
 * takes a second connection while a keyed request's own transaction holds one. The tasks
 * and the completion join the request's transaction (the starter's, when the request is
 * keyed and the store is the catalog's database), so they commit with the stored answer.
 * A plan whose planning fails is removed again, and so is a plan whose answer did not
 * reach its client ({@link #release}).
 * <p>
 * A plan belongs to its table's identity, the table's UUID, not to its name: it follows
 * the table through a rename, is not served for another table created under the same
 * name, and ends when its table is dropped or unregistered ({@link #endPlansOf}).
 */
public class ScanPlanning {

	private static final String PLANNING = "planning";

	private static final String COMPLETED = "completed";

	private static final String CANCELLED = "cancelled";

	/** Separates the plan id from the plan task's index in a plan task id. */
	private static final char TASK_SEPARATOR = ':';

	private final Catalog catalog;

	private final CatalogTableRows tableRows;

	private final JdbcOperations jdbc;

	private final ScanPlanSql sql;

	private final ScanPlanningProperties properties;

	/** Joins the request's transaction, if there is one. */
	private final TransactionTemplate joined;

	/** A transaction of its own, even inside the request's. */
	private final TransactionTemplate separate;

	/** Scans this node may plan at the same time. */
	private final Semaphore planners;

	ScanPlanning(Catalog catalog, CatalogTableRows tableRows, JdbcOperations jdbc,
			PlatformTransactionManager transactionManager, ScanPlanSql sql, ScanPlanningProperties properties) {
		this.catalog = catalog;
		this.tableRows = tableRows;
		this.jdbc = jdbc;
		this.sql = sql;
		this.properties = properties;
		this.joined = new TransactionTemplate(transactionManager);
		this.separate = new TransactionTemplate(transactionManager);
		this.separate.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.planners = new Semaphore(properties.getMaxConcurrentPlans());
	}

	/**
	 * Plans a scan of the table and stores the plan.
	 * @throws NoSuchTableException if the table does not exist, or is dropped while its
	 * scan is planned
	 * @throws IllegalArgumentException if the request names a snapshot or a column the
	 * table does not have
	 * @throws ServiceUnavailableException if {@code max-live-plans} plans are live, or
	 * this node plans {@code max-concurrent-plans} scans already
	 * @throws UnsupportedOperationException if the scan has more than
	 * {@code max-file-scan-tasks} file scan tasks
	 */
	public PlanTableScanResponse plan(TableIdentifier identifier, PlanTableScanRequest request) {
		if (!this.planners.tryAcquire()) {
			throw new ServiceUnavailableException(
					"This node plans %d scans already, the most it plans at once"
							+ " (catalog.scan-planning.max-concurrent-plans): retry shortly",
					this.properties.getMaxConcurrentPlans());
		}
		try {
			return planWithPermit(identifier, request);
		}
		finally {
			this.planners.release();
		}
	}

	private PlanTableScanResponse planWithPermit(TableIdentifier identifier, PlanTableScanRequest request) {
		Table table = this.catalog.loadTable(identifier);
		Scan<?, FileScanTask, ?> scan = configure(table, request);
		String planId = reserve(identifier, table);
		try {
			PlanTableScanResponse response = this.joined.execute(status -> planInto(planId, identifier, table, scan));
			if (response == null) {
				throw new IllegalStateException("Planning " + planId + " answered nothing");
			}
			return response;
		}
		catch (RuntimeException | Error ex) {
			// The tasks written so far roll back with the transaction they were written
			// in; the reservation committed on its own and is released here. Nothing of
			// that transaction has locked the plan row (its completion is its last
			// statement), so this does not wait on it.
			try {
				this.separate.executeWithoutResult(status -> this.jdbc.update(ScanPlanSql.DELETE_PLAN, planId));
			}
			catch (RuntimeException cleanup) {
				ex.addSuppressed(cleanup);
			}
			throw ex;
		}
	}

	/** The state of a plan; a completed one names its plan tasks. */
	public FetchPlanningResultResponse fetch(TableIdentifier identifier, String planId) {
		StoredPlan plan = find(identifier, planId);
		FetchPlanningResultResponse.Builder response = FetchPlanningResultResponse.builder();
		return switch (plan.status()) {
			case PLANNING -> response.withPlanStatus(PlanStatus.SUBMITTED).build();
			case CANCELLED -> response.withPlanStatus(PlanStatus.CANCELLED).build();
			default -> response.withPlanStatus(PlanStatus.COMPLETED)
				.withPlanTasks(planTaskIds(planId, plan.taskCount()))
				.withFileScanTasks(List.of())
				.build();
		};
	}

	/**
	 * The stored answer for one plan task: a {@code FetchScanTasksResponse}'s JSON.
	 * @throws NoSuchPlanTaskException if the plan task is unknown, expired, cancelled or
	 * of another table
	 */
	public String fetchTasks(TableIdentifier identifier, FetchScanTasksRequest request) {
		String tableUuid = tableUuid(identifier);
		String planTask = request.planTask();
		int separator = planTask.lastIndexOf(TASK_SEPARATOR);
		int index;
		try {
			index = (separator > 0) ? Integer.parseInt(planTask.substring(separator + 1)) : -1;
		}
		catch (NumberFormatException ex) {
			index = -1;
		}
		if (index < 0) {
			throw new NoSuchPlanTaskException("No such plan task: %s", planTask);
		}
		List<String> tasks = this.jdbc.query(this.sql.findTasks(), (row, number) -> row.getString(1),
				planTask.substring(0, separator), index, tableUuid);
		if (tasks.isEmpty()) {
			throw new NoSuchPlanTaskException("No such plan task: %s", planTask);
		}
		return tasks.get(0);
	}

	/**
	 * Cancels a plan and drops its tasks. Cancelling a cancelled plan changes nothing.
	 * @throws NoSuchPlanIdException if the plan is unknown, expired or of another table
	 */
	public void cancel(TableIdentifier identifier, String planId) {
		find(identifier, planId);
		this.joined.executeWithoutResult(status -> {
			this.jdbc.update(ScanPlanSql.CANCEL, planId);
			this.jdbc.update(ScanPlanSql.DELETE_TASKS, planId);
		});
	}

	/**
	 * Removes a plan and its tasks, whatever its state, so that it no longer takes a
	 * place: for a plan whose answer did not reach its client (another attempt's answer
	 * was sent instead, or its request's transaction rolled back), which no client can
	 * ever read or cancel. Call it once the request's transaction has ended.
	 */
	public void release(String planId) {
		this.separate.executeWithoutResult(status -> {
			this.jdbc.update(ScanPlanSql.DELETE_TASKS, planId);
			this.jdbc.update(ScanPlanSql.DELETE_PLAN, planId);
		});
	}

	/**
	 * Ends every plan of a table that is gone (dropped or unregistered), with its tasks:
	 * they no longer take a place, and a table registered again, or created under the
	 * same name, starts without them. Under the lock row, in the caller's transaction if
	 * there is one (a keyed drop's on the catalog's database: the plans end with the
	 * drop), else in one of its own after the drop committed: a reservation waits for it,
	 * and then finds the table gone.
	 * @param tableUuid the UUID of the table, from its last metadata
	 */
	public void endPlansOf(String tableUuid) {
		this.joined.executeWithoutResult(status -> {
			this.jdbc.queryForList(ScanPlanSql.LOCK);
			// A plan being completed commits its tasks first: wait for it, then delete
			// both.
			this.jdbc.queryForList(ScanPlanSql.LOCK_TABLE_PLANS, tableUuid);
			this.jdbc.update(ScanPlanSql.DELETE_TABLE_TASKS, tableUuid);
			this.jdbc.update(ScanPlanSql.DELETE_TABLE_PLANS, tableUuid);
		});
	}

	/**
	 * Removes expired plans and inserts one in {@code planning} status, if fewer than
	 * {@code max-live-plans} are live and the table is still the one loaded; under the
	 * lock row, so that two nodes cannot both take the last place, and a table dropped
	 * since it was loaded (its plans ended under the same lock) gets none.
	 */
	private String reserve(TableIdentifier identifier, Table table) {
		String planId = UUID.randomUUID().toString();
		this.separate.executeWithoutResult(status -> {
			this.jdbc.queryForList(ScanPlanSql.LOCK);
			requireStillThere(identifier, table);
			this.jdbc.update(this.sql.purgeExpiredTasks());
			this.jdbc.update(this.sql.purgeExpiredPlans());
			Long live = this.jdbc.queryForObject(ScanPlanSql.COUNT_LIVE, Long.class);
			if (live != null && live >= this.properties.getMaxLivePlans()) {
				throw new ServiceUnavailableException(
						"%d scan plans are live, the most this catalog keeps (catalog.scan-planning.max-live-plans):"
								+ " retry after one completes its scan, or plan the scan on the client",
						live);
			}
			this.jdbc.update(this.sql.insertPlan(), planId, identifier.toString(), table.uuid().toString(),
					this.properties.getPlanLifetime().toSeconds());
		});
		return planId;
	}

	/**
	 * Checks, under the lock row, that the catalog still has the table that was loaded:
	 * its row names the same metadata file, or (after a commit since) the table it names
	 * has the same UUID.
	 */
	private void requireStillThere(TableIdentifier identifier, Table table) {
		String location = this.tableRows.metadataLocation(identifier);
		if (location == null) {
			throw new NoSuchTableException("Table does not exist: %s", identifier);
		}
		if (location.equals(metadataLocation(table))) {
			return;
		}
		if (!this.catalog.loadTable(identifier).uuid().equals(table.uuid())) {
			throw new NoSuchTableException(
					"Table %s was dropped while its scan was planned, and created again: plan the scan again",
					identifier);
		}
	}

	private static @Nullable String metadataLocation(Table table) {
		return (table instanceof HasTableOperations operations)
				? operations.operations().current().metadataFileLocation() : null;
	}

	private PlanTableScanResponse planInto(String planId, TableIdentifier identifier, Table table,
			Scan<?, FileScanTask, ?> scan) {
		int perPlanTask = Math.max(1, this.properties.getTasksPerPlanTask());
		int limit = this.properties.getMaxFileScanTasks();
		Map<Integer, PartitionSpec> specs = table.specs();
		List<FileScanTask> first = List.of();
		List<FileScanTask> current = new ArrayList<>();
		int stored = 0;
		int total = 0;
		try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
			for (FileScanTask task : tasks) {
				if (++total > limit) {
					throw new UnsupportedOperationException(
							String.format("The scan of %s has more than %d file scan tasks, the most this catalog plans"
									+ " (catalog.scan-planning.max-file-scan-tasks): narrow the filter or plan the"
									+ " scan on the client", table.name(), limit));
				}
				current.add(task);
				if (current.size() == perPlanTask) {
					store(planId, stored++, current, specs);
					if (stored == 1) {
						first = current;
					}
					current = new ArrayList<>();
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		if (!current.isEmpty()) {
			store(planId, stored++, current, specs);
			if (stored == 1) {
				first = current;
			}
		}
		PlanTableScanResponse.Builder builder = PlanTableScanResponse.builder(specs)
			.withPlanStatus(PlanStatus.COMPLETED)
			.withPlanId(planId);
		PlanTableScanResponse response = (stored > 1) ? builder.withPlanTasks(planTaskIds(planId, stored)).build()
				: builder.withFileScanTasks(first).build();
		// Last: once the plan row is updated, nothing may fail before the transaction
		// ends (see plan's clean-up).
		if (this.jdbc.update(ScanPlanSql.COMPLETE, stored, planId) != 1) {
			if (this.jdbc.queryForList(this.sql.findPlan(), planId).isEmpty()) {
				throw new NoSuchTableException("Table %s was dropped while its scan was planned (or the plan"
						+ " outlived catalog.scan-planning.plan-lifetime)", identifier);
			}
			throw new IllegalStateException("Scan plan " + planId + " was cancelled while it was planned");
		}
		return response;
	}

	private void store(String planId, int index, List<FileScanTask> tasks, Map<Integer, PartitionSpec> specs) {
		String json = FetchScanTasksResponseParser
			.toJson(FetchScanTasksResponse.builder(specs).withFileScanTasks(tasks).build());
		this.jdbc.update(ScanPlanSql.INSERT_TASKS, planId, index, json);
	}

	private StoredPlan find(TableIdentifier identifier, String planId) {
		String tableUuid = tableUuid(identifier);
		List<StoredPlan> plans = this.jdbc.query(this.sql.findPlan(),
				(row, number) -> new StoredPlan(row.getString(1), row.getString(2), row.getInt(3)), planId);
		if (plans.isEmpty() || !tableUuid.equals(plans.get(0).tableUuid())) {
			throw new NoSuchPlanIdException("No such scan plan: %s", planId);
		}
		return plans.get(0);
	}

	/**
	 * The UUID of the table the catalog has under this name now.
	 * @throws NoSuchTableException if there is none
	 */
	private String tableUuid(TableIdentifier identifier) {
		return this.catalog.loadTable(identifier).uuid().toString();
	}

	private static List<String> planTaskIds(String planId, int count) {
		List<String> ids = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			ids.add(planId + TASK_SEPARATOR + i);
		}
		return ids;
	}

	/**
	 * The scan the request asks for: an incremental append scan between two snapshots, or
	 * a table scan (of one snapshot, or the current one), with the request's projection,
	 * filter, case sensitivity and column statistics.
	 */
	private static Scan<?, FileScanTask, ?> configure(Table table, PlanTableScanRequest request) {
		Long start = request.startSnapshotId();
		Long end = request.endSnapshotId();
		if (start != null && end != null) {
			return refine(table.newIncrementalAppendScan().fromSnapshotInclusive(start).toSnapshot(end), request);
		}
		TableScan scan = table.newScan();
		Long snapshotId = request.snapshotId();
		if (snapshotId != null) {
			scan = scan.useSnapshot(snapshotId);
		}
		return refine(scan, request);
	}

	private static <T extends Scan<T, FileScanTask, ?>> T refine(T scan, PlanTableScanRequest request) {
		T refined = scan.caseSensitive(request.caseSensitive());
		List<String> statsFields = request.statsFields();
		if (statsFields != null) {
			// Before select, which narrows the scan's schema: until then it is the schema
			// the scan reads, in which includeColumnStats looks the names up.
			refined = refined.includeColumnStats(columnNames(refined, statsFields, request.caseSensitive()));
		}
		List<String> select = request.select();
		if (select != null) {
			refined = refined.select(select);
		}
		if (request.filter() != null) {
			refined = refined.filter(request.filter());
		}
		return refined;
	}

	/**
	 * The scan schema's names of the {@code stats-fields} columns, matched as the request
	 * says. Iceberg's {@code includeColumnStats} looks them up case-sensitively and fails
	 * with a {@link NullPointerException} on a name it does not find.
	 * @throws IllegalArgumentException if the schema has no such column
	 */
	private static List<String> columnNames(Scan<?, FileScanTask, ?> scan, List<String> statsFields,
			boolean caseSensitive) {
		List<String> names = new ArrayList<>(statsFields.size());
		for (String name : statsFields) {
			Types.NestedField field = caseSensitive ? scan.schema().findField(name)
					: scan.schema().caseInsensitiveFindField(name);
			if (field == null) {
				throw new IllegalArgumentException(String.format(
						"Cannot include column statistics of %s (stats-fields): the table's schema has no such column%s",
						name, caseSensitive ? " (matched case-sensitively)" : ""));
			}
			names.add(scan.schema().findColumnName(field.fieldId()));
		}
		return names;
	}

	/** A stored plan; {@code tableUuid} is null for a plan of an earlier version. */
	private record StoredPlan(@Nullable String tableUuid, String status, int taskCount) {
	}

}
