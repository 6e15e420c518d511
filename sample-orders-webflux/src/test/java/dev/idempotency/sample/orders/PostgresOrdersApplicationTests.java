package dev.idempotency.sample.orders;

import java.sql.SQLException;

import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample on PostgreSQL through R2DBC, its orders and its records in a database of
 * this test's own, dropped afterwards.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PostgresOrdersApplicationTests extends AbstractOrdersApplicationTests {

	private static final JdbcTestDatabase database = create();

	private static JdbcTestDatabase create() {
		try {
			return JdbcTestDatabase.postgresDatabase().create();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot create the test's PostgreSQL database", ex);
		}
	}

	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		registry.add("spring.r2dbc.url", database::r2dbcUrl);
		registry.add("spring.r2dbc.username", database::user);
		registry.add("spring.r2dbc.password", () -> "");
	}

	/** Dropped with FORCE: the cached application's connections are ended with it. */
	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

}
