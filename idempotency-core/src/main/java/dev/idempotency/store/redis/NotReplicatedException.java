package dev.idempotency.store.redis;

import dev.idempotency.store.IdempotencyStoreException;

/**
 * A write of the Redis store that the primary applied but too few replicas acknowledged
 * in time.
 */
final class NotReplicatedException extends IdempotencyStoreException {

	NotReplicatedException(String message) {
		super(message);
	}

}
