package dev.idempotency.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

/**
 * Passes everything through to the client untouched until {@link #startCapture} is called for a
 * protected request; from then on it keeps a copy of the body the handler produces, up to a limit.
 * The copy is taken before the bytes go to the client, so it is the handler's body, not the part
 * that happened to reach the socket; a write that fails (the client went away) is remembered, and
 * so is a declared {@code Content-Length} the body does not match: such a response is released,
 * never stored. Past the limit it stops copying and remembers the overflow. A response that went
 * through {@code sendError} is marked too: its body is rendered later, outside the request.
 */
final class CapturingResponse extends HttpServletResponseWrapper {

	private @Nullable ByteArrayOutputStream copy;

	private long limit;

	private long produced;

	private long declaredLength = -1;

	private boolean overflow;

	private boolean errorSent;

	private @Nullable String failure;

	private @Nullable ServletOutputStream outputStream;

	private @Nullable PrintWriter writer;

	CapturingResponse(HttpServletResponse response) {
		super(response);
	}

	void startCapture(long maxBytes) {
		this.copy = new ByteArrayOutputStream((int) Math.min(maxBytes, 8192));
		this.limit = maxBytes;
	}

	boolean capturing() {
		return this.copy != null;
	}

	byte[] capturedBody() {
		return (this.copy != null) ? this.copy.toByteArray() : new byte[0];
	}

	/** How many body bytes the handler produced since the capture started. */
	long bytesWritten() {
		return this.produced;
	}

	boolean overflowed() {
		return this.overflow;
	}

	boolean errorSent() {
		return this.errorSent;
	}

	/**
	 * Why the client may not have received the body the handler produced (a failed write, or a
	 * declared length the body does not match), or {@code null} when nothing says so.
	 */
	@Nullable String incomplete() {
		if (this.failure != null) {
			return this.failure;
		}
		if (this.declaredLength >= 0 && this.declaredLength != this.produced) {
			return "the handler declared Content-Length " + this.declaredLength + " but wrote " + this.produced
					+ " bytes";
		}
		return null;
	}

	@Override
	public void sendError(int sc, String msg) throws IOException {
		this.errorSent = true;
		super.sendError(sc, msg);
	}

	@Override
	public void sendError(int sc) throws IOException {
		this.errorSent = true;
		super.sendError(sc);
	}

	@Override
	public void setContentLength(int len) {
		declare(len);
		super.setContentLength(len);
	}

	@Override
	public void setContentLengthLong(long len) {
		declare(len);
		super.setContentLengthLong(len);
	}

	@Override
	public void setHeader(String name, String value) {
		if ("Content-Length".equalsIgnoreCase(name)) {
			declare((value != null) ? parseLength(value) : -1);
		}
		super.setHeader(name, value);
	}

	@Override
	public void addHeader(String name, String value) {
		if ("Content-Length".equalsIgnoreCase(name)) {
			declare(parseLength(value));
		}
		super.addHeader(name, value);
	}

	@Override
	public void setIntHeader(String name, int value) {
		if ("Content-Length".equalsIgnoreCase(name)) {
			declare(value);
		}
		super.setIntHeader(name, value);
	}

	@Override
	public void addIntHeader(String name, int value) {
		if ("Content-Length".equalsIgnoreCase(name)) {
			declare(value);
		}
		super.addIntHeader(name, value);
	}

	private void declare(long length) {
		if (capturing()) {
			this.declaredLength = length;
		}
	}

	private static long parseLength(String value) {
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			// Not a length the body can match: never stored.
			return Long.MIN_VALUE;
		}
	}

	@Override
	public ServletOutputStream getOutputStream() throws IOException {
		if (!capturing()) {
			return super.getOutputStream();
		}
		if (this.writer != null) {
			throw new IllegalStateException("getWriter() has already been called for this response");
		}
		if (this.outputStream == null) {
			this.outputStream = new TeeOutputStream(super.getOutputStream());
		}
		return this.outputStream;
	}

	@Override
	public PrintWriter getWriter() throws IOException {
		if (!capturing()) {
			return super.getWriter();
		}
		if (this.writer == null) {
			if (this.outputStream != null) {
				throw new IllegalStateException("getOutputStream() has already been called for this response");
			}
			String encoding = getCharacterEncoding();
			// As the container's own getWriter() does: the charset in use is declared in the Content-Type.
			setCharacterEncoding(encoding);
			this.outputStream = new TeeOutputStream(super.getOutputStream());
			this.writer = new PrintWriter(new OutputStreamWriter(this.outputStream, Charset.forName(encoding)));
		}
		return this.writer;
	}

	@Override
	public void flushBuffer() throws IOException {
		if (this.writer != null) {
			this.writer.flush();
		}
		try {
			super.flushBuffer();
		}
		catch (IOException ex) {
			failed(ex);
			throw ex;
		}
	}

	/** Flushes a writer the application did not flush, so the copy holds every character. */
	void flushWriter() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	private void record(byte[] bytes, int offset, int length) {
		this.produced += length;
		if (this.copy == null || this.overflow) {
			return;
		}
		if (this.copy.size() + (long) length > this.limit) {
			this.overflow = true;
			this.copy = new ByteArrayOutputStream(0);
			return;
		}
		this.copy.write(bytes, offset, length);
	}

	private void failed(IOException ex) {
		if (capturing() && this.failure == null) {
			this.failure = "writing the response failed after " + this.produced + " bytes (" + ex + ")";
		}
	}

	private final class TeeOutputStream extends ServletOutputStream {

		private final ServletOutputStream target;

		TeeOutputStream(ServletOutputStream target) {
			this.target = target;
		}

		@Override
		public void write(int b) throws IOException {
			record(new byte[] { (byte) b }, 0, 1);
			try {
				this.target.write(b);
			}
			catch (IOException ex) {
				failed(ex);
				throw ex;
			}
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			record(b, off, len);
			try {
				this.target.write(b, off, len);
			}
			catch (IOException ex) {
				failed(ex);
				throw ex;
			}
		}

		@Override
		public void flush() throws IOException {
			try {
				this.target.flush();
			}
			catch (IOException ex) {
				failed(ex);
				throw ex;
			}
		}

		@Override
		public void close() throws IOException {
			try {
				this.target.close();
			}
			catch (IOException ex) {
				failed(ex);
				throw ex;
			}
		}

		@Override
		public boolean isReady() {
			return this.target.isReady();
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			this.target.setWriteListener(listener);
		}

	}

}
