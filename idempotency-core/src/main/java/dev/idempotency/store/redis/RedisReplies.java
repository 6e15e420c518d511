package dev.idempotency.store.redis;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponseCodec;

import static dev.idempotency.store.redis.RedisIdempotencyStore.string;

/**
 * What the Redis store's scripts answer, read: their outcome, and a record as the flat
 * list of its hash's fields and values.
 */
final class RedisReplies {

	private RedisReplies() {
	}

	static boolean reservedHere(List<?> result) {
		String outcome = string((byte[]) result.get(0));
		return outcome.equals("acquired") || outcome.equals("taken_over");
	}

	static boolean recordedHere(List<?> result) {
		return string((byte[]) result.get(0)).equals("recorded");
	}

	/** What {@code reserve} answered. */
	static ReserveResult toReserveResult(RecordId id, List<?> result) {
		String outcome = string((byte[]) result.get(0));
		return switch (outcome) {
			case "acquired" -> new ReserveResult.Acquired(false);
			case "taken_over" -> new ReserveResult.Acquired(true);
			case "existing" -> new ReserveResult.Existing(toRecord(id, (List<?>) result.get(1)));
			default -> throw new IdempotencyStoreException("unexpected reserve outcome from Redis: " + outcome);
		};
	}

	/**
	 * What {@code record_completed} answered: empty if it recorded, else the live record.
	 */
	static Optional<IdempotencyRecord> toRecordedResult(RecordId id, List<?> result) {
		String outcome = string((byte[]) result.get(0));
		return switch (outcome) {
			case "recorded" -> Optional.empty();
			case "existing" -> Optional.of(toRecord(id, (List<?>) result.get(1)));
			default -> throw new IdempotencyStoreException("unexpected record outcome from Redis: " + outcome);
		};
	}

	/**
	 * What {@code find} answered: the record's fields, none if it is absent or expired.
	 */
	static Optional<IdempotencyRecord> toFound(RecordId id, List<?> fields) {
		return fields.isEmpty() ? Optional.empty() : Optional.of(toRecord(id, fields));
	}

	/** Whether a fenced transition ({@code complete}, {@code release}, ...) happened. */
	static boolean done(Long reply) {
		return reply == 1L;
	}

	static IdempotencyRecord toRecord(RecordId id, List<?> flat) {
		return toRecord(id, fields(flat));
	}

	private static Map<String, byte[]> fields(List<?> flat) {
		Map<String, byte[]> fields = new HashMap<>();
		for (int i = 0; i + 1 < flat.size(); i += 2) {
			fields.put(string((byte[]) flat.get(i)), (byte[]) flat.get(i + 1));
		}
		return fields;
	}

	private static IdempotencyRecord toRecord(RecordId id, Map<String, byte[]> fields) {
		RecordState state = RecordState.valueOf(requiredString(fields, "state"));
		boolean inProgress = state == RecordState.IN_PROGRESS;
		return new IdempotencyRecord(id, requiredString(fields, "fingerprint"), requiredString(fields, "operation"),
				state, inProgress ? instant(requiredString(fields, "lease_until_ms")) : null,
				instant(requiredString(fields, "expires_at_ms")),
				inProgress ? null : StoredResponseCodec.decode(required(fields, "response")));
	}

	private static String requiredString(Map<String, byte[]> fields, String name) {
		return string(required(fields, name));
	}

	private static byte[] required(Map<String, byte[]> fields, String name) {
		byte[] value = fields.get(name);
		if (value == null) {
			throw new IdempotencyStoreException("Redis idempotency record lacks field '" + name + "'");
		}
		return value;
	}

	private static Instant instant(String epochMillis) {
		return Instant.ofEpochMilli(Long.parseLong(epochMillis));
	}

	/** The record with its {@code created_ms} and {@code owner} fields. */
	static InspectedRecord toInspectedRecord(RecordId id, List<?> flat) {
		Map<String, byte[]> fields = fields(flat);
		byte[] created = fields.get("created_ms");
		byte[] owner = fields.get("owner");
		return new InspectedRecord(toRecord(id, fields), (created != null) ? instant(string(created)) : null,
				(owner != null) ? string(owner) : null);
	}

}
