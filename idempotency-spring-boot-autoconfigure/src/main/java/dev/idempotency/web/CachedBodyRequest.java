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

/**
 * A request whose body has been read once, so it can be fingerprinted before the handler reads it.
 */
final class CachedBodyRequest extends HttpServletRequestWrapper {

	/** Bodies declaring at most this many bytes are read into one array of that size. */
	private static final int PRESIZED_LIMIT = 64 * 1024;

	private final byte[] body;

	CachedBodyRequest(HttpServletRequest request) throws IOException {
		super(request);
		this.body = read(request);
	}

	/**
	 * The whole body. A declared length only sizes the first array, and only up to
	 * {@link #PRESIZED_LIMIT}: a client declaring gigabytes allocates nothing before it sends them,
	 * and a stream longer than declared (a decoding filter in front) is read to its end all the same.
	 */
	private static byte[] read(HttpServletRequest request) throws IOException {
		long declared = request.getContentLengthLong();
		InputStream in = request.getInputStream();
		if (declared < 0 || declared > PRESIZED_LIMIT) {
			return in.readAllBytes();
		}
		byte[] body = new byte[(int) declared];
		int read = in.readNBytes(body, 0, body.length);
		if (read < body.length) {
			return Arrays.copyOf(body, read);
		}
		int next = in.read();
		if (next < 0) {
			return body;
		}
		ByteArrayOutputStream longer = new ByteArrayOutputStream(body.length * 2 + 1);
		longer.write(body);
		longer.write(next);
		in.transferTo(longer);
		return longer.toByteArray();
	}

	byte[] body() {
		return this.body;
	}

	@Override
	public ServletInputStream getInputStream() {
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
	public BufferedReader getReader() {
		String encoding = getCharacterEncoding();
		Charset charset = (encoding != null) ? Charset.forName(encoding) : StandardCharsets.UTF_8;
		return new BufferedReader(new InputStreamReader(getInputStream(), charset));
	}

	@Override
	public int getContentLength() {
		return this.body.length;
	}

	@Override
	public long getContentLengthLong() {
		return this.body.length;
	}

}
