package dev.idempotency;

/**
 * The names of the request attributes through which an application, or the method door,
 * tells the HTTP door something about the keyed request it protects.
 *
 * @since 0.1.0
 */
public final class IdempotencyRequestAttributes {

	/**
	 * A request attribute that keeps the HTTP door from storing the answer of this keyed
	 * request; its value, a {@code String}, says why (for the log). For an answer that
	 * reflects a passing state, such as a call it made that was still in flight: the
	 * answer is sent but not stored, the key is freed (the execution counts as
	 * {@code released}), and a retry with the same key runs again instead of being
	 * replayed a passing answer. With atomic completion the handler's writes are rolled
	 * back too, and a success is answered {@code 503} instead (nothing was done). The
	 * method door sets it when a method it protects, called while a keyed request runs,
	 * is refused as still in flight; the HTTP door when the handler throws a refusal of
	 * the method door or of the template (an {@link IdempotencyRejectedException} or an
	 * {@code IdempotencyErrorException}), however it is answered.
	 * <p>
	 * Set it while the request is handled (in the handler, an exception handler or an
	 * interceptor):
	 * {@code request.setAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON, "why")};
	 * on WebFlux, as an exchange attribute:
	 * {@code exchange.getAttributes().put(IdempotencyRequestAttributes.NOT_STORED_REASON, "why")}.
	 */
	public static final String NOT_STORED_REASON = IdempotencyRequestAttributes.class.getName() + ".notStoredReason";

	private IdempotencyRequestAttributes() {
	}

}
