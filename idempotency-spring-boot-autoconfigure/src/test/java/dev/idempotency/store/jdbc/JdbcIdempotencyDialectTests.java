package dev.idempotency.store.jdbc;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Dialect detection, table name validation and duration conversion, without a database.
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
	void durationsBecomeWholeMicrosecondsRoundedUp() {
		assertThat(JdbcRecordRows.micros(Duration.ofMillis(800))).isEqualTo(800_000);
		assertThat(JdbcRecordRows.micros(Duration.ofNanos(1))).isEqualTo(1);
		assertThat(JdbcRecordRows.micros(Duration.ofSeconds(3, 1_500))).isEqualTo(3_000_002);
	}

}
