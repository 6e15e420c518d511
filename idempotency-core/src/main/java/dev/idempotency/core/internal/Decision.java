package dev.idempotency.core.internal;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.store.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * The engine's answer to {@link IdempotencyEngine#begin}: run, replay, or refuse.
 *
 * @since 0.1.0
 */
public sealed interface Decision {

	/**
	 * Run the operation. With a reservation, finish it with
	 * {@link IdempotencyEngine#succeeded} or {@link IdempotencyEngine#failed}; without
	 * one (no key, or the store failed open) the call runs unprotected.
	 */
	record Proceed(@Nullable Reservation reservation) implements Decision {
	}

	/** Do not run: answer with the stored response. */
	record Replay(StoredResponse response) implements Decision {
	}

	/** Do not run: answer with this error. */
	record Reject(IdempotencyError error) implements Decision {
	}

}
