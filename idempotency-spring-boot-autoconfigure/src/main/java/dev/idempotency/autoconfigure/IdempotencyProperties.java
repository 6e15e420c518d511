package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.web.JsonFingerprint;
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
	 * Whether Idempotency-Key support is on. Off, no bean of the starter exists, and one
	 * WARN at start-up says that @Idempotent handlers and methods run unprotected.
	 */
	private boolean enabled = true;

	/** Name of the request header that carries the key. */
	private String headerName = "Idempotency-Key";

	/**
	 * How long clients may reuse a key: records are kept at least this long (lifetime +
	 * grace from the key's UUIDv7 time or from the first request, whichever is later).
	 * Advertise it to clients (Iceberg: idempotency-key-lifetime in GET /v1/config).
	 */
	private Duration lifetime = Duration.ofMinutes(30);

	/**
	 * Extra time a record is kept beyond the lifetime, to absorb clock differences and
	 * late retries.
	 */
	private Duration grace = Duration.ofMinutes(5);

	/**
	 * How long the owner of an in-progress record is presumed alive without a heartbeat.
	 * After it, a retry takes the record over and runs the operation: keep it short so a
	 * crashed node does not block a key for long, but at least 1 s and longer than
	 * heartbeat-interval + the store's timeout (JDBC query-timeout, Redis command
	 * timeout) + a quarter heartbeat-interval + 500 ms, or a running owner could be taken
	 * over (checked at start-up, lease mode only).
	 */
	private Duration lease = Duration.ofSeconds(30);

	/**
	 * Longest time between two lease extensions of a running operation. At most half the
	 * lease: the rest of the lease is the margin for the store round trip and a late
	 * heartbeat thread.
	 */
	private Duration heartbeatInterval = Duration.ofSeconds(10);

	/**
	 * How far in the future a key's UUIDv7 timestamp may be, to tolerate client clock
	 * skew. The record of a key stamped ahead is kept that much longer.
	 */
	private Duration clockSkew = Duration.ofMinutes(1);

	/**
	 * What to do with a key whose UUIDv7 timestamp is outside [now - lifetime - grace,
	 * now + clock-skew]: reject (answer 400) or warn (log a warning and go on).
	 */
	private IdempotencySettings.KeyAgePolicy keyAgePolicy = IdempotencySettings.KeyAgePolicy.REJECT;

	/**
	 * How an operation is guarded: lease (reserve the key before it runs; a duplicate
	 * never runs beside it) or record-after-success (record a successful response with
	 * one conditional insert after it; fewer store writes, but attempts racing with a new
	 * key may each run). The lease and heartbeat settings apply to lease mode only.
	 */
	private IdempotencySettings.Mode mode = IdempotencySettings.Mode.LEASE;

	private final Key key = new Key();

	private final Fingerprint fingerprint = new Fingerprint();

	private final InFlight inFlight = new InFlight();

	private final Store store = new Store();

	private final Request request = new Request();

	private final Response response = new Response();

	private final Web web = new Web();

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
		private Duration wait = Duration.ofSeconds(2);

		/** How often a waiting duplicate checks the store. */
		private Duration pollInterval = Duration.ofMillis(50);

		/**
		 * Status for a duplicate still in flight after the wait: conflict (409, the IETF
		 * draft's choice) or service-unavailable (503 with Retry-After: Iceberg clients
		 * read 409 as a real conflict but retry a 503).
		 */
		private IdempotencySettings.InFlightStatus status = IdempotencySettings.InFlightStatus.CONFLICT;

		/** Retry-After sent with an in-flight answer. */
		private Duration retryAfter = Duration.ofSeconds(1);

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
		 * or a dedicated DataSource), redis (Spring Data Redis) or r2dbc (the
		 * application's R2DBC ConnectionFactory).
		 */
		private StoreType type = StoreType.MEMORY;

		/**
		 * What to do when the store cannot be reached: fail-closed answers 503 with
		 * Retry-After and runs nothing; fail-open runs the request unprotected (logged
		 * and counted).
		 */
		private IdempotencySettings.FailureMode failureMode = IdempotencySettings.FailureMode.FAIL_CLOSED;

		/** Retry-After sent when the store is unavailable. */
		private Duration retryAfter = Duration.ofSeconds(5);

		/**
		 * Whether stored answers are deflated: auto (the JDBC and R2DBC stores deflate
		 * bodies from compress-from, the in-memory and Redis stores keep them as they
		 * are), deflate (every store, from compress-from) or none. A body is deflated
		 * only when that makes it smaller; every store reads either form.
		 */
		private Compression compression = Compression.AUTO;

		/** The smallest answer body a store that deflates deflates. */
		private DataSize compressFrom = DataSize.ofBytes(256);

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

		public Compression getCompression() {
			return this.compression;
		}

		public void setCompression(Compression compression) {
			this.compression = compression;
		}

		public DataSize getCompressFrom() {
			return this.compressFrom;
		}

		public void setCompressFrom(DataSize compressFrom) {
			this.compressFrom = compressFrom;
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
		 * WWW-Authenticate and hop-by-hop headers are never stored: naming one fails the
		 * start.
		 */
		private List<String> storedHeaders = new ArrayList<>();

		/**
		 * Largest response body stored. A larger response is sent to the client but not
		 * stored: the key is released (never truncated) and a retry runs again.
		 */
		private DataSize maxBodySize = DataSize.ofMegabytes(1);

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

	/** Whether stored answers are deflated ({@code idempotency.store.compression}). */
	public enum Compression {

		/**
		 * Each store's own choice: the JDBC and R2DBC stores deflate (the database would
		 * compress and log the raw bytes again), the in-memory and Redis stores keep
		 * bodies as they are (deflating costs more CPU than the bytes it saves there).
		 */
		AUTO,

		/** Every store deflates bodies from compress-from: memory is scarcer than CPU. */
		DEFLATE,

		/** No store deflates. */
		NONE

	}

	/** The stores the starter can configure. */
	public enum StoreType {

		/** In this JVM's memory: one node, development. */
		MEMORY,

		/** A relational database through JDBC (PostgreSQL, MariaDB/MySQL, H2). */
		JDBC,

		/** Redis through Spring Data Redis. */
		REDIS,

		/**
		 * A relational database through R2DBC (PostgreSQL, MariaDB/MySQL, H2), on the
		 * application's ConnectionFactory.
		 */
		R2DBC

	}

}
