package dev.idempotency.sample.catalog.planning;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

import javax.sql.DataSource;

/**
 * Every statement of the plan tables, whole, per database. Times come from the database's
 * clock, never the JVM's: nodes with skewed clocks agree on when a plan expires.
 * <p>
 * Two tables and a lock row:
 * <ul>
 * <li>{@code catalog_scan_plan}: one row per plan, its table's name when it was planned
 * and its table's UUID (the table's identity: a plan follows its table through a rename,
 * and a table created again under a dropped one's name has other plans), its status
 * ({@code planning}, {@code completed}, {@code cancelled}), how many plan tasks it has
 * and when it expires;</li>
 * <li>{@code catalog_scan_plan_task}: the file scan tasks of one plan task, as the JSON
 * of the {@code FetchScanTasksResponse} that answers for it. No foreign key to the plan:
 * a plan row is reserved and released in transactions of their own while the handler's
 * transaction writes the tasks, and a foreign key check would make the release wait on
 * that very transaction;</li>
 * <li>{@code catalog_scan_plan_lock}: one row that every reservation locks
 * ({@code FOR UPDATE}), so that counting live plans and inserting one is one step on
 * every node: the limit is exact, not exceeded by concurrent reservations.</li>
 * </ul>
 *
 * @param schema creates the tables and the lock row if missing (each statement may run
 * again)
 * @param insertPlan a plan in {@code planning} status; parameters: plan id, table name,
 * table UUID, lifetime in seconds
 */
record ScanPlanSql(List<String> schema, String insertPlan, String purgeExpiredTasks, String purgeExpiredPlans,
		String findPlan, String findTasks) {

	static final String LOCK = "SELECT id FROM catalog_scan_plan_lock WHERE id = 1 FOR UPDATE";

	static final String COUNT_LIVE = "SELECT COUNT(*) FROM catalog_scan_plan WHERE status <> 'cancelled'";

	static final String INSERT_TASKS = "INSERT INTO catalog_scan_plan_task (plan_id, task_index, tasks_json)"
			+ " VALUES (?, ?, ?)";

	/** Only a plan still planning completes: one cancelled meanwhile stays cancelled. */
	static final String COMPLETE = "UPDATE catalog_scan_plan SET status = 'completed', task_count = ?"
			+ " WHERE plan_id = ? AND status = 'planning'";

	static final String CANCEL = "UPDATE catalog_scan_plan SET status = 'cancelled' WHERE plan_id = ?";

	static final String DELETE_TASKS = "DELETE FROM catalog_scan_plan_task WHERE plan_id = ?";

	static final String DELETE_PLAN = "DELETE FROM catalog_scan_plan WHERE plan_id = ?";

	/**
	 * Locks the plans of a table (its UUID), so that a plan being completed is deleted
	 * with the tasks it commits, not before them.
	 */
	static final String LOCK_TABLE_PLANS = "SELECT plan_id FROM catalog_scan_plan WHERE table_uuid = ? FOR UPDATE";

	static final String DELETE_TABLE_TASKS = "DELETE FROM catalog_scan_plan_task WHERE plan_id IN"
			+ " (SELECT plan_id FROM catalog_scan_plan WHERE table_uuid = ?)";

	static final String DELETE_TABLE_PLANS = "DELETE FROM catalog_scan_plan WHERE table_uuid = ?";

	/**
	 * Whether the plan table has the {@code table_uuid} column (an earlier version of the
	 * sample created it without): fails if it has not.
	 */
	static final String PROBE_TABLE_UUID = "SELECT table_uuid FROM catalog_scan_plan WHERE 1 = 0";

	/** Adds the column to a plan table created by an earlier version of the sample. */
	static final String ADD_TABLE_UUID = "ALTER TABLE catalog_scan_plan ADD COLUMN table_uuid VARCHAR(36)";

	private static final String PLAN_COLUMNS = "plan_id VARCHAR(64) PRIMARY KEY, table_name VARCHAR(1024) NOT NULL,"
			+ " table_uuid VARCHAR(36), status VARCHAR(16) NOT NULL, task_count INT NOT NULL, expires_at ";

	private static final String TASK_COLUMNS = "plan_id VARCHAR(64) NOT NULL, task_index INT NOT NULL, tasks_json ";

	private static final String TASK_KEY = ", PRIMARY KEY (plan_id, task_index))";

	private static final String LOCK_TABLE = "CREATE TABLE IF NOT EXISTS catalog_scan_plan_lock (id INT PRIMARY KEY)";

	static ScanPlanSql h2() {
		return of(List.of(
				"CREATE TABLE IF NOT EXISTS catalog_scan_plan (" + PLAN_COLUMNS + "TIMESTAMP WITH TIME ZONE NOT NULL)",
				"CREATE TABLE IF NOT EXISTS catalog_scan_plan_task (" + TASK_COLUMNS + "CLOB NOT NULL" + TASK_KEY,
				LOCK_TABLE, "MERGE INTO catalog_scan_plan_lock KEY (id) VALUES (1)"),
				"DATEADD(SECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP)", "CURRENT_TIMESTAMP");
	}

	static ScanPlanSql postgres() {
		return of(List.of(
				"CREATE TABLE IF NOT EXISTS catalog_scan_plan (" + PLAN_COLUMNS + "TIMESTAMP WITH TIME ZONE NOT NULL)",
				"CREATE TABLE IF NOT EXISTS catalog_scan_plan_task (" + TASK_COLUMNS + "TEXT NOT NULL" + TASK_KEY,
				LOCK_TABLE, "INSERT INTO catalog_scan_plan_lock (id) VALUES (1) ON CONFLICT DO NOTHING"),
				"CURRENT_TIMESTAMP + CAST(? AS BIGINT) * INTERVAL '1 second'", "CURRENT_TIMESTAMP");
	}

	/**
	 * MariaDB and MySQL: DATETIME(6) in UTC, so no session time zone shifts an instant.
	 */
	static ScanPlanSql mariadb() {
		return of(
				List.of("CREATE TABLE IF NOT EXISTS catalog_scan_plan (" + PLAN_COLUMNS + "DATETIME(6) NOT NULL)",
						"CREATE TABLE IF NOT EXISTS catalog_scan_plan_task (" + TASK_COLUMNS + "LONGTEXT NOT NULL"
								+ TASK_KEY,
						LOCK_TABLE, "INSERT IGNORE INTO catalog_scan_plan_lock (id) VALUES (1)"),
				"TIMESTAMPADD(SECOND, ?, UTC_TIMESTAMP(6))", "UTC_TIMESTAMP(6)");
	}

	private static ScanPlanSql of(List<String> schema, String expiryFromLifetime, String now) {
		return new ScanPlanSql(schema,
				"INSERT INTO catalog_scan_plan (plan_id, table_name, table_uuid, status, task_count, expires_at)"
						+ " VALUES (?, ?, ?, 'planning', 0, " + expiryFromLifetime + ")",
				"DELETE FROM catalog_scan_plan_task WHERE plan_id IN"
						+ " (SELECT plan_id FROM catalog_scan_plan WHERE expires_at <= " + now + ")",
				"DELETE FROM catalog_scan_plan WHERE expires_at <= " + now,
				"SELECT table_uuid, status, task_count FROM catalog_scan_plan WHERE plan_id = ? AND expires_at > "
						+ now,
				"SELECT t.tasks_json FROM catalog_scan_plan_task t JOIN catalog_scan_plan p ON p.plan_id = t.plan_id"
						+ " WHERE t.plan_id = ? AND t.task_index = ? AND p.table_uuid = ? AND p.status = 'completed'"
						+ " AND p.expires_at > " + now);
	}

	/** The statements for the database behind {@code dataSource}. */
	static ScanPlanSql forDataSource(DataSource dataSource) {
		try (Connection connection = dataSource.getConnection()) {
			DatabaseMetaData metaData = connection.getMetaData();
			String product = metaData.getDatabaseProductName().toLowerCase(Locale.ROOT);
			if (product.contains("h2")) {
				return h2();
			}
			if (product.contains("postgres")) {
				return postgres();
			}
			if (product.contains("mariadb") || product.contains("mysql")) {
				return mariadb();
			}
			throw new IllegalStateException(
					"Scan planning keeps its plans in the catalog's database, and has no" + " statements for "
							+ metaData.getDatabaseProductName() + " (H2, PostgreSQL and MariaDB are" + " supported)");
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot reach the catalog database to set up scan planning", ex);
		}
	}

}
