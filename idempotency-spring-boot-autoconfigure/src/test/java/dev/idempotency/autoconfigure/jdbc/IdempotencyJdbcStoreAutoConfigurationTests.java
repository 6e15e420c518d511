package dev.idempotency.autoconfigure.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Consumer;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.internal.IdempotencyPurgeScheduler;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.InvalidIdempotencySettingsException;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.servers.JdbcTestDatabase;
import liquibase.integration.spring.SpringLiquibase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which beans the JDBC store's auto-configuration contributes, under which properties,
 * and how they back off. Each context gets an H2 database of its own.
 */
class IdempotencyJdbcStoreAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataSourceAutoConfiguration.class, IdempotencyJdbcStoreAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + h2Url(), "spring.datasource.generate-unique-name=false");

	private static String h2Url() {
		return "jdbc:h2:mem:app_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";
	}

	@Test
	void typeJdbcWithADataSourceGivesAWorkingStoreOnAnEmbeddedSchema() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc").run((context) -> {
			assertThat(context).hasSingleBean(JdbcIdempotencyStore.class)
				.hasSingleBean(IdempotencyJdbcSchemaInitializer.class)
				.hasSingleBean(IdempotencyPurgeScheduler.class);
			JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
			assertThat(store.name()).isEqualTo("jdbc");
			assertThat(store.dialect()).isEqualTo(JdbcIdempotencyDialect.H2);
			assertThat(store.reserve(request())).isEqualTo(new ReserveResult.Acquired(false));
			assertThat(context.getBean(IdempotencyPurgeScheduler.class).isRunning()).isTrue();
		});
	}

	@Test
	void aUserStoreReplacesTheJdbcStore() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.withUserConfiguration(UserStoreConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyStore.class)
					.doesNotHaveBean(JdbcIdempotencyStore.class)
					.doesNotHaveBean(IdempotencyPurgeScheduler.class);
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
			});
	}

	@Test
	void otherStoreTypesLeaveJdbcAlone() {
		this.runner.withPropertyValues("idempotency.store.type=memory").run(this::hasNoJdbcStore);
		this.runner.run(this::hasNoJdbcStore);
	}

	@Test
	void withoutAnyDataSourceThereIsNoStore() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyJdbcStoreAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=jdbc")
			.run(this::hasNoJdbcStore);
	}

	private void hasNoJdbcStore(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed()
			.doesNotHaveBean(JdbcIdempotencyStore.class)
			.doesNotHaveBean(IdempotencyJdbcSchemaInitializer.class)
			.doesNotHaveBean(IdempotencyPurgeScheduler.class);
	}

	@Test
	void initializeSchemaNeverRunsNoChangelogAndWithoutATableFailsTheStart() {
		String url = h2Url();
		this.runner
			.withPropertyValues("spring.datasource.url=" + url, "idempotency.store.type=jdbc",
					"idempotency.store.jdbc.initialize-schema=never")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(IdempotencyTableMissingException.class)
				.hasMessageContaining("idempotency_record"));
		assertThat(tables(DataSourceBuilder.create().url(url).username("sa").build()))
			.doesNotContain("IDEMPOTENCY_RECORD", "IDEMPOTENCY_DATABASECHANGELOG");
	}

	@Test
	void theTableNameAndPurgeAreConfigurable() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.table-name=my_keys",
					"idempotency.store.jdbc.purge.enabled=false", "idempotency.store.jdbc.dialect=h2")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotencyPurgeScheduler.class);
				assertThat(tables(context.getBean(DataSource.class))).contains("MY_KEYS")
					.doesNotContain("IDEMPOTENCY_RECORD");
				assertThat(context.getBean(JdbcIdempotencyStore.class).reserve(request()))
					.isInstanceOf(ReserveResult.Acquired.class);
			});
	}

	@Test
	void aTableNameThatIsNotAnIdentifierIsRejected() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc",
					"idempotency.store.jdbc.table-name=records; DROP TABLE users")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("not a plain SQL identifier"));
	}

	@Test
	void theStartersChangelogRunsBesideTheApplicationsOwn() {
		this.runner.withConfiguration(AutoConfigurations.of(LiquibaseAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=jdbc",
					"spring.liquibase.change-log=classpath:db/test-app/changelog.yaml")
			.run((context) -> {
				assertThat(context).hasSingleBean(SpringLiquibase.class).hasSingleBean(JdbcIdempotencyStore.class);
				assertThat(tables(context.getBean(DataSource.class))).contains("APP_ORDERS", "DATABASECHANGELOG",
						"IDEMPOTENCY_RECORD", "IDEMPOTENCY_DATABASECHANGELOG");
			});
	}

	@Test
	void aDedicatedUrlIsUsedInsteadOfTheApplicationDataSource() {
		String dedicatedUrl = h2Url();
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + dedicatedUrl,
					"idempotency.store.jdbc.username=sa")
			.run((context) -> {
				assertThat(context).hasSingleBean(JdbcIdempotencyStore.class);
				// What the application gets by type is still its own DataSource.
				DataSource application = context.getBeanProvider(DataSource.class).getIfUnique();
				assertThat(application).isSameAs(context.getBean("dataSource"));
				assertThat(tables(application)).doesNotContain("IDEMPOTENCY_RECORD");
				DataSource dedicated = context.getBean(IdempotencyJdbcDataSource.class).getDataSource();
				assertThat(dedicated).isNotSameAs(application).isInstanceOf(HikariDataSource.class);
				assertThat(tables(dedicated)).contains("IDEMPOTENCY_RECORD");
			});
	}

	@Test
	void theDedicatedPoolTakesItsSettingsFromPoolProperties() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + h2Url(),
					"idempotency.store.jdbc.username=sa", "idempotency.store.jdbc.pool.maximum-pool-size=24",
					"idempotency.store.jdbc.pool.pool-name=idempotency-store")
			.run((context) -> {
				HikariDataSource pool = (HikariDataSource) context.getBean(IdempotencyJdbcDataSource.class)
					.getDataSource();
				assertThat(pool.getMaximumPoolSize()).isEqualTo(24);
				assertThat(pool.getPoolName()).isEqualTo("idempotency-store");
				assertThat(pool.getConnectionTimeout()).as("the store's default").isEqualTo(1000);
			});
	}

	@Test
	void aPoolSettingThePoolDoesNotHaveFailsTheStartNamingIt() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + h2Url(),
					"idempotency.store.jdbc.pool.maximum-pool-sise=24")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.store.jdbc.pool.maximum-pool-sise"));
	}

	@Test
	void aDedicatedUrlIsEnoughWithoutAnApplicationDataSource() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyJdbcStoreAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + h2Url())
			.run((context) -> {
				assertThat(context).hasSingleBean(JdbcIdempotencyStore.class);
				// The only DataSource is the store's own pool, which Boot did not make
				// for the application.
				assertThat(context.getBeanNamesForType(DataSource.class)).containsExactly("idempotencyStoreDataSource");
				assertThat(context.getBean(IdempotencyJdbcDataSource.class).getDataSource())
					.isSameAs(context.getBean("idempotencyStoreDataSource"));
			});
	}

	@Test
	void anIdempotencyDataSourceBeanIsPreferred() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.withUserConfiguration(QualifiedDataSourceConfiguration.class)
			.run((context) -> {
				DataSource qualified = context.getBean("idempotencyDataSource", DataSource.class);
				assertThat(context.getBean(IdempotencyJdbcDataSource.class).getDataSource()).isSameAs(qualified);
				assertThat(tables(qualified)).contains("IDEMPOTENCY_RECORD");
				assertThat(tables(context.getBean("applicationDataSource", DataSource.class)))
					.doesNotContain("IDEMPOTENCY_RECORD");
			});
	}

	/**
	 * First contact: a server database and nothing but the store type gives a working
	 * table.
	 */
	@Test
	void onAServerDatabaseTheTableIsCreatedByDefault() throws Exception {
		withPostgres((postgres) -> postgres.run((context) -> {
			assertThat(context.getBean(JdbcIdempotencyStore.class).dialect())
				.isEqualTo(JdbcIdempotencyDialect.POSTGRESQL);
			assertThat(tables(context.getBean(DataSource.class))).contains("IDEMPOTENCY_RECORD");
			assertThat(context.getBean(JdbcIdempotencyStore.class).reserve(request()))
				.isInstanceOf(ReserveResult.Acquired.class);
		}));
	}

	@Test
	void reserveAsynchronousCommitIsTakenOnPostgresql() throws Exception {
		withPostgres((postgres) -> postgres
			.withPropertyValues("idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=true")
			.run((context) -> {
				JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
				assertThat(store.reserveAsynchronousCommit()).isTrue();
				assertThat(store.reserveCommit()).isEqualTo(JdbcIdempotencyStore.ReserveCommit.ON);
				assertThat(store.reserve(request())).isInstanceOf(ReserveResult.Acquired.class);
			}));
	}

	/** The default: asynchronous where an atomic completion follows, on PostgreSQL. */
	@Test
	void reserveAsynchronousCommitIsWithAtomicCompletionByDefaultOnPostgresql() throws Exception {
		withPostgres((postgres) -> postgres
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).reserveCommit())
				.isEqualTo(JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION)));
		withPostgres((postgres) -> postgres
			.withPropertyValues("idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=false")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).reserveCommit())
				.isEqualTo(JdbcIdempotencyStore.ReserveCommit.OFF)));
	}

	/** An option that would silently do nothing elsewhere fails the start instead. */
	@Test
	void reserveAsynchronousCommitOnAnotherDatabaseFailsTheStartNamingTheProperty() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc",
					"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining(
						"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on needs PostgreSQL")
				.hasMessageContaining("H2"));
	}

	/**
	 * The store's own properties are checked with every other idempotency.* property,
	 * before the store reaches the database: every problem at once, by its property.
	 */
	@Test
	void theStoresPropertiesAreReportedWithTheOthersBeforeTheStoreIsBuilt() {
		this.runner.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.lifetime=0s",
					"idempotency.store.jdbc.purge.interval=0s", "idempotency.store.jdbc.purge.batch-size=0",
					"idempotency.store.jdbc.dialect=mariadb",
					"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageStartingWith("4 problems: idempotency.lifetime must be positive, was PT0S")
				.hasMessageContaining("idempotency.store.jdbc.purge.interval must be positive, was PT0S")
				.hasMessageContaining("idempotency.store.jdbc.purge.batch-size must be at least 1")
				.hasMessageContaining("idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on needs"
						+ " PostgreSQL, but idempotency.store.jdbc.dialect is MARIADB"));
	}

	/**
	 * The asynchronous commit is a setting of the store the starter builds: with a store
	 * of the application's own it does nothing, so it is not checked against the dialect,
	 * while the purge's properties, which still apply, are.
	 */
	@Test
	void withTheApplicationsOwnStoreOnlyThePurgePropertiesAreChecked() {
		this.runner.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withUserConfiguration(UserStoreConfiguration.class)
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.dialect=mariadb",
					"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyStore.class));
		this.runner.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withUserConfiguration(UserStoreConfiguration.class)
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.dialect=mariadb",
					"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on",
					"idempotency.store.jdbc.purge.batch-size=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageStartingWith("idempotency.store.jdbc.purge.batch-size must be at least 1"));
	}

	/** Elsewhere the default is durable: no per-transaction equivalent. */
	@Test
	void reserveAsynchronousCommitIsOffByDefaultOnAnotherDatabase() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc").run((context) -> {
			JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
			assertThat(store.reserveAsynchronousCommit()).isFalse();
			assertThat(store.reserveCommit()).isEqualTo(JdbcIdempotencyStore.ReserveCommit.OFF);
		});
	}

	/** Never a healthy-looking app that refuses every request: no table, no start. */
	@Test
	void withoutTheTableTheStartFailsNamingTableDatabaseAndProperty() throws Exception {
		withPostgres((postgres) -> postgres.withPropertyValues("idempotency.store.jdbc.initialize-schema=never")
			.run((context) -> {
				assertThat(context).getFailure().rootCause().isInstanceOf(IdempotencyTableMissingException.class);
				FailureAnalysis analysis = new IdempotencyTableMissingFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("idempotency_record", "PostgreSQL",
						"initialize-schema=never");
				assertThat(analysis.getAction()).contains("idempotency.store.jdbc.initialize-schema=always");
			}));
	}

	@Test
	void withoutLiquibaseAndWithoutTheTableTheStartFailsNamingLiquibase() throws Exception {
		withPostgres((postgres) -> postgres.withClassLoader(new FilteredClassLoader(SpringLiquibase.class))
			.run((context) -> {
				assertThat(context).getFailure().rootCause().isInstanceOf(IdempotencyTableMissingException.class);
				FailureAnalysis analysis = new IdempotencyTableMissingFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("idempotency_record", "PostgreSQL", "liquibase-core");
				assertThat(analysis.getAction()).contains("liquibase-core", "4.33.0");
			}));
	}

	@Test
	void withoutLiquibaseAnExistingTableIsEnough() throws Exception {
		withPostgres((postgres) -> {
			postgres.run((context) -> assertThat(context).hasNotFailed());
			postgres.withClassLoader(new FilteredClassLoader(SpringLiquibase.class))
				.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcIdempotencyStore.class));
		});
	}

	/**
	 * The starter's changelog included in the application's own, applied by Boot's
	 * Liquibase: the store waits for it (Boot's database initialization ordering) and
	 * finds its table, with the starter's own set-up switched off or left on (its change
	 * set then sees the table and is marked as run).
	 */
	@Test
	void theStartersChangelogCanBeIncludedInTheApplicationsOwn() throws Exception {
		withPostgres((postgres) -> {
			ApplicationContextRunner including = postgres
				.withConfiguration(AutoConfigurations.of(LiquibaseAutoConfiguration.class))
				.withPropertyValues(
						"spring.liquibase.change-log=classpath:db/test-app/changelog-including-idempotency.yaml");
			including.withPropertyValues("idempotency.store.jdbc.initialize-schema=never").run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(tables(context.getBean(DataSource.class))).contains("APP_ORDERS", "IDEMPOTENCY_RECORD")
					.doesNotContain("IDEMPOTENCY_DATABASECHANGELOG");
				assertThat(context.getBean(JdbcIdempotencyStore.class).reserve(request()))
					.isInstanceOf(ReserveResult.Acquired.class);
			});
			including.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(JdbcIdempotencyStore.class).reserve(request()))
					.isInstanceOf(ReserveResult.Acquired.class);
			});
		});
	}

	/**
	 * Boot's ordering: a store bean depends on every database initializer, ours included.
	 */
	@Test
	void theStoreDependsOnDatabaseInitialization() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc").run((context) -> {
			String[] dependencies = context.getBeanFactory().getBeanDefinition("idempotencyStore").getDependsOn();
			assertThat(dependencies).contains("idempotencyJdbcSchemaInitializer");
		});
	}

	@Test
	void transactionalCompletionIsOnWithTheApplicationsDataSourceAndOffWithADedicatedOne() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).transactionalCompletion())
				.as("the application's DataSource")
				.isTrue());
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.transactional-completion=false")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).transactionalCompletion())
				.isFalse());
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + h2Url(),
					"idempotency.store.jdbc.username=sa")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).transactionalCompletion())
				.as("a dedicated pool")
				.isFalse());
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.withUserConfiguration(QualifiedDataSourceConfiguration.class)
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).transactionalCompletion())
				.as("an @IdempotencyDataSource")
				.isFalse());
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.url=" + h2Url(),
					"idempotency.store.jdbc.username=sa", "idempotency.store.jdbc.transactional-completion=true")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).transactionalCompletion())
				.as("asked for")
				.isTrue());
	}

	private static void withPostgres(Consumer<ApplicationContextRunner> test) throws Exception {
		JdbcTestDatabase database = JdbcTestDatabase.postgres().create();
		try {
			test.accept(new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
						IdempotencyJdbcStoreAutoConfiguration.class))
				.withPropertyValues("spring.datasource.url=" + database.url(), "spring.datasource.username=postgres",
						"idempotency.store.type=jdbc"));
		}
		finally {
			database.drop();
		}
	}

	/** Table names in the connection's current schema, upper case. */
	private static java.util.List<String> tables(DataSource dataSource) {
		return JdbcClient.create(dataSource)
			.sql("SELECT UPPER(table_name) FROM information_schema.tables WHERE table_schema = CURRENT_SCHEMA")
			.query(String.class)
			.list();
	}

	private static ReserveRequest request() {
		return new ReserveRequest(new RecordId("auto-config", UUID.randomUUID().toString()), "fp", "op",
				UUID.randomUUID().toString(), Duration.ofMinutes(1), Duration.ofMinutes(10));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserStoreConfiguration {

		@Bean
		IdempotencyStore userStore() {
			return InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxEntries(100)
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class QualifiedDataSourceConfiguration {

		@Bean
		@Primary
		DataSource applicationDataSource() {
			return DataSourceBuilder.create().url(h2Url()).username("sa").build();
		}

		@Bean
		@IdempotencyDataSource
		DataSource idempotencyDataSource() {
			return DataSourceBuilder.create().url(h2Url()).username("sa").build();
		}

	}

}
