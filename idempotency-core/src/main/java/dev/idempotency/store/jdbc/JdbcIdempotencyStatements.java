package dev.idempotency.store.jdbc;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.TransientDataAccessException;

/**
 * The SQL statements of the JDBC store on one database, with {@value #TABLE} where the
 * table name goes. Each database has its own class holding them as whole statements:
 * {@link PostgresqlStatements}, {@link MariaDbStatements}, {@link H2Statements}.
 * <p>
 * Named parameters: {@code scope}, {@code key}, {@code fingerprint}, {@code operation},
 * {@code owner}, {@code leaseMicros}, {@code retentionMicros}, {@code response},
 * {@code max}. Time is always the database's; durations are sent as microseconds and
 * added in SQL.
 * <p>
 * The last reserve statement returns at most one row with the columns
 * {@code owner_token}, {@code taken_over}, {@code acquirable}, {@code fingerprint},
 * {@code operation}, {@code state}, {@code lease_expires_at}, {@code expires_at} and
 * {@code response}. The caller owns the record when {@code owner_token} is its token.
 * Otherwise the row is the record as it stands, and {@code acquirable} says that the row
 * seen is already outdated (it would have been acquired): the store then runs the
 * reservation again, as it does when no row comes back.
 * <p>
 * A recording (record-after-success mode) runs {@code recordCompleted}; an update count
 * of one means it recorded. Otherwise (no row changed, or a duplicate key) a record was
 * there: {@code findCurrent} reads it if it is live, else {@code recordOverExpired}
 * replaces it if it has expired; when neither finds it (it was deleted meanwhile), the
 * store runs the recording again. Each of the three decides atomically on its own.
 * <p>
 * Internal: public only for the R2DBC store ({@code dev.idempotency.store.r2dbc}), which
 * runs these same statements through R2DBC ({@link JdbcIdempotencyDialect#statements});
 * not supported.
 *
 * @param reserve run in order in one transaction; the last one returns the row
 * @param complete stores the response, if the caller still owns the live record
 * @param release deletes the record, if the caller still owns the live record
 * @param heartbeat extends the lease, if the caller still owns the live record
 * @param find reads a live record
 * @param purge deletes at most {@code :max} expired records
 * @param recordCompleted creates the completed record where none is, or (where the
 * database can say so in the same statement) replaces an expired one
 * @param findCurrent reads a live record as last committed, for a recording that found
 * one
 * @param recordOverExpired replaces an expired record with the completed one
 * @param inspect reads a live record as {@code find} does, with its {@code created_at}
 * and {@code owner_token} (for an operator)
 * @param remove deletes a live record whatever its state and owner (for an operator)
 * @param inspectByKey reads the live records of {@code :key} in every scope as
 * {@code inspect} does, with their {@code scope}, at most {@code :max} of them in the
 * order of their scopes (for an operator; the key's own index finds them)
 */
public record JdbcIdempotencyStatements(List<String> reserve, String complete, String release, String heartbeat,
		String find, String purge, String recordCompleted, String findCurrent, String recordOverExpired, String inspect,
		String remove, String inspectByKey) {

	/**
	 * A reservation or recording that sees no row, or an outdated one, or that lost a
	 * race ({@link #retryable}), runs again; this many times at most.
	 */
	public static final int MAX_ATTEMPTS = 20;

	/** The placeholder of the table name in the statements. */
	static final String TABLE = "%TABLE%";

	/**
	 * These statements on {@code table}, a table name already validated as a plain
	 * identifier.
	 */
	JdbcIdempotencyStatements forTable(String table) {
		return new JdbcIdempotencyStatements(this.reserve.stream().map((sql) -> sql.replace(TABLE, table)).toList(),
				this.complete.replace(TABLE, table), this.release.replace(TABLE, table),
				this.heartbeat.replace(TABLE, table), this.find.replace(TABLE, table), this.purge.replace(TABLE, table),
				this.recordCompleted.replace(TABLE, table), this.findCurrent.replace(TABLE, table),
				this.recordOverExpired.replace(TABLE, table), this.inspect.replace(TABLE, table),
				this.remove.replace(TABLE, table), this.inspectByKey.replace(TABLE, table));
	}

	/**
	 * Whether a statement that failed with {@code cause} changed nothing and may run
	 * again: a race lost on a new key (duplicate key), a deadlock victim, a transient
	 * failure.
	 */
	public static boolean retryable(@Nullable Throwable cause) {
		return cause instanceof DuplicateKeyException || cause instanceof TransientDataAccessException;
	}

	/**
	 * The value of a {@code leaseMicros} or {@code retentionMicros} parameter: whole
	 * microseconds, rounded up so that a positive duration never becomes zero.
	 */
	public static long micros(Duration duration) {
		long micros = Math.multiplyExact(duration.getSeconds(), 1_000_000L);
		return Math.addExact(micros, (duration.getNano() + 999) / 1000);
	}

}
