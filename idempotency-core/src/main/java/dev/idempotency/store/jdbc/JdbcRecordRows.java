package dev.idempotency.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The JDBC store's side of its statements' contract ({@link JdbcIdempotencyStatements}):
 * binds their named parameters from a request and reads their rows into records and
 * reservation results, in one dialect.
 */
final class JdbcRecordRows {

	private final JdbcClient jdbc;

	private final JdbcIdempotencyDialect dialect;

	JdbcRecordRows(JdbcClient jdbc, JdbcIdempotencyDialect dialect) {
		this.jdbc = jdbc;
		this.dialect = dialect;
	}

	JdbcClient.StatementSpec reserveStatement(String sql, ReserveRequest request) {
		return this.jdbc.sql(sql)
			.param("scope", request.id().scope())
			.param("key", request.id().key())
			.param("fingerprint", request.fingerprint())
			.param("operation", request.operation())
			.param("owner", request.ownerToken())
			.param("leaseMicros", micros(request.lease()))
			.param("retentionMicros", micros(request.retention()));
	}

	JdbcClient.StatementSpec owned(String sql, RecordId id, String ownerToken) {
		return this.jdbc.sql(sql).param("scope", id.scope()).param("key", id.key()).param("owner", ownerToken);
	}

	JdbcClient.StatementSpec recordStatement(String sql, CompletedRecordRequest request, byte[] encoded) {
		return this.jdbc.sql(sql)
			.param("scope", request.id().scope())
			.param("key", request.id().key())
			.param("fingerprint", request.fingerprint())
			.param("operation", request.operation())
			.param("retentionMicros", micros(request.retention()))
			.param("response", encoded);
	}

	JdbcClient.StatementSpec keyed(String sql, RecordId id) {
		return this.jdbc.sql(sql).param("scope", id.scope()).param("key", id.key());
	}

	JdbcClient.StatementSpec purge(String sql, int maxRecords) {
		return this.jdbc.sql(sql).param("max", maxRecords);
	}

	/** The live record {@code sql} reads, if any. */
	Optional<IdempotencyRecord> read(String sql, RecordId id) {
		return keyed(sql, id).query((rs, rowNum) -> record(id, rs)).optional();
	}

	/** The live record {@code sql} reads with its creation time and owner, if any. */
	Optional<InspectedRecord> inspect(String sql, RecordId id) {
		return keyed(sql, id).query((rs, rowNum) -> inspected(id, rs)).optional();
	}

	/**
	 * The live records of {@code key} in every scope that {@code sql} reads, with their
	 * creation times and owners, at most {@code maxRecords}.
	 */
	List<InspectedRecord> inspectByKey(String sql, String key, int maxRecords) {
		return this.jdbc.sql(sql)
			.param("key", key)
			.param("max", maxRecords)
			.query((rs, rowNum) -> inspected(new RecordId(rs.getString("scope"), key), rs))
			.list();
	}

	private InspectedRecord inspected(RecordId id, ResultSet rs) throws SQLException {
		return new InspectedRecord(record(id, rs), this.dialect.readInstant(rs, "created_at"),
				rs.getString("owner_token"));
	}

	/**
	 * What the row read by {@code sql} means for {@code request}; {@code null} when none
	 * came back or it was free to take but outdated.
	 */
	@Nullable ReserveResult readReservation(String sql, ReserveRequest request) {
		List<Optional<ReserveResult>> rows = reserveStatement(sql, request)
			.query((rs, rowNum) -> Optional.ofNullable(reserveResult(rs, request)))
			.list();
		return rows.isEmpty() ? null : rows.get(0).orElse(null);
	}

	/**
	 * What the reserve statement's row means: ours ({@code Acquired}), another's
	 * ({@code Existing}), or {@code null} when it was free to take but outdated when read
	 * (run again). A row that is ours is judged by its owner token alone: its timestamps
	 * and response are not read, since reading a timestamp costs the driver a calendar
	 * per result set (pgjdbc), and a fresh key, the common case, needs none of them.
	 */
	private @Nullable ReserveResult reserveResult(ResultSet rs, ReserveRequest request) throws SQLException {
		if (request.ownerToken().equals(rs.getString("owner_token"))) {
			return new ReserveResult.Acquired(rs.getBoolean("taken_over"));
		}
		if (rs.getBoolean("acquirable")) {
			return null;
		}
		return new ReserveResult.Existing(record(request.id(), rs));
	}

	private IdempotencyRecord record(RecordId id, ResultSet rs) throws SQLException {
		RecordState state = RecordState.valueOf(rs.getString("state"));
		byte @Nullable [] response = rs.getBytes("response");
		StoredResponse stored = (state == RecordState.COMPLETED && response != null)
				? StoredResponseCodec.decode(response) : null;
		return new IdempotencyRecord(id, rs.getString("fingerprint"), rs.getString("operation"), state,
				this.dialect.readInstant(rs, "lease_expires_at"),
				Objects.requireNonNull(this.dialect.readInstant(rs, "expires_at"), "expires_at (NOT NULL)"), stored);
	}

	/** Whole microseconds, rounded up so that a positive duration never becomes zero. */
	static long micros(Duration duration) {
		long micros = Math.multiplyExact(duration.getSeconds(), 1_000_000L);
		return Math.addExact(micros, (duration.getNano() + 999) / 1000);
	}

}
