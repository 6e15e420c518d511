package dev.idempotency.store.r2dbc;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What the WebFlux door's transactions send to the database: the R2DBC drivers send
 * {@code BEGIN} as a transaction begins and {@code COMMIT} as it ends, two round trips
 * for a transaction that wrote nothing; over {@link LazyBeginConnectionFactory} nothing
 * goes out for it, and a transaction that writes sends its {@code BEGIN} just before its
 * first statement. Counted at the connection the driver would give.
 */
class LazyBeginConnectionFactoryTests {

	private final List<String> sent = new CopyOnWriteArrayList<>();

	private final ConnectionFactory driver = countingFactory();

	@Test
	void anEmptyTransactionSendsNothing() {
		run(new R2dbcTransactionManager(new LazyBeginConnectionFactory(this.driver)), Mono.just("nothing written"));
		assertThat(this.sent).containsExactly("close");
	}

	@Test
	void withoutItAnEmptyTransactionCostsBeginAndCommit() {
		run(new R2dbcTransactionManager(this.driver), Mono.just("nothing written"));
		assertThat(this.sent).containsExactly("beginTransaction", "commitTransaction", "close");
	}

	@Test
	void aTransactionThatWritesBeginsWithItsFirstStatement() {
		DatabaseClient client = DatabaseClient.create(this.driver);
		run(new R2dbcTransactionManager(new LazyBeginConnectionFactory(this.driver)),
				client.sql("INSERT INTO t VALUES (1)").then().then(client.sql("INSERT INTO t VALUES (2)").then()));
		assertThat(this.sent).containsExactly("beginTransaction", "execute", "execute", "commitTransaction", "close");
	}

	@Test
	void aTransactionThatWritesRollsBackWhatItBegan() {
		DatabaseClient client = DatabaseClient.create(this.driver);
		run(new R2dbcTransactionManager(new LazyBeginConnectionFactory(this.driver)),
				client.sql("INSERT INTO t VALUES (1)")
					.then()
					.then(Mono.error(new IllegalStateException("the handler failed")))
					.onErrorResume(IllegalStateException.class, (ex) -> Mono.empty())
					.then(Mono.<Void>error(new IllegalArgumentException("roll back"))));
		assertThat(this.sent).containsExactly("beginTransaction", "execute", "rollbackTransaction", "close");
	}

	/**
	 * A statement made in a transaction that has ended before the statement runs (a
	 * client gone away: the door rolls back while a statement of the handler's, or of the
	 * store's running to its end, is on its way) fails and sends nothing: no
	 * {@code BEGIN} after the end, which left the pooled connection inside an open
	 * transaction, where the next requests' inserts were answered but never committed.
	 */
	@Test
	void aStatementOfATransactionThatEndedBeforeItRanSendsNothing() {
		Connection connection = Mono.from(new LazyBeginConnectionFactory(this.driver).create())
			.block(Duration.ofSeconds(5));
		Mono.from(connection.beginTransaction()).block(Duration.ofSeconds(5));
		Publisher<? extends Result> late = connection.createStatement("INSERT INTO t VALUES (1)").execute();
		Mono.from(connection.rollbackTransaction()).block(Duration.ofSeconds(5));
		assertThatIllegalStateException().isThrownBy(() -> Flux.from(late).blockLast(Duration.ofSeconds(5)))
			.withMessageContaining("has ended");
		Mono.from(connection.close()).block(Duration.ofSeconds(5));
		assertThat(this.sent).containsExactly("close");
	}

	/**
	 * A connection given back while a transaction it began is still open is rolled back
	 * first: it never goes back to the pool inside a transaction.
	 */
	@Test
	void aConnectionGivenBackInsideATransactionItBeganIsRolledBackFirst() {
		Connection connection = Mono.from(new LazyBeginConnectionFactory(this.driver).create())
			.block(Duration.ofSeconds(5));
		Mono.from(connection.beginTransaction()).block(Duration.ofSeconds(5));
		Flux.from(connection.createStatement("INSERT INTO t VALUES (1)").execute()).blockLast(Duration.ofSeconds(5));
		Mono.from(connection.close()).block(Duration.ofSeconds(5));
		assertThat(this.sent).containsExactly("beginTransaction", "execute", "rollbackTransaction", "close");
		assertThatIllegalStateException()
			.isThrownBy(
					() -> Flux.from(connection.createStatement("SELECT 1").execute()).blockLast(Duration.ofSeconds(5)))
			.withMessageContaining("given back");
	}

	private void run(R2dbcTransactionManager manager, Mono<?> work) {
		TransactionalOperator.create(manager)
			.transactional(work)
			.onErrorResume(IllegalArgumentException.class, (ex) -> Mono.empty())
			.block(Duration.ofSeconds(5));
	}

	/** A driver whose connections record what they would send. */
	private ConnectionFactory countingFactory() {
		return new ConnectionFactory() {

			@Override
			public Mono<Connection> create() {
				return Mono.just(connection());
			}

			@Override
			public ConnectionFactoryMetadata getMetadata() {
				return () -> "PostgreSQL";
			}

		};
	}

	private Connection connection() {
		boolean[] inTransaction = new boolean[1];
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "isAutoCommit" -> !inTransaction[0];
					case "createStatement" -> statement();
					case "beginTransaction" -> Mono.fromRunnable(() -> {
						inTransaction[0] = true;
						this.sent.add("beginTransaction");
					});
					case "commitTransaction", "rollbackTransaction", "close" -> Mono.fromRunnable(() -> {
						inTransaction[0] = false;
						this.sent.add(method.getName());
					});
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					case "toString" -> "counting connection";
					default -> Mono.empty();
				});
	}

	private Statement statement() {
		return (Statement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Statement.class },
				(proxy, method, args) -> {
					if (method.getName().equals("execute")) {
						return Flux.defer(() -> {
							this.sent.add("execute");
							return Flux.empty();
						});
					}
					return proxy;
				});
	}

}
