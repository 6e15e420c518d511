package dev.idempotency.store.memory;

import java.util.Objects;

import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

/**
 * A completed record's answer as the in-memory store keeps it: the answer itself when the
 * store does not deflate (the default: nothing to encode on the way in, nothing to decode
 * on a replay, and the body is not copied), else its encoded, deflated bytes.
 * {@link #bytes()} is what it counts against {@code maxBytes}: the encoded length either
 * way.
 *
 * @param asIs the answer, kept by reference; {@code null} when encoded
 * @param encoded the answer's encoded bytes; {@code null} when kept as it is
 * @param bytes the encoded length
 */
record KeptResponse(@Nullable StoredResponse asIs, byte @Nullable [] encoded, int bytes) {

	static KeptResponse of(StoredResponse response, int deflateFrom) {
		if (deflateFrom == StoredResponseCodec.NEVER_DEFLATE) {
			return new KeptResponse(response, null, StoredResponseCodec.encodedLength(response));
		}
		byte[] encoded = StoredResponseCodec.encode(response, deflateFrom);
		return new KeptResponse(null, encoded, encoded.length);
	}

	StoredResponse response() {
		StoredResponse response = this.asIs;
		return (response != null) ? response : StoredResponseCodec.decode(Objects.requireNonNull(this.encoded));
	}

}
