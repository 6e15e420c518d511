package dev.idempotency.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

import org.jspecify.annotations.Nullable;

/**
 * The copy of a protected response's body, kept up to a limit, and what is known of the
 * body the handler produced: how many bytes, whether they outgrew the limit (then the
 * copy is dropped and the response is never stored), the {@code Content-Length} it
 * declared and the first write that failed. It is the buffer itself, so that a capture
 * costs one object.
 */
final class CapturedBody extends ByteArrayOutputStream {

	private static final byte[] EMPTY = new byte[0];

	private final long limit;

	private long produced;

	private long declaredLength = -1;

	private boolean overflow;

	private @Nullable String failure;

	/**
	 * Starts small (it grows by doubling): most answers that are kept are short, and an 8
	 * kB array per protected request showed in the allocation samples.
	 * @param limit the most that is kept
	 */
	CapturedBody(long limit) {
		super((int) Math.min(limit, 1024));
		this.limit = limit;
	}

	/** Whether {@code length} more bytes still fit in the copy. */
	boolean fits(int length) {
		return this.count + (long) length <= this.limit;
	}

	/** Keeps bytes that {@link #fits fit}. */
	void keep(byte[] bytes, int offset, int length) {
		this.produced += length;
		write(bytes, offset, length);
	}

	/**
	 * Counts bytes that go through, and keeps them unless the copy outgrew the limit, now
	 * or before.
	 */
	void record(byte[] bytes, int offset, int length) {
		this.produced += length;
		if (this.overflow) {
			return;
		}
		if (!fits(length)) {
			overflow();
			return;
		}
		write(bytes, offset, length);
	}

	/** The body outgrew the limit: the copy is dropped, and returned. */
	byte[] overflow() {
		byte[] kept = toByteArray();
		this.overflow = true;
		drop();
		return kept;
	}

	/** Drops the copy; what is written next is kept again. */
	void drop() {
		this.buf = EMPTY;
		this.count = 0;
	}

	/**
	 * A reset of the response: the copy and the count start again, unless the body
	 * already outgrew the limit.
	 */
	void restart() {
		if (!this.overflow) {
			reset();
			this.produced = 0;
		}
	}

	/** How many body bytes the handler produced. */
	long produced() {
		return this.produced;
	}

	boolean overflowed() {
		return this.overflow;
	}

	/** The {@code Content-Length} the handler declared, -1 for none. */
	void declare(long length) {
		this.declaredLength = length;
	}

	/** Whether the handler declared a {@code Content-Length} (one that is a length). */
	boolean lengthDeclared() {
		return this.declaredLength >= 0;
	}

	/** A write to the client failed: remembers the first. */
	void failed(IOException ex) {
		if (this.failure == null) {
			this.failure = "writing the response failed after " + this.produced + " bytes (" + ex + ")";
		}
	}

	/**
	 * Why the client may not have received the body the handler produced (a failed write,
	 * or a declared length the body does not match), or {@code null} when nothing says
	 * so.
	 */
	@Nullable String incomplete() {
		if (this.failure != null) {
			return this.failure;
		}
		if (this.declaredLength != -1 && this.declaredLength != this.produced) {
			return "the handler declared Content-Length " + this.declaredLength + " but wrote " + this.produced
					+ " bytes";
		}
		return null;
	}

	/** A declared length as a number: one the body cannot match if it is not one. */
	static long parseLength(String value) {
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			// Not a length the body can match: never stored.
			return Long.MIN_VALUE;
		}
	}

}
