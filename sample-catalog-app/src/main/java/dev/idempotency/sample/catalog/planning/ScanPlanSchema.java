package dev.idempotency.sample.catalog.planning;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * Creates the plan tables in the catalog's database if they are missing, before
 * {@link ScanPlanning} uses them. Plain {@code CREATE TABLE IF NOT EXISTS} rather than a
 * Liquibase changelog: Liquibase's H2 support looks its bookkeeping tables up in upper
 * case, and the catalog's H2 file is opened with {@code DATABASE_TO_LOWER=TRUE}, so a
 * second start on the same file would fail creating them again (see
 * docs/jdbc-store.md#schema). A plan table made by an earlier version of the sample gets
 * the {@code table_uuid} column it lacks (plans written before have none and match no
 * table until they expire).
 */
final class ScanPlanSchema implements InitializingBean {

	private final JdbcOperations jdbc;

	private final ScanPlanSql sql;

	ScanPlanSchema(JdbcOperations jdbc, ScanPlanSql sql) {
		this.jdbc = jdbc;
		this.sql = sql;
	}

	@Override
	public void afterPropertiesSet() {
		this.sql.schema().forEach(this.jdbc::execute);
		try {
			this.jdbc.queryForList(ScanPlanSql.PROBE_TABLE_UUID);
		}
		catch (DataAccessException ex) {
			// Probed rather than ADD COLUMN IF NOT EXISTS, which MySQL does not have.
			this.jdbc.execute(ScanPlanSql.ADD_TABLE_UUID);
		}
	}

}
