package dev.idempotency.actuate;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.web.PrincipalScopeResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code idempotency} Actuator endpoint: reads one record, or removes it (releases a
 * key in flight, or forgets a completed answer so that the next request with the key runs
 * again), by the key as the client sent it and the scope it belongs to ({@code anonymous}
 * when not given; with the default scope resolver {@code user:<principal name>}). The key
 * is looked up as the engine keeps it: a UUID in canonical form, a long key hashed.
 * <p>
 * Like Boot's own endpoints it is exposed over HTTP only when the application says so
 * ({@code management.endpoints.web.exposure.include=idempotency}), and secured as the
 * application secures its other endpoints.
 *
 * @since 0.1.0
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {

	private static final Log logger = LogFactory.getLog(IdempotencyEndpoint.class);

	/** Hex digits of the fingerprint shown: enough to compare, never the whole. */
	static final int FINGERPRINT_PREFIX_LENGTH = 12;

	private final IdempotencyStore store;

	public IdempotencyEndpoint(IdempotencyStore store) {
		this.store = store;
	}

	/**
	 * The record of a key.
	 * @param key the key as the client sent it
	 * @param scope whom the key belongs to, {@code anonymous} when {@code null}
	 * @return the record, or {@code null} (answered 404) when none is live
	 */
	@ReadOperation
	public @Nullable RecordDescriptor record(String key, @Nullable String scope) {
		return find(key, scope).map(RecordDescriptor::of).orElse(null);
	}

	/**
	 * Removes the record of a key, whatever its state, and logs who asked at INFO. A call
	 * still running under a removed key stores nothing when it ends, and a retry with the
	 * key runs the operation again, possibly while that call still runs.
	 * @param key the key as the client sent it
	 * @param scope whom the key belongs to, {@code anonymous} when {@code null}
	 * @param securityContext who asks
	 * @return whether a record was removed (over HTTP: 204, else 404)
	 */
	@DeleteOperation
	public boolean remove(String key, @Nullable String scope, SecurityContext securityContext) {
		Optional<InspectedRecord> found = find(key, scope);
		if (found.isEmpty()) {
			return false;
		}
		IdempotencyRecord record = found.get().record();
		if (!this.store.remove(record.id())) {
			return false;
		}
		if (logger.isInfoEnabled()) {
			logger.info("Idempotency record removed by " + who(securityContext) + ": key=" + record.id().key()
					+ " scope=" + Fingerprints.sha256Hex(record.id().scope()).substring(0, 12) + " state="
					+ stateName(record.state()) + " operation=" + record.operation());
		}
		return true;
	}

	private Optional<InspectedRecord> find(String key, @Nullable String scope) {
		String owner = (scope != null && !scope.isEmpty()) ? scope : PrincipalScopeResolver.ANONYMOUS;
		for (RecordId id : IdempotencyEngine.recordIds(owner, key)) {
			Optional<InspectedRecord> found = this.store.inspect(id);
			if (found.isPresent()) {
				return found;
			}
		}
		return Optional.empty();
	}

	private static String who(SecurityContext securityContext) {
		java.security.Principal principal = securityContext.getPrincipal();
		return (principal != null) ? principal.getName() : "anonymous";
	}

	static String stateName(RecordState state) {
		return (state == RecordState.IN_PROGRESS) ? "in-flight" : state.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * A record as the endpoint shows it.
	 *
	 * @param key the key as stored (a long key as its hash)
	 * @param operation the operation that created the record
	 * @param state {@code in-flight} or {@code completed}
	 * @param created when the record was created, {@code null} where the store did not
	 * keep it
	 * @param expires when the record is removed
	 * @param leaseExpires when the owner's lease ends (in flight only)
	 * @param leaseOwner the token of the owner holding the lease (in flight only)
	 * @param status the stored answer's status (completed only, when it passes its
	 * integrity check)
	 * @param integrity {@code failed} for a completed record whose stored answer failed
	 * its integrity check (it is not replayed: remove it, or let it expire)
	 * @param fingerprint the first {@value #FINGERPRINT_PREFIX_LENGTH} hex digits of the
	 * request's fingerprint (keyed when fingerprints are)
	 * <p>
	 * What a record has not (the lease of a completed one) is left out of its JSON.
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record RecordDescriptor(String key, String operation, String state, @Nullable Instant created,
			Instant expires, @Nullable Instant leaseExpires, @Nullable String leaseOwner, @Nullable Integer status,
			@Nullable String integrity, String fingerprint) {

		static RecordDescriptor of(InspectedRecord inspected) {
			IdempotencyRecord record = inspected.record();
			boolean inFlight = record.state() == RecordState.IN_PROGRESS;
			// The engine's store opens a sealed answer; one still sealed failed its
			// check.
			boolean failed = !inFlight && StoredResponseCodec.isSealed(record.completedResponse());
			String fingerprint = record.fingerprint();
			return new RecordDescriptor(record.id().key(), record.operation(), stateName(record.state()),
					inspected.createdAt(), record.expiresAt(), inFlight ? record.leaseExpiresAt() : null,
					inFlight ? inspected.ownerToken() : null,
					(inFlight || failed) ? null : record.completedResponse().status(), failed ? "failed" : null,
					fingerprint.substring(0, Math.min(FINGERPRINT_PREFIX_LENGTH, fingerprint.length())));
		}

	}

}
