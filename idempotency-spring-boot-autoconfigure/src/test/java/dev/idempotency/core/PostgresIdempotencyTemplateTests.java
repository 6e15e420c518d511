package dev.idempotency.core;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotencyTemplateTests} on the JDBC store and the PostgreSQL server at
 * 127.0.0.1:5432, in a schema of this class's own, dropped afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresIdempotencyTemplateTests extends IdempotencyTemplateTests {

	private static final String TABLE = "idempotency_template";

	private JdbcTestDatabase database;

	private HikariDataSource dataSource;

	@BeforeAll
	void createDatabase() throws Exception {
		this.database = JdbcTestDatabase.postgres().create();
		this.dataSource = this.database.dataSource(4);
		assertThat(JdbcStoreTestSupport.createSchema(this.dataSource, TABLE)).isTrue();
	}

	@AfterAll
	void dropDatabase() throws Exception {
		try {
			if (this.dataSource != null) {
				this.dataSource.close();
			}
		}
		finally {
			if (this.database != null) {
				this.database.drop();
			}
		}
	}

	@Override
	protected IdempotencyStore store() {
		return JdbcIdempotencyStore.builder(this.dataSource)
			.dialect(JdbcIdempotencyDialect.POSTGRESQL)
			.tableName(TABLE)
			.transactionalCompletion(false)
			.queryTimeout(java.time.Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
	}

}
