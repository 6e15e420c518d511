package dev.idempotency.autoconfigure.internal;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.store.StoredResponseCodec;

/**
 * What idempotency.store.compression and idempotency.store.compress-from make of a
 * store's {@code deflateFrom}.
 */
public final class AnswerCompression {

	private AnswerCompression() {
	}

	/**
	 * The smallest body the store deflates, in bytes.
	 * @param store the store's properties
	 * @param deflatesByDefault whether this store deflates under {@code auto} (the JDBC
	 * and R2DBC stores)
	 * @return the store builder's {@code deflateFrom}
	 */
	public static int deflateFrom(IdempotencyProperties.Store store, boolean deflatesByDefault) {
		boolean deflates = switch (store.getCompression()) {
			case AUTO -> deflatesByDefault;
			case DEFLATE -> true;
			case NONE -> false;
		};
		// The validator has checked the size against the largest stored answer.
		return deflates ? (int) Math.min(store.getCompressFrom().toBytes(), StoredResponseCodec.NEVER_DEFLATE)
				: StoredResponseCodec.NEVER_DEFLATE;
	}

}
