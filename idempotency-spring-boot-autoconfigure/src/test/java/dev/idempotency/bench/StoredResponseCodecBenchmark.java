package dev.idempotency.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What keeping an answer costs in the codec every store uses, per answer size (JSON as
 * compressible as a real one): {@code encode} and {@code decode} as they are,
 * {@code deflateWithNewDeflater} the way the codec deflated before (a new
 * {@code Deflater} and a {@code DeflaterOutputStream} per answer), {@code copyRaw} what
 * keeping the body uncompressed costs (a copy). Run:
 * {@code java -cp <test classpath> org.openjdk.jmh.Main StoredResponseCodecBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class StoredResponseCodecBenchmark {

	@Param({ "40", "265", "1024", "8192" })
	public int size;

	private StoredResponse answer;

	private byte[] encoded;

	@Setup
	public void setUp() {
		this.answer = new StoredResponse(201,
				Map.of("Content-Type", List.of("application/json"), "Location", List.of("/orders/8f14e45f")),
				json(this.size));
		this.encoded = StoredResponseCodec.encode(this.answer);
	}

	@Benchmark
	public byte[] encode() {
		return StoredResponseCodec.encode(this.answer);
	}

	@Benchmark
	public StoredResponse decode() {
		return StoredResponseCodec.decode(this.encoded);
	}

	@Benchmark
	public byte[] deflateWithNewDeflater() {
		byte[] body = this.answer.body();
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

	@Benchmark
	public byte[] copyRaw() {
		return this.answer.body().clone();
	}

	/** JSON lines of an order, as compressible as a real answer. */
	static byte[] json(int size) {
		Random random = new Random(size);
		StringBuilder json = new StringBuilder("{\"id\":\"8f14e45f-ceea-467f-a0e6-f0c8e6e9d2b1\",\"lines\":[");
		while (json.length() < size) {
			json.append("{\"sku\":\"SKU-")
				.append(100000 + random.nextInt(900000))
				.append("\",\"name\":\"Item ")
				.append(random.nextInt(1000))
				.append("\",\"price\":")
				.append(random.nextInt(10000) / 100.0)
				.append(",\"quantity\":")
				.append(1 + random.nextInt(9))
				.append("},");
		}
		return java.util.Arrays.copyOf(json.toString().getBytes(StandardCharsets.UTF_8), size);
	}

}
