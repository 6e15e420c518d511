package dev.idempotency.store;

import org.jspecify.annotations.Nullable;

/**
 * A stored answer that cannot be trusted: it does not decode, or it is sealed and does
 * not open (an unknown key id, or a failed authentication: altered, or moved from another
 * record), or it is not sealed where every answer must be. The engine neither replays it
 * nor runs the operation again: the request is refused with {@code 500}
 * ({@code integrity-check-failed}), whatever the store-failure policy, until an operator
 * removes the record or it expires.
 * <p>
 * The message says why in words and never holds any of the answer's content.
 *
 * @since 0.1.0
 */
public class StoredResponseIntegrityException extends IllegalArgumentException {

	private final transient @Nullable RecordId recordId;

	/**
	 * A stored answer that cannot be trusted, for a reason in words.
	 * @param reason why, without any of the answer's content
	 */
	public StoredResponseIntegrityException(String reason) {
		this(null, reason, null);
	}

	/**
	 * A stored answer that cannot be trusted, for a reason in words.
	 * @param reason why, without any of the answer's content
	 * @param cause what failed
	 */
	public StoredResponseIntegrityException(String reason, @Nullable Throwable cause) {
		this(null, reason, cause);
	}

	/**
	 * The same failure, told of the record whose answer it is.
	 * @param recordId the record
	 * @param failure the failure found without it
	 */
	public StoredResponseIntegrityException(RecordId recordId, StoredResponseIntegrityException failure) {
		this(recordId, String.valueOf(failure.getMessage()), failure);
	}

	/**
	 * The stored answer of a record that cannot be trusted, for a reason in words.
	 * @param recordId the record, when known
	 * @param reason why, without any of the answer's content
	 * @param cause what failed, if anything
	 */
	public StoredResponseIntegrityException(@Nullable RecordId recordId, String reason, @Nullable Throwable cause) {
		super(reason, cause);
		this.recordId = recordId;
	}

	/** The record whose answer it is, when known. */
	public @Nullable RecordId recordId() {
		return this.recordId;
	}

	/**
	 * The integrity failure behind {@code failure}: itself, or the first of its causes (a
	 * store may wrap what it met while reading a record).
	 * @param failure what a store call threw
	 * @return the integrity failure, or {@code null} when it is another failure
	 */
	public static @Nullable StoredResponseIntegrityException in(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof StoredResponseIntegrityException integrity) {
				return integrity;
			}
		}
		return null;
	}

}
