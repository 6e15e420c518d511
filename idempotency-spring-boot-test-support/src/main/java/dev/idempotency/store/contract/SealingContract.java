package dev.idempotency.store.contract;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings.FailureMode;
import dev.idempotency.core.IdempotencySettings.Mode;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.seal.Sealing;
import dev.idempotency.store.seal.SealingKeys;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Answers sealed by the engine over the store under test: the store keeps a sealed answer
 * as it is handed over (a {@link StoredResponseCodec#sealed sealed} answer, status 0,
 * whose body is the envelope), so that it replays byte for byte, an answer moved to
 * another record does not open, and keys rotate. Part of
 * {@link IdempotencyStoreContractTests}: a store's test extends that class, not this one.
 */
public abstract class SealingContract extends EngineOverStoreContract {

	private static final byte[] KEY_1 = key(1);

	private static final byte[] KEY_2 = key(101);

	/**
	 * The engine sealing over this store, the store read beneath it as an intruder reads
	 * it.
	 */
	@Nested
	class SealedAnswers {

		private final List<IdempotencyEngine> engines = new ArrayList<>();

		@AfterEach
		void closeEngines() {
			this.engines.forEach(IdempotencyEngine::close);
		}

		private IdempotencyEngine engine(Mode mode, FailureMode failureMode, Sealing sealing) {
			IdempotencyEngine engine = new IdempotencyEngine(SealingContract.this.store,
					settings(mode, failureMode, Duration.ZERO), Clock.systemUTC(), IdempotencyListener.NONE,
					ObservationRegistry.NOOP, false, sealing);
			this.engines.add(engine);
			return engine;
		}

		private IdempotencyEngine engine(Sealing sealing) {
			return engine(Mode.LEASE, FailureMode.FAIL_CLOSED, sealing);
		}

		/** What the store itself returns, beneath the engine. */
		private StoredResponse storedAnswer(RecordId id) {
			return SealingContract.this.store.find(id).orElseThrow().completedResponse();
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aSealedAnswerIsReplayedByteForByteAndTheStoreKeepsNoneOfItInClear(Mode mode) {
			IdempotencyEngine engine = engine(mode, FailureMode.FAIL_CLOSED, sealing(false, "k1", "k1"));
			RecordId id = newId();
			String marker = "marker-" + UUID.randomUUID();
			Map<String, List<String>> headers = new LinkedHashMap<>();
			headers.put("Content-Type", List.of("application/json"));
			headers.put("Location", List.of("/receipts/" + marker));
			StoredResponse created = new StoredResponse(201, headers,
					("{\"holder\":\"" + marker + "\"}").getBytes(StandardCharsets.UTF_8));
			engine.succeeded(proceeds(begin(engine, id, "fp-a")), created);

			assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(created);
			StoredResponse stored = storedAnswer(id);
			assertThat(StoredResponseCodec.isSealed(stored)).as("kept as handed over: sealed").isTrue();
			assertThat(new String(stored.body(), StandardCharsets.ISO_8859_1)).doesNotContain(marker)
				.doesNotContain("/receipts/")
				.doesNotContain("application/json");
			assertThat(new String(stored.body(), StandardCharsets.ISO_8859_1)).as("its key id, in clear")
				.startsWith("\0\2k1");
		}

		@ParameterizedTest
		@EnumSource(FailureMode.class)
		void aSealedAnswerMovedToAnotherRecordIsRefusedNeverReplayedNorRunAgain(FailureMode failureMode) {
			IdempotencyEngine engine = engine(Mode.LEASE, failureMode, sealing(false, "k1", "k1"));
			RecordId id = newId();
			engine.succeeded(proceeds(begin(engine, id, "fp-a")), response(201, "{\"for\":\"alice\"}"));
			IdempotencyRecord alices = SealingContract.this.store.find(id).orElseThrow();
			RecordId otherKey = newId();
			RecordId otherScope = new RecordId(id.scope() + "-bob", id.key());
			for (RecordId moved : List.of(otherKey, otherScope)) {
				SealingContract.this.store
					.recordCompleted(completed(moved, alices.fingerprint(), alices.completedResponse(), RETENTION));
				IdempotencyError error = rejected(begin(engine, moved, "fp-a"));
				assertThat(error.type()).isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);
				assertThat(error.status()).isEqualTo(500);
				assertThat(error.detail()).doesNotContain("alice");
			}
			assertThat(replayed(begin(engine, id, "fp-a"))).as("the record it was sealed for")
				.isEqualTo(response(201, "{\"for\":\"alice\"}"));
		}

		/**
		 * A rotation: a key added while the first still seals, then made the sealing key,
		 * then the first removed once its records have expired (here: before, to see what
		 * a too early removal does).
		 */
		@Test
		void keysRotateWithoutRefusingARetryUntilTheOldKeyIsRemoved() {
			IdempotencyEngine first = engine(sealing(false, "k1", "k1"));
			RecordId completedId = newId();
			RecordId inFlightId = newId();
			first.succeeded(proceeds(begin(first, completedId, "fp-a")), response(201, "{\"under\":\"k1\"}"));
			Reservation inFlight = proceeds(begin(first, inFlightId, "fp-b"));

			IdempotencyEngine rotated = engine(sealing(false, "k2", "k1", "k2"));
			assertThat(replayed(begin(rotated, completedId, "fp-a"))).isEqualTo(response(201, "{\"under\":\"k1\"}"));
			assertThat(rejected(begin(rotated, inFlightId, "fp-b")).type())
				.as("a retry across the rotation is the same request, still in flight, not another one")
				.isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT);
			assertThat(rejected(begin(rotated, completedId, "fp-other")).type())
				.isEqualTo(IdempotencyErrorType.KEY_REUSED);
			first.succeeded(inFlight, response(200, "{\"finished\":\"k1\"}"));
			assertThat(replayed(begin(rotated, inFlightId, "fp-b"))).isEqualTo(response(200, "{\"finished\":\"k1\"}"));
			RecordId newId = newId();
			rotated.succeeded(proceeds(begin(rotated, newId, "fp-c")), response(201, "{\"under\":\"k2\"}"));
			assertThat(new String(storedAnswer(newId).body(), StandardCharsets.ISO_8859_1)).startsWith("\0\2k2");

			IdempotencyEngine withoutTheOldKey = engine(sealing(false, "k2", "k2"));
			assertThat(replayed(begin(withoutTheOldKey, newId, "fp-c"))).isEqualTo(response(201, "{\"under\":\"k2\"}"));
			IdempotencyError error = rejected(begin(withoutTheOldKey, completedId, "fp-a"));
			assertThat(error.type()).isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);
			assertThat(error.status()).isEqualTo(500);
		}

		@Test
		void anAnswerStoredBeforeSealingStillReplaysUnlessEveryAnswerMustBeSealed() {
			IdempotencyEngine before = engine(Sealing.none());
			RecordId id = newId();
			before.succeeded(proceeds(begin(before, id, "fp-a")), response(201, "{\"plain\":true}"));

			assertThat(replayed(begin(engine(sealing(false, "k1", "k1")), id, "fp-a")))
				.as("its fingerprint, made before fingerprints were keyed, is recognised")
				.isEqualTo(response(201, "{\"plain\":true}"));
			IdempotencyError error = rejected(begin(engine(sealing(true, "k1", "k1")), id, "fp-a"));
			assertThat(error.type()).isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);

			RecordId sealedId = newId();
			IdempotencyEngine sealing = engine(sealing(false, "k1", "k1"));
			sealing.succeeded(proceeds(begin(sealing, sealedId, "fp-a")), response(201, "{\"sealed\":true}"));
			assertThat(rejected(begin(before, sealedId, "fp-a")).type())
				.as("a sealed answer where no key is configured is refused, never replayed as status 0")
				.isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);
		}

	}

	/** The sealing of the keys named, 32 bytes each, {@code sealingKeyId} sealing. */
	private static Sealing sealing(boolean requireSealed, String sealingKeyId, String... keyIds) {
		Map<String, byte[]> keys = new LinkedHashMap<>();
		for (String keyId : keyIds) {
			keys.put(keyId, keyId.equals("k1") ? KEY_1 : KEY_2);
		}
		return Sealing.of(SealingKeys.of(keys, sealingKeyId), requireSealed);
	}

	private static byte[] key(int first) {
		byte[] key = new byte[32];
		for (int i = 0; i < key.length; i++) {
			key[i] = (byte) (first + i);
		}
		return key;
	}

}
