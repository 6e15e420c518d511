package dev.idempotency.web;

import java.io.IOException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.autoconfigure.internal.NeverStoredHeaders;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.AtomicOutcome;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.TransactionConflictException;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The part of the HTTP front door that sees the whole exchange. For a mutation that
 * carries a key it caches the request body (for the fingerprint) and wraps the response
 * (to capture it once the {@link IdempotencyInterceptor} has reserved the key). After the
 * handler it finishes the reservation: stores a final response, or releases the key after
 * an exception, a non-final status, an error rendered outside the request, or a body too
 * large to store. In record-after-success mode, where two attempts of one request may
 * both run, an attempt whose response was not recorded because another attempt recorded
 * its response first is answered with the recorded response, as a replay.
 */
class IdempotencyFilter extends OncePerRequestFilter {

	private final IdempotencyEngine engine;

	private final String headerName;

	private final List<String> storedHeaders;

	private @Nullable HandlerTransactions transactions;

	IdempotencyFilter(IdempotencyEngine engine, String headerName, Collection<String> extraStoredHeaders) {
		this.engine = engine;
		this.headerName = headerName;
		this.storedHeaders = NeverStoredHeaders.storedWith(extraStoredHeaders);
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !HttpMethods.isMutation(request.getMethod()) || request.getHeader(this.headerName) == null;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		// Both wrappers pass everything through untouched until the interceptor has found
		// the handler protected and the key valid: only then is the body read and the
		// response captured.
		HttpServletRequest cachedRequest = new CachedBodyRequest(request);
		IdempotentExchange exchange = IdempotentExchange.start(request, new CapturingResponse(response));
		boolean completedNormally = false;
		try {
			chain.doFilter(cachedRequest, exchange.response());
			completedNormally = true;
		}
		finally {
			Reservation reservation = exchange.takeReservation();
			HandlerTransactions transactions = (exchange.transaction() != null) ? this.transactions : null;
			if (reservation != null) {
				if (transactions != null) {
					finishInTransaction(transactions, reservation, exchange, completedNormally);
				}
				else {
					finish(reservation, exchange, completedNormally);
				}
			}
			else if (transactions != null) {
				transactions.rollback(exchange);
			}
		}
	}

	/**
	 * Runs protected synchronous handlers inside a transaction whose commit holds their
	 * record (atomic completion): set by the auto-configuration when the store joins the
	 * application's transactions; {@code null}: none.
	 */
	void setHandlerTransactions(@Nullable HandlerTransactions transactions) {
		this.transactions = transactions;
	}

	/**
	 * Atomic completion: the handler ran inside a transaction that is still open. The
	 * answer is recorded in it and it commits, and only then is the held answer sent; any
	 * answer that is not recorded (an exception, even one an exception handler answered,
	 * a transaction marked rollback-only, a status that is not recorded in this mode, an
	 * error sent, a body that does not match its length) rolls the handler's writes back
	 * first, and is then finished as without a transaction, except that a success whose
	 * writes were rolled back is never sent: the answer is {@code 503}, nothing was done.
	 * One exception: an answer too large to store has streamed to the client already; its
	 * writes commit, unrecorded, as without a transaction. A handler that wrote nothing
	 * in the door's own transaction (the store can tell: PostgreSQL) is finished as
	 * without one: the empty transaction ends first, with nothing to send, and the answer
	 * is recorded alone. A commit that fails with the application's own error (its writes
	 * checked or sent only at the commit) is the handler's failure: the key is released
	 * and the application's exception handling answers the error; only a failure of the
	 * database is answered {@code 503}.
	 */
	private void finishInTransaction(HandlerTransactions transactions, Reservation reservation,
			IdempotentExchange exchange, boolean completedNormally) {
		HttpServletRequest request = exchange.request();
		CapturingResponse response = exchange.response();
		try {
			if (completedNormally && request.isAsyncStarted()) {
				// Went asynchronous without saying so in its return type:
				// what it wrote on this thread commits, and the rest is
				// finished as an asynchronous answer.
				logger.warn("The handler of " + request.getRequestURI() + " started asynchronous processing by"
						+ " itself: it runs without atomic completion");
				transactions.commit(exchange);
				finish(reservation, exchange, true);
				return;
			}
			String rollbackReason = rollbackReason(transactions, exchange, completedNormally);
			if (rollbackReason != null) {
				transactions.rollback(exchange);
				int status = response.getStatus();
				if (completedNormally && !response.errorSent() && status >= 200 && status < 400) {
					// Its writes were rolled back: the success it reports did not happen.
					this.engine.failed(reservation, rollbackReason);
					transactions.sendError(this.engine.transactionRolledBack(rollbackReason), exchange);
					return;
				}
				finish(reservation, exchange, completedNormally);
				return;
			}
			if (response.overflowed()) {
				transactions.commit(exchange);
				finish(reservation, exchange, true);
				return;
			}
			if (transactions.began(exchange) && this.engine.joinedTransactionIsEmpty()) {
				// The handler wrote nothing: no write for the record to be atomic
				// with. The empty transaction ends with nothing sent, and the answer
				// is recorded alone, a round trip less than in the transaction.
				RuntimeException commitFailure = transactions.commit(exchange);
				if (commitFailure == null) {
					finish(reservation, exchange, true);
				}
				else if (!TransactionFailures.isStoreFailure(commitFailure)) {
					this.engine.failed(reservation, "its commit failed: " + commitFailure, commitFailure);
					transactions.sendApplicationFailure(commitFailure, exchange);
				}
				else {
					this.engine.failed(reservation, "its transaction did not commit");
					transactions.sendError(this.engine.transactionRolledBack("its commit failed"), exchange);
				}
				return;
			}
			StoredResponse own = new StoredResponse(response.getStatus(), storedHeaders(response),
					response.capturedBody());
			// The door began the transaction and commits it right after: the store may
			// commit it with the record.
			AtomicOutcome outcome = transactions.began(exchange)
					? this.engine.succeededAsLastInTransaction(reservation, own)
					: this.engine.succeededInTransaction(reservation, own);
			RuntimeException commitFailure = null;
			if (outcome.commits()) {
				commitFailure = transactions.commit(exchange);
			}
			else {
				transactions.rollback(exchange);
			}
			if (outcome.conflicted()
					|| (commitFailure != null && TransactionConflictException.isConflict(commitFailure))) {
				// The database rolled it back to settle a conflict with another
				// transaction, such as another attempt's: nothing of it was done.
				AtomicOutcome after = this.engine.transactionConflicted(reservation, outcome);
				if (after instanceof AtomicOutcome.Replay replay && response.discardHeld()) {
					sendRecorded(replay.response(), response);
				}
				else {
					transactions.sendError(
							(after instanceof AtomicOutcome.Refuse refuse) ? refuse.error()
									: this.engine.transactionRolledBack("it conflicted with another transaction"),
							exchange);
				}
				return;
			}
			if (commitFailure != null && !TransactionFailures.isStoreFailure(commitFailure)) {
				// The application's own writes failed at the commit: answered as if its
				// handler had thrown, never as a store outage to retry.
				this.engine.commitFailed(reservation, outcome, commitFailure);
				transactions.sendApplicationFailure(commitFailure, exchange);
				return;
			}
			boolean committed = outcome.commits() && commitFailure == null;
			this.engine.transactionEnded(reservation, outcome, committed);
			if (committed) {
				sendHeld(response);
			}
			else if (outcome instanceof AtomicOutcome.Replay replay && response.discardHeld()) {
				sendRecorded(replay.response(), response);
			}
			else {
				transactions.sendError((outcome instanceof AtomicOutcome.Refuse refuse) ? refuse.error()
						: this.engine.transactionRolledBack("its commit failed"), exchange);
			}
		}
		finally {
			// Never leave a transaction bound to this thread.
			transactions.rollback(exchange);
		}
	}

	/**
	 * Why the handler's transaction must roll back instead of committing with a record;
	 * {@code null}: it commits.
	 */
	private @Nullable String rollbackReason(HandlerTransactions transactions, IdempotentExchange exchange,
			boolean completedNormally) {
		CapturingResponse response = exchange.response();
		if (!completedNormally || !exchange.didHandlerReturn()) {
			return "the handler threw an exception";
		}
		if (transactions.isRollbackOnly(exchange)) {
			return "the transaction was marked rollback-only";
		}
		String notStored = exchange.notStoredReason();
		if (notStored != null) {
			return notStored;
		}
		if (response.errorSent()) {
			return "status " + response.getStatus() + " was sent as a container error";
		}
		response.flushWriter();
		String incomplete = response.incomplete();
		if (incomplete != null) {
			return incomplete;
		}
		if (!response.overflowed() && !this.engine.records(response.getStatus())) {
			return "status " + response.getStatus() + " is not recorded";
		}
		return null;
	}

	private void finish(Reservation reservation, IdempotentExchange exchange, boolean completedNormally) {
		HttpServletRequest request = exchange.request();
		CapturingResponse response = exchange.response();
		if (!completedNormally) {
			this.engine.failed(reservation, "the handler threw an exception");
			return;
		}
		if (request.isAsyncStarted()) {
			// The handler answers later, on another thread: the key stays reserved (and
			// its lease beaten) until the container completes the response, then it is
			// stored or released.
			try {
				response.stopHolding();
			}
			catch (IOException ex) {
				logger.debug("Could not send the start of an asynchronous answer", ex);
			}
			request.getAsyncContext().addListener(new AsyncCompletion(reservation, exchange));
			return;
		}
		StoredResponse recorded = finishResponse(reservation, exchange);
		if (response.errorSent()) {
			// After sendError the container renders the error page: nothing held goes
			// out.
			return;
		}
		if (recorded != null && response.discardHeld()) {
			sendRecorded(recorded, response);
			return;
		}
		sendHeld(response);
	}

	/**
	 * Sends, instead of the held answer, the answer another attempt of this request
	 * recorded first (record-after-success mode), as the replay every retry gets.
	 */
	private void sendRecorded(StoredResponse recorded, CapturingResponse response) {
		try {
			ReplayWriter.write(recorded, (HttpServletResponse) response.getResponse());
		}
		catch (IOException ex) {
			logger.debug("The client went away before the recorded answer was sent; a retry with its key gets it", ex);
		}
	}

	/**
	 * Sends a held answer once it is stored (or known not to be): a client gone by now
	 * retries and gets it.
	 */
	private void sendHeld(CapturingResponse response) {
		try {
			response.sendHeld();
		}
		catch (IOException ex) {
			logger.debug("The client went away before the answer was sent; a retry with its key gets it", ex);
		}
	}

	/**
	 * Stores the answer, or releases the key.
	 * @return the response another attempt of this request recorded first, when that is
	 * the answer instead of this one (record-after-success mode); otherwise {@code null}
	 */
	private @Nullable StoredResponse finishResponse(Reservation reservation, IdempotentExchange exchange) {
		CapturingResponse response = exchange.response();
		String notStored = exchange.notStoredReason();
		if (notStored != null) {
			this.engine.failed(reservation, notStored);
			return null;
		}
		if (response.errorSent()) {
			// The error page is rendered after this filter returns: there is no body to
			// store.
			this.engine.failed(reservation, "status " + response.getStatus() + " was sent as a container error");
			return null;
		}
		response.flushWriter();
		String incomplete = response.incomplete();
		if (incomplete != null) {
			// The client may hold a part of the answer only: a retry must run again,
			// never replay a part.
			this.engine.failed(reservation, incomplete);
			return null;
		}
		if (response.overflowed()) {
			this.engine.responseTooLarge(reservation, response.bytesWritten());
			return null;
		}
		StoredResponse own = new StoredResponse(response.getStatus(), storedHeaders(response), response.capturedBody());
		if (this.engine.succeeded(reservation, own) instanceof Answer.Recorded recorded) {
			return recorded.response();
		}
		return null;
	}

	/**
	 * Finishes the reservation of an asynchronous request once the container has
	 * completed it.
	 */
	private final class AsyncCompletion implements AsyncListener {

		private final Reservation reservation;

		private final IdempotentExchange exchange;

		AsyncCompletion(Reservation reservation, IdempotentExchange exchange) {
			this.reservation = reservation;
			this.exchange = exchange;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			// After a timeout or an error the reservation is already finished: this is a
			// no-op.
			StoredResponse recorded = finishResponse(this.reservation, this.exchange);
			if (recorded != null) {
				// Streamed already: the client has this attempt's own answer.
				logger.warn("The asynchronous answer of " + this.reservation + " (status "
						+ this.exchange.response().getStatus()
						+ ") was sent as it was written, but another attempt of the same request recorded its"
						+ " answer first (status " + recorded.status() + "); retries with this key get the recorded"
						+ " one");
			}
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			// The operation may still finish: a retry must not run it beside the first.
			IdempotencyFilter.this.engine.abandoned(this.reservation, "the asynchronous request timed out");
		}

		@Override
		public void onError(AsyncEvent event) {
			String reason = "the asynchronous request failed: " + event.getThrowable();
			if (event.getThrowable() instanceof IOException) {
				// The connection failed (the client went away): the operation may still
				// be running.
				IdempotencyFilter.this.engine.abandoned(this.reservation, reason);
			}
			else {
				// The operation itself failed: a retry runs it again.
				IdempotencyFilter.this.engine.failed(this.reservation, reason);
			}
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			// Asynchronous processing started again: keep listening to the new cycle.
			event.getAsyncContext().addListener(this);
		}

	}

	private Map<String, List<String>> storedHeaders(HttpServletResponse response) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		String contentType = response.getContentType();
		if (contentType != null) {
			headers.put("Content-Type", List.of(contentType));
		}
		for (String name : this.storedHeaders) {
			if (response.getHeader(name) == null) {
				// Most are absent: the container makes a collection for each getHeaders.
				continue;
			}
			Collection<String> values = response.getHeaders(name);
			if (values != null && !values.isEmpty()) {
				headers.put(name, List.copyOf(values));
			}
		}
		return headers;
	}

}
