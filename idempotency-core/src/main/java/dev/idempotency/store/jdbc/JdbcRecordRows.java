package dev.idempotency.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
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
		return this.jdbc.sql(sql).params(ownedParameters(id, ownerToken).getValues());
	}

	/**
	 * The parameters of a statement on a record its caller owns; also for the statement
	 * that carries the caller's {@code COMMIT} ({@link CommittingWrites}).
	 */
	static MapSqlParameterSource ownedParameters(RecordId id, String ownerToken) {
		return new MapSqlParameterSource().addValue("scope", id.scope())
			.addValue("key", id.key())
			.addValue("owner", ownerToken);
	}

	JdbcClient.StatementSpec recordStatement(String sql, CompletedRecordRequest request, byte[] encoded) {
		return this.jdbc.sql(sql).params(recordParameters(request, encoded).getValues());
	}

	/**
	 * The parameters of a recording; also for the one that carries the caller's
	 * {@code COMMIT} ({@link CommittingWrites}).
	 */
	static MapSqlParameterSource recordParameters(CompletedRecordRequest request, byte[] encoded) {
		return new MapSqlParameterSource().addValue("scope", request.id().scope())
			.addValue("key", request.id().key())
			.addValue("fingerprint", request.fingerprint())
			.addValue("operation", request.operation())
			.addValue("retentionMicros", micros(request.retention()))
			.addValue("response", encoded);
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
		return columns(rs).inspected(id);
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

	private @Nullable ReserveResult reserveResult(ResultSet rs, ReserveRequest request) throws SQLException {
		return columns(rs).reserveResult(request);
	}

	private IdempotencyRecord record(RecordId id, ResultSet rs) throws SQLException {
		return columns(rs).record(id);
	}

	/** The columns of the current row of {@code rs}, read as this dialect writes them. */
	private RecordColumns<SQLException> columns(ResultSet rs) {
		return new RecordColumns<>() {

			@Override
			public @Nullable String string(String column) throws SQLException {
				return rs.getString(column);
			}

			@Override
			public byte @Nullable [] bytes(String column) throws SQLException {
				return rs.getBytes(column);
			}

			@Override
			public boolean bool(String column) throws SQLException {
				return rs.getBoolean(column);
			}

			@Override
			public @Nullable Instant instant(String column) throws SQLException {
				return JdbcRecordRows.this.dialect.readInstant(rs, column);
			}

		};
	}

	/** Whole microseconds, rounded up so that a positive duration never becomes zero. */
	static long micros(Duration duration) {
		return JdbcIdempotencyStatements.micros(duration);
	}

}
