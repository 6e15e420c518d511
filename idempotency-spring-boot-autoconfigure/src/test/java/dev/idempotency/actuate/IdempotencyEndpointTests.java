package dev.idempotency.actuate;

import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint on its own: lookup by the key as sent, removal logged with who asked. */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyEndpointTests {

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(100)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build();

	private final IdempotencyEndpoint endpoint = new IdempotencyEndpoint(this.store);

	@Test
	void anOpaqueKeyIsFoundAsSentAndALongOneByItsHash() {
		String longKey = "order-" + "x".repeat(100);
		RecordId hashed = dev.idempotency.core.internal.IdempotencyEngine.recordIds("user:alice", longKey).get(0);
		assertThat(hashed.key()).startsWith("sha256 ");
		completed(hashed, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
		IdempotencyEndpoint.RecordDescriptor record = this.endpoint.record(longKey, "user:alice");
		assertThat(record).isNotNull();
		assertThat(record.state()).isEqualTo("completed");
		assertThat(record.status()).isEqualTo(201);
		assertThat(record.fingerprint()).isEqualTo("0123456789ab");
		assertThat(this.endpoint.record(longKey, null)).as("another scope").isNull();
	}

	@Test
	void aQuotedUuidIsFoundInItsCanonicalForm() {
		String uuid = "0190f2a4-7c1e-7d3a-9b2f-4c5d6e7f8a9b";
		completed(new RecordId("anonymous", uuid), "ff".repeat(32));
		assertThat(this.endpoint.record("\"" + uuid.toUpperCase(java.util.Locale.ROOT) + "\"", null)).isNotNull();
	}

	@Test
	void aMethodCallsKeyIsKeptApartAndFoundByTheKeyAsSent() {
		RecordId methodCall = dev.idempotency.core.internal.IdempotencyEngine.recordId("anonymous", "order-9",
				dev.idempotency.core.internal.IdempotentCall.Door.METHOD);
		assertThat(methodCall.key()).isEqualTo("method order-9");
		completed(methodCall, "ee".repeat(32));
		IdempotencyEndpoint.RecordDescriptor record = this.endpoint.record("order-9", null);
		assertThat(record).isNotNull();
		assertThat(record.key()).isEqualTo("method order-9");
	}

	@Test
	void aRemovalIsLoggedWithTheAuthenticatedPrincipal(CapturedOutput output) {
		RecordId id = new RecordId("user:alice", "order-7");
		this.store.reserve(new ReserveRequest(id, "aa".repeat(32), "Orders.create", "owner-1", Duration.ofMinutes(1),
				Duration.ofMinutes(10)));
		IdempotencyEndpoint.RecordDescriptor inFlight = this.endpoint.record("order-7", "user:alice");
		assertThat(inFlight).isNotNull();
		assertThat(inFlight.state()).isEqualTo("in-flight");
		assertThat(inFlight.leaseOwner()).isEqualTo("owner-1");
		assertThat(inFlight.status()).isNull();
		assertThat(this.endpoint.remove("order-7", "user:alice", asking(() -> "ops-bob"))).isTrue();
		assertThat(output).contains("Idempotency record removed by ops-bob: key=order-7 scope=")
			.contains("state=in-flight operation=Orders.create");
		assertThat(this.endpoint.remove("order-7", "user:alice", asking(null))).isFalse();
	}

	@Test
	void aKeyNoFormatAcceptsIsNotFound() {
		assertThat(this.endpoint.record("has space", null)).isNull();
		assertThat(this.endpoint.remove("has space", null, asking(null))).isFalse();
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
