package dev.idempotency.bench;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.TestKeys;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's cost per store, without HTTP: {@code freshKey} is one protected call with
 * a new key (begin: key check, fingerprint, reserve; then succeeded: encode and
 * complete), {@code replay} is a repeat of a completed key (begin: reserve finds the
 * record and decodes its response). The request and response are the size of a
 * createTable in the sample catalog.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = { "-Xms2g", "-Xmx2g" })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class EngineBenchmark {

	@Param({ "memory", "h2", "postgresql", "redis" })
	public String store;

	private BenchStores stores;

	private IdempotencyEngine engine;

	private String replayKey;

	@Setup(Level.Trial)
	public void setUp() throws Exception {
		this.stores = new BenchStores(this.store, 4);
		this.engine = new IdempotencyEngine(this.stores.store, IdempotencySettings.defaults(), Clock.systemUTC(),
				IdempotencyListener.NONE);
		this.replayKey = TestKeys.newKey();
		Decision first = this.engine.begin(call(this.replayKey));
		this.engine.succeeded(((Decision.Proceed) first).reservation(), Payloads.RESPONSE);
	}

	@TearDown(Level.Trial)
	public void tearDown() throws Exception {
		this.engine.close();
		this.stores.close();
	}

	@Benchmark
	public Decision freshKey() {
		Decision decision = this.engine.begin(call(TestKeys.newKey()));
		this.engine.succeeded(((Decision.Proceed) decision).reservation(), Payloads.RESPONSE);
		return decision;
	}

	@Benchmark
	public StoredResponse replay() {
		return ((Decision.Replay) this.engine.begin(call(this.replayKey))).response();
	}

	static IdempotentCall call(String key) {
		return new IdempotentCall("anonymous", List.of(key), KeyFormat.UUID_V7, false, "createTable", () -> Fingerprints
			.http("POST", "/v1/namespaces/bench/tables", null, "application/json", Payloads.REQUEST));
	}

	/** A createTable request and its 200 response, as the sample catalog sends them. */
	static final class Payloads {

		static final byte[] REQUEST = Payloads.resource("create-table-request.json");

		static final StoredResponse RESPONSE = new StoredResponse(200,
				Map.of("Content-Type", List.of("application/json")), Payloads.resource("create-table-response.json"));

		private static byte[] resource(String name) {
			try (var in = EngineBenchmark.class.getResourceAsStream(name)) {
				return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
			}
			catch (Exception ex) {
				throw new IllegalStateException("missing bench resource " + name, ex);
			}
		}

	}

}
