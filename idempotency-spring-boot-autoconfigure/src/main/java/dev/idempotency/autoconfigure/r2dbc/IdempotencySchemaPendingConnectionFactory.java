package dev.idempotency.autoconfigure.r2dbc;

import java.util.concurrent.atomic.AtomicReference;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.R2dbcTransientResourceException;
import io.r2dbc.spi.Wrapped;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.core.InfrastructureProxy;

/**
 * The store's {@link ConnectionFactory} while its table's set-up waits for a database
 * that could not be reached at start-up: each connection is handed out only after the
 * set-up has run. While the database stays away the set-up fails, and so does the
 * connection (the store answers as unavailable, as for any store failure); the next
 * connection tries again, one attempt at a time. Once set up, connections pass through.
 * The same resource as the factory it wraps for transaction synchronization
 * ({@link InfrastructureProxy}), so the application's own transactions on that factory
 * and the store's join each other as they would without it.
 */
final class IdempotencySchemaPendingConnectionFactory
		implements ConnectionFactory, InfrastructureProxy, Wrapped<ConnectionFactory> {

	private static final Log logger = LogFactory.getLog(IdempotencySchemaPendingConnectionFactory.class);

	/** What {@link #attempt} holds once the table is set up. */
	private static final Mono<Void> SET_UP = Mono.empty();

	private final ConnectionFactory delegate;

	private final IdempotencyR2dbcSchema schema;

	/** The attempt under way, if any; {@link #SET_UP} once one succeeded. */
	private final AtomicReference<@Nullable Mono<Void>> attempt = new AtomicReference<>();

	IdempotencySchemaPendingConnectionFactory(ConnectionFactory delegate, IdempotencyR2dbcSchema schema) {
		this.delegate = delegate;
		this.schema = schema;
	}

	@Override
	public Publisher<? extends Connection> create() {
		if (this.attempt.get() == SET_UP) {
			return this.delegate.create();
		}
		return Mono.defer(this::setUp).then(Mono.defer(() -> Mono.from(this.delegate.create())));
	}

	private Mono<Void> setUp() {
		while (true) {
			Mono<Void> current = this.attempt.get();
			if (current != null) {
				return current;
			}
			AtomicReference<@Nullable Mono<Void>> self = new AtomicReference<>();
			// One attempt at a time, shared by the calls that wait for it, bounded
			// (a database that swallows packets does not hold it for ever), run to
			// its end whatever its callers do: a call that gives up within the
			// store's timeout does not cancel a longer set-up.
			Mono<Void> bounded = this.schema.setUp().timeout(IdempotencyR2dbcSchema.STATEMENT_WAIT);
			Mono<Void> next = bounded.doOnSuccess((done) -> {
				this.attempt.set(SET_UP);
				logger.info("The idempotency store's database answers: its table is set up");
			})
				.onErrorMap((ex) -> !(ex instanceof IdempotencyR2dbcTableMissingException), this::notSetUp)
				.doOnError((ex) -> {
					this.attempt.compareAndSet(self.get(), null);
					logger.warn("Setting up the idempotency table failed; retried on the store's next call: " + ex);
				})
				.cache();
			self.set(next);
			if (this.attempt.compareAndSet(null, next)) {
				next.subscribe(null, (ex) -> {
					// Logged above; each waiting call gets the failure too.
				});
				return next;
			}
		}
	}

	private R2dbcTransientResourceException notSetUp(Throwable cause) {
		return new R2dbcTransientResourceException("The idempotency store's table is not set up yet: its database"
				+ " could not be reached at start-up, nor now (" + cause + ")", cause);
	}

	@Override
	public ConnectionFactoryMetadata getMetadata() {
		return this.delegate.getMetadata();
	}

	@Override
	public Object getWrappedObject() {
		return this.delegate;
	}

	@Override
	public ConnectionFactory unwrap() {
		return this.delegate;
	}

}
