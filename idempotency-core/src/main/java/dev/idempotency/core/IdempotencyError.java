package dev.idempotency.core;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Why a request was refused: the cause, the HTTP status to answer with, the reason in
 * words, and (for {@code 503}) how long the client should wait before retrying.
 *
 * @param type the cause
 * @param status the HTTP status to answer with
 * @param detail the reason in words, safe to show to the client
 * @param retryAfter the {@code Retry-After} to send, or {@code null}
 * @since 0.1.0
 */
public record IdempotencyError(IdempotencyErrorType type, int status, String detail, @Nullable Duration retryAfter) {

	public IdempotencyError {
		Objects.requireNonNull(type, "type");
		Objects.requireNonNull(detail, "detail");
	}

	public static IdempotencyError of(IdempotencyErrorType type, String detail) {
		return new IdempotencyError(type, type.defaultStatus(), detail, null);
	}

}
