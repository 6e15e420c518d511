package dev.idempotency.test.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A minimal HTTP/1.1 client: one connection per request ({@code Connection: close}), so
 * that a fault the proxy puts on a connection hits exactly one request. A response that
 * ends before its declared length, or a chunked body without its last chunk, is an
 * {@link IOException}, as it is for any real client.
 */
public final class RawHttp {

	private RawHttp() {
	}

	public static Answer exchange(int port, String method, String pathAndQuery, @Nullable String idempotencyKey,
			@Nullable String json) throws IOException {
		byte[] body = (json != null) ? json.getBytes(StandardCharsets.UTF_8) : new byte[0];
		StringBuilder head = new StringBuilder();
		head.append(method).append(' ').append(pathAndQuery).append(" HTTP/1.1\r\n");
		head.append("Host: 127.0.0.1:").append(port).append("\r\n");
		head.append("Connection: close\r\n");
		head.append("Accept: application/json\r\n");
		if (idempotencyKey != null) {
			head.append("Idempotency-Key: ").append(idempotencyKey).append("\r\n");
		}
		if (json != null) {
			head.append("Content-Type: application/json\r\n");
			head.append("Content-Length: ").append(body.length).append("\r\n");
		}
		head.append("\r\n");
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			socket.setSoTimeout(60_000);
			OutputStream out = socket.getOutputStream();
			out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
			out.write(body);
			out.flush();
			return read(socket.getInputStream());
		}
	}

	private static Answer read(InputStream in) throws IOException {
		byte[] all = in.readAllBytes();
		int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
		if (end < 0) {
			throw new IOException("connection ended inside the response head (" + all.length + " bytes)");
		}
		String[] lines = new String(all, 0, end, StandardCharsets.ISO_8859_1).split("\r\n");
		String[] statusLine = lines[0].split(" ", 3);
		int status = Integer.parseInt(statusLine[1]);
		Map<String, String> headers = new LinkedHashMap<>();
		for (int i = 1; i < lines.length; i++) {
			int colon = lines[i].indexOf(':');
			headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
					lines[i].substring(colon + 1).trim());
		}
		byte[] rest = java.util.Arrays.copyOfRange(all, end + 4, all.length);
		byte[] body;
		if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
			body = dechunk(rest);
		}
		else if (headers.containsKey("content-length")) {
			int length = Integer.parseInt(headers.get("content-length"));
			if (rest.length < length) {
				throw new IOException("body ended after " + rest.length + " of " + length + " bytes");
			}
			body = java.util.Arrays.copyOf(rest, length);
		}
		else {
			body = rest;
		}
		return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
	}

	private static byte[] dechunk(byte[] data) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		int at = 0;
		while (true) {
			int lineEnd = indexOf(data, at, "\r\n".getBytes(StandardCharsets.US_ASCII));
			if (lineEnd < 0) {
				throw new IOException("chunked body ended without its last chunk");
			}
			String sizeText = new String(data, at, lineEnd - at, StandardCharsets.US_ASCII);
			int semicolon = sizeText.indexOf(';');
			int size = Integer.parseInt((semicolon >= 0) ? sizeText.substring(0, semicolon) : sizeText, 16);
			at = lineEnd + 2;
			if (size == 0) {
				return out.toByteArray();
			}
			if (at + size > data.length) {
				throw new IOException("chunked body ended inside a chunk");
			}
			out.write(data, at, size);
			at += size + 2;
		}
	}

	private static int indexOf(byte[] data, byte[] pattern) {
		return indexOf(data, 0, pattern);
	}

	private static int indexOf(byte[] data, int from, byte[] pattern) {
		outer: for (int i = from; i <= data.length - pattern.length; i++) {
			for (int j = 0; j < pattern.length; j++) {
				if (data[i + j] != pattern[j]) {
					continue outer;
				}
			}
			return i;
		}
		return -1;
	}

	/** A whole response: status, headers (names in lower case) and body. */
	public record Answer(int status, Map<String, String> headers, String body) {

		public boolean replayed() {
			return "true".equals(this.headers.get("idempotent-replayed"));
		}

	}

}
