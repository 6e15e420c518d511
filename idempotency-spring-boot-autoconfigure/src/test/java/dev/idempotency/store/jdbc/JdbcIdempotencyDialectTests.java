package dev.idempotency.store.jdbc;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Dialect detection, table name validation, the builder's checks and duration conversion,
 * without a database.
 */
class JdbcIdempotencyDialectTests {

	@Test
	void productNamesMapToDialects() {
		assertThat(JdbcIdempotencyDialect.fromProductName("PostgreSQL")).isEqualTo(JdbcIdempotencyDialect.POSTGRESQL);
		assertThat(JdbcIdempotencyDialect.fromProductName("MariaDB")).isEqualTo(JdbcIdempotencyDialect.MARIADB);
		assertThat(JdbcIdempotencyDialect.fromProductName("MySQL")).isEqualTo(JdbcIdempotencyDialect.MARIADB);
		assertThat(JdbcIdempotencyDialect.fromProductName("H2")).isEqualTo(JdbcIdempotencyDialect.H2);
		assertThatIllegalStateException().isThrownBy(() -> JdbcIdempotencyDialect.fromProductName("Oracle"))
			.withMessageContaining("idempotency.store.jdbc.dialect");
	}

	@Test
	void onlyPlainIdentifiersAreTableNames() {
		assertThat(JdbcIdempotencyDialect.validateTableName("idempotency_record")).isEqualTo("idempotency_record");
		assertThat(JdbcIdempotencyDialect.validateTableName("_Keys2")).isEqualTo("_Keys2");
		for (String bad : new String[] { "", "1keys", "keys;drop table x", "a.b", "\"keys\"", "keys--", "k y",
				"x".repeat(51) }) {
			assertThatIllegalArgumentException().as(bad)
				.isThrownBy(() -> JdbcIdempotencyDialect.validateTableName(bad));
		}
		assertThatIllegalArgumentException().isThrownBy(() -> JdbcIdempotencyDialect.validateTableName(null));
	}

	@Test
	void theBuilderRefusesABadTableANegativeTimeoutAndAnAsynchronousCommitOffPostgresql() {
		DriverManagerDataSource unused = new DriverManagerDataSource("jdbc:h2:mem:never-connected");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcIdempotencyStore.builder(unused)
				.dialect(JdbcIdempotencyDialect.H2)
				.tableName("keys;drop table x")
				.build())
			.withMessageContaining("not a plain SQL identifier");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcIdempotencyStore.builder(unused)
				.dialect(JdbcIdempotencyDialect.H2)
				.queryTimeout(Duration.ofSeconds(-1))
				.build())
			.withMessageContaining("must not be negative");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcIdempotencyStore.builder(unused)
				.dialect(JdbcIdempotencyDialect.MARIADB)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.ON)
				.build())
			.withMessageContaining("PostgreSQL only");
		assertThat(JdbcIdempotencyStore.builder(unused).dialect(JdbcIdempotencyDialect.MARIADB).build().reserveCommit())
			.as("the default, WITH_ATOMIC_COMPLETION, is durable off PostgreSQL")
			.isEqualTo(JdbcIdempotencyStore.ReserveCommit.OFF);
	}

	@Test
	void durationsBecomeWholeMicrosecondsRoundedUp() {
		assertThat(JdbcRecordRows.micros(Duration.ofMillis(800))).isEqualTo(800_000);
		assertThat(JdbcRecordRows.micros(Duration.ofNanos(1))).isEqualTo(1);
		assertThat(JdbcRecordRows.micros(Duration.ofSeconds(3, 1_500))).isEqualTo(3_000_002);
	}

}
