package dev.idempotency.web;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

/**
 * Passes everything through to the client untouched until {@link #startCapture} is called
 * for a protected request. From then on it keeps the body the handler produces, up to a
 * limit.
 * <p>
 * A synchronous handler's answer is <em>held</em>: kept in memory and sent only after it
 * was stored ({@link #sendHeld}), so a client that goes away mid-answer leaves a whole
 * stored answer that its retry gets, and the handler never sees the client's failure. An
 * answer that outgrows the limit stops being held: what was held is sent, the rest
 * streams through, and nothing is stored. An asynchronous handler's answer is written by
 * another thread after the request thread returned: it streams through as it is written,
 * with a copy taken before the bytes go to the client; a write that fails (the client
 * went away) is remembered, and so is a declared {@code Content-Length} the body does not
 * match: such a response is released, never stored. A response that went through
 * {@code sendError} is marked too: its body is rendered later, outside the request.
 */
final class CapturingResponse extends HttpServletResponseWrapper {

	/**
	 * Guards the held body against an asynchronous handler's writes. A lock, not
	 * {@code synchronized}: sending the held body blocks on the client's socket, and on
	 * JDK 21 to 23 a virtual thread blocked inside a monitor pins its carrier.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/** The copy of the body and what is known of it, from {@link #startCapture}. */
	private @Nullable CapturedBody copy;

	private volatile boolean holding;

	private boolean closedWhileHolding;

	private boolean errorSent;

	private @Nullable ServletOutputStream outputStream;

	private @Nullable PrintWriter writer;

	CapturingResponse(HttpServletResponse response) {
		super(response);
	}

	/**
	 * Starts keeping the body.
	 * @param maxBytes the most that is kept
	 * @param hold whether the body is held back until {@link #sendHeld} (a synchronous
	 * handler)
	 */
	void startCapture(long maxBytes, boolean hold) {
		this.copy = new CapturedBody(maxBytes);
		this.holding = hold;
	}

	/**
	 * Sends the held body to the client (nothing if it was not held). Called once the
	 * answer is stored, or once it is known that it will not be.
	 * @throws IOException if the client went away: the stored answer is what its retry
	 * gets
	 */
	void sendHeld() throws IOException {
		this.lock.lock();
		try {
			if (!this.holding) {
				return;
			}
			if (this.writer != null) {
				// Text still in the writer's encoder belongs to the held answer.
				this.writer.flush();
			}
			this.holding = false;
			CapturedBody held = this.copy;
			if (this.outputStream == null) {
				return;
			}
			if ((held == null || !held.lengthDeclared()) && !isCommitted()) {
				super.setContentLengthLong((held != null) ? held.size() : 0);
			}
			ServletOutputStream target = ((TeeOutputStream) this.outputStream).target;
			if (held != null) {
				held.writeTo(target);
			}
			if (this.closedWhileHolding) {
				target.close();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Drops the held answer and resets the response, so that another answer can be sent
	 * in its place; {@code false} (and nothing changed) if the answer was not held or
	 * something of it already reached the client.
	 */
	boolean discardHeld() {
		this.lock.lock();
		try {
			if (!this.holding || isCommitted()) {
				return false;
			}
			this.holding = false;
			if (this.copy != null) {
				this.copy.drop();
			}
			this.closedWhileHolding = false;
			getResponse().reset();
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Stops holding (a handler that went asynchronous): what was held is sent, the rest
	 * streams.
	 */
	void stopHolding() throws IOException {
		this.lock.lock();
		try {
			if (this.holding && this.copy != null && this.outputStream != null) {
				this.holding = false;
				try {
					this.copy.writeTo(((TeeOutputStream) this.outputStream).target);
				}
				catch (IOException ex) {
					failed(ex);
					throw ex;
				}
			}
			this.holding = false;
		}
		finally {
			this.lock.unlock();
		}
	}

	boolean capturing() {
		return this.copy != null;
	}

	/**
	 * The body kept, in an array that is not written again (the held answer is then sent
	 * from it, not from a copy of it).
	 */
	byte[] capturedBody() {
		return (this.copy != null) ? this.copy.body() : new byte[0];
	}

	/** How many body bytes the handler produced since the capture started. */
	long bytesWritten() {
		return (this.copy != null) ? this.copy.produced() : 0;
	}

	boolean overflowed() {
		return this.copy != null && this.copy.overflowed();
	}

	boolean errorSent() {
		return this.errorSent;
	}

	/**
	 * Why the client may not have received the body the handler produced (a failed write,
	 * or a declared length the body does not match), or {@code null} when nothing says
	 * so.
	 */
	@Nullable String incomplete() {
		return (this.copy != null) ? this.copy.incomplete() : null;
	}

	@Override
	public void resetBuffer() {
		forgetHeld();
		super.resetBuffer();
	}

	@Override
	public void reset() {
		forgetHeld();
		declare(-1);
		super.reset();
	}

	/**
	 * A reset of the response also drops what was kept of the body: text still in the
	 * writer's encoder is pushed through first (the container drops its part), and the
	 * copy starts again, held or not, as long as nothing has reached the client.
	 */
	private void forgetHeld() {
		if (this.writer != null) {
			this.writer.flush();
		}
		if (this.copy != null && (this.holding || !isCommitted())) {
			this.copy.restart();
		}
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
	public void setHeader(String name, @Nullable String value) {
		if ("Content-Length".equalsIgnoreCase(name)) {
			declare((value != null) ? CapturedBody.parseLength(value) : -1);
		}
		super.setHeader(name, value);
	}

	@Override
	public void addHeader(String name, @Nullable String value) {
		if ("Content-Length".equalsIgnoreCase(name) && value != null) {
			declare(CapturedBody.parseLength(value));
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
		if (this.copy != null) {
			this.copy.declare(length);
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
			// As the container's own getWriter() does: the charset in use is declared in
			// the Content-Type.
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
		if (this.holding) {
			// Nothing goes to the client before the answer is stored.
			return;
		}
		try {
			super.flushBuffer();
		}
		catch (IOException ex) {
			failed(ex);
			throw ex;
		}
	}

	/**
	 * Flushes a writer the application did not flush, so the copy holds every character.
	 */
	void flushWriter() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	/**
	 * Keeps the bytes while holding; returns {@code false} if they are to be sent now.
	 * Past the limit holding stops: what was held goes out first, and nothing is stored.
	 */
	private boolean hold(ServletOutputStream target, byte[] bytes, int offset, int length) throws IOException {
		this.lock.lock();
		try {
			CapturedBody copy = this.copy;
			if (!this.holding || copy == null) {
				return false;
			}
			if (copy.fits(length)) {
				copy.keep(bytes, offset, length);
				return true;
			}
			this.holding = false;
			try {
				copy.writeTo(target);
			}
			catch (IOException ex) {
				failed(ex);
				throw ex;
			}
			finally {
				copy.overflow();
			}
			return false;
		}
		finally {
			this.lock.unlock();
		}
	}

	private void record(byte[] bytes, int offset, int length) {
		if (this.copy != null) {
			this.copy.record(bytes, offset, length);
		}
	}

	private void failed(IOException ex) {
		if (this.copy != null) {
			this.copy.failed(ex);
		}
	}

	private final class TeeOutputStream extends ServletOutputStream {

		private final ServletOutputStream target;

		TeeOutputStream(ServletOutputStream target) {
			this.target = target;
		}

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			if (hold(this.target, b, off, len)) {
				return;
			}
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
			if (CapturingResponse.this.holding) {
				return;
			}
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
			if (CapturingResponse.this.holding) {
				CapturingResponse.this.closedWhileHolding = true;
				return;
			}
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
