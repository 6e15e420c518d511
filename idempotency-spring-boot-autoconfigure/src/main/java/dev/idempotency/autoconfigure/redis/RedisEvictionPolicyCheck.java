package dev.idempotency.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreProperties.EvictionCheck;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Checks at start-up whether Redis may evict the store's records
 * ({@code idempotency.store.redis.eviction-check}). Under memory pressure a Redis with a
 * {@code maxmemory} deletes keys by its {@code maxmemory-policy}: {@code allkeys-*} any
 * key, {@code volatile-*} keys with a TTL, which every record has (its
 * {@code PEXPIREAT}). An evicted record is a key never used: a retry of its request runs
 * the operation again, and nothing reports it. Only {@code noeviction} keeps records
 * (Redis then refuses writes when full, and the store-failure policy answers the
 * request), so every other policy, also one Redis may add later, counts as evicting.
 * <p>
 * One {@code CONFIG GET maxmemory-policy} and one {@code CONFIG GET maxmemory} through
 * the store's connection (every node with Redis Cluster). A failure there (the command
 * disabled or renamed, as on many managed services, an ACL without it, Redis down) is
 * logged at INFO level and the application starts, in every mode. The check sees the
 * settings at start-up only: a later {@code CONFIG SET} goes unnoticed.
 * <p>
 * Its own bean, which the store depends on, so that a refusal comes before the store
 * exists.
 */
final class RedisEvictionPolicyCheck implements InitializingBean {

	private static final Log logger = LogFactory.getLog(RedisEvictionPolicyCheck.class);

	static final String POLICY = "maxmemory-policy";

	static final String MAXMEMORY = "maxmemory";

	private static final String SAFE_POLICY = "noeviction";

	private final ConfigReader config;

	private final EvictionCheck mode;

	/**
	 * A check through the store's connections.
	 * @param connections where the store's commands go
	 * @param mode what to do when Redis may evict
	 */
	RedisEvictionPolicyCheck(RedisConnectionFactory connections, EvictionCheck mode) {
		this((parameter) -> {
			try (RedisConnection connection = connections.getConnection()) {
				Properties read = connection.serverCommands().getConfig(parameter);
				return (read != null) ? read : new Properties();
			}
		}, mode);
	}

	/**
	 * A check over another reader of the configuration.
	 * @param config reads one configuration parameter
	 * @param mode what to do when Redis may evict
	 */
	RedisEvictionPolicyCheck(ConfigReader config, EvictionCheck mode) {
		this.config = config;
		this.mode = mode;
	}

	@Override
	public void afterPropertiesSet() {
		if (this.mode == EvictionCheck.OFF) {
			return;
		}
		Finding finding = inspect();
		switch (finding.verdict()) {
			case EVICTS -> {
				if (this.mode == EvictionCheck.FAIL) {
					throw new IllegalStateException(finding.message());
				}
				logger.warn(finding.message());
			}
			case NO_LIMIT, UNKNOWN -> logger.info(finding.message());
			case KEEPS -> {
				if (logger.isDebugEnabled()) {
					logger.debug(finding.message());
				}
			}
		}
	}

	/** What Redis's eviction settings mean for the store's records; logs nothing. */
	Finding inspect() {
		Map<String, String> policies;
		Map<String, String> limits;
		try {
			policies = byNode(this.config.get(POLICY), POLICY);
			limits = byNode(this.config.get(MAXMEMORY), MAXMEMORY);
		}
		catch (RuntimeException ex) {
			return new Finding(Verdict.UNKNOWN,
					"Could not check whether Redis may evict idempotency records (CONFIG GET failed: " + ex
							+ "; many managed services disable or rename CONFIG, and an unreachable Redis cannot"
							+ " answer). Make sure its maxmemory-policy is " + SAFE_POLICY
							+ ": an evicted record lets a retry run its operation again.");
		}
		if (policies.isEmpty()) {
			return new Finding(Verdict.UNKNOWN,
					"Could not check whether Redis may evict idempotency records: CONFIG GET " + POLICY
							+ " returned nothing. Make sure its maxmemory-policy is " + SAFE_POLICY
							+ ": an evicted record lets a retry run its operation again.");
		}
		List<String> evicting = new ArrayList<>();
		List<String> unlimited = new ArrayList<>();
		for (Map.Entry<String, String> node : policies.entrySet()) {
			if (SAFE_POLICY.equalsIgnoreCase(node.getValue().trim())) {
				continue;
			}
			// No maxmemory read counts as a limit: evicting is the risk to report.
			String limit = limits.getOrDefault(node.getKey(), "unknown").trim();
			String setting = where(node.getKey()) + POLICY + "=" + node.getValue() + ", " + MAXMEMORY + "=" + limit;
			(limit.equals("0") ? unlimited : evicting).add(setting);
		}
		if (!evicting.isEmpty()) {
			return new Finding(Verdict.EVICTS, "Redis may evict idempotency records under memory pressure ("
					+ String.join("; ", evicting) + "). An evicted record lets a retry of its request run the "
					+ "operation again, and nothing reports it. Records have a TTL, so volatile-* policies evict "
					+ "them as allkeys-* do. Set maxmemory-policy to " + SAFE_POLICY + " (Redis then refuses writes "
					+ "when full, and the store-failure policy answers the request), or keep the records in a Redis "
					+ "that does not evict. idempotency.store.redis.eviction-check=fail refuses to start on this, "
					+ "=off skips the check.");
		}
		if (!unlimited.isEmpty()) {
			return new Finding(Verdict.NO_LIMIT,
					"Redis evicts nothing now (maxmemory 0: no limit), but its maxmemory-policy would evict "
							+ "idempotency records once a maxmemory is set (" + String.join("; ", unlimited)
							+ "); an evicted record lets a retry run its operation again. Prefer maxmemory-policy "
							+ SAFE_POLICY + ".");
		}
		return new Finding(Verdict.KEEPS,
				"Redis keeps idempotency records under memory pressure (maxmemory-policy " + SAFE_POLICY + ").");
	}

	/**
	 * One parameter per node: the node is {@code ""} for one server, else the cluster
	 * node's address (Spring Data Redis prefixes each node's parameters with it and a
	 * dot).
	 */
	private static Map<String, String> byNode(Properties config, String parameter) {
		Map<String, String> values = new TreeMap<>();
		for (String name : config.stringPropertyNames()) {
			if (name.equalsIgnoreCase(parameter)) {
				values.put("", config.getProperty(name));
			}
			else if (name.toLowerCase(Locale.ROOT).endsWith("." + parameter)) {
				values.put(name.substring(0, name.length() - parameter.length() - 1), config.getProperty(name));
			}
		}
		return values;
	}

	private static String where(String node) {
		return node.isEmpty() ? "" : "node " + node + ": ";
	}

	/** Reads one Redis configuration parameter, as {@code CONFIG GET} does. */
	@FunctionalInterface
	interface ConfigReader {

		/**
		 * The parameter's value, under its name for one server or under
		 * {@code <node>.<name>} for each node of a cluster.
		 * @param parameter the parameter's name
		 * @return the values read
		 */
		Properties get(String parameter);

	}

	/** What the settings mean for the records. */
	enum Verdict {

		/** Redis may evict records now. */
		EVICTS,

		/** The policy evicts, but there is no memory limit to reach. */
		NO_LIMIT,

		/** {@code noeviction}: records stay. */
		KEEPS,

		/** The settings could not be read. */
		UNKNOWN

	}

	/**
	 * The verdict and what is logged for it.
	 *
	 * @param verdict what the settings mean
	 * @param message the log line (or the start-up failure's message)
	 */
	record Finding(Verdict verdict, String message) {
	}

}
