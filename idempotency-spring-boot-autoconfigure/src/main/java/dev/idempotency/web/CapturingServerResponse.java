package dev.idempotency.web;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * The WebFlux door's capture of a protected handler's answer: the body is held, not sent,
 * until the answer is stored (or known not to be), so a client that goes away mid-answer
 * leaves a whole stored answer or none; a body larger than may be stored is sent on as it
 * comes, its key released, never truncated.
 */
final class CapturingServerResponse extends ServerHttpResponseDecorator {

	private final long maxBytes;

	private final Function<byte[], Mono<byte[]>> finish;

	private final Function<Long, Mono<Void>> tooLarge;

	private final AtomicBoolean finished = new AtomicBoolean();

	/**
	 * @param finish stores the held body and gives the body to send: this one, or the one
	 * another attempt recorded first (its status and headers set)
	 * @param tooLarge releases the key of an answer over {@code maxBytes}
	 */
	CapturingServerResponse(ServerHttpResponse delegate, long maxBytes, Function<byte[], Mono<byte[]>> finish,
			Function<Long, Mono<Void>> tooLarge) {
		super(delegate);
		this.maxBytes = maxBytes;
		this.finish = finish;
		this.tooLarge = tooLarge;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		Held held = new Held();
		if (body instanceof Mono<? extends DataBuffer> single) {
			// One buffer (an encoded value, its length known) goes on as one, so that the
			// server still writes the whole answer at once (Reactor Netty: the head, the
			// body and its end in one write), as it would without the door.
			Mono<DataBuffer> out = single.<DataBuffer>flatMap(held::only)
				.switchIfEmpty(Mono.defer(() -> Mono.from(held.finish())))
				.doOnDiscard(DataBuffer.class, DataBufferUtils::release)
				.doOnCancel(held::release)
				.doOnError((ex) -> held.release());
			return getDelegate().writeWith(out);
		}
		Flux<DataBuffer> out = Flux.<DataBuffer>from(body)
			.concatMap(held::next)
			.concatWith(Flux.defer(held::finish))
			.doOnDiscard(DataBuffer.class, DataBufferUtils::release)
			.doOnCancel(held::release)
			.doOnError((ex) -> held.release());
		return getDelegate().writeWith(out);
	}

	/** A streamed answer (flushed as it comes) is held whole as any other. */
	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return writeWith(Flux.from(body).concatMap(Flux::from));
	}

	@Override
	public Mono<Void> setComplete() {
		return finishEmpty().then(Mono.defer(getDelegate()::setComplete));
	}

	/**
	 * Finishes an answer without a body, once: when the handler completed without writing
	 * one.
	 */
	Mono<Void> finishEmpty() {
		if (!this.finished.compareAndSet(false, true)) {
			return Mono.empty();
		}
		return this.finish.apply(new byte[0])
			.flatMap((send) -> (send.length == 0) ? Mono.<Void>empty()
					: getDelegate().writeWith(Mono.just(getDelegate().bufferFactory().wrap(send))));
	}

	/** The buffers of one body while it is held, then its end. */
	private final class Held {

		private final List<DataBuffer> buffers = new ArrayList<>();

		private long bytes;

		private boolean passing;

		Publisher<DataBuffer> next(DataBuffer buffer) {
			if (this.passing) {
				return Mono.just(buffer);
			}
			this.bytes += buffer.readableByteCount();
			this.buffers.add(buffer);
			if (this.bytes <= CapturingServerResponse.this.maxBytes) {
				return Mono.empty();
			}
			this.passing = true;
			CapturingServerResponse.this.finished.set(true);
			List<DataBuffer> sent = List.copyOf(this.buffers);
			this.buffers.clear();
			return CapturingServerResponse.this.tooLarge.apply(this.bytes).thenMany(Flux.fromIterable(sent));
		}

		/**
		 * The only buffer of a body: sent on if too large to store, else held and the
		 * body finished at once.
		 */
		Mono<DataBuffer> only(DataBuffer buffer) {
			Publisher<DataBuffer> next = next(buffer);
			return Mono.from(this.passing ? next : finish());
		}

		/** The client went away, or the body failed: what is held is dropped. */
		void release() {
			this.buffers.forEach(DataBufferUtils::release);
			this.buffers.clear();
		}

		Publisher<DataBuffer> finish() {
			if (this.passing || !CapturingServerResponse.this.finished.compareAndSet(false, true)) {
				return Flux.empty();
			}
			// Copied once, into the body as stored.
			byte[] joined = new byte[(int) this.bytes];
			int offset = 0;
			for (DataBuffer buffer : this.buffers) {
				int length = buffer.readableByteCount();
				buffer.read(joined, offset, length);
				offset += length;
				DataBufferUtils.release(buffer);
			}
			this.buffers.clear();
			return CapturingServerResponse.this.finish.apply(joined)
				.map((send) -> getDelegate().bufferFactory().wrap(send));
		}

	}

}
