package dev.idempotency.autoconfigure;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.SmartLifecycle;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's heartbeat thread runs with the context and ends when the context closes.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyEngineLifecycleTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class));

	@Test
	void theHeartbeatThreadStartsWithTheContextAndEndsWhenItCloses() throws Exception {
		Set<Thread> before = heartbeatThreads();
		IdempotencyEngine[] engine = new IdempotencyEngine[1];
		Set<Thread> started = new java.util.HashSet<>();
		this.runner.run((context) -> {
			engine[0] = context.getBean(IdempotencyEngine.class);
			assertThat(context.getBean("idempotencyEngineLifecycle", SmartLifecycle.class).isRunning()).isTrue();
			assertThat(engine[0].isRunning()).isTrue();
			assertThat(engine[0].begin(call())).isInstanceOf(Decision.Proceed.class);
			started.addAll(heartbeatThreads());
			started.removeAll(before);
			assertThat(started).hasSize(1);
		});
		assertThat(engine[0].isRunning()).isFalse();
		for (Thread thread : started) {
			// The executor has terminated; its worker thread exits right after.
			thread.join(10_000);
			assertThat(thread.isAlive()).as("heartbeat thread %s after close", thread.getName()).isFalse();
		}
		Decision afterClose = engine[0].begin(call());
		assertThat(afterClose).as("a stopped engine refuses instead of running without heartbeats")
			.isInstanceOf(Decision.Reject.class);
		assertThat(((Decision.Reject) afterClose).error().type()).isEqualTo(IdempotencyErrorType.STORE_UNAVAILABLE);
		assertThat(((Decision.Reject) afterClose).error().detail()).contains("stopped");
	}

	/**
	 * One INFO line at start-up names the store and how keys are protected, so that a new
	 * user sees which store their settings chose.
	 */
	@Test
	void theStartUpLogNamesTheStoreAndTheModel(CapturedOutput output) {
		this.runner.withPropertyValues("idempotency.mode=record-after-success", "idempotency.lifetime=PT2H")
			.run((context) -> assertThat(output).contains("Idempotency-Key protection started: store 'memory',"
					+ " model record-after-success, keys kept PT2H5M (lifetime PT2H + grace PT5M), on a store"
					+ " failure fail-closed"));
	}

	@Test
	void theEngineStopsAfterTheWebServer() {
		this.runner
			.run((context) -> assertThat(context.getBean("idempotencyEngineLifecycle", SmartLifecycle.class).getPhase())
				.as("lower phase: stopped after the web server's graceful shutdown (DEFAULT_PHASE - 2048)")
				.isLessThan(SmartLifecycle.DEFAULT_PHASE - 2048));
	}

	private static Set<Thread> heartbeatThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("idempotency-heartbeat"))
			.collect(Collectors.toSet());
	}

	private static IdempotentCall call() {
		return new IdempotentCall("s", List.of(TestKeys.newKey()), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

}
