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
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The one binary form of a {@link StoredResponse} that every store keeps: a format byte,
 * the status, the headers and the body, the body deflated when that makes it smaller.
 * Stores persist the bytes as they are, so a replay is byte-exact whatever the store.
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

	/** Bodies smaller than this are not worth compressing. */
	private static final int COMPRESS_FROM = 256;

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

	public static byte[] encode(StoredResponse response) {
		byte[] body = response.body();
		if (isSealed(response)) {
			byte[] encoded = new byte[1 + body.length];
			encoded[0] = FORMAT_SEALED;
			System.arraycopy(body, 0, encoded, 1, body.length);
			return encoded;
		}
		byte[] deflated = (body.length >= COMPRESS_FROM) ? deflate(body) : null;
		if (deflated != null && deflated.length >= body.length) {
			// Not smaller: kept as it is.
			deflated = null;
		}
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(
				64 + ((deflated != null) ? deflated.length : body.length));
		try (DataOutputStream out = new DataOutputStream(bytes)) {
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
				out.write(deflated);
			}
			else {
				out.write(body);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return bytes.toByteArray();
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
		catch (IOException | RuntimeException ex) {
			if (ex instanceof StoredResponseIntegrityException integrity) {
				throw integrity;
			}
			throw new StoredResponseIntegrityException("stored response cannot be decoded", ex);
		}
	}

	private static byte[] deflate(byte[] body) {
		ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 2 + 16);
		Deflater deflater = new Deflater(Deflater.BEST_SPEED);
		try (DeflaterOutputStream stream = new DeflaterOutputStream(out, deflater)) {
			stream.write(body);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		finally {
			deflater.end();
		}
		return out.toByteArray();
	}

	private static byte[] inflate(byte[] deflated, int length) throws IOException {
		try (InflaterInputStream in = new InflaterInputStream(new ByteArrayInputStream(deflated))) {
			return in.readNBytes(length);
		}
	}

}
