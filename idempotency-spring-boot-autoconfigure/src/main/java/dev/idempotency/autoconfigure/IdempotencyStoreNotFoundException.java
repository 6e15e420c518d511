package dev.idempotency.autoconfigure;

import java.util.List;
import java.util.Locale;

/**
 * The engine needs exactly one IdempotencyStore bean and the context has none, or
 * several. {@link IdempotencyStoreNotFoundFailureAnalyzer} turns it into a start-up
 * report.
 */
final class IdempotencyStoreNotFoundException extends IllegalStateException {

	private final IdempotencyProperties.StoreType storeType;

	private final List<String> candidates;

	IdempotencyStoreNotFoundException(IdempotencyProperties.StoreType storeType, List<String> candidates) {
		super(problem(storeType, candidates) + "; " + action(storeType, candidates));
		this.storeType = storeType;
		this.candidates = List.copyOf(candidates);
	}

	/** The configured store type. */
	IdempotencyProperties.StoreType storeType() {
		return this.storeType;
	}

	/** The names of the IdempotencyStore beans found: empty, or more than one. */
	List<String> candidates() {
		return this.candidates;
	}

	/** What is wrong, without what to do. */
	String problem() {
		return problem(this.storeType, this.candidates);
	}

	/** What to do, in words. */
	String action() {
		return action(this.storeType, this.candidates);
	}

	private static String problem(IdempotencyProperties.StoreType type, List<String> candidates) {
		return "idempotency.store.type=" + type.name().toLowerCase(Locale.ROOT) + " but "
				+ (candidates.isEmpty() ? "no IdempotencyStore bean exists"
						: "several IdempotencyStore beans exist " + candidates + " and none is @Primary");
	}

	private static String action(IdempotencyProperties.StoreType type, List<String> candidates) {
		if (!candidates.isEmpty()) {
			return "keep one IdempotencyStore bean, or mark the one to use @Primary";
		}
		return switch (type) {
			case JDBC -> "add spring-boot-starter-jdbc and a DataSource (spring.datasource.url), or set"
					+ " idempotency.store.type to memory or redis, or declare your own IdempotencyStore bean";
			case REDIS -> "add spring-boot-starter-data-redis (and spring.data.redis.host), or set"
					+ " idempotency.store.type to memory or jdbc, or declare your own IdempotencyStore bean";
			case R2DBC -> "add spring-boot-starter-data-r2dbc (or spring-boot-r2dbc) with an R2DBC driver and a"
					+ " ConnectionFactory (spring.r2dbc.url), or set idempotency.store.type to memory, jdbc or redis,"
					+ " or declare your own IdempotencyStore bean";
			case MEMORY -> "declare your own IdempotencyStore bean, or remove what made the in-memory store back off";
		};
	}

}
