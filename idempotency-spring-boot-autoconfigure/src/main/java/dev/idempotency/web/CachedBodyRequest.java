package dev.idempotency.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
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

	private final byte[] body;

	CachedBodyRequest(HttpServletRequest request) throws IOException {
		super(request);
		this.body = read(request);
	}

	/** The whole body: in one array of the declared length when there is one, else read to the end. */
	private static byte[] read(HttpServletRequest request) throws IOException {
		long declared = request.getContentLengthLong();
		if (declared < 0 || declared > Integer.MAX_VALUE - 8) {
			return request.getInputStream().readAllBytes();
		}
		byte[] body = new byte[(int) declared];
		int read = request.getInputStream().readNBytes(body, 0, body.length);
		return (read == body.length) ? body : Arrays.copyOf(body, read);
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
