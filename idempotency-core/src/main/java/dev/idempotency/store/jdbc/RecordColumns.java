package dev.idempotency.store.jdbc;

import java.time.Instant;
import java.util.Objects;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

/**
 * One row of a statement of {@link JdbcIdempotencyStatements}, as a driver hands it out
 * (a JDBC {@code ResultSet}, an R2DBC {@code Row}), and what its columns mean: a record,
 * an inspected record, a reservation's result. The one reading of the statements' rows,
 * shared by the JDBC store and the R2DBC store.
 * <p>
 * Internal: public only for the R2DBC store ({@code dev.idempotency.store.r2dbc}); not
 * supported.
 *
 * @param <E> what reading a column may throw
 */
public interface RecordColumns<E extends Exception> {

	/** A text column. */
	@Nullable String string(String column) throws E;

	/** A binary column. */
	byte @Nullable [] bytes(String column) throws E;

	/** A boolean column (or a comparison's result). */
	boolean bool(String column) throws E;

	/** A timestamp column, as written by the database's clock. */
	@Nullable Instant instant(String column) throws E;

	/** The record of this row. */
	default IdempotencyRecord record(RecordId id) throws E {
		RecordState state = RecordState.valueOf(Objects.requireNonNull(string("state"), "state (NOT NULL)"));
		byte @Nullable [] response = bytes("response");
		StoredResponse stored = (state == RecordState.COMPLETED && response != null)
				? StoredResponseCodec.decode(response) : null;
		return new IdempotencyRecord(id, Objects.requireNonNull(string("fingerprint"), "fingerprint (NOT NULL)"),
				Objects.requireNonNull(string("operation"), "operation (NOT NULL)"), state, instant("lease_expires_at"),
				Objects.requireNonNull(instant("expires_at"), "expires_at (NOT NULL)"), stored);
	}

	/** The record of this row with its creation time and owner. */
	default InspectedRecord inspected(RecordId id) throws E {
		return new InspectedRecord(record(id), instant("created_at"), string("owner_token"));
	}

	/**
	 * What the reserve statement's row means: ours ({@code Acquired}), another's
	 * ({@code Existing}), or {@code null} when it was free to take but outdated when read
	 * (run again). A row that is ours is judged by its owner token alone: its timestamps
	 * and response are not read, since reading a timestamp costs the driver a calendar
	 * per result set (pgjdbc), and a fresh key, the common case, needs none of them.
	 */
	default @Nullable ReserveResult reserveResult(ReserveRequest request) throws E {
		if (request.ownerToken().equals(string("owner_token"))) {
			return new ReserveResult.Acquired(bool("taken_over"));
		}
		if (bool("acquirable")) {
			return null;
		}
		return new ReserveResult.Existing(record(request.id()));
	}

}
