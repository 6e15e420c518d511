package dev.idempotency.web;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The copy of a protected response's body, kept up to a limit, and what is known of the
 * body the handler produced: how many bytes, whether they outgrew the limit (then the
 * copy is dropped and the response is never stored), the {@code Content-Length} it
 * declared and the first write that failed.
 * <p>
 * Kept in chunks, not in one array that doubles: the first write gets a chunk of its own
 * length, so that an answer written in one write (a serializer flushing its buffer once,
 * at the end: most answers) is kept in exactly one array, which is the {@link #body()
 * body} as it is; the bytes that do not fit get a chunk of at least 1 KB, and the body is
 * then copied once more, into one array, instead of once per doubling.
 */
final class CapturedBody {

	private static final byte[] EMPTY = new byte[0];

	/** The smallest chunk after the first. */
	private static final int CHUNK = 1024;

	private final long limit;

	/** The chunks filled before {@link #chunk}; {@code null} until there is one. */
	private @Nullable List<byte[]> filled;

	/** The chunk being filled; its bytes from {@link #used} on are free. */
	private byte[] chunk = EMPTY;

	private int used;

	/** The bytes kept, in every chunk. */
	private int count;

	private long produced;

	private long declaredLength = -1;

	private boolean overflow;

	private @Nullable String failure;

	/**
	 * @param limit the most that is kept
	 */
	CapturedBody(long limit) {
		this.limit = Math.min(limit, Integer.MAX_VALUE - 8);
	}

	/** Whether {@code length} more bytes still fit in the copy. */
	boolean fits(int length) {
		return this.count + (long) length <= this.limit;
	}

	/** Keeps bytes that {@link #fits fit}. */
	void keep(byte[] bytes, int offset, int length) {
		this.produced += length;
		append(bytes, offset, length);
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
			this.overflow = true;
			drop();
			return;
		}
		append(bytes, offset, length);
	}

	private void append(byte[] bytes, int offset, int length) {
		int into = Math.min(length, this.chunk.length - this.used);
		System.arraycopy(bytes, offset, this.chunk, this.used, into);
		this.used += into;
		this.count += into;
		int rest = length - into;
		if (rest == 0) {
			return;
		}
		int size = rest;
		if (this.chunk.length > 0) {
			List<byte[]> filled = this.filled;
			if (filled == null) {
				filled = new ArrayList<>(4);
				this.filled = filled;
			}
			filled.add(this.chunk);
			// The bytes fit (checked by the caller): so does a chunk of their size, and
			// a chunk of at least 1 KB, up to the limit.
			size = Math.max(rest, (int) Math.min(CHUNK, this.limit - this.count));
		}
		this.chunk = new byte[size];
		System.arraycopy(bytes, offset + into, this.chunk, 0, rest);
		this.used = rest;
		this.count += rest;
	}

	/**
	 * The body outgrew the limit while it was held (what was kept has been sent): the
	 * copy is dropped.
	 */
	void overflow() {
		this.overflow = true;
		drop();
	}

	/** How many bytes are kept. */
	int size() {
		return this.count;
	}

	/**
	 * The body kept, in one array of its length: the one chunk as it is when it is
	 * exactly full, else a copy of the chunks, which then replaces them (so that it is
	 * copied once, however often it is asked for). The array is never written again: a
	 * later write goes into a new chunk.
	 */
	byte[] body() {
		if (this.filled == null && this.used == this.chunk.length) {
			return this.chunk;
		}
		byte[] body = new byte[this.count];
		int at = 0;
		if (this.filled != null) {
			for (byte[] full : this.filled) {
				System.arraycopy(full, 0, body, at, full.length);
				at += full.length;
			}
			this.filled = null;
		}
		System.arraycopy(this.chunk, 0, body, at, this.used);
		this.chunk = body;
		this.used = body.length;
		return body;
	}

	/** Writes the body kept to {@code out}, without copying it. */
	void writeTo(OutputStream out) throws IOException {
		if (this.filled != null) {
			for (byte[] full : this.filled) {
				out.write(full);
			}
		}
		out.write(this.chunk, 0, this.used);
	}

	/** Drops the copy; what is written next is kept again. */
	void drop() {
		this.filled = null;
		this.chunk = EMPTY;
		this.used = 0;
		this.count = 0;
	}

	/**
	 * A reset of the response: the copy and the count start again, unless the body
	 * already outgrew the limit.
	 */
	void restart() {
		if (!this.overflow) {
			drop();
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
