package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.web.JsonFingerprint;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of the Idempotency-Key support, under the idempotency prefix.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency")
public class IdempotencyProperties {

	/**
	 * The engine's defaults, the one place they are written. The configuration processor
	 * cannot see through them: additional-spring-configuration-metadata.json shows them
	 * to IDEs, and IdempotencyConfigurationMetadataTests checks that both agree.
	 */
	private static final IdempotencySettings DEFAULTS = IdempotencySettings.defaults();

	/** Whether Idempotency-Key support is on. */
	private boolean enabled = true;

	/** Name of the request header that carries the key. */
	private String headerName = "Idempotency-Key";

	/**
	 * How long clients may reuse a key: records are kept at least this long (lifetime +
	 * grace from the key's UUIDv7 time or from the first request, whichever is later).
	 * Advertise it to clients (Iceberg: idempotency-key-lifetime in GET /v1/config).
	 */
	private Duration lifetime = DEFAULTS.lifetime();

	/**
	 * Extra time a record is kept beyond the lifetime, to absorb clock differences and
	 * late retries.
	 */
	private Duration grace = DEFAULTS.grace();

	/**
	 * How long the owner of an in-progress record is presumed alive without a heartbeat.
	 * After it, a retry takes the record over and runs the operation: keep it short so a
	 * crashed node does not block a key for long, but at least 1 s and longer than
	 * heartbeat-interval + the store's timeout (JDBC query-timeout, Redis command
	 * timeout) + a quarter heartbeat-interval + 500 ms, or a running owner could be taken
	 * over (checked at start-up, lease mode only).
	 */
	private Duration lease = DEFAULTS.lease().duration();

	/**
	 * Longest time between two lease extensions of a running operation. At most half the
	 * lease: the rest of the lease is the margin for the store round trip and a late
	 * heartbeat thread.
	 */
	private Duration heartbeatInterval = DEFAULTS.lease().heartbeatInterval();

	/**
	 * How far in the future a key's UUIDv7 timestamp may be, to tolerate client clock
	 * skew. The record of a key stamped ahead is kept that much longer.
	 */
	private Duration clockSkew = DEFAULTS.clockSkew();

	/**
	 * What to do with a key whose UUIDv7 timestamp is outside [now - lifetime - grace,
	 * now + clock-skew]: reject (answer 400) or warn (log a warning and go on).
	 */
	private IdempotencySettings.KeyAgePolicy keyAgePolicy = DEFAULTS.keyAgePolicy();

	/**
	 * How an operation is guarded: lease (reserve the key, with a lease and heartbeats,
	 * before it runs; a duplicate never runs beside it) or record-after-success (read the
	 * key before, record a successful (2xx) response with one conditional insert after;
	 * fewer store writes, nothing left in flight by a crash, but attempts racing with a
	 * new key may each run, and once one success is recorded it is the answer to all of
	 * them and to every retry). The lease and heartbeat settings apply to lease mode
	 * only.
	 */
	private IdempotencySettings.Mode mode = DEFAULTS.mode();

	private final Key key = new Key();

	private final Fingerprint fingerprint = new Fingerprint();

	private final InFlight inFlight = new InFlight();

	private final Store store = new Store();

	private final Request request = new Request();

	private final Response response = new Response();

	private final Web web = new Web();

	private final MethodDoor method = new MethodDoor();

	private final Observation observation = new Observation();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getHeaderName() {
		return this.headerName;
	}

	public void setHeaderName(String headerName) {
		this.headerName = headerName;
	}

	public Duration getLifetime() {
		return this.lifetime;
	}

	public void setLifetime(Duration lifetime) {
		this.lifetime = lifetime;
	}

	public Duration getGrace() {
		return this.grace;
	}

	public void setGrace(Duration grace) {
		this.grace = grace;
	}

	public Duration getLease() {
		return this.lease;
	}

	public void setLease(Duration lease) {
		this.lease = lease;
	}

	public Duration getHeartbeatInterval() {
		return this.heartbeatInterval;
	}

	public void setHeartbeatInterval(Duration heartbeatInterval) {
		this.heartbeatInterval = heartbeatInterval;
	}

	public Duration getClockSkew() {
		return this.clockSkew;
	}

	public void setClockSkew(Duration clockSkew) {
		this.clockSkew = clockSkew;
	}

	public IdempotencySettings.KeyAgePolicy getKeyAgePolicy() {
		return this.keyAgePolicy;
	}

	public void setKeyAgePolicy(IdempotencySettings.KeyAgePolicy keyAgePolicy) {
		this.keyAgePolicy = keyAgePolicy;
	}

	public IdempotencySettings.Mode getMode() {
		return this.mode;
	}

	public void setMode(IdempotencySettings.Mode mode) {
		this.mode = mode;
	}

	public Key getKey() {
		return this.key;
	}

	public Fingerprint getFingerprint() {
		return this.fingerprint;
	}

	public InFlight getInFlight() {
		return this.inFlight;
	}

	public Store getStore() {
		return this.store;
	}

	public Request getRequest() {
		return this.request;
	}

	public Response getResponse() {
		return this.response;
	}

	public Web getWeb() {
		return this.web;
	}

	public MethodDoor getMethod() {
		return this.method;
	}

	public Observation getObservation() {
		return this.observation;
	}

	/**
	 * A size setting in bytes, checked: a negative size (or zero where nothing could
	 * pass) would start an application that refuses every request.
	 * @throws InvalidIdempotencySettingsException naming the property
	 */
	static long bytes(DataSize size, String property, boolean zeroAllowed) {
		long bytes = size.toBytes();
		if (bytes < 0 || (bytes == 0 && !zeroAllowed)) {
			throw new InvalidIdempotencySettingsException(List.of(property),
					property + " must be " + (zeroAllowed ? "zero or more" : "positive") + ", was " + size,
					"Set " + property + " to a size such as 1MB, or remove it for the default.");
		}
		return bytes;
	}

	/**
	 * Builds the engine's settings from these properties, checked first so that a wrong
	 * value is reported by the property that sets it and with what to set.
	 * @throws InvalidIdempotencySettingsException naming the properties at fault
	 */
	public IdempotencySettings toSettings() {
		requirePositive(this.lifetime, "lifetime");
		requireNotNegative(this.grace, "grace");
		requirePositive(this.lease, "lease");
		requirePositive(this.heartbeatInterval, "heartbeat-interval");
		if (this.heartbeatInterval.multipliedBy(2).compareTo(this.lease) > 0) {
			throw new InvalidIdempotencySettingsException(
					List.of("idempotency.heartbeat-interval", "idempotency.lease"),
					"idempotency.heartbeat-interval (" + this.heartbeatInterval
							+ ") must be at most half of idempotency.lease (" + this.lease
							+ "): a running owner's beats are up to one heartbeat-interval apart, and the rest"
							+ " of the lease is the margin for the store round trip and a late heartbeat thread",
					"Set idempotency.heartbeat-interval to at most " + this.lease.dividedBy(2)
							+ " or idempotency.lease to at least " + this.heartbeatInterval.multipliedBy(2) + ".");
		}
		Duration retention = this.lifetime.plus(this.grace);
		if (this.lease.compareTo(retention) > 0) {
			throw new InvalidIdempotencySettingsException(
					List.of("idempotency.lease", "idempotency.lifetime", "idempotency.grace"),
					"idempotency.lease (" + this.lease
							+ ") must not be longer than idempotency.lifetime + idempotency.grace (" + retention
							+ "): a record would expire while its owner still runs",
					"Set idempotency.lease to at most " + retention
							+ " or raise idempotency.lifetime or idempotency.grace.");
		}
		requireNotNegative(this.clockSkew, "clock-skew");
		requireNotNegative(this.inFlight.wait, "in-flight.wait");
		requirePositive(this.inFlight.pollInterval, "in-flight.poll-interval");
		requireNotNegative(this.inFlight.retryAfter, "in-flight.retry-after");
		requireNotNegative(this.store.retryAfter, "store.retry-after");
		long maxBodyBytes = this.response.maxBodySize.toBytes();
		if (maxBodyBytes < 0 || maxBodyBytes > IdempotencySettings.MAX_STORED_BODY_BYTES) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency.response.max-body-size"),
					"idempotency.response.max-body-size must be from 0 to " + IdempotencySettings.MAX_STORED_BODY_BYTES
							+ " bytes (an answer is held in memory until it is stored), was " + maxBodyBytes + " bytes",
					"Set idempotency.response.max-body-size to at most "
							+ PropertyValues.written(DataSize.ofBytes(IdempotencySettings.MAX_STORED_BODY_BYTES))
							+ "; the default is " + PropertyValues.written(DataSize.ofBytes(DEFAULTS.maxBodyBytes()))
							+ ".");
		}
		return IdempotencySettings.builder()
			.lifetime(this.lifetime)
			.grace(this.grace)
			.lease(this.lease)
			.heartbeatInterval(this.heartbeatInterval)
			.clockSkew(this.clockSkew)
			.keyAgePolicy(this.keyAgePolicy)
			.inFlightWait(this.inFlight.wait)
			.inFlightPollInterval(this.inFlight.pollInterval)
			.inFlightStatus(this.inFlight.status)
			.inFlightRetryAfter(this.inFlight.retryAfter)
			.failureMode(this.store.failureMode)
			.storeRetryAfter(this.store.retryAfter)
			.maxBodyBytes(maxBodyBytes)
			.mode(this.mode)
			.build();
	}

	private static void requirePositive(@Nullable Duration value, String name) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency." + name),
					"idempotency." + name + " must be positive, was " + value,
					"Set idempotency." + name + " to a positive duration, such as 10s.");
		}
	}

	private static void requireNotNegative(@Nullable Duration value, String name) {
		if (value == null || value.isNegative()) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency." + name),
					"idempotency." + name + " must not be negative, was " + value,
					"Set idempotency." + name + " to 0 or a positive duration.");
		}
	}

	/** What a client's key must look like. */
	public static class Key {

		/**
		 * Format of the Idempotency-Key header's keys: uuidv7 (an RFC 9562 UUIDv7, the
		 * Iceberg rule; its time is checked against the key-age window), uuid (any RFC
		 * 9562 UUID, version 1 to 8; the window applies to UUIDv7 keys only) or opaque (1
		 * to 255 visible ASCII characters, taken as sent; no window). An
		 * Idempotent(keyFormat = ...) annotation overrides it for its operation. Method
		 * door keys (Idempotent(key = ...)) are opaque unless their annotation says
		 * otherwise.
		 */
		private KeyFormat format = KeyFormat.UUID_V7;

		public KeyFormat getFormat() {
			return this.format;
		}

		public void setFormat(KeyFormat format) {
			this.format = format;
		}

	}

	/** The idempotency.request observation of each protected call. */
	public static class Observation {

		/**
		 * Whether the observation carries the high-cardinality key idempotency.key.hash:
		 * the first 16 hex digits of the SHA-256 of the key (as the engine keeps it: a
		 * UUID in lower case), so that a trace can be found from a key. The key itself is
		 * never a tag.
		 */
		private boolean keyHash;

		public boolean isKeyHash() {
			return this.keyHash;
		}

		public void setKeyHash(boolean keyHash) {
			this.keyHash = keyHash;
		}

	}

	/** What makes two keyed HTTP requests the same request. */
	public static class Fingerprint {

		/**
		 * How an application/json or +json request body is compared: bytes (as sent:
		 * other member order or whitespace is another request, answered 422) or canonical
		 * (member order and whitespace do not count, numbers are compared by value so 1.0
		 * is 1, arrays keep their order; a body that is not valid JSON is compared as
		 * bytes). Needs jackson-core for canonical.
		 */
		private JsonFingerprint json = JsonFingerprint.BYTES;

		public JsonFingerprint getJson() {
			return this.json;
		}

		public void setJson(JsonFingerprint json) {
			this.json = json;
		}

	}

	/**
	 * Handling of a retry that arrives while the first request with its key still runs.
	 */
	public static class InFlight {

		/**
		 * How long a duplicate waits for the first request to finish before it is
		 * answered.
		 */
		private Duration wait = DEFAULTS.inFlight().maxWait();

		/** How often a waiting duplicate checks the store. */
		private Duration pollInterval = DEFAULTS.inFlight().pollInterval();

		/**
		 * Status for a duplicate still in flight after the wait: conflict (409, the IETF
		 * draft's choice) or service-unavailable (503 with Retry-After: Iceberg clients
		 * read 409 as a real conflict but retry a 503).
		 */
		private IdempotencySettings.InFlightStatus status = DEFAULTS.inFlight().status();

		/** Retry-After sent with an in-flight answer. */
		private Duration retryAfter = DEFAULTS.inFlight().retryAfter();

		public Duration getWait() {
			return this.wait;
		}

		public void setWait(Duration wait) {
			this.wait = wait;
		}

		public Duration getPollInterval() {
			return this.pollInterval;
		}

		public void setPollInterval(Duration pollInterval) {
			this.pollInterval = pollInterval;
		}

		public IdempotencySettings.InFlightStatus getStatus() {
			return this.status;
		}

		public void setStatus(IdempotencySettings.InFlightStatus status) {
			this.status = status;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

	}

	/** Where records are kept and what happens when that store fails. */
	public static class Store {

		/**
		 * Which store keeps the records: memory (this JVM only), jdbc (the application's
		 * or a dedicated DataSource) or redis (Spring Data Redis).
		 */
		private StoreType type = StoreType.MEMORY;

		/**
		 * What to do when the store cannot be reached: fail-closed answers 503 with
		 * Retry-After and runs nothing; fail-open runs the request unprotected (logged
		 * and counted).
		 */
		private IdempotencySettings.FailureMode failureMode = DEFAULTS.storeFailure().mode();

		/** Retry-After sent when the store is unavailable. */
		private Duration retryAfter = DEFAULTS.storeFailure().retryAfter();

		private final Memory memory = new Memory();

		public StoreType getType() {
			return this.type;
		}

		public void setType(StoreType type) {
			this.type = type;
		}

		public IdempotencySettings.FailureMode getFailureMode() {
			return this.failureMode;
		}

		public void setFailureMode(IdempotencySettings.FailureMode failureMode) {
			this.failureMode = failureMode;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

		public Memory getMemory() {
			return this.memory;
		}

	}

	/** The in-memory store: one JVM only. */
	public static class Memory {

		/**
		 * Most records kept. Past it (or past max-bytes), expired records are dropped
		 * first, then on-full decides: evict completed records, or refuse. Live records
		 * are never evicted.
		 */
		private int maxEntries = 100_000;

		/**
		 * Most bytes the records may retain (estimated: stored response, record strings
		 * and 256 bytes per record). When unset, 1/16 of the JVM's maximum heap
		 * (Runtime.maxMemory()). Past it, expired records are dropped first, then on-full
		 * decides; a response larger than the whole bound is not stored and its key is
		 * released.
		 */
		private @Nullable DataSize maxBytes;

		/**
		 * Most of max-entries and of max-bytes one scope (by default one principal, or
		 * all anonymous requests together) may hold, as a fraction: more than 0, at most
		 * 1 (1: no share). With on-full=evict it bites only when scopes compete for a
		 * full store: a scope past its share makes room from its own completed records,
		 * never another's, and a single-scope application uses the whole store. With
		 * on-full=refuse it is a cap: past it that scope's new keys are refused (503 when
		 * fail-closed) while other scopes are still served.
		 */
		private double maxSharePerScope = 0.25;

		/**
		 * What a new key or a response that does not fit gets once expired records are
		 * dropped. evict: completed records are evicted, the one closest to its expiry
		 * first, and a retry of an evicted key runs again (counted in
		 * idempotency.store.memory.evictions; the retention in effect is the gauge
		 * idempotency.store.memory.oldest.age); only a store full of live records
		 * refuses. refuse: the request is refused (503 with Retry-After until the oldest
		 * record expires), so that every key keeps its whole retention.
		 */
		private InMemoryIdempotencyStore.OnFull onFull = InMemoryIdempotencyStore.OnFull.EVICT;

		public InMemoryIdempotencyStore.OnFull getOnFull() {
			return this.onFull;
		}

		public void setOnFull(InMemoryIdempotencyStore.OnFull onFull) {
			this.onFull = onFull;
		}

		public int getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(int maxEntries) {
			this.maxEntries = maxEntries;
		}

		public @Nullable DataSize getMaxBytes() {
			return this.maxBytes;
		}

		public void setMaxBytes(@Nullable DataSize maxBytes) {
			this.maxBytes = maxBytes;
		}

		public double getMaxSharePerScope() {
			return this.maxSharePerScope;
		}

		public void setMaxSharePerScope(double maxSharePerScope) {
			this.maxSharePerScope = maxSharePerScope;
		}

	}

	/** What the HTTP front door reads of a protected request. */
	public static class Request {

		/**
		 * Largest request body read to fingerprint a keyed request. A larger one is
		 * answered 413 (request-too-large) without reading past the limit, and nothing
		 * runs.
		 */
		private DataSize maxBodySize = DataSize.ofMegabytes(1);

		public DataSize getMaxBodySize() {
			return this.maxBodySize;
		}

		public void setMaxBodySize(DataSize maxBodySize) {
			this.maxBodySize = maxBodySize;
		}

	}

	/** What of a response is stored for replay. */
	public static class Response {

		/**
		 * Response headers stored and replayed besides Content-Type, Location,
		 * Content-Location, ETag and Last-Modified. Set-Cookie, Authorization,
		 * WWW-Authenticate and hop-by-hop headers are never stored.
		 */
		private List<String> storedHeaders = new ArrayList<>();

		/**
		 * Largest response body stored. A larger response is sent to the client but not
		 * stored: the key is released (never truncated) and a retry runs again.
		 */
		private DataSize maxBodySize = DataSize.ofBytes(DEFAULTS.maxBodyBytes());

		public List<String> getStoredHeaders() {
			return this.storedHeaders;
		}

		public void setStoredHeaders(List<String> storedHeaders) {
			this.storedHeaders = storedHeaders;
		}

		public DataSize getMaxBodySize() {
			return this.maxBodySize;
		}

		public void setMaxBodySize(DataSize maxBodySize) {
			this.maxBodySize = maxBodySize;
		}

	}

	/** The HTTP front door. */
	public static class Web {

		/**
		 * Extra path patterns (Spring PathPattern syntax) protected for POST, PUT, PATCH
		 * and DELETE without an @Idempotent annotation.
		 */
		private List<String> pathPatterns = new ArrayList<>();

		/** Whether requests matched only by path-patterns must carry a key. */
		private boolean pathPatternsKeyRequired = false;

		/** Base of the problem "type" URIs; the cause's slug is appended. */
		private String problemTypeBase = "https://idempotency.dev/problems/";

		public List<String> getPathPatterns() {
			return this.pathPatterns;
		}

		public void setPathPatterns(List<String> pathPatterns) {
			this.pathPatterns = pathPatterns;
		}

		public boolean isPathPatternsKeyRequired() {
			return this.pathPatternsKeyRequired;
		}

		public void setPathPatternsKeyRequired(boolean pathPatternsKeyRequired) {
			this.pathPatternsKeyRequired = pathPatternsKeyRequired;
		}

		public String getProblemTypeBase() {
			return this.problemTypeBase;
		}

		public void setProblemTypeBase(String problemTypeBase) {
			this.problemTypeBase = problemTypeBase;
		}

	}

	/** The method front door ({@code @Idempotent} with a key expression). */
	public static class MethodDoor {

		/**
		 * Classes, or packages (with their sub-packages), that a stored result of a
		 * method declared Object, an interface or an abstract class may be replayed as,
		 * besides the application's own packages (those of @SpringBootApplication, of the
		 * bean and of its declared return type) and JDK values (strings, numbers,
		 * collections, maps, java.time). The stored record names the class: any other is
		 * refused, and never loaded, so whoever can write the store cannot choose what is
		 * built.
		 */
		private List<String> allowedResultTypes = new ArrayList<>();

		public List<String> getAllowedResultTypes() {
			return this.allowedResultTypes;
		}

		public void setAllowedResultTypes(List<String> allowedResultTypes) {
			this.allowedResultTypes = allowedResultTypes;
		}

	}

	/** The stores the starter can configure. */
	public enum StoreType {

		/** In this JVM's memory: one node, development. */
		MEMORY,

		/** A relational database through JDBC (PostgreSQL, MariaDB/MySQL, H2). */
		JDBC,

		/** Redis through Spring Data Redis. */
		REDIS

	}

}
