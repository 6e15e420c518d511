package dev.idempotency.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan.Filter;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.repository.config.AbstractJdbcConfiguration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcOperations;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * With {@code transactional-completion}, a Spring Data JDBC repository write and the
 * record's completion commit together, or roll back together, on PostgreSQL (a schema of
 * its own).
 */
class SpringDataJdbcTransactionalCompletionTests {

	private static final String TABLE = "idempotency_record";

	private JdbcTestDatabase database;

	private AnnotationConfigApplicationContext context;

	private JdbcIdempotencyStore store;

	private String owner;

	@BeforeEach
	void start() throws Exception {
		this.database = JdbcTestDatabase.postgres().create();
		this.context = new AnnotationConfigApplicationContext();
		this.context.registerBean(JdbcTestDatabase.class, () -> this.database);
		this.context.register(DataJdbcConfiguration.class);
		this.context.refresh();
		DataSource dataSource = this.context.getBean(DataSource.class);
		JdbcStoreTestSupport.createSchema(dataSource, TABLE);
		JdbcClient.create(dataSource)
			.sql("CREATE TABLE app_order (id BIGSERIAL PRIMARY KEY, item VARCHAR(100) NOT NULL)")
			.update();
		this.store = JdbcIdempotencyStore.builder(dataSource)
			.dialect(JdbcIdempotencyDialect.POSTGRESQL)
			.tableName(TABLE)
			.transactionalCompletion(true)
			.queryTimeout(Duration.ofSeconds(2))
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
	}

	@AfterEach
	void stop() throws Exception {
		try {
			this.context.close();
		}
		finally {
			this.database.drop();
		}
	}

	@Test
	void theRepositoryWriteAndTheCompletionCommitTogether() {
		RecordId id = reserve();
		transaction().executeWithoutResult((status) -> {
			orders().save(new AppOrder(null, "book"));
			assertThat(this.store.complete(id, this.owner, response())).isTrue();
		});
		assertThat(orders().count()).isEqualTo(1);
		assertThat(this.store.find(id)).hasValueSatisfying((record) -> {
			assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
		});
	}

	@Test
	void aRollbackUndoesTheRepositoryWriteAndTheCompletion() {
		RecordId id = reserve();
		assertThatIllegalStateException().isThrownBy(() -> transaction().executeWithoutResult((status) -> {
			orders().save(new AppOrder(null, "book"));
			assertThat(this.store.complete(id, this.owner, response())).isTrue();
			throw new IllegalStateException("business failure after the completion");
		}));
		assertThat(orders().count()).isZero();
		assertThat(this.store.find(id)).hasValueSatisfying((record) -> {
			assertThat(record.state()).as("still owned, released or taken over later, never a stored answer")
				.isEqualTo(RecordState.IN_PROGRESS);
		});
	}

	private RecordId reserve() {
		RecordId id = new RecordId("data-jdbc", UUID.randomUUID().toString());
		this.owner = UUID.randomUUID().toString();
		assertThat(this.store
			.reserve(new ReserveRequest(id, "fp", "op", this.owner, Duration.ofMinutes(1), Duration.ofMinutes(10))))
			.isInstanceOf(ReserveResult.Acquired.class);
		return id;
	}

	private static StoredResponse response() {
		return new StoredResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8));
	}

	private OrderRepository orders() {
		return this.context.getBean(OrderRepository.class);
	}

	private TransactionTemplate transaction() {
		return new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
	}

	@Table("app_order")
	record AppOrder(@Id Long id, String item) {

	}

	interface OrderRepository extends CrudRepository<AppOrder, Long> {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableJdbcRepositories(considerNestedRepositories = true,
			basePackageClasses = SpringDataJdbcTransactionalCompletionTests.class,
			includeFilters = @Filter(type = FilterType.ASSIGNABLE_TYPE, classes = OrderRepository.class))
	static class DataJdbcConfiguration extends AbstractJdbcConfiguration {

		@Bean(destroyMethod = "close")
		HikariDataSource dataSource(JdbcTestDatabase database) {
			return database.dataSource(4);
		}

		@Bean
		NamedParameterJdbcOperations namedParameterJdbcOperations(DataSource dataSource) {
			return new NamedParameterJdbcTemplate(dataSource);
		}

		@Bean
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

}
