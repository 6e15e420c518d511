package dev.idempotency.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.InvalidIdempotencyKeyException;
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

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code idempotency} Actuator endpoint: reads the records of a key, in one scope or
 * (where the store can find a key without its scope) in every scope, and removes one
 * (releases a key in flight, or forgets a completed answer so that the next request with
 * the key runs again).
 * <p>
 * The key is given as the client sent it and looked up exactly as its operation's format
 * stored it ({@link IdempotencyEngine#storedKey}), for each door: as the HTTP door keeps
 * it, in the application's {@code idempotency.key.format} (a UUID in canonical form, an
 * opaque key as sent, case and quotes counting) or the format named, a key that format
 * refuses as sent (only an operation with a format of its own could have stored it); and
 * as a method call keeps it (an {@code @Idempotent} method with a key expression, the
 * {@code IdempotencyTemplate}), after {@code "method "}, in the format named, else as
 * sent (their keys are opaque unless they say otherwise). Each record listed says which
 * door keeps it; a removal where both doors keep the key names the door.
 * <p>
 * Like Boot's own endpoints it is exposed over HTTP only when the application says so
 * ({@code management.endpoints.web.exposure.include=idempotency}), and secured as the
 * application secures its other endpoints. A store that fails answers
 * {@link IdempotencyRejectedException} ({@code 503 store-unavailable} with
 * {@code Retry-After}), as the doors do.
 *
 * @since 0.1.0
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {

	private static final Log logger = LogFactory.getLog(IdempotencyEndpoint.class);

	/** Hex digits of the fingerprint shown: enough to compare, never the whole. */
	static final int FINGERPRINT_PREFIX_LENGTH = 12;

	/** Most records listed for a key without its scope. */
	static final int MAX_RECORDS = 100;

	private final IdempotencyStore store;

	private final KeyFormat keyFormat;

	private final IdempotencyError storeUnavailable;

	private final String problemTypeBase;

	/**
	 * An endpoint over {@code store} for an application with the defaults: UUIDv7 keys, a
	 * {@code Retry-After} of {@code idempotency.store.retry-after}'s default, the default
	 * problem types.
	 */
	public IdempotencyEndpoint(IdempotencyStore store) {
		this(store, KeyFormat.UUID_V7, IdempotencySettings.defaults().storeFailure().retryAfter(),
				IdempotencyRejectedException.DEFAULT_PROBLEM_TYPE_BASE);
	}

	/**
	 * @param store the engine's store
	 * @param keyFormat the application's key format ({@code idempotency.key.format}), in
	 * which a key is looked up unless a request names another
	 * @param retryAfter the {@code Retry-After} of a {@code 503} when the store fails
	 * ({@code idempotency.store.retry-after})
	 * @param problemTypeBase the base of the problem {@code type} URIs
	 * ({@code idempotency.web.problem-type-base})
	 */
	public IdempotencyEndpoint(IdempotencyStore store, KeyFormat keyFormat, Duration retryAfter,
			String problemTypeBase) {
		this.store = store;
		this.keyFormat = keyFormat.orElse(KeyFormat.UUID_V7);
		this.storeUnavailable = new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
				"the idempotency store is unavailable; nothing was read or removed, retry later", retryAfter);
		this.problemTypeBase = problemTypeBase;
	}

	/**
	 * The live records of a key.
	 * @param key the key as the client sent it
	 * @param scope whom the key belongs to; {@code null} for every scope that holds it,
	 * where the store can find a key without its scope
	 * @param format the format the key was sent in ({@code uuid-v7}, {@code uuid},
	 * {@code opaque}); {@code null} for the application's
	 * @return the records, or {@code null} (answered 404) when none is live
	 * @throws InvalidEndpointRequestException (answered 400) for a key its format
	 * refuses, an unknown format, or no scope on a store that needs one
	 * @throws IdempotencyRejectedException (answered 503) when the store fails
	 */
	@ReadOperation
	public @Nullable RecordsDescriptor records(String key, @Nullable String scope, @Nullable String format) {
		List<StoredKey> storedKeys = storedKeys(key, format);
		String owner = given(scope);
		List<RecordDescriptor> found = new ArrayList<>();
		for (StoredKey storedKey : storedKeys) {
			int wanted = MAX_RECORDS + 1 - found.size();
			if (wanted <= 0) {
				break;
			}
			List<InspectedRecord> records = (owner != null)
					? fromStore(() -> this.store.inspect(recordId(owner, storedKey.key())).stream().toList())
					: inspectByKey(storedKey.key(), wanted);
			records.forEach((record) -> found.add(RecordDescriptor.of(record, storedKey.door())));
		}
		if (found.isEmpty()) {
			return null;
		}
		boolean truncated = found.size() > MAX_RECORDS;
		return new RecordsDescriptor(storedKeys.get(0).key(), found.stream().limit(MAX_RECORDS).toList(), truncated);
	}

	/**
	 * Removes the record of a key in a scope, whatever its state, and logs who asked at
	 * INFO. A call still running under a removed key stores nothing when it ends, and a
	 * retry with the key runs the operation again, possibly while that call still runs.
	 * @param key the key as the client sent it
	 * @param scope whom the key belongs to (required: a removal names one record)
	 * @param format the format the key was sent in; {@code null} for the application's
	 * @param door the door whose record to remove ({@code http}, {@code method});
	 * {@code null} for the one that keeps the key, required where both do
	 * @param securityContext who asks
	 * @return whether a record was removed (over HTTP: 204, else 404)
	 * @throws InvalidEndpointRequestException (answered 400) without a scope, for a key
	 * its format refuses, an unknown door, or without a door where both keep the key
	 * @throws IdempotencyRejectedException (answered 503) when the store fails
	 */
	@DeleteOperation
	public boolean remove(String key, @Nullable String scope, @Nullable String format, @Nullable String door,
			SecurityContext securityContext) {
		List<StoredKey> storedKeys = storedKeys(key, format);
		String owner = given(scope);
		if (owner == null) {
			throw invalid("a removal names one record: give its scope as well as its key (a read without scope lists"
					+ " the scopes that hold the key)");
		}
		String doorName = given(door);
		IdempotentCall.Door named = (doorName != null) ? door(doorName) : null;
		List<InspectedRecord> found = new ArrayList<>();
		for (StoredKey storedKey : storedKeys) {
			if (named == null || storedKey.door() == named) {
				fromStore(() -> this.store.inspect(recordId(owner, storedKey.key()))).ifPresent(found::add);
			}
		}
		if (found.size() > 1) {
			throw invalid("both doors keep this key in scope " + owner + ": the HTTP door's record and a method"
					+ " call's; name the one to remove with door=http or door=method");
		}
		if (found.isEmpty()) {
			return false;
		}
		RecordId id = found.get(0).record().id();
		if (!fromStore(() -> this.store.remove(id))) {
			return false;
		}
		IdempotencyRecord record = found.get(0).record();
		if (logger.isInfoEnabled()) {
			logger.info("Idempotency record removed by " + who(securityContext) + ": key=" + id.key() + " scope="
					+ Fingerprints.sha256Hex(id.scope()).substring(0, 12) + " state=" + stateName(record.state())
					+ " operation=" + record.operation());
		}
		return true;
	}

	private List<InspectedRecord> inspectByKey(String storedKey, int limit) {
		try {
			return fromStore(() -> this.store.inspectByKey(storedKey, limit));
		}
		catch (UnsupportedOperationException ex) {
			throw invalid(ex.getMessage() + ". Give the scope too: what the application's scope resolver returns"
					+ " for the client (the starter's PrincipalScopeResolver: user:<principal name>, or "
					+ PrincipalScopeResolver.ANONYMOUS + ")");
		}
	}

	/**
	 * The key as each door would have stored it: the HTTP door's first, then a method
	 * call's.
	 */
	private List<StoredKey> storedKeys(String key, @Nullable String format) {
		String formatName = given(format);
		KeyFormat named = (formatName != null) ? format(formatName) : null;
		KeyFormat lookedUp = (named != null) ? named : this.keyFormat;
		String http;
		try {
			http = IdempotencyEngine.storedKey(key, lookedUp, IdempotentCall.Door.HTTP);
		}
		catch (InvalidIdempotencyKeyException refused) {
			if (named != null || lookedUp == KeyFormat.OPAQUE) {
				throw invalid(refused.getMessage());
			}
			// Only an operation with a format of its own could have stored it: as sent.
			http = storedKey(key, KeyFormat.OPAQUE, IdempotentCall.Door.HTTP);
		}
		// A method call's key is opaque unless its annotation or request says otherwise.
		String method = storedKey(key, (named != null) ? named : KeyFormat.OPAQUE, IdempotentCall.Door.METHOD);
		return List.of(new StoredKey(IdempotentCall.Door.HTTP, http),
				new StoredKey(IdempotentCall.Door.METHOD, method));
	}

	private static String storedKey(String key, KeyFormat format, IdempotentCall.Door door) {
		try {
			return IdempotencyEngine.storedKey(key, format, door);
		}
		catch (InvalidIdempotencyKeyException refused) {
			throw invalid(refused.getMessage());
		}
	}

	private static IdempotentCall.Door door(String door) {
		for (IdempotentCall.Door candidate : IdempotentCall.Door.values()) {
			if (candidate.tag().equalsIgnoreCase(door.strip())) {
				return candidate;
			}
		}
		throw invalid("door must be http or method, was " + door);
	}

	private static KeyFormat format(String format) {
		String name = format.strip().replace('_', '-');
		for (KeyFormat candidate : KeyFormat.values()) {
			if (candidate != KeyFormat.DEFAULT && formatName(candidate).equalsIgnoreCase(name)) {
				return candidate;
			}
		}
		throw invalid("format must be uuid-v7, uuid or opaque (as idempotency.key.format), was " + format);
	}

	private static String formatName(KeyFormat format) {
		return format.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private static RecordId recordId(String scope, String storedKey) {
		return new RecordId(IdempotencyEngine.storedScope(scope), storedKey);
	}

	/**
	 * A store call whose failure is answered as the doors answer it: 503
	 * store-unavailable with Retry-After. A store that cannot do what is asked says so
	 * with {@link UnsupportedOperationException}, which is no failure.
	 */
	private <T> T fromStore(Supplier<T> call) {
		try {
			return call.get();
		}
		catch (UnsupportedOperationException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Idempotency store " + this.store.name() + " failed; the idempotency endpoint answers 503", ex);
			throw new IdempotencyRejectedException(this.storeUnavailable, this.problemTypeBase);
		}
	}

	private static InvalidEndpointRequestException invalid(String reason) {
		return new InvalidEndpointRequestException(reason, reason);
	}

	/** A parameter's value, {@code null} when left out or blank. */
	private static @Nullable String given(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value : null;
	}

	private static String who(SecurityContext securityContext) {
		java.security.Principal principal = securityContext.getPrincipal();
		return (principal != null) ? principal.getName() : "anonymous";
	}

	static String stateName(RecordState state) {
		return (state == RecordState.IN_PROGRESS) ? "in-flight" : state.name().toLowerCase(Locale.ROOT);
	}

	/** A key as a door stores it. */
	private record StoredKey(IdempotentCall.Door door, String key) {

	}

	/**
	 * The live records of a key, as the endpoint shows them.
	 *
	 * @param key the key as the HTTP door stores it (a UUID in canonical form, an opaque
	 * key as sent, a long key as its hash); a method call's records show theirs, after
	 * {@code "method "}
	 * @param records the records, the HTTP door's then a method call's, each in the order
	 * of their scopes
	 * @param truncated whether more records hold the key than the {@value #MAX_RECORDS}
	 * listed
	 */
	public record RecordsDescriptor(String key, List<RecordDescriptor> records, boolean truncated) {

	}

	/**
	 * A record as the endpoint shows it.
	 *
	 * @param scope whom the key belongs to, as stored (a long scope as its hash)
	 * @param key the key as stored (a method call's after {@code "method "}, a long key
	 * as its hash)
	 * @param door the door that keeps it: {@code http} (the HTTP door, Spring MVC or
	 * WebFlux) or {@code method} (an {@code @Idempotent} method with a key expression,
	 * the {@code IdempotencyTemplate})
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
	public record RecordDescriptor(String scope, String key, String door, String operation, String state,
			@Nullable Instant created, Instant expires, @Nullable Instant leaseExpires, @Nullable String leaseOwner,
			@Nullable Integer status, @Nullable String integrity, String fingerprint) {

		static RecordDescriptor of(InspectedRecord inspected, IdempotentCall.Door door) {
			IdempotencyRecord record = inspected.record();
			boolean inFlight = record.state() == RecordState.IN_PROGRESS;
			// The engine's store opens a sealed answer; one still sealed failed its
			// check.
			boolean failed = !inFlight && StoredResponseCodec.isSealed(record.completedResponse());
			String fingerprint = record.fingerprint();
			return new RecordDescriptor(record.id().scope(), record.id().key(), door.tag(), record.operation(),
					stateName(record.state()), inspected.createdAt(), record.expiresAt(),
					inFlight ? record.leaseExpiresAt() : null, inFlight ? inspected.ownerToken() : null,
					(inFlight || failed) ? null : record.completedResponse().status(), failed ? "failed" : null,
					fingerprint.substring(0, Math.min(FINGERPRINT_PREFIX_LENGTH, fingerprint.length())));
		}

	}

}
