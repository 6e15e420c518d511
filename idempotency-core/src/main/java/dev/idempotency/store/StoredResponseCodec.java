package dev.idempotency.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

import org.jspecify.annotations.Nullable;

/**
 * The one binary form of a {@link StoredResponse} that every store keeps: a format byte,
 * the status, the headers and the body, the body deflated (where the store deflates, when
 * that makes it smaller) or as it is. Stores persist the bytes as they are, so a replay
 * is byte-exact whatever the store.
 * <p>
 * A sealed answer ({@link dev.idempotency.store.seal.Sealing}) is a format of its own:
 * the format byte {@value #FORMAT_SEALED}, then the envelope as it is (key id, nonce,
 * ciphertext), of which nothing is read here. It travels through the store SPI as a
 * {@link #sealed(byte[]) sealed} {@code StoredResponse}, so a store keeps it without
 * knowing it is sealed.
 *
 * @since 0.1.0
 */
public final class StoredResponseCodec {

	private static final int FORMAT_RAW_BODY = 1;

	private static final int FORMAT_DEFLATED_BODY = 2;

	private static final int FORMAT_SEALED = 3;

	/**
	 * The status of a sealed answer on its way through a store: no HTTP status is 0, and
	 * the real one is inside the envelope.
	 */
	private static final int SEALED_STATUS = 0;

	/**
	 * The size from which the relational stores deflate a body by default
	 * ({@link #encode(StoredResponse)}): smaller bodies are not worth compressing.
	 * @since 0.2.0
	 */
	public static final int DEFAULT_DEFLATE_FROM = 256;

	/**
	 * A {@code deflateFrom} for {@link #encode(StoredResponse, int)} that keeps every
	 * body as it is: the default of the in-memory and Redis stores.
	 * @since 0.2.0
	 */
	public static final int NEVER_DEFLATE = Integer.MAX_VALUE;

	/**
	 * How many deflaters and inflaters are kept for reuse: a new one allocates zlib's
	 * native state (about 256 KB for a deflater) and registers a cleaner, which cost more
	 * than deflating a small answer.
	 */
	private static final int POOLED = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

	private static final BlockingQueue<Deflater> DEFLATERS = new ArrayBlockingQueue<>(POOLED);

	private static final BlockingQueue<Inflater> INFLATERS = new ArrayBlockingQueue<>(POOLED);

	private StoredResponseCodec() {
	}

	/**
	 * A sealed answer as it travels through the store SPI: status 0, no headers, its
	 * envelope as the body; {@link #encode} keeps it under the format byte
	 * {@value #FORMAT_SEALED}.
	 * @param envelope the envelope, opaque here
	 * @return the answer to hand to a store
	 */
	public static StoredResponse sealed(byte[] envelope) {
		return new StoredResponse(SEALED_STATUS, Map.of(), envelope);
	}

	/**
	 * Whether a stored answer is sealed ({@link #sealed}): its body is an envelope, not
	 * an answer.
	 * @param response a stored answer as a store returned it
	 * @return whether it is sealed
	 */
	public static boolean isSealed(StoredResponse response) {
		return response.status() == SEALED_STATUS;
	}

	/**
	 * {@code deflateFrom} when it is a size a store can deflate from.
	 * @param deflateFrom the smallest body to deflate, in bytes
	 * @return {@code deflateFrom}
	 * @throws IllegalArgumentException if it is negative
	 * @since 0.2.0
	 */
	public static int checkDeflateFrom(int deflateFrom) {
		if (deflateFrom < 0) {
			throw new IllegalArgumentException("deflateFrom must be 0 or more bytes, was " + deflateFrom);
		}
		return deflateFrom;
	}

	/**
	 * The bytes of {@code response}, its body deflated from
	 * {@value #DEFAULT_DEFLATE_FROM} bytes when that makes it smaller:
	 * {@code encode(response, DEFAULT_DEFLATE_FROM)}.
	 * @param response the answer
	 * @return its bytes
	 */
	public static byte[] encode(StoredResponse response) {
		return encode(response, DEFAULT_DEFLATE_FROM);
	}

	/**
	 * The bytes of {@code response}, its body deflated when it has {@code deflateFrom}
	 * bytes or more and deflating makes it smaller, or else kept as it is. Deflating
	 * costs about 7 µs per KB of CPU here (zlib's fastest level, plus a fixed cost per
	 * answer), more than Redis or the heap spend on the bytes it saves (measured in
	 * {@code docs/benchmarks.md}: an 8 KB JSON answer cost Redis and the application 58
	 * µs less per request kept as it is, PostgreSQL 45 µs more), so the in-memory and
	 * Redis stores keep bodies as they are by default ({@link #NEVER_DEFLATE}), and the
	 * relational stores deflate them ({@link #DEFAULT_DEFLATE_FROM}); each store's
	 * builder takes another size ({@code idempotency.store.compression} and
	 * {@code idempotency.store.compress-from} in the starter). Either form is decoded by
	 * {@link #decode}, whichever store or setting wrote it.
	 * @param response the answer
	 * @param deflateFrom the smallest body deflated, in bytes; {@link #NEVER_DEFLATE}:
	 * none
	 * @return its bytes
	 * @since 0.2.0
	 */
	public static byte[] encode(StoredResponse response, int deflateFrom) {
		byte[] body = response.body();
		if (isSealed(response)) {
			byte[] encoded = new byte[1 + body.length];
			encoded[0] = FORMAT_SEALED;
			System.arraycopy(body, 0, encoded, 1, body.length);
			return encoded;
		}
		// Kept as it is when deflating does not make it smaller.
		byte[] deflated = (body.length >= deflateFrom) ? deflate(body) : null;
		// The head first, then the body copied once, into an array of the exact length.
		ByteArrayOutputStream head = new ByteArrayOutputStream(128);
		try (DataOutputStream out = new DataOutputStream(head)) {
			out.writeByte((deflated != null) ? FORMAT_DEFLATED_BODY : FORMAT_RAW_BODY);
			out.writeShort(response.status());
			out.writeShort(response.headers().size());
			for (Map.Entry<String, List<String>> header : response.headers().entrySet()) {
				out.writeUTF(header.getKey());
				out.writeShort(header.getValue().size());
				for (String value : header.getValue()) {
					out.writeUTF(value);
				}
			}
			out.writeInt(body.length);
			if (deflated != null) {
				out.writeInt(deflated.length);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		byte[] tail = (deflated != null) ? deflated : body;
		byte[] encoded = Arrays.copyOf(head.toByteArray(), head.size() + tail.length);
		System.arraycopy(tail, 0, encoded, head.size(), tail.length);
		return encoded;
	}

	/**
	 * The length of {@code response}'s bytes with its body kept as it is: what
	 * {@link #encode(StoredResponse, int)} makes of it with {@link #NEVER_DEFLATE},
	 * counted without making them (a store that keeps the answer itself counts this
	 * against its bound).
	 * @param response the answer
	 * @return its encoded length
	 * @since 0.2.0
	 */
	public static int encodedLength(StoredResponse response) {
		if (isSealed(response)) {
			return 1 + response.body().length;
		}
		long length = 1 + 2 + 2 + 4 + (long) response.body().length;
		for (Map.Entry<String, List<String>> header : response.headers().entrySet()) {
			length += 2 + utfLength(header.getKey()) + 2;
			for (String value : header.getValue()) {
				length += 2 + utfLength(value);
			}
		}
		return (int) Math.min(length, Integer.MAX_VALUE);
	}

	/**
	 * The bytes {@link DataOutputStream#writeUTF} writes for {@code text}, its length
	 * aside.
	 */
	private static int utfLength(String text) {
		int length = text.length();
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == 0 || c >= 0x80) {
				length += (c >= 0x800) ? 2 : 1;
			}
		}
		return length;
	}

	/**
	 * The answer {@link #encode} made these bytes of; a sealed one as it was handed over.
	 * @param encoded the bytes a store kept
	 * @return the answer
	 * @throws StoredResponseIntegrityException if the bytes are not a stored answer
	 */
	public static StoredResponse decode(byte[] encoded) {
		if (encoded.length > 0 && encoded[0] == FORMAT_SEALED) {
			return sealed(Arrays.copyOfRange(encoded, 1, encoded.length));
		}
		try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded))) {
			int format = in.readUnsignedByte();
			if (format != FORMAT_RAW_BODY && format != FORMAT_DEFLATED_BODY) {
				throw new StoredResponseIntegrityException("unknown stored response format " + format);
			}
			int status = in.readUnsignedShort();
			int headerCount = in.readUnsignedShort();
			Map<String, List<String>> headers = new LinkedHashMap<>();
			for (int i = 0; i < headerCount; i++) {
				String name = in.readUTF();
				int valueCount = in.readUnsignedShort();
				List<String> values = new ArrayList<>(valueCount);
				for (int j = 0; j < valueCount; j++) {
					values.add(in.readUTF());
				}
				headers.put(name, values);
			}
			int bodyLength = in.readInt();
			byte[] body;
			if (format == FORMAT_DEFLATED_BODY) {
				byte[] deflated = in.readNBytes(in.readInt());
				body = inflate(deflated, bodyLength);
			}
			else {
				body = in.readNBytes(bodyLength);
			}
			if (body.length != bodyLength) {
				throw new StoredResponseIntegrityException("stored response body is truncated");
			}
			if (status == SEALED_STATUS) {
				throw new StoredResponseIntegrityException("stored response has status 0 without being sealed");
			}
			return new StoredResponse(status, headers, body);
		}
		catch (IOException | DataFormatException | RuntimeException ex) {
			if (ex instanceof StoredResponseIntegrityException integrity) {
				throw integrity;
			}
			throw new StoredResponseIntegrityException("stored response cannot be decoded", ex);
		}
	}

	/**
	 * The body deflated, or {@code null} if that is not smaller: the output buffer is the
	 * body's size, so deflating stops as soon as it cannot win.
	 */
	private static byte @Nullable [] deflate(byte[] body) {
		Deflater deflater = DEFLATERS.poll();
		if (deflater == null) {
			deflater = new Deflater(Deflater.BEST_SPEED);
		}
		try {
			deflater.setInput(body);
			deflater.finish();
			byte[] out = new byte[body.length];
			int length = deflater.deflate(out);
			return (deflater.finished() && length < body.length) ? Arrays.copyOf(out, length) : null;
		}
		finally {
			release(deflater);
		}
	}

	/**
	 * At most {@code length} bytes inflated; fewer if the deflated bytes end before (the
	 * caller finds the body truncated).
	 */
	private static byte[] inflate(byte[] deflated, int length) throws DataFormatException {
		Inflater inflater = INFLATERS.poll();
		if (inflater == null) {
			inflater = new Inflater();
		}
		try {
			inflater.setInput(deflated);
			byte[] out = new byte[length];
			int read = 0;
			while (read < length) {
				int n = inflater.inflate(out, read, length - read);
				if (n == 0 && (inflater.finished() || inflater.needsInput() || inflater.needsDictionary())) {
					break;
				}
				read += n;
			}
			return (read == length) ? out : Arrays.copyOf(out, read);
		}
		finally {
			release(inflater);
		}
	}

	private static void release(Deflater deflater) {
		deflater.reset();
		if (!DEFLATERS.offer(deflater)) {
			deflater.end();
		}
	}

	private static void release(Inflater inflater) {
		inflater.reset();
		if (!INFLATERS.offer(inflater)) {
			inflater.end();
		}
	}

}
