package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.autoconfigure.internal.NeverStoredHeaders;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.web.JsonFingerprint;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

/**
 * The one place where the idempotency.* properties are checked: each value on its own,
 * the durations against each other, the lease against the heartbeat gap of a running
 * owner, the configured store's own properties ({@link IdempotencyStorePropertyValues}),
 * the client side's idempotency.client.* properties and the encryption keys. Every
 * problem found is reported at once, in an {@link InvalidIdempotencySettingsException}
 * that names, for each, the properties, their values, why they cannot work and what to
 * set. The engine's {@link IdempotencySettings} check their own values too, for
 * applications that build them in code; the properties are checked here first so that a
 * wrong value is reported by the property that sets it.
 * <p>
 * The lease check: the next beat of an owner starts at most one
 * {@code heartbeat-interval} after its last one began (the lease counts from about then);
 * it can be late by one sweep of the heartbeat thread (a quarter interval) and by a pause
 * of the JVM or the machine; and it reaches the store at the latest when the store's own
 * timeout ends ({@link IdempotencyStoreTimeout}: JDBC {@code query-timeout}, Redis
 * {@code command-timeout}; the in-memory store has none). So:
 * {@code heartbeat-interval + store timeout + heartbeat-interval / 4 + 500 ms < lease},
 * and {@code lease >= 1 s}. A shorter lease ends while its owner still runs, and a retry
 * takes the key over and runs the operation beside it. Checked in lease mode only (the
 * other mode holds no lease).
 */
final class IdempotencyPropertiesValidator {

	/**
	 * What a GC or scheduling pause may take from the lease margin: G1's pause target is
	 * 200 ms and a loaded machine delays a thread's wake-up too; a pause longer than this
	 * is a fault of its own, which a lease cannot hide.
	 */
	static final Duration PAUSE_ALLOWANCE = Duration.ofMillis(500);

	/** The shortest lease accepted. */
	static final Duration MINIMUM_LEASE = Duration.ofSeconds(1);

	private static final IdempotencyProperties DEFAULTS = new IdempotencyProperties();

	/** Bytes of a key of idempotency.encryption.keys: AES-256. */
	private static final int KEY_BYTES = 32;

	/** A key id of idempotency.encryption.keys, as one bound map key. */
	private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

	private final List<InvalidIdempotencySettingsException.Problem> problems = new ArrayList<>();

	private IdempotencyPropertiesValidator() {
	}

	/**
	 * Checks every idempotency.* property the engine and the doors use.
	 * @param properties the core properties
	 * @param memory the in-memory store's properties when that store is used, else
	 * {@code null}
	 * @param storeTimeout the configured store's timeout when it has one to check
	 * @param storeValues the JDBC or Redis store's own properties when that store is
	 * configured, else {@code null}
	 * @throws InvalidIdempotencySettingsException naming every problem found
	 */
	static void validate(IdempotencyProperties properties, @Nullable IdempotencyMemoryStoreProperties memory,
			@Nullable IdempotencyStoreTimeout storeTimeout, @Nullable IdempotencyStorePropertyValues storeValues) {
		IdempotencyPropertiesValidator validator = new IdempotencyPropertiesValidator();
		validator.engine(properties, storeTimeout);
		validator.httpDoor(properties);
		if (memory != null) {
			validator.memory(memory);
		}
		if (storeValues instanceof IdempotencyStorePropertyValues.Jdbc jdbc) {
			validator.jdbc(jdbc);
		}
		else if (storeValues instanceof IdempotencyStorePropertyValues.R2dbc r2dbc) {
			validator.r2dbc(r2dbc);
		}
		else if (storeValues instanceof IdempotencyStorePropertyValues.Redis redis) {
			validator.redis(redis);
		}
		validator.throwIfAny();
	}

	/**
	 * Checks the in-memory store's properties alone, for a store created before the
	 * engine's settings.
	 * @throws InvalidIdempotencySettingsException naming every problem found
	 */
	static void validate(IdempotencyMemoryStoreProperties memory) {
		IdempotencyPropertiesValidator validator = new IdempotencyPropertiesValidator();
		validator.memory(memory);
		validator.throwIfAny();
	}

	/**
	 * Checks the client side's properties, for the interceptor the client
	 * auto-configuration builds from them.
	 * @throws InvalidIdempotencySettingsException naming every problem found
	 */
	static void validate(IdempotencyClientProperties client) {
		IdempotencyPropertiesValidator validator = new IdempotencyPropertiesValidator();
		validator.client(client);
		validator.throwIfAny();
	}

	/**
	 * Checks the idempotency.encryption.* properties: each key the base64 of 32 bytes,
	 * the sealing key one of them; nothing of it beside a {@code SealingKeys} bean, which
	 * replaces them. A key's value is never shown.
	 * @param encryption the properties
	 * @param keysBean whether the application declares a {@code SealingKeys} bean
	 * @throws InvalidIdempotencySettingsException naming every problem found
	 */
	static void validate(IdempotencyEncryptionProperties encryption, boolean keysBean) {
		IdempotencyPropertiesValidator validator = new IdempotencyPropertiesValidator();
		validator.encryption(encryption, keysBean);
		validator.throwIfAny();
	}

	/**
	 * The bytes of a key as idempotency.encryption.keys give it: base64, surrounding
	 * blanks left out.
	 * @throws IllegalArgumentException if it is not base64
	 */
	static byte[] keyBytes(String base64) {
		return Base64.getDecoder().decode(base64.strip());
	}

	/**
	 * Checks the lease of the engine's settings against the heartbeat gap, for settings
	 * that the application declared as a bean instead of setting the properties.
	 * @throws InvalidIdempotencySettingsException if the lease does not cover it
	 */
	static void validateLease(IdempotencySettings settings, @Nullable IdempotencyStoreTimeout storeTimeout) {
		IdempotencyPropertiesValidator validator = new IdempotencyPropertiesValidator();
		validator.leaseMargin(settings.mode(), settings.lease().duration(), settings.lease().heartbeatInterval(),
				storeTimeout);
		validator.throwIfAny();
	}

	private void engine(IdempotencyProperties properties, @Nullable IdempotencyStoreTimeout storeTimeout) {
		boolean lifetime = positive(properties.getLifetime(), "idempotency.lifetime");
		boolean grace = notNegative(properties.getGrace(), "idempotency.grace");
		boolean lease = positive(properties.getLease(), "idempotency.lease");
		boolean interval = positive(properties.getHeartbeatInterval(), "idempotency.heartbeat-interval");
		if (lease && interval && !heartbeatWithinHalfLease(properties.getLease(), properties.getHeartbeatInterval())) {
			interval = false;
		}
		if (lease && lifetime && grace) {
			leaseWithinRetention(properties.getLease(), properties.getLifetime().plus(properties.getGrace()));
		}
		if (lease && interval) {
			leaseMargin(properties.getMode(), properties.getLease(), properties.getHeartbeatInterval(), storeTimeout);
		}
		notNegative(properties.getClockSkew(), "idempotency.clock-skew");
		notNegative(properties.getInFlight().getWait(), "idempotency.in-flight.wait");
		positive(properties.getInFlight().getPollInterval(), "idempotency.in-flight.poll-interval");
		notNegative(properties.getInFlight().getRetryAfter(), "idempotency.in-flight.retry-after");
		notNegative(properties.getStore().getRetryAfter(), "idempotency.store.retry-after");
		long compressFrom = properties.getStore().getCompressFrom().toBytes();
		if (compressFrom < 0 || compressFrom > IdempotencySettings.MAX_STORED_BODY_BYTES) {
			String property = "idempotency.store.compress-from";
			add(property,
					property + " must be from 0 to " + IdempotencySettings.MAX_STORED_BODY_BYTES + " bytes, was "
							+ compressFrom + " bytes",
					"Set " + property + " to the smallest answer body worth deflating (the default is "
							+ PropertyValues.written(DEFAULTS.getStore().getCompressFrom())
							+ "), or idempotency.store.compression to none.");
		}
		long maxBodyBytes = properties.getResponse().getMaxBodySize().toBytes();
		if (maxBodyBytes < 0 || maxBodyBytes > IdempotencySettings.MAX_STORED_BODY_BYTES) {
			String property = "idempotency.response.max-body-size";
			add(property,
					property + " must be from 0 to " + IdempotencySettings.MAX_STORED_BODY_BYTES
							+ " bytes (an answer is held in memory until it is stored), was " + maxBodyBytes + " bytes",
					"Set " + property + " to at most "
							+ PropertyValues.written(DataSize.ofBytes(IdempotencySettings.MAX_STORED_BODY_BYTES))
							+ "; the default is " + PropertyValues.written(DEFAULTS.getResponse().getMaxBodySize())
							+ ".");
		}
	}

	private boolean heartbeatWithinHalfLease(Duration lease, Duration interval) {
		if (interval.multipliedBy(2).compareTo(lease) <= 0) {
			return true;
		}
		add(List.of("idempotency.heartbeat-interval", "idempotency.lease"),
				"idempotency.heartbeat-interval (" + interval + ") must be at most half of idempotency.lease (" + lease
						+ "): a running owner's beats are up to one heartbeat-interval apart, and the rest"
						+ " of the lease is the margin for the store round trip and a late heartbeat thread",
				"Set idempotency.heartbeat-interval to at most " + lease.dividedBy(2)
						+ " or idempotency.lease to at least " + interval.multipliedBy(2) + ".");
		return false;
	}

	private void leaseWithinRetention(Duration lease, Duration retention) {
		if (lease.compareTo(retention) > 0) {
			add(List.of("idempotency.lease", "idempotency.lifetime", "idempotency.grace"),
					"idempotency.lease (" + lease
							+ ") must not be longer than idempotency.lifetime + idempotency.grace (" + retention
							+ "): a record would expire while its owner still runs",
					"Set idempotency.lease to at most " + retention
							+ " or raise idempotency.lifetime or idempotency.grace.");
		}
	}

	private void leaseMargin(IdempotencySettings.Mode mode, Duration lease, Duration interval,
			@Nullable IdempotencyStoreTimeout storeTimeout) {
		if (mode != IdempotencySettings.Mode.LEASE) {
			return;
		}
		if (storeTimeout != null && !storeTimeout.bounded()) {
			add(storeTimeout.property(),
					storeTimeout.property() + " is " + storeTimeout.timeout() + " (none): a heartbeat"
							+ " could wait longer than idempotency.lease (" + lease
							+ "), and a retry would then take over an owner that is still running",
					"Set " + storeTimeout.property() + " to a positive duration (the default is "
							+ PropertyValues.written(storeTimeout.defaultTimeout()) + ").");
			return;
		}
		if (lease.compareTo(MINIMUM_LEASE) < 0) {
			add(List.of("idempotency.lease", "idempotency.heartbeat-interval"),
					"idempotency.lease (" + lease + ") must be at least " + MINIMUM_LEASE
							+ ": a shorter lease ends while its owner still runs (a store call, a GC pause or a"
							+ " busy machine delays a heartbeat by more), and a retry then runs the operation"
							+ " beside it",
					"Set idempotency.lease to at least " + MINIMUM_LEASE + " (the default is "
							+ PropertyValues.written(DEFAULTS.getLease()) + ", with a heartbeat-interval of "
							+ PropertyValues.written(DEFAULTS.getHeartbeatInterval()) + ").");
			return;
		}
		Duration sweep = interval.dividedBy(4);
		Duration store = (storeTimeout != null) ? storeTimeout.timeout() : Duration.ZERO;
		Duration needed = interval.plus(store).plus(sweep).plus(PAUSE_ALLOWANCE);
		if (needed.compareTo(lease) >= 0) {
			List<String> properties = new ArrayList<>(List.of("idempotency.lease", "idempotency.heartbeat-interval"));
			String storePart = "";
			if (storeTimeout != null) {
				properties.add(storeTimeout.property());
				storePart = " + the store's timeout " + storeTimeout.property() + " (" + store + ")";
			}
			add(properties,
					"idempotency.lease (" + lease + ") must be longer than idempotency.heartbeat-interval (" + interval
							+ ")" + storePart + " + one heartbeat sweep (a quarter interval, " + sweep
							+ ") + a pause allowance (" + PAUSE_ALLOWANCE + ") = " + needed
							+ ": an owner's next heartbeat starts up to one interval after its last, late by a sweep"
							+ " and a GC or scheduling pause, and reaches the store at the latest when the store's"
							+ " timeout ends; a lease that ends first lets a retry take over an owner that is still"
							+ " running",
					"Set idempotency.lease to more than " + needed + ", or lower idempotency.heartbeat-interval"
							+ ((storeTimeout != null) ? " or " + storeTimeout.property() : "") + ".");
		}
	}

	/**
	 * A header name is an HTTP token (RFC 9110): one that is not would never arrive (a
	 * server refuses the request, or no client can send it), and every request would then
	 * run unprotected.
	 */
	private void headerName(String name, String property, String what) {
		if (name.isEmpty() || !name.chars().allMatch(IdempotencyPropertiesValidator::isTokenCharacter)) {
			add(property,
					property + " must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~, no spaces), was '"
							+ name + "'",
					"Set " + property + " to " + what + " (Idempotency-Key), or remove it for the default.");
		}
	}

	private static boolean isTokenCharacter(int c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
				|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
	}

	private void httpDoor(IdempotencyProperties properties) {
		headerName(properties.getHeaderName(), "idempotency.header-name", "the header clients send their keys in");
		DataSize requestBody = properties.getRequest().getMaxBodySize();
		if (requestBody.toBytes() < 0) {
			String property = "idempotency.request.max-body-size";
			add(property, property + " must be zero or more, was " + requestBody,
					"Set " + property + " to a size such as 1MB, or remove it for the default.");
		}
		for (String header : properties.getResponse().getStoredHeaders()) {
			String reason = NeverStoredHeaders.reason(header);
			if (reason != null) {
				String property = "idempotency.response.stored-headers";
				add(property, property + " names " + header + ", which the HTTP door never stores: " + reason,
						"Remove " + header + " from " + property + ".");
			}
		}
		if (properties.getFingerprint().getJson() == JsonFingerprint.CANONICAL && !ClassUtils
			.isPresent("tools.jackson.core.json.JsonFactory", IdempotencyPropertiesValidator.class.getClassLoader())) {
			add("idempotency.fingerprint.json",
					"idempotency.fingerprint.json=canonical reads JSON bodies with Jackson 3"
							+ " (tools.jackson.core:jackson-core), which is not on the classpath",
					"Add tools.jackson.core:jackson-core (spring-boot-starter-json brings it), or remove"
							+ " idempotency.fingerprint.json to compare JSON bodies as bytes.");
		}
	}

	private void memory(IdempotencyMemoryStoreProperties memory) {
		DataSize maxBytes = memory.getMaxBytes();
		if (maxBytes != null && maxBytes.toBytes() <= 0) {
			String property = "idempotency.store.memory.max-bytes";
			add(property, property + " must be positive, was " + maxBytes,
					"Set " + property + " to a size such as 1MB, or remove it for the default.");
		}
		if (memory.getMaxEntries() < 1) {
			String property = "idempotency.store.memory.max-entries";
			add(property, property + " must be positive, was " + memory.getMaxEntries(),
					"Set " + property + " to a positive number, or remove it for the default.");
		}
		double share = memory.getMaxSharePerScope();
		if (!(share > 0 && share <= 1)) {
			String property = "idempotency.store.memory.max-share-per-scope";
			add(property, property + " must be more than 0 and at most 1, was " + share,
					"Set " + property + " to a fraction such as 0.25 (a quarter of max-entries and of max-bytes per"
							+ " scope), 1 for no share, or remove it for the default.");
		}
	}

	private void jdbc(IdempotencyStorePropertyValues.Jdbc jdbc) {
		purge("idempotency.store.jdbc.purge", jdbc.purgeEnabled(), jdbc.purgeInterval(), jdbc.purgeBatchSize());
		if (jdbc.reserveAsynchronousCommitOn() && jdbc.otherDialect() != null) {
			String property = "idempotency.store.jdbc.postgresql.reserve-asynchronous-commit";
			add(List.of(property, "idempotency.store.jdbc.dialect"),
					property + "=on needs PostgreSQL, but idempotency.store.jdbc.dialect is " + jdbc.otherDialect(),
					"Remove " + property + " (reservations are durable on that database), or set"
							+ " idempotency.store.jdbc.dialect to the database the store uses.");
		}
	}

	private void r2dbc(IdempotencyStorePropertyValues.R2dbc r2dbc) {
		try {
			JdbcIdempotencyDialect.validateTableName(r2dbc.tableName());
		}
		catch (IllegalArgumentException ex) {
			String property = "idempotency.store.r2dbc.table-name";
			add(property, property + ": " + ex.getMessage(),
					"Set " + property + " to a plain table name in the connection's current schema, or remove it"
							+ " for the default (idempotency_record).");
		}
		purge("idempotency.store.r2dbc.purge", r2dbc.purgeEnabled(), r2dbc.purgeInterval(), r2dbc.purgeBatchSize());
	}

	/** A store's scheduled purge, under {@code prefix}. */
	private void purge(String prefix, boolean enabled, @Nullable Duration interval, int batchSize) {
		if (enabled) {
			positive(interval, prefix + ".interval");
			if (batchSize < 1) {
				String property = prefix + ".batch-size";
				add(property, property + " must be at least 1 (records one DELETE removes), was " + batchSize,
						"Set " + property + " to a positive number, or remove it for the default.");
			}
		}
	}

	private void redis(IdempotencyStorePropertyValues.Redis redis) {
		String replicas = "idempotency.store.redis.replicas-to-ack";
		if (redis.replicasToAck() < 0) {
			add(replicas, replicas + " must not be negative, was " + redis.replicasToAck(),
					"Set " + replicas + " to 0 (no WAIT, the default) or to the number of replicas that must"
							+ " acknowledge each write.");
			return;
		}
		Duration timeout = redis.replicasAckTimeout();
		if (redis.replicasToAck() > 0 && (timeout == null || timeout.isNegative() || timeout.isZero())) {
			String property = "idempotency.store.redis.replicas-ack-timeout";
			add(List.of(property, replicas),
					property + " must be positive when " + replicas + " is " + redis.replicasToAck() + ", was "
							+ timeout + ": a WAIT with a timeout of 0 blocks for ever",
					"Set " + property + " to a positive duration below idempotency.store.redis.command-timeout, or"
							+ " remove it for the default.");
		}
	}

	private void encryption(IdempotencyEncryptionProperties encryption, boolean keysBean) {
		String keys = "idempotency.encryption.keys";
		String sealingKeyId = "idempotency.encryption.sealing-key-id";
		String requireSealed = "idempotency.encryption.require-sealed";
		String sealingId = encryption.getSealingKeyId();
		if (keysBean) {
			if (!encryption.getKeys().isEmpty() || sealingId != null) {
				add(List.of(keys, sealingKeyId),
						keys + " or " + sealingKeyId + " is set, and a SealingKeys bean provides the keys instead:"
								+ " the properties would be ignored",
						"Remove " + keys + " and " + sealingKeyId + ", or the SealingKeys bean.");
			}
			return;
		}
		if (encryption.getKeys().isEmpty()) {
			if (sealingId != null) {
				add(List.of(sealingKeyId, keys),
						sealingKeyId + " is '" + sealingId + "', and " + keys + " lists no key",
						"Add the key as " + keys + "." + sealingId + " (the base64 of 32 random bytes: openssl rand"
								+ " -base64 32), or remove " + sealingKeyId + ".");
			}
			if (encryption.isRequireSealed()) {
				add(List.of(requireSealed, keys),
						requireSealed + " is true, and " + keys + " lists no key: no answer could be sealed or"
								+ " opened",
						"Add a key as " + keys + ".<id> with " + sealingKeyId + "=<id>, or remove " + requireSealed
								+ ".");
			}
			return;
		}
		encryption.getKeys().forEach((id, value) -> {
			String property = keys + "." + id;
			String action = "Set " + property + " to the base64 of 32 random bytes (openssl rand -base64 32), from a"
					+ " secret store or an environment variable.";
			if (!KEY_ID.matcher(id).matches()) {
				add(property, "the key id '" + id + "' must be 1 to 64 letters, digits, '-' or '_'",
						"Rename the key, such as " + keys + ".k1.");
				return;
			}
			byte[] key;
			try {
				key = keyBytes(value);
			}
			catch (IllegalArgumentException ex) {
				add(property, property + " is not base64 (its value is not shown)", action);
				return;
			}
			if (key.length != KEY_BYTES) {
				add(property, property + " is " + key.length + " bytes once decoded, and AES-256 needs " + KEY_BYTES
						+ " (its value is not shown)", action);
			}
		});
		if (sealingId == null || sealingId.isBlank()) {
			add(sealingKeyId, sealingKeyId + " must name the key that seals, one of " + encryption.getKeys().keySet(),
					"Set " + sealingKeyId + " to one of " + encryption.getKeys().keySet() + ".");
		}
		else if (!encryption.getKeys().containsKey(sealingId)) {
			add(List.of(sealingKeyId, keys),
					sealingKeyId + " is '" + sealingId + "', which is not one of the keys "
							+ encryption.getKeys().keySet(),
					"Add the key as " + keys + "." + sealingId + ", or set " + sealingKeyId + " to one of "
							+ encryption.getKeys().keySet() + ".");
		}
	}

	private void client(IdempotencyClientProperties client) {
		headerName(client.getHeaderName(), "idempotency.client.header-name", "the header the server reads");
		if (client.getMethods().isEmpty()) {
			String property = "idempotency.client.methods";
			add(property, property + " must name at least one HTTP method, was empty", "Set " + property
					+ " to the methods that get a key and are retried (POST), or remove it for the" + " default.");
		}
		if (client.getMaxAttempts() < 1) {
			String property = "idempotency.client.max-attempts";
			add(property, property + " must be at least 1 (the first attempt included), was " + client.getMaxAttempts(),
					"Set " + property + " to 1 for no retries or more, or remove it for the default.");
		}
		notNegative(client.getInitialBackoff(), "idempotency.client.initial-backoff");
		notNegative(client.getMaxDelay(), "idempotency.client.max-delay");
		Duration keyLifetime = client.getKeyLifetime();
		if (keyLifetime != null) {
			positive(keyLifetime, "idempotency.client.key-lifetime");
		}
	}

	private boolean positive(@Nullable Duration value, String property) {
		if (value == null || value.isNegative() || value.isZero()) {
			add(property, property + " must be positive, was " + value,
					"Set " + property + " to a positive duration, or remove it for the default.");
			return false;
		}
		return true;
	}

	private boolean notNegative(@Nullable Duration value, String property) {
		if (value == null || value.isNegative()) {
			add(property, property + " must not be negative, was " + value,
					"Set " + property + " to 0 or a positive duration.");
			return false;
		}
		return true;
	}

	private void add(String property, String message, String action) {
		add(List.of(property), message, action);
	}

	private void add(List<String> properties, String message, String action) {
		this.problems.add(new InvalidIdempotencySettingsException.Problem(properties, message, action));
	}

	private void throwIfAny() {
		if (!this.problems.isEmpty()) {
			throw new InvalidIdempotencySettingsException(this.problems);
		}
	}

}
