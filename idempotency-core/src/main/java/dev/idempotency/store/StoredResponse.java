package dev.idempotency.store;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The final answer of an operation as it is kept for replay: status, the allowlisted
 * headers and the whole body. For the method front door the status is {@code 200} and the
 * body is the serialized return value.
 *
 * <p>
 * The body array is handed over, not copied: a store may keep it as it is (the in-memory
 * store does), and whoever made it does not change it afterwards; an answer a store
 * returns is read, never changed.
 *
 * @param status HTTP status code
 * @param headers header names (as sent) to their values, in order
 * @param body the whole body, never truncated
 * @since 0.1.0
 */
public record StoredResponse(int status, Map<String, List<String>> headers, byte[] body) {

	public StoredResponse {
		Objects.requireNonNull(headers, "headers");
		Objects.requireNonNull(body, "body");
		Map<String, List<String>> copy = new LinkedHashMap<>();
		headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
		headers = java.util.Collections.unmodifiableMap(copy);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof StoredResponse that && this.status == that.status && this.headers.equals(that.headers)
				&& Arrays.equals(this.body, that.body);
	}

	@Override
	public int hashCode() {
		return 31 * Objects.hash(this.status, this.headers) + Arrays.hashCode(this.body);
	}

	@Override
	public String toString() {
		return "StoredResponse[status=" + this.status + ", headers=" + this.headers + ", body=" + this.body.length
				+ " bytes]";
	}
}
