package dev.idempotency.method;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.core.IdempotencyErrorType;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The method door in record-after-success mode: replays and refusals as in lease mode;
 * inside a caller's transaction that the store does not join (here the in-memory store),
 * the result is recorded only after that transaction commits: racing calls both commit
 * (the model's weakness; with a store that joins, the loser is rolled back, see
 * {@code AtomicCompletionCrashTests}), and a transaction that rolls back records nothing.
 */
class RecordAfterSuccessMethodDoorTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMethodAutoConfiguration.class))
		.withPropertyValues("idempotency.mode=record-after-success")
		.withUserConfiguration(Beans.class);

	@Test
	void aRepeatedCallReplaysTheRecordedResultAndOtherArgumentsAreRefused() {
		this.runner.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			Entry first = ledger.book("order-1", 250);
			assertThat(ledger.book("order-1", 250)).isEqualTo(first);
			assertThatExceptionOfType(IdempotencyRejectedException.class).isThrownBy(() -> ledger.book("order-1", 999))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED));
			assertThat(ledger.runs()).isEqualTo(1);
		});
	}

	@Test
	void racingCallsInATransactionTheStoreDoesNotJoinBothCommitAndRetriesGetTheResultRecordedFirst() {
		this.runner.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			Checkout checkout = context.getBean(Checkout.class);
			ledger.meetAfterWriting(2);
			List<Entry> results = race(() -> checkout.pay("order-2", 10));
			assertThat(ledger.runs()).as("both calls found no record and ran").isEqualTo(2);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			assertThat(jdbc.queryForList("select run from entry where order_id = 'order-2'", Integer.class))
				.as("the in-memory store cannot share the transaction: each call's writes commit, and"
						+ " the model's weakness shows")
				.containsExactlyInAnyOrder(1, 2);
			Entry replayed = checkout.pay("order-2", 10);
			assertThat(results).contains(replayed);
			assertThat(ledger.runs()).isEqualTo(2);
		});
	}

	@Test
	void aTransactionThatRollsBackAfterTheCallRecordsNothingAndARetryRunsAgain() {
		this.runner.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			Checkout checkout = context.getBean(Checkout.class);
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> checkout.payThenFail("order-3", 10));
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			assertThat(jdbc.queryForObject("select count(*) from entry where order_id = 'order-3'", Integer.class))
				.isZero();
			Entry retried = checkout.pay("order-3", 10);
			assertThat(retried.run()).as("not replayed: the first result was never recorded").isEqualTo(2);
			assertThat(checkout.pay("order-3", 10)).isEqualTo(retried);
			assertThat(jdbc.queryForList("select run from entry where order_id = 'order-3'", Integer.class))
				.containsExactly(2);
		});
	}

	/** Runs the call on two threads at once; their results. */
	private static List<Entry> race(java.util.function.Supplier<Entry> call) throws Exception {
		CompletableFuture<Entry> one = CompletableFuture.supplyAsync(call);
		CompletableFuture<Entry> two = CompletableFuture.supplyAsync(call);
		return List.of(one.get(30, TimeUnit.SECONDS), two.get(30, TimeUnit.SECONDS));
	}

	record Entry(String orderId, int amount, int run) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class Beans {

		@Bean
		DataSource dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
				.setName("ras-" + UUID.randomUUID())
				.addScript("classpath:dev/idempotency/method/entry.sql")
				.build();
		}

		@Bean
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		JdbcTemplate jdbcTemplate(DataSource dataSource) {
			return new JdbcTemplate(dataSource);
		}

		@Bean
		Ledger ledger(JdbcTemplate jdbc) {
			return new Ledger(jdbc);
		}

		@Bean
		Checkout checkout(Ledger ledger) {
			return new Checkout(ledger);
		}

	}

	/** Books an entry: a write in the caller's transaction, if there is one. */
	public static class Ledger {

		private final JdbcTemplate jdbc;

		private final AtomicInteger runs = new AtomicInteger();

		private volatile CyclicBarrier meeting;

		public Ledger(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		/**
		 * The next {@code calls} calls wait for each other after writing, so that each
		 * has found no record before any of them records its result.
		 */
		void meetAfterWriting(int calls) {
			this.meeting = new CyclicBarrier(calls);
		}

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#orderId")
		public Entry book(String orderId, int amount) {
			int run = this.runs.incrementAndGet();
			this.jdbc.update("insert into entry (order_id, amount, run) values (?, ?, ?)", orderId, amount, run);
			CyclicBarrier meeting = this.meeting;
			if (meeting != null) {
				try {
					meeting.await(20, TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException("the other call never came", ex);
				}
			}
			return new Entry(orderId, amount, run);
		}

	}

	/** The caller: books within its own transaction. */
	public static class Checkout {

		private final Ledger ledger;

		public Checkout(Ledger ledger) {
			this.ledger = ledger;
		}

		@Transactional
		public Entry pay(String orderId, int amount) {
			return this.ledger.book(orderId, amount);
		}

		/** Books, then fails before the commit: the transaction rolls back. */
		@Transactional
		public Entry payThenFail(String orderId, int amount) {
			this.ledger.book(orderId, amount);
			throw new IllegalStateException("failed after booking");
		}

	}

}
