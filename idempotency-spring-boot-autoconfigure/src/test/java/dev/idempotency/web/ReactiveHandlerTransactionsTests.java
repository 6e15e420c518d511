package dev.idempotency.web;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import io.r2dbc.spi.ConnectionFactories;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.transaction.ReactiveTransaction;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.TransactionDefinition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How the WebFlux door's transaction ends when its request does not run to its end: a
 * transaction that cannot begin fails as {@code NotBegun} (the door frees the key and
 * answers 503), and one whose request is cancelled before or after it was handed over is
 * rolled back once, to its end, so that its connection goes back to the pool.
 */
class ReactiveHandlerTransactionsTests {

	private final R2dbcIdempotencyStore store = R2dbcIdempotencyStore
		.builder(ConnectionFactories.get("r2dbc:h2:mem:///door_tx_" + UUID.randomUUID().toString().replace("-", "")))
		.build();

	@Test
	void aTransactionThatCannotBeginFailsAsNotBegunAndRunsNothing() {
		Manager manager = new Manager(Mono.error(new IllegalStateException("no connection")));
		ReactiveHandlerTransactions transactions = new ReactiveHandlerTransactions(manager, this.store);
		List<String> ran = new CopyOnWriteArrayList<>();
		Mono<Object> request = transactions.inTransaction((run) -> Mono.fromRunnable(() -> ran.add("handler")));
		assertThatExceptionOfType(ReactiveHandlerTransactions.NotBegun.class)
			.isThrownBy(() -> request.block(Duration.ofSeconds(5)))
			.satisfies((error) -> assertThat(error.reason())
				.isEqualTo("its transaction could not begin: java.lang.IllegalStateException: no connection"));
		assertThat(ran).isEmpty();
		assertThat(manager.ended).isEmpty();
	}

	@Test
	void aRequestCancelledWhileItsTransactionBeginsRollsItBackOnceBegun() throws Exception {
		ReactiveTransaction transaction = new ReactiveTransaction() {
		};
		Manager manager = new Manager(Mono.delay(Duration.ofMillis(200)).thenReturn(transaction));
		ReactiveHandlerTransactions transactions = new ReactiveHandlerTransactions(manager, this.store);
		List<String> ran = new CopyOnWriteArrayList<>();
		Disposable request = transactions.inTransaction((run) -> Mono.fromRunnable(() -> ran.add("handler")))
			.subscribe();
		Thread.sleep(50);
		request.dispose();
		assertThat(manager.ended).as("not begun yet").isEmpty();
		awaitEnded(manager, 1);
		assertThat(manager.ended).containsExactly("rollback");
		assertThat(ran).isEmpty();
	}

	@Test
	void aRequestCancelledWhileItsHandlerRunsRollsItsTransactionBackOnce() throws Exception {
		Manager manager = new Manager(Mono.just(new ReactiveTransaction() {
		}));
		ReactiveHandlerTransactions transactions = new ReactiveHandlerTransactions(manager, this.store);
		// The first request checks whether the store joins: this test's store does not
		// see a transaction of this manager, so the handler gets none; cancelled while it
		// runs, the transaction was rolled back once and nothing more.
		Disposable request = transactions.inTransaction((run) -> Mono.never()).subscribe();
		Thread.sleep(100);
		request.dispose();
		Thread.sleep(200);
		assertThat(manager.ended).containsExactly("rollback");
	}

	private static void awaitEnded(Manager manager, int count) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (manager.ended.size() < count && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		// Nothing more comes after it.
		Thread.sleep(100);
	}

	/** A transaction manager whose transactions begin as {@code begin} says. */
	private static final class Manager implements ReactiveTransactionManager {

		private final Mono<ReactiveTransaction> begin;

		final List<String> ended = new CopyOnWriteArrayList<>();

		Manager(Mono<ReactiveTransaction> begin) {
			this.begin = begin;
		}

		@Override
		public Mono<ReactiveTransaction> getReactiveTransaction(@Nullable TransactionDefinition definition) {
			return this.begin;
		}

		@Override
		public Mono<Void> commit(ReactiveTransaction transaction) {
			return Mono.fromRunnable(() -> this.ended.add("commit"));
		}

		@Override
		public Mono<Void> rollback(ReactiveTransaction transaction) {
			return Mono.fromRunnable(() -> this.ended.add("rollback"));
		}

	}

}
