package dev.idempotency.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.store.IdempotencyStore;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.ModelAndView;

/**
 * Atomic completion for the HTTP door: a protected synchronous handler runs inside a
 * transaction of the application's {@link PlatformTransactionManager}
 * ({@code PROPAGATION_REQUIRED}, so the application's {@code @Transactional} services
 * join it), and the door records the answer in that same transaction, just before it
 * commits. The handler's writes and the record commit together or not at all, and the
 * held answer is sent only after the commit.
 * <p>
 * A {@code HandlerInterceptor} cannot wrap the handler call, but the door does not need
 * to: the {@link IdempotencyInterceptor} begins the transaction once the key is reserved
 * (or, in record-after-success mode, found free), on the request thread, and the
 * {@link IdempotencyFilter}, which already sees the whole exchange (the handler, Spring
 * MVC's exception handling and the rendering, whose answer it holds), ends it on the same
 * thread once it knows the answer: it records and commits, or rolls back. The
 * interceptor's {@code postHandle} marks a handler that returned; one that threw, even if
 * an exception handler answered for it, is rolled back.
 * <p>
 * Only when the store joins the transaction (checked on the first protected request:
 * {@link IdempotencyStore#joinsCurrentTransaction()}); otherwise the transaction is
 * rolled back at once, a WARN says why, and the door runs as without this. Handlers that
 * answer asynchronously run without it (a WARN names each once): their answer is written
 * on another thread, which a thread-bound transaction does not reach.
 */
class HandlerTransactions {

	private static final Log logger = LogFactory.getLog(HandlerTransactions.class);

	private final PlatformTransactionManager transactionManager;

	private final IdempotencyStore store;

	private final IdempotencyErrorExceptionResolver errors;

	private final Supplier<List<HandlerExceptionResolver>> exceptionResolvers;

	private final String problemTypeBase;

	private final DefaultTransactionDefinition definition;

	private volatile boolean storeJoins = true;

	private volatile boolean checked;

	private final Set<Method> warnedAsynchronous = ConcurrentHashMap.newKeySet();

	/**
	 * @param transactionManager the application's, on the store's {@code DataSource}
	 * @param store the store, which must join its transactions
	 * @param errors answers a request whose transaction did not commit
	 * @param exceptionResolvers the application's exception handling, in the
	 * {@code DispatcherServlet}'s order: answers a commit that failed with the
	 * application's own error
	 * @param problemTypeBase the base of the problem {@code type} URIs of its refusals
	 */
	HandlerTransactions(PlatformTransactionManager transactionManager, IdempotencyStore store,
			IdempotencyErrorExceptionResolver errors, Supplier<List<HandlerExceptionResolver>> exceptionResolvers,
			String problemTypeBase) {
		this.transactionManager = transactionManager;
		this.store = store;
		this.errors = errors;
		this.exceptionResolvers = exceptionResolvers;
		this.problemTypeBase = problemTypeBase;
		this.definition = new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_REQUIRED);
		this.definition.setName("idempotency");
	}

	/**
	 * Begins the transaction of a protected request, on its thread.
	 * @return whether it began (the store joins it); false: the request runs without it
	 * @throws RuntimeException if the transaction could not begin (the database is down)
	 */
	boolean begin(IdempotentExchange exchange) {
		if (!this.storeJoins) {
			return false;
		}
		TransactionStatus status = this.transactionManager.getTransaction(this.definition);
		if (!this.checked) {
			boolean joins = this.store.joinsCurrentTransaction();
			this.checked = true;
			if (!joins) {
				this.storeJoins = false;
				this.transactionManager.rollback(status);
				logger.warn("Atomic completion is off: the idempotency store (" + this.store.name()
						+ ") does not join the transactions of " + this.transactionManager.getClass().getName()
						+ " (another DataSource?); protected handlers run without a shared transaction");
				return false;
			}
		}
		exchange.transactionBegan(status);
		return true;
	}

	/**
	 * Whether the store is known to join the door's transactions: checked on the first
	 * protected request, so {@code false} until then.
	 */
	boolean storeJoins() {
		return this.checked && this.storeJoins;
	}

	/** Logs, once per handler method, that an asynchronous handler runs without it. */
	void asynchronous(Method handler) {
		if (this.warnedAsynchronous.add(handler)) {
			logger.warn("Handler " + handler.toGenericString() + " answers asynchronously: it runs without atomic"
					+ " completion (no transaction of the idempotency door; its answer is recorded after it is"
					+ " written, as without a shared DataSource)");
		}
	}

	/**
	 * Whether the exchange's transaction was begun by this door (not joined from an outer
	 * one), so that nothing runs in it after the door's completion.
	 */
	boolean began(IdempotentExchange exchange) {
		return (exchange.transaction() instanceof TransactionStatus status) && status.isNewTransaction();
	}

	boolean isRollbackOnly(IdempotentExchange exchange) {
		return (exchange.transaction() instanceof TransactionStatus status) && status.isRollbackOnly();
	}

	/**
	 * Commits.
	 * @return {@code null} once committed; else the failure of the commit, which rolled
	 * the transaction back (logged at ERROR when the store failed,
	 * {@link TransactionFailures#isStoreFailure}; the application's own failure is the
	 * application's to report, {@link #sendApplicationFailure})
	 */
	@Nullable RuntimeException commit(IdempotentExchange exchange) {
		// Called by the filter only for an exchange with an open transaction.
		TransactionStatus status = (TransactionStatus) Objects.requireNonNull(exchange.transaction(), "transaction");
		exchange.transactionEnded();
		HttpServletRequest request = exchange.request();
		try {
			this.transactionManager.commit(status);
			return null;
		}
		catch (RuntimeException ex) {
			String what = "The transaction of " + request.getMethod() + " " + request.getRequestURI()
					+ " did not commit; nothing of it was done";
			if (TransactionFailures.isStoreFailure(ex)) {
				logger.error(what, ex);
			}
			else if (logger.isDebugEnabled()) {
				logger.debug(what + ": the application's own writes failed, answered by its exception handling", ex);
			}
			return ex;
		}
	}

	/**
	 * Answers a request whose commit failed with the application's own error as Spring
	 * MVC answers an exception that leaves a handler: the application's exception
	 * handling (its {@code @ExceptionHandler} methods and advice, then Spring MVC's
	 * resolvers, in the {@code DispatcherServlet}'s order) answers it in place of the
	 * held answer. An exception no resolver answered, or answered with a view to render
	 * (which only the {@code DispatcherServlet} renders), is thrown on, to the
	 * container's error handling (Boot's error page), as the {@code DispatcherServlet}
	 * throws it.
	 * @throws RuntimeException {@code failure}, when no resolver answered it
	 */
	void sendApplicationFailure(RuntimeException failure, IdempotentExchange exchange) {
		HttpServletRequest request = exchange.request();
		CapturingResponse response = exchange.response();
		if (!response.discardHeld()) {
			logger.warn("Could not answer " + request.getRequestURI() + " with the failure of its commit (" + failure
					+ "): the answer was not held");
			return;
		}
		HttpServletResponse target = (HttpServletResponse) response.getResponse();
		// As the DispatcherServlet: an error may be answered in another media type.
		request.removeAttribute(HandlerMapping.PRODUCIBLE_MEDIA_TYPES_ATTRIBUTE);
		// The handler method as mapped, with its controller's bean for the controller's
		// own @ExceptionHandler methods.
		Object handler = request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
		if (handler instanceof HandlerMethod method) {
			handler = method.createWithResolvedBean();
		}
		for (HandlerExceptionResolver resolver : this.exceptionResolvers.get()) {
			ModelAndView answer = resolver.resolveException(request, target, handler, failure);
			if (answer != null) {
				if (!answer.isEmpty()) {
					break;
				}
				try {
					target.flushBuffer();
				}
				catch (IOException ex) {
					logger.debug("The client went away before the answer to the failed commit was sent", ex);
				}
				return;
			}
		}
		throw failure;
	}

	/** Rolls back, unless there is no transaction or it has ended already. */
	void rollback(IdempotentExchange exchange) {
		TransactionStatus status = (TransactionStatus) exchange.transaction();
		exchange.transactionEnded();
		if (status == null || status.isCompleted()) {
			return;
		}
		HttpServletRequest request = exchange.request();
		try {
			this.transactionManager.rollback(status);
		}
		catch (RuntimeException ex) {
			logger.error(
					"Could not roll back the transaction of " + request.getMethod() + " " + request.getRequestURI(),
					ex);
		}
	}

	/**
	 * Answers with an error instead of the held answer (its transaction did not commit,
	 * or the door refused it after it ran).
	 */
	void sendError(IdempotencyError error, IdempotentExchange exchange) {
		HttpServletRequest request = exchange.request();
		CapturingResponse response = exchange.response();
		if (!response.discardHeld()) {
			logger.warn("Could not answer " + request.getRequestURI() + " with " + error.status() + " ("
					+ error.detail() + "): the answer was not held");
			return;
		}
		HttpServletResponse target = (HttpServletResponse) response.getResponse();
		try {
			this.errors.render(new IdempotencyRejectedException(error, this.problemTypeBase), request, target);
			target.flushBuffer();
		}
		catch (IOException ex) {
			logger.debug("The client went away before the error was sent", ex);
		}
	}

}
