package dev.idempotency.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
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
 *
 * @since 0.1.0
 */
public final class StoredResponseCodec {

	private static final int FORMAT_RAW_BODY = 1;

	private static final int FORMAT_DEFLATED_BODY = 2;

	/** Bodies smaller than this are not worth compressing. */
	private static final int COMPRESS_FROM = 256;

	private StoredResponseCodec() {
	}

	public static byte[] encode(StoredResponse response) {
		byte[] body = response.body();
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

	public static StoredResponse decode(byte[] encoded) {
		try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded))) {
			int format = in.readUnsignedByte();
			if (format != FORMAT_RAW_BODY && format != FORMAT_DEFLATED_BODY) {
				throw new IllegalArgumentException("unknown stored response format " + format);
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
				throw new IllegalArgumentException("stored response body is truncated");
			}
			return new StoredResponse(status, headers, body);
		}
		catch (IOException ex) {
			throw new IllegalArgumentException("stored response cannot be decoded", ex);
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
