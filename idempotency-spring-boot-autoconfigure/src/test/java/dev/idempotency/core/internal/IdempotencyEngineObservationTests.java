package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.ResultCodec;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatRuntimeException;

/**
 * Each protected call is one {@code idempotency.request} observation, stopped with the
 * outcome an operator filters by, tagged with the door, the model and the store, and
 * never with the key.
 */
class IdempotencyEngineObservationTests {

	private static final StoredResponse OK = new StoredResponse(200, Map.of(), "done".getBytes());

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

	IdempotencyEngineObservationTests() {
		this.registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				IdempotencyEngineObservationTests.this.stopped.add(context);
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
	}

	@Test
	void aRunIsObservedUntilItFinishesAndItsRetryAsAReplay() {
		try (IdempotencyEngine engine = engine(IdempotencySettings.defaults(), false)) {
			String key = TestKeys.newKey();
			Reservation owner = ((Decision.Proceed) engine.begin(call(key, "fp"))).reservation();
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasSingleObservationThat()
				.hasNameEqualTo("idempotency.request")
				.hasBeenStarted()
				.isNotStopped();
			engine.succeeded(owner, OK);
			assertThat(engine.begin(call(key, "fp"))).isInstanceOf(Decision.Replay.class);
			assertThat(outcomes()).containsExactly("executed", "replayed");
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasNumberOfObservationsWithNameEqualTo("idempotency.request", 2)
				.forAllObservationsWithNameEqualTo("idempotency.request",
						(observation) -> observation.hasLowCardinalityKeyValue("idempotency.door", "http")
							.hasLowCardinalityKeyValue("idempotency.model", "lease")
							.hasLowCardinalityKeyValue("idempotency.store", "memory")
							.doesNotHaveHighCardinalityKeyValueWithKey("idempotency.key.hash"));
			assertThat(allValues()).noneMatch((value) -> value.contains(key));
		}
	}

	@Test
	void refusalsAreObservedWithWhyTheyWereRefused() {
		IdempotencySettings settings = IdempotencySettings.defaults().toBuilder().inFlightWait(Duration.ZERO).build();
		try (IdempotencyEngine engine = engine(settings, false)) {
			String key = TestKeys.newKey();
			engine.begin(call(key, "fp"));
			engine.begin(call(key, "other body"));
			engine.begin(call(key, "fp"));
			engine.begin(call("not-a-uuid", "fp"));
			engine.begin(new IdempotentCall("scope", List.of(), KeyFormat.UUID_V7, true, "op", () -> "fp"));
			assertThat(outcomes()).containsExactly("mismatch", "in-flight", "refused", "refused");
		}
	}

	@Test
	void aCallWithoutAKeyThatNeedsNoneIsNotObserved() {
		try (IdempotencyEngine engine = engine(IdempotencySettings.defaults(), false)) {
			engine.begin(new IdempotentCall("scope", List.of(), KeyFormat.UUID_V7, false, "op", () -> "fp"));
			TestObservationRegistryAssert.assertThat(this.registry).doesNotHaveAnyObservation();
		}
	}

	@Test
	void aFailingStoreIsAStoreFailureWhetherTheCallIsRefusedOrRunsUnprotected() {
		for (IdempotencySettings.FailureMode mode : IdempotencySettings.FailureMode.values()) {
			try (IdempotencyEngine engine = new IdempotencyEngine(failingStore(),
					IdempotencySettings.defaults().toBuilder().failureMode(mode).build(), Clock.systemUTC(),
					IdempotencyListener.NONE, this.registry, false)) {
				engine.begin(call(TestKeys.newKey(), "fp"));
			}
		}
		assertThat(outcomes()).containsExactly("store-failure", "store-failure");
	}

	@Test
	void anAttemptWhoseAnswerAnotherAttemptRecordedFirstIsAConflict() {
		try (IdempotencyEngine engine = engine(recordAfterSuccess(), false)) {
			String key = TestKeys.newKey();
			Reservation first = ((Decision.Proceed) engine.begin(call(key, "fp"))).reservation();
			Reservation second = ((Decision.Proceed) engine.begin(call(key, "fp"))).reservation();
			engine.succeeded(first, OK);
			assertThat(engine.succeeded(second, OK)).isInstanceOf(Answer.Recorded.class);
			assertThat(outcomes()).containsExactly("executed", "conflict");
			TestObservationRegistryAssert.assertThat(this.registry)
				.forAllObservationsWithNameEqualTo("idempotency.request", (observation) -> observation
					.hasLowCardinalityKeyValue("idempotency.model", "record-after-success"));
		}
	}

	@Test
	void aBodyTooLargeToFingerprintIsRefusedWithItsError() {
		try (IdempotencyEngine engine = engine(IdempotencySettings.defaults(), false)) {
			IllegalStateException tooLarge = new IllegalStateException("too large");
			assertThatRuntimeException().isThrownBy(() -> engine
				.begin(new IdempotentCall("scope", List.of(TestKeys.newKey()), KeyFormat.UUID_V7, false, "op", () -> {
					throw tooLarge;
				})));
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasSingleObservationThat()
				.hasLowCardinalityKeyValue("idempotency.outcome", "refused")
				.hasError(tooLarge)
				.hasBeenStopped();
		}
	}

	@Test
	void theMethodDoorIsItsOwnDoorAndTheKeyHashIsThereOnlyWhenAsked() {
		try (IdempotencyEngine engine = engine(IdempotencySettings.defaults(), true)) {
			String key = "order-42";
			Decision decision = engine.begin(new IdempotentCall("scope", List.of(key), KeyFormat.OPAQUE, false,
					"Orders.place", () -> "fp", List::of, IdempotentCall.Door.METHOD));
			engine.succeeded(((Decision.Proceed) decision).reservation(), OK);
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasSingleObservationThat()
				.hasLowCardinalityKeyValue("idempotency.door", "method")
				.hasHighCardinalityKeyValue("idempotency.key.hash", Fingerprints.sha256Hex(key).substring(0, 16));
			assertThat(allValues()).noneMatch((value) -> value.contains(key));
		}
	}

	@Test
	void aTemplateCallIsTheParentOfWhatItsCallbackObservesAndCarriesWhatTheCallbackThrew() {
		try (IdempotencyEngine engine = engine(IdempotencySettings.defaults(), false)) {
			IdempotencyTemplate template = new IdempotencyTemplate(engine);
			String done = template.execute(IdempotentRequest.of("order-1", "Orders.place", new byte[0]),
					ResultCodec.utf8(),
					() -> Observation.createNotStarted("work", this.registry).observe(() -> "done"));
			assertThat(done).isEqualTo("done");
			IllegalStateException declined = new IllegalStateException("declined");
			assertThatIllegalStateException().isThrownBy(() -> template
				.execute(IdempotentRequest.of("order-2", "Orders.place", new byte[0]), ResultCodec.utf8(), () -> {
					throw declined;
				})).isSameAs(declined);
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasObservationWithNameEqualTo("work")
				.that()
				.hasParentObservationContextMatching((parent) -> "idempotency.request".equals(parent.getName()));
			assertThat(this.stopped).filteredOn((context) -> "idempotency.request".equals(context.getName()))
				.extracting(Observation.Context::getError)
				.containsExactly(null, declined);
			assertThat(outcomes()).containsExactly("(none)", "executed", "executed");
		}
	}

	@Test
	void aCommitThatFailedWithTheApplicationsOwnErrorIsObservedWithIt() {
		// Record-after-success: the in-memory store cannot roll back
		// a completion, which a lease would then release.
		try (IdempotencyEngine engine = engine(recordAfterSuccess(), false)) {
			Reservation owner = ((Decision.Proceed) engine.begin(call(TestKeys.newKey(), "fp"))).reservation();
			AtomicOutcome outcome = engine.succeededInTransaction(owner, OK);
			IllegalStateException duplicate = new IllegalStateException("duplicate key, sent at the commit");
			engine.commitFailed(owner, outcome, duplicate);
			TestObservationRegistryAssert.assertThat(this.registry)
				.hasSingleObservationThat()
				.hasLowCardinalityKeyValue("idempotency.outcome", "executed")
				.hasError(duplicate)
				.hasBeenStopped();
		}
	}

	private static IdempotencySettings recordAfterSuccess() {
		return IdempotencySettings.defaults().toBuilder().mode(IdempotencySettings.Mode.RECORD_AFTER_SUCCESS).build();
	}

	private IdempotencyEngine engine(IdempotencySettings settings, boolean keyHash) {
		return new IdempotencyEngine(InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(1000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build(), settings, Clock.systemUTC(), IdempotencyListener.NONE, this.registry, keyHash);
	}

	/** The outcomes of the stopped observations, in the order they stopped. */
	private List<String> outcomes() {
		return this.stopped.stream()
			.map((context) -> context.getLowCardinalityKeyValue("idempotency.outcome"))
			.map((value) -> (value != null) ? value.getValue() : "(none)")
			.toList();
	}

	private List<String> allValues() {
		return this.stopped.stream()
			.flatMap((context) -> java.util.stream.Stream.concat(context.getLowCardinalityKeyValues().stream(),
					context.getHighCardinalityKeyValues().stream()))
			.map(KeyValue::getValue)
			.toList();
	}

	private static IdempotentCall call(String key, String fingerprint) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> fingerprint);
	}

	private static IdempotencyStore failingStore() {
		InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(10)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		return (IdempotencyStore) java.lang.reflect.Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
				new Class<?>[] { IdempotencyStore.class }, (proxy, method, args) -> {
					if (method.getName().equals("name")) {
						return "memory";
					}
					if (method.getName().equals("reserve") || method.getName().equals("find")) {
						throw new dev.idempotency.store.IdempotencyStoreException("down", null);
					}
					return method.invoke(memory, args);
				});
	}

}
