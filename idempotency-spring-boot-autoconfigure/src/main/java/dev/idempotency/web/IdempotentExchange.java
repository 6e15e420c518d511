package dev.idempotency.web;

import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.core.internal.Reservation;
import io.micrometer.observation.Observation;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * What the HTTP door knows of one keyed request, shared by its parts through one request
 * attribute, set once: the {@link IdempotencyFilter} starts it with the response it
 * captures, the {@link IdempotencyInterceptor} adds the reservation,
 * {@link HandlerTransactions} the handler's transaction, and the filter finishes with all
 * of it once the handler and the rendering are done.
 */
final class IdempotentExchange {

	private static final String ATTRIBUTE = IdempotentExchange.class.getName();

	private final HttpServletRequest request;

	private final CapturingResponse response;

	private @Nullable Reservation reservation;

	/** A {@code TransactionStatus}, typed loosely so that spring-tx may be absent. */
	private @Nullable Object transaction;

	private boolean handlerReturned;

	/**
	 * The reservation of the run whose handler has not completed yet, from the
	 * interceptor's {@code preHandle} to its {@code afterCompletion}.
	 */
	private @Nullable Reservation run;

	/**
	 * The open scope of the run's observation, current on the request thread while the
	 * handler runs, so that the handler's own spans are its children.
	 */
	private Observation.@Nullable Scope scope;

	private IdempotentExchange(HttpServletRequest request, CapturingResponse response) {
		this.request = request;
		this.response = response;
	}

	/** Starts the exchange of a request, for the door's parts to find. */
	static IdempotentExchange start(HttpServletRequest request, CapturingResponse response) {
		IdempotentExchange exchange = new IdempotentExchange(request, response);
		request.setAttribute(ATTRIBUTE, exchange);
		return exchange;
	}

	/**
	 * The exchange of a request; {@code null} if the {@link IdempotencyFilter} did not
	 * start one (it is not installed, or the request carries no key).
	 */
	static @Nullable IdempotentExchange of(ServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof IdempotentExchange exchange) ? exchange : null;
	}

	HttpServletRequest request() {
		return this.request;
	}

	CapturingResponse response() {
		return this.response;
	}

	void reserved(Reservation reservation) {
		this.reservation = reservation;
	}

	/** The reservation to finish, handed over once; {@code null} if none. */
	@Nullable Reservation takeReservation() {
		Reservation reservation = this.reservation;
		this.reservation = null;
		return reservation;
	}

	/**
	 * The handler of the reserved run is about to run, its observation's scope open.
	 */
	void running(Reservation reservation, Observation.Scope scope) {
		this.run = reservation;
		this.scope = scope;
	}

	/**
	 * The run whose handler has completed, handed over once; {@code null} if none.
	 */
	@Nullable Reservation takeRun() {
		Reservation run = this.run;
		this.run = null;
		return run;
	}

	/** Closes the scope of the run's observation, on the thread that opened it, once. */
	void closeScope() {
		Observation.Scope open = this.scope;
		this.scope = null;
		if (open != null) {
			open.close();
		}
	}

	void transactionBegan(Object transaction) {
		this.transaction = transaction;
	}

	/** The handler's open transaction; {@code null} if none (or no more). */
	@Nullable Object transaction() {
		return this.transaction;
	}

	void transactionEnded() {
		this.transaction = null;
	}

	/**
	 * Marks that the handler of a request with a transaction returned (did not throw).
	 */
	void handlerReturned() {
		if (this.transaction != null) {
			this.handlerReturned = true;
		}
	}

	boolean didHandlerReturn() {
		return this.handlerReturned;
	}

	/**
	 * Why the answer must not be stored, when the application or the method door said so
	 * ({@link IdempotencyRequestAttributes#NOT_STORED_REASON}, the one request attribute
	 * the door reads besides its own); {@code null}: it may be.
	 */
	@Nullable String notStoredReason() {
		return (this.request.getAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON) instanceof String reason)
				? reason : null;
	}

}
