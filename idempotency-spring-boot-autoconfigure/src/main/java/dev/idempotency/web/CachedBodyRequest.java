package dev.idempotency.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

/**
 * A request whose body can be read once for the fingerprint and then again by the
 * handler. Nothing is read until {@link #body(long)} is called (after the key was
 * validated and the handler found to be protected): until then every call passes through
 * to the request untouched.
 */
final class CachedBodyRequest extends HttpServletRequestWrapper {

	/** Bodies declaring at most this many bytes are read into one array of that size. */
	private static final int PRESIZED_LIMIT = 64 * 1024;

	private byte @Nullable [] body;

	CachedBodyRequest(HttpServletRequest request) {
		super(request);
	}

	/**
	 * The whole body, read on the first call. A declared length over {@code maxBytes} is
	 * refused before anything is read, and a body without one (chunked) is refused as
	 * soon as it passes {@code maxBytes}. A declared length only sizes the first array,
	 * and only up to {@link #PRESIZED_LIMIT}; a stream longer than declared (a decoding
	 * filter in front) is read to its end all the same, within {@code maxBytes}.
	 * @throws RequestTooLargeException if the body is larger than {@code maxBytes}
	 */
	byte[] body(long maxBytes) throws IOException {
		if (this.body == null) {
			this.body = read((HttpServletRequest) getRequest(), maxBytes);
		}
		return this.body;
	}

	private static byte[] read(HttpServletRequest request, long limit) throws IOException {
		// No array holds more, whatever the configuration says.
		long maxBytes = Math.min(limit, Integer.MAX_VALUE - 8);
		long declared = request.getContentLengthLong();
		if (declared > maxBytes) {
			throw tooLarge("declares " + declared + " bytes, more", maxBytes);
		}
		InputStream in = request.getInputStream();
		if (declared >= 0 && declared <= PRESIZED_LIMIT) {
			// The usual case: read straight into an array of the declared length, which
			// is the body unless the stream ends early or goes on.
			byte[] body = new byte[(int) declared];
			int n = in.readNBytes(body, 0, body.length);
			if (n < body.length) {
				return Arrays.copyOf(body, n);
			}
			int next = in.read();
			if (next < 0) {
				return body;
			}
			long total = n + 1L;
			if (total > maxBytes) {
				throw tooLarge("is longer", maxBytes);
			}
			ByteArrayOutputStream out = new ByteArrayOutputStream(body.length * 2 + 1);
			out.write(body, 0, n);
			out.write(next);
			return readRest(in, out, total, maxBytes);
		}
		return readRest(in, new ByteArrayOutputStream((int) Math.max(0, Math.min(declared, PRESIZED_LIMIT))), 0,
				maxBytes);
	}

	/** Reads the stream to its end into {@code out}, which holds {@code total} bytes. */
	private static byte[] readRest(InputStream in, ByteArrayOutputStream out, long total, long maxBytes)
			throws IOException {
		byte[] buffer = new byte[8192];
		int read;
		while ((read = in.read(buffer, 0, (int) Math.min(buffer.length, maxBytes - total + 1))) > 0) {
			total += read;
			if (total > maxBytes) {
				throw tooLarge("is longer", maxBytes);
			}
			out.write(buffer, 0, read);
		}
		return out.toByteArray();
	}

	private static RequestTooLargeException tooLarge(String what, long maxBytes) {
		return new RequestTooLargeException("the request body " + what + " than the " + maxBytes
				+ " bytes this server reads for an idempotency key", maxBytes);
	}

	@Override
	public ServletInputStream getInputStream() throws IOException {
		if (this.body == null) {
			return super.getInputStream();
		}
		ByteArrayInputStream in = new ByteArrayInputStream(this.body);
		return new ServletInputStream() {

			@Override
			public int read() {
				return in.read();
			}

			@Override
			public int read(byte[] b, int off, int len) {
				return in.read(b, off, len);
			}

			@Override
			public boolean isFinished() {
				return in.available() == 0;
			}

			@Override
			public boolean isReady() {
				return true;
			}

			@Override
			public void setReadListener(ReadListener listener) {
				throw new UnsupportedOperationException("asynchronous reads of a cached body are not supported");
			}

		};
	}

	@Override
	public BufferedReader getReader() throws IOException {
		if (this.body == null) {
			return super.getReader();
		}
		String encoding = getCharacterEncoding();
		Charset charset = (encoding != null) ? Charset.forName(encoding) : StandardCharsets.UTF_8;
		return new BufferedReader(new InputStreamReader(getInputStream(), charset));
	}

	@Override
	public int getContentLength() {
		return (this.body != null) ? this.body.length : super.getContentLength();
	}

	@Override
	public long getContentLengthLong() {
		return (this.body != null) ? this.body.length : super.getContentLengthLong();
	}

}
