package dev.idempotency.core.internal;

import dev.idempotency.store.StoredResponse;

/**
 * The engine's answer to {@link IdempotencyEngine#succeeded}: which response the run
 * answers with.
 *
 * @since 0.1.0
 */
public sealed interface Answer {

	/** The response to send. */
	StoredResponse response();

	/** The run's own response (stored, released or left unrecorded). */
	record Own(StoredResponse response) implements Answer {
	}

	/**
	 * Record-after-success mode: another attempt of the same request ran beside this one
	 * and recorded its response first; that is the answer, to this attempt and to every
	 * retry, and this run's own effects should not count.
	 */
	record Recorded(StoredResponse response) implements Answer {
	}

}
