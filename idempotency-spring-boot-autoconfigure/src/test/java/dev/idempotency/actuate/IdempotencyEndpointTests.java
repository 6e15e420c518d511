package dev.idempotency.actuate;

import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * The endpoint on its own: lookup by the key as its format stores it, in one scope or in
 * all, removal logged with who asked, a failing store answered as the doors answer it.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyEndpointTests {

	private static final String UUID_V7 = "0190f2a4-7c1e-7d3a-9b2f-4c5d6e7f8a9b";

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(200)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build();

	private final IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store);

	private final IdempotencyEndpoint opaqueEndpoint = new IdempotencyEndpoint(this.store, KeyFormat.OPAQUE,
			Duration.ofSeconds(5), IdempotencyRejectedException.DEFAULT_PROBLEM_TYPE_BASE);

	@Test
	void anOpaqueKeyIsFoundAsSentAndALongOneByItsHash() {
		String longKey = "order-" + "x".repeat(100);
		String hashed = IdempotencyEngine.storedKey(longKey, KeyFormat.OPAQUE, IdempotentCall.Door.HTTP);
		assertThat(hashed).startsWith("sha256 ");
		completed(new RecordId("user:alice", hashed),
				"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
		IdempotencyEndpoint.RecordsDescriptor found = this.endpoint.records(longKey, "user:alice", null);
		assertThat(found).isNotNull();
		assertThat(found.key()).isEqualTo(hashed);
		IdempotencyEndpoint.RecordDescriptor record = found.records().get(0);
		assertThat(record.scope()).isEqualTo("user:alice");
		assertThat(record.state()).isEqualTo("completed");
		assertThat(record.status()).isEqualTo(201);
		assertThat(record.fingerprint()).isEqualTo("0123456789ab");
		assertThat(this.endpoint.records(longKey, "anonymous", null)).as("another scope").isNull();
	}

	@Test
	void withUuidKeysAQuotedOrUpperCaseUuidIsFoundInItsCanonicalForm() {
		completed(new RecordId("anonymous", UUID_V7), "ff".repeat(32));
		assertThat(this.endpoint.records("\"" + UUID_V7.toUpperCase(Locale.ROOT) + "\"", "anonymous", null))
			.isNotNull();
		assertThat(this.opaqueEndpoint.records(UUID_V7.toUpperCase(Locale.ROOT), "anonymous", "uuid-v7"))
			.as("the format named")
			.isNotNull();
	}

	/**
	 * With opaque keys, case and quotes make another key: the endpoint finds and removes
	 * the one the operator named, not the lower-case UUID of another client.
	 */
	@Test
	void withOpaqueKeysACaseOrQuoteIsAnotherKey() {
		String upper = UUID_V7.toUpperCase(Locale.ROOT);
		completed(new RecordId("anonymous", UUID_V7), "aa".repeat(32));
		completed(new RecordId("anonymous", upper), "bb".repeat(32));
		IdempotencyEndpoint.RecordsDescriptor found = this.opaqueEndpoint.records(upper, "anonymous", null);
		assertThat(found).isNotNull();
		assertThat(found.key()).isEqualTo(upper);
		assertThat(found.records().get(0).fingerprint()).startsWith("bbbb");
		assertThat(this.opaqueEndpoint.records("\"" + UUID_V7 + "\"", "anonymous", null)).isNull();

		assertThat(this.opaqueEndpoint.remove(upper, "anonymous", null, null, asking(null))).isTrue();
		assertThat(this.store.inspect(new RecordId("anonymous", UUID_V7))).as("the other key's record stays")
			.isPresent();
		assertThat(this.store.inspect(new RecordId("anonymous", upper))).isEmpty();
	}

	@Test
	void aKeyTheApplicationsFormatRefusesIsLookedUpAsSent() {
		completed(new RecordId("anonymous", "order-7"), "cc".repeat(32));
		assertThat(this.endpoint.records("order-7", "anonymous", null)).as("an operation's own opaque format")
			.isNotNull();
	}

	@Test
	void aKeyItsFormatRefusesOrAnUnknownFormatIsABadRequestThatSaysWhy() {
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.records("order-7", "anonymous", "uuid-v7"))
			.withMessageContaining("UUID");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.records("has space", null, null))
			.withMessageContaining("visible ASCII");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.records(UUID_V7, null, "xml"))
			.withMessage("format must be uuid-v7, uuid or opaque (as idempotency.key.format), was xml");
	}

	@Test
	void withoutScopeTheKeysRecordsInEveryScopeAreListed() {
		completed(new RecordId("user:bob", UUID_V7), "bb".repeat(32));
		this.store.reserve(new ReserveRequest(new RecordId("user:alice", UUID_V7), "aa".repeat(32), "Orders.create",
				"owner-1", Duration.ofMinutes(1), Duration.ofMinutes(10)));
		IdempotencyEndpoint.RecordsDescriptor found = this.endpoint.records(UUID_V7.toUpperCase(Locale.ROOT), null,
				null);
		assertThat(found).isNotNull();
		assertThat(found.records()).extracting(IdempotencyEndpoint.RecordDescriptor::scope)
			.containsExactly("user:alice", "user:bob");
		assertThat(found.records()).extracting(IdempotencyEndpoint.RecordDescriptor::state)
			.containsExactly("in-flight", "completed");
		assertThat(found.truncated()).isFalse();
	}

	@Test
	void aKeyInMoreScopesThanAreListedSaysSo() {
		for (int i = 0; i <= IdempotencyEndpoint.MAX_RECORDS; i++) {
			completed(new RecordId("tenant-" + (1000 + i), "order-7"), "dd".repeat(32));
		}
		IdempotencyEndpoint.RecordsDescriptor found = this.endpoint.records("order-7", null, null);
		assertThat(found).isNotNull();
		assertThat(found.records()).hasSize(IdempotencyEndpoint.MAX_RECORDS);
		assertThat(found.records().get(0).scope()).isEqualTo("tenant-1000");
		assertThat(found.truncated()).isTrue();
	}

	@Test
	void aMethodCallsKeyIsKeptApartAndFoundByTheKeyAsSent() {
		RecordId methodCall = IdempotencyEngine.recordId("anonymous", "order-9", IdempotentCall.Door.METHOD);
		assertThat(methodCall.key()).isEqualTo("method order-9");
		completed(methodCall, "ee".repeat(32));
		IdempotencyEndpoint.RecordsDescriptor found = this.endpoint.records("order-9", "anonymous", null);
		assertThat(found).isNotNull();
		IdempotencyEndpoint.RecordDescriptor record = found.records().get(0);
		assertThat(record.key()).isEqualTo("method order-9");
		assertThat(record.door()).isEqualTo("method");
		assertThat(this.endpoint.records("order-9", null, null)).as("in every scope")
			.extracting((records) -> records.records().get(0).key())
			.isEqualTo("method order-9");
	}

	@Test
	void aKeyBothDoorsKeepIsListedForEachAndRemovedForTheDoorNamed() {
		RecordId methodCall = IdempotencyEngine.recordId("anonymous", "order-9", IdempotentCall.Door.METHOD);
		RecordId request = new RecordId("anonymous", "order-9");
		completed(methodCall, "ee".repeat(32));
		completed(request, "ff".repeat(32));
		IdempotencyEndpoint.RecordsDescriptor found = this.opaqueEndpoint.records("order-9", null, null);
		assertThat(found).isNotNull();
		assertThat(found.records()).extracting(IdempotencyEndpoint.RecordDescriptor::door)
			.containsExactly("http", "method");
		assertThat(found.records()).extracting(IdempotencyEndpoint.RecordDescriptor::key)
			.containsExactly("order-9", "method order-9");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.opaqueEndpoint.remove("order-9", "anonymous", null, null, asking(null)))
			.withMessageContaining("door=http or door=method");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.opaqueEndpoint.remove("order-9", "anonymous", null, "rest", asking(null)))
			.withMessage("door must be http or method, was rest");
		assertThat(this.store.inspect(methodCall)).isPresent();
		assertThat(this.store.inspect(request)).isPresent();
		assertThat(this.opaqueEndpoint.remove("order-9", "anonymous", null, "method", asking(null))).isTrue();
		assertThat(this.store.inspect(methodCall)).isEmpty();
		assertThat(this.store.inspect(request)).as("the HTTP door's record stays").isPresent();
		assertThat(this.opaqueEndpoint.remove("order-9", "anonymous", null, null, asking(null))).isTrue();
		assertThat(this.store.inspect(request)).isEmpty();
	}

	@Test
	void aRemovalNamesItsScopeAndIsLoggedWithTheAuthenticatedPrincipal(CapturedOutput output) {
		RecordId id = new RecordId("user:alice", "order-7");
		this.store.reserve(new ReserveRequest(id, "aa".repeat(32), "Orders.create", "owner-1", Duration.ofMinutes(1),
				Duration.ofMinutes(10)));
		IdempotencyEndpoint.RecordsDescriptor found = this.endpoint.records("order-7", "user:alice", null);
		assertThat(found).isNotNull();
		IdempotencyEndpoint.RecordDescriptor inFlight = found.records().get(0);
		assertThat(inFlight.state()).isEqualTo("in-flight");
		assertThat(inFlight.leaseOwner()).isEqualTo("owner-1");
		assertThat(inFlight.status()).isNull();
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.remove("order-7", null, null, null, asking(null)))
			.withMessageContaining("give its scope");
		assertThat(this.store.inspect(id)).isPresent();
		assertThat(this.endpoint.remove("order-7", "user:alice", null, null, asking(() -> "ops-bob"))).isTrue();
		assertThat(output).contains("Idempotency record removed by ops-bob: key=order-7 scope=")
			.contains("state=in-flight operation=Orders.create");
		assertThat(this.endpoint.remove("order-7", "user:alice", null, null, asking(null))).isFalse();
	}

	@Test
	void aFailingStoreIsAnswered503WithRetryAfterAsTheDoorsAnswerIt() {
		IdempotencyStore down = mock(IdempotencyStore.class);
		given(down.name()).willReturn("jdbc");
		given(down.inspect(any())).willThrow(new IdempotencyStoreException("connection refused"));
		IdempotencyEndpoint failing = new IdempotencyEndpoint(down, KeyFormat.UUID_V7, Duration.ofSeconds(7),
				"https://example.com/problems/");
		assertThatExceptionOfType(IdempotencyRejectedException.class)
			.isThrownBy(() -> failing.records(UUID_V7, "anonymous", null))
			.satisfies((ex) -> assertThat(ex.getStatusCode().value()).isEqualTo(503))
			.satisfies((ex) -> assertThat(ex.getHeaders().getFirst("Retry-After")).isEqualTo("7"))
			.satisfies((ex) -> assertThat(ex.getBody().getType())
				.hasToString("https://example.com/problems/store-unavailable"));
	}

	private void completed(RecordId id, String fingerprint) {
		this.store.reserve(new ReserveRequest(id, fingerprint, "Orders.create", "owner", Duration.ofMinutes(1),
				Duration.ofMinutes(10)));
		this.store.complete(id, "owner",
				new StoredResponse(201, Map.of("Location", List.of("/orders/7")), new byte[0]));
	}

	private static SecurityContext asking(Principal principal) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return principal;
			}

			@Override
			public boolean isUserInRole(String role) {
				return false;
			}

		};
	}

}
