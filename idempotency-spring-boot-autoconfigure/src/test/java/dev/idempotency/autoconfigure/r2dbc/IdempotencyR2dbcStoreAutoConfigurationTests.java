package dev.idempotency.autoconfigure.r2dbc;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.InvalidIdempotencySettingsException;
import dev.idempotency.autoconfigure.internal.IdempotencyPurgeScheduler;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import dev.idempotency.test.servers.JdbcTestDatabase;
import dev.idempotency.test.servers.TcpProxy;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Which store {@code idempotency.store.type=r2dbc} gives, on the application's
 * ConnectionFactory (Boot's {@code spring.r2dbc.*}), and how its table is made or missed.
 * H2 in memory for each context, PostgreSQL and MariaDB with a database of their own for
 * the DDL of each.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyR2dbcStoreAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(R2dbcAutoConfiguration.class,
				IdempotencyR2dbcStoreAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.store.type=r2dbc");

	private static String h2Url() {
		return "r2dbc:h2:mem:///app_" + UUID.randomUUID().toString().replace("-", "") + "?DB_CLOSE_DELAY=-1";
	}

	private static ReserveRequest request() {
		return new ReserveRequest(new RecordId("test", UUID.randomUUID().toString()), "fp", "POST /orders",
				UUID.randomUUID().toString(), Duration.ofSeconds(30), Duration.ofHours(1));
	}

	@Test
	void typeR2dbcWithAConnectionFactoryGivesAWorkingStoreOnAnEmbeddedTable() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url()).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(IdempotencyStore.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			assertThat(store).isInstanceOf(R2dbcIdempotencyStore.class);
			assertThat(((R2dbcIdempotencyStore) store).dialect()).isEqualTo(JdbcIdempotencyDialect.H2);
			assertThat(store.reserve(request())).isEqualTo(new ReserveResult.Acquired(false));
		});
	}

	/**
	 * Expired records are purged on a schedule, as the JDBC store's are, unless turned
	 * off: a record whose retention ended is gone after one run, a live one stays.
	 */
	@Test
	void expiredRecordsArePurgedOnAScheduleUnlessTurnedOff() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url()).run((context) -> {
			assertThat(context).hasNotFailed();
			IdempotencyPurgeScheduler purge = context.getBean(IdempotencyPurgeScheduler.class);
			assertThat(purge.isRunning()).isTrue();
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			ReserveRequest expired = new ReserveRequest(new RecordId("test", UUID.randomUUID().toString()), "fp",
					"POST /orders", UUID.randomUUID().toString(), Duration.ofMillis(1), Duration.ofMillis(1));
			store.reserve(expired);
			store.reserve(request());
			Thread.sleep(50);
			assertThat(purge.purge()).isEqualTo(1);
			assertThat(count(context.getBean(ConnectionFactory.class), "idempotency_record")).isEqualTo(1);
		});
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url(), "idempotency.store.r2dbc.purge.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyPurgeScheduler.class));
	}

	/**
	 * The store's own properties are checked with every other idempotency.* property and
	 * reported at once, before the database is reached.
	 */
	@Test
	void itsPropertiesAreCheckedWithTheOthersBeforeTheDatabaseIsReached() {
		this.runner
			.withPropertyValues("spring.r2dbc.url=" + h2Url(), "idempotency.store.r2dbc.table-name=idem;drop",
					"idempotency.store.r2dbc.purge.interval=0s", "idempotency.store.r2dbc.purge.batch-size=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageStartingWith("3 problems: idempotency.store.r2dbc.table-name")
				.hasMessageContaining("is not a plain SQL identifier")
				.hasMessageContaining("idempotency.store.r2dbc.purge.interval must be positive, was PT0S")
				.hasMessageContaining("idempotency.store.r2dbc.purge.batch-size must be at least 1"));
	}

	@Test
	void theTableNameIsTheConfiguredOne() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url(), "idempotency.store.r2dbc.table-name=my_records")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				context.getBean(IdempotencyStore.class).reserve(request());
				assertThat(count(context.getBean(ConnectionFactory.class), "my_records")).isEqualTo(1);
			});
	}

	@Test
	void aUserStoreReplacesTheR2dbcStore() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url())
			.withUserConfiguration(UserStoreConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(IdempotencyStore.class)
					.doesNotHaveBean(R2dbcIdempotencyStore.class);
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
			});
	}

	@Test
	void aMissingTableWithSchemaCreationOffFailsTheStartUpNamingTheTableAndTheFix() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url(), "idempotency.store.r2dbc.initialize-schema=never")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("not found");
				FailureAnalysis analysis = new IdempotencyR2dbcTableMissingFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains("idempotency_record", "H2",
						"idempotency.store.r2dbc.initialize-schema=never");
				assertThat(analysis.getAction()).contains("idempotency.store.r2dbc.initialize-schema=always");
			});
	}

	/**
	 * As with the JDBC store: only on PostgreSQL may a reservation commit without waiting
	 * for its WAL flush; 'on' elsewhere fails the start-up naming the property.
	 */
	@Test
	void anAsynchronousCommitOfTheReservationIsRefusedOnAnotherDatabaseNamingTheProperty() {
		this.runner.withPropertyValues("spring.r2dbc.url=" + h2Url()).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(R2dbcIdempotencyStore.class).reserveCommit())
				.isEqualTo(JdbcIdempotencyStore.ReserveCommit.OFF);
		});
		this.runner
			.withPropertyValues("spring.r2dbc.url=" + h2Url(),
					"idempotency.store.r2dbc.postgresql.reserve-asynchronous-commit=on")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("idempotency.store.r2dbc.postgresql.reserve-asynchronous-commit=on needs"
							+ " PostgreSQL, but the store's database is H2");
			});
	}

	@Test
	void onPostgresqlTheTableIsCreatedWhenAskedAndKept() throws Exception {
		assertTheTableIsCreatedWithAlways(JdbcTestDatabase.postgres());
	}

	@Test
	void onMariaDbTheTableIsCreatedWhenAskedAndKept() throws Exception {
		assertTheTableIsCreatedWithAlways(JdbcTestDatabase.mariadb());
	}

	/**
	 * A server's database is not embedded: the default does not create the table; always
	 * does, with its indexes, and a second start leaves it and its records alone.
	 */
	private void assertTheTableIsCreatedWithAlways(JdbcTestDatabase database) throws Exception {
		database.create();
		try {
			ApplicationContextRunner onDatabase = this.runner.withPropertyValues(
					"spring.r2dbc.url=" + database.r2dbcUrl(), "spring.r2dbc.username=" + database.user());
			onDatabase.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(new IdempotencyR2dbcTableMissingFailureAnalyzer().analyze(context.getStartupFailure())
					.getDescription()).contains("initialize-schema=embedded");
			});
			ApplicationContextRunner always = onDatabase
				.withPropertyValues("idempotency.store.r2dbc.initialize-schema=always");
			always.run((context) -> {
				assertThat(context).hasNotFailed();
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(store.reserve(request())).isEqualTo(new ReserveResult.Acquired(false));
				assertThat(store.inspectByKey("no-such-key", 10)).isEmpty();
				// Only on PostgreSQL may the reservation of an atomic run commit
				// asynchronously (the default, as the JDBC store's).
				assertThat(context.getBean(R2dbcIdempotencyStore.class).reserveCommit())
					.isEqualTo(database.r2dbcUrl().startsWith("r2dbc:postgresql")
							? JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION
							: JdbcIdempotencyStore.ReserveCommit.OFF);
			});
			always.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(count(context.getBean(ConnectionFactory.class), "idempotency_record")).isEqualTo(1);
			});
		}
		finally {
			database.drop();
		}
	}

	/**
	 * As with the JDBC store: a database down at start-up does not stop the application.
	 * Keyed work is refused as for an unavailable store while it stays down; once it
	 * answers, the table is set up before the store's first connection and the store
	 * works.
	 */
	@Test
	void aDatabaseDownAtStartUpDoesNotStopTheApplicationAndTheTableIsSetUpOnceItAnswers() throws Exception {
		JdbcTestDatabase database = JdbcTestDatabase.postgres().create();
		try (TcpProxy proxy = TcpProxy.to(database.port())) {
			proxy.cut();
			this.runner
				.withPropertyValues("spring.r2dbc.url=" + database.r2dbcUrl(proxy.port()),
						"spring.r2dbc.username=" + database.user(), "idempotency.store.r2dbc.initialize-schema=always")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					IdempotencyStore store = context.getBean(IdempotencyStore.class);
					assertThatExceptionOfType(IdempotencyStoreException.class)
						.isThrownBy(() -> store.reserve(request()));
					proxy.restore();
					// The first calls may run out of the store's 2 s while the set-up
					// runs
					// (on a busy machine): a client retries, as here.
					assertThat(reserveWithin(store, Duration.ofSeconds(30)))
						.isEqualTo(new ReserveResult.Acquired(false));
					ConnectionFactory application = context.getBean(ConnectionFactory.class);
					assertThat(count(application, "idempotency_record")).isEqualTo(1);
					// Atomic completion still holds: the application's own statements on
					// its
					// factory join the transaction the door begins on the store's, and
					// roll
					// back with it.
					DatabaseClient client = DatabaseClient.create(application);
					client.sql("CREATE TABLE placed_order (id INT)").then().block(Duration.ofSeconds(10));
					TransactionalOperator door = TransactionalOperator
						.create(context.getBean(R2dbcIdempotencyStore.class).lazyTransactionManager());
					assertThatIllegalStateException().isThrownBy(() -> client.sql("INSERT INTO placed_order VALUES (1)")
						.then()
						.then(Mono.error(new IllegalStateException("the handler failed")))
						.as(door::transactional)
						.block(Duration.ofSeconds(10)));
					assertThat(count(application, "placed_order")).isZero();
				});
		}
		finally {
			database.drop();
		}
	}

	@Test
	void withoutAConnectionFactoryTheStartUpFailsNamingSpringR2dbcUrl(CapturedOutput output) {
		SpringApplication application = new SpringApplication(NoConnectionFactoryApp.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of("idempotency.store.type", "r2dbc"));
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.store.type=r2dbc but no IdempotencyStore bean exists")
			.contains("spring.r2dbc.url");
	}

	private static ReserveResult reserveWithin(IdempotencyStore store, Duration within) throws InterruptedException {
		long deadline = System.nanoTime() + within.toNanos();
		while (true) {
			try {
				return store.reserve(request());
			}
			catch (IdempotencyStoreException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
				Thread.sleep(200);
			}
		}
	}

	private static long count(ConnectionFactory connectionFactory, String table) {
		Long count = DatabaseClient.create(connectionFactory)
			.sql("SELECT COUNT(*) AS n FROM " + table)
			.map((row, metadata) -> row.get("n", Long.class))
			.one()
			.block(Duration.ofSeconds(10));
		return (count != null) ? count : -1;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyR2dbcStoreAutoConfiguration.class, IdempotencyAutoConfiguration.class })
	static class NoConnectionFactoryApp {

	}

	@Configuration(proxyBeanMethods = false)
	static class UserStoreConfiguration {

		@Bean
		IdempotencyStore userStore() {
			return InMemoryIdempotencyStore.builder().build();
		}

	}

}
