package dev.idempotency.store.jdbc;

import java.sql.SQLException;
import java.util.List;

import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore.ReserveCommit;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DuplicateKeyException;

/**
 * How the JDBC store reserves a key on each database: one statement on PostgreSQL (with
 * an asynchronous commit where {@link ReserveCommit} allows it); on MariaDB/MySQL a plain
 * insert for a fresh key and a read of the row that refused it, and for a row free to
 * take a write and a read in a transaction, as on H2. Runs again, a few times at most,
 * when the row seen was gone or outdated, or the attempt lost a race.
 */
final class JdbcReservations {

	private final JdbcStatementRunner runner;

	private final JdbcRecordRows rows;

	private final List<String> reserveSql;

	private final ReserveCommit reserveCommit;

	private final boolean transactionalCompletion;

	/**
	 * The reservation that commits asynchronously, for the requests that
	 * {@link #reserveCommit} allows it; {@code null} when none may.
	 */
	private final @Nullable List<String> asynchronousReserveSql;

	/**
	 * MariaDB: a fresh key's reservation as one plain insert, and the read of a row that
	 * refused it; {@code null} elsewhere.
	 */
	private final @Nullable List<String> reserveByInsertSql;

	JdbcReservations(JdbcStatementRunner runner, JdbcRecordRows rows, JdbcIdempotencyDialect dialect, String table,
			List<String> reserveSql, ReserveCommit reserveCommit, boolean transactionalCompletion) {
		this.runner = runner;
		this.rows = rows;
		this.reserveSql = reserveSql;
		this.reserveCommit = reserveCommit;
		this.transactionalCompletion = transactionalCompletion;
		this.asynchronousReserveSql = (reserveCommit != ReserveCommit.OFF) ? dialect.asynchronousCommitReserve(table)
				: null;
		this.reserveByInsertSql = dialect.reserveByInsert(table);
	}

	ReserveResult reserve(ReserveRequest request) {
		List<String> byInsert = this.reserveByInsertSql;
		if (byInsert != null) {
			// One statement for a fresh key and two for a taken one, no transaction,
			// where
			// the write-then-read transaction costs five round trips (autocommit off,
			// write, read, commit, autocommit on). Only a row free to take (expired, or
			// its lease over) goes on to that transaction.
			ReserveResult result = this.runner.oneStatement("reserve", () -> reserveByInsert(byInsert, request));
			if (result != null) {
				return result;
			}
		}
		for (int attempt = 1;; attempt++) {
			@Nullable ReserveResult result;
			try {
				List<String> sql = reserveSql(request);
				result = (sql.size() == 1) ? this.runner.oneStatement("reserve", () -> reserveOnce(sql, request))
						: this.runner.inOwnTransaction("reserve", () -> reserveOnce(sql, request));
			}
			catch (IdempotencyStoreException ex) {
				// A race lost on a new key (H2) or a deadlock victim: the transaction
				// rolled back and changed nothing, so running it again is safe.
				if (!isRetryable(ex.getCause()) || attempt >= JdbcIdempotencyStore.MAX_ATTEMPTS) {
					throw ex;
				}
				continue;
			}
			if (result != null) {
				return result;
			}
			if (attempt >= JdbcIdempotencyStore.MAX_ATTEMPTS) {
				throw new IdempotencyStoreException("Idempotency record " + request.id()
						+ " kept changing during reservation; gave up after " + attempt + " attempts");
			}
		}
	}

	/**
	 * A plain insert of the reservation; if the primary key refuses it, the row that is
	 * there.
	 * @return {@code Acquired} for the insert, {@code Existing} for a row that is not
	 * free to take, {@code null} for one that is (or is gone): reserve it in a
	 * transaction
	 */
	private @Nullable ReserveResult reserveByInsert(List<String> byInsert, ReserveRequest request) {
		try {
			this.rows.reserveStatement(byInsert.get(0), request).update();
			return new ReserveResult.Acquired(false);
		}
		catch (DataIntegrityViolationException ex) {
			if (!isDuplicateKey(ex)) {
				throw ex;
			}
		}
		return this.rows.readReservation(byInsert.get(1), request);
	}

	/** MariaDB's and MySQL's duplicate entry (ER_DUP_ENTRY, 1062). */
	private static boolean isDuplicateKey(DataIntegrityViolationException ex) {
		if (ex instanceof DuplicateKeyException) {
			return true;
		}
		for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getErrorCode() == 1062) {
				return true;
			}
		}
		return false;
	}

	static boolean isRetryable(@Nullable Throwable cause) {
		return JdbcIdempotencyStatements.retryable(cause);
	}

	/** One attempt; {@code null} when the row seen was missing or already outdated. */
	private @Nullable ReserveResult reserveOnce(List<String> sql, ReserveRequest request) {
		for (int i = 0; i < sql.size() - 1; i++) {
			this.rows.reserveStatement(sql.get(i), request).update();
		}
		return this.rows.readReservation(sql.get(sql.size() - 1), request);
	}

	/** The statements of a reservation for this request. */
	private List<String> reserveSql(ReserveRequest request) {
		List<String> asynchronous = this.asynchronousReserveSql;
		if (asynchronous != null && (this.reserveCommit == ReserveCommit.ON
				|| (request.atomicCompletion() && this.transactionalCompletion))) {
			return asynchronous;
		}
		return this.reserveSql;
	}

}
