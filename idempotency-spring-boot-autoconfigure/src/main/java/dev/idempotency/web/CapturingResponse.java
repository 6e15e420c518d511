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

/**
 * Passes everything through to the client and, once {@link #startCapture} was called for a
 * protected request, keeps a copy of the body up to a limit. Past the limit it stops copying and
 * remembers the overflow: such a response is released, never stored truncated. A response that
 * went through {@code sendError} is marked too: its body is rendered later, outside the request.
 */
final class CapturingResponse extends HttpServletResponseWrapper {

	private ByteArrayOutputStream copy;

	private long limit;

	private long written;

	private boolean overflow;

	private boolean errorSent;

	private ServletOutputStream outputStream;

	private PrintWriter writer;

	CapturingResponse(HttpServletResponse response) {
		super(response);
	}

	void startCapture(long maxBytes) {
		this.copy = new ByteArrayOutputStream((int) Math.min(maxBytes, 8192));
		this.limit = maxBytes;
	}

	byte[] capturedBody() {
		return this.copy.toByteArray();
	}

	long bytesWritten() {
		return this.written;
	}

	boolean overflowed() {
		return this.overflow;
	}

	boolean errorSent() {
		return this.errorSent;
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
	public ServletOutputStream getOutputStream() throws IOException {
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
		if (this.writer == null) {
			if (this.outputStream != null) {
				throw new IllegalStateException("getOutputStream() has already been called for this response");
			}
			Charset charset = Charset.forName(getCharacterEncoding());
			this.outputStream = new TeeOutputStream(super.getOutputStream());
			this.writer = new PrintWriter(new OutputStreamWriter(this.outputStream, charset));
		}
		return this.writer;
	}

	@Override
	public void flushBuffer() throws IOException {
		if (this.writer != null) {
			this.writer.flush();
		}
		super.flushBuffer();
	}

	/** Flushes a writer the application did not flush, so the copy holds every character. */
	void flushWriter() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	private void record(byte[] bytes, int offset, int length) {
		this.written += length;
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

	private final class TeeOutputStream extends ServletOutputStream {

		private final ServletOutputStream target;

		TeeOutputStream(ServletOutputStream target) {
			this.target = target;
		}

		@Override
		public void write(int b) throws IOException {
			this.target.write(b);
			record(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			this.target.write(b, off, len);
			record(b, off, len);
		}

		@Override
		public void flush() throws IOException {
			this.target.flush();
		}

		@Override
		public void close() throws IOException {
			this.target.close();
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
