package dev.idempotency.sample.catalog.planning;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Supplier;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The plan tables' set-up on a database whose plan table an earlier version of the sample
 * made, without the table's UUID: the column is added, the set-up runs again unchanged
 * (every start), and the plans written before stay readable (they have no UUID, so they
 * match no table until they expire). On each database the sample supports, in a schema or
 * database of the test's own.
 */
class ScanPlanSchemaTests {

	/** {@code catalog_scan_plan} as the sample created it before plans had a UUID. */
	private static final String EARLIER_PLAN_TABLE = "CREATE TABLE catalog_scan_plan (plan_id VARCHAR(64) PRIMARY KEY,"
			+ " table_name VARCHAR(1024) NOT NULL, status VARCHAR(16) NOT NULL, task_count INT NOT NULL,"
			+ " expires_at TIMESTAMP NOT NULL)";

	static Stream<Arguments> databases() {
		return Stream.of(Arguments.of("H2", (Supplier<JdbcTestDatabase>) JdbcTestDatabase::h2),
				Arguments.of("PostgreSQL", (Supplier<JdbcTestDatabase>) JdbcTestDatabase::postgres),
				Arguments.of("MariaDB", (Supplier<JdbcTestDatabase>) JdbcTestDatabase::mariadb));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aPlanTableOfAnEarlierVersionGetsTheTableUuid(String name, Supplier<JdbcTestDatabase> kind) throws Exception {
		JdbcTestDatabase database = kind.get().create();
		try (HikariDataSource dataSource = database.dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute(EARLIER_PLAN_TABLE);
			jdbc.update("INSERT INTO catalog_scan_plan (plan_id, table_name, status, task_count, expires_at)"
					+ " VALUES ('earlier', 'ns.events', 'completed', 1, CURRENT_TIMESTAMP)");
			ScanPlanSql sql = ScanPlanSql.forDataSource(dataSource);

			new ScanPlanSchema(jdbc, sql).afterPropertiesSet();
			new ScanPlanSchema(jdbc, sql).afterPropertiesSet();

			jdbc.update(sql.insertPlan(), "current", "ns.events", "6f1c1c6e-4a52-4d2e-9d0e-0b4c2f7e9a11", 60);
			assertThat(jdbc.queryForList("SELECT table_uuid FROM catalog_scan_plan ORDER BY plan_id", String.class))
				.containsExactly("6f1c1c6e-4a52-4d2e-9d0e-0b4c2f7e9a11", null);
		}
		finally {
			database.drop();
		}
	}

}
