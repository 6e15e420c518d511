package dev.idempotency.store.jdbc;

import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * Every SQL statement of the JDBC store, for every database it supports. Each statement judges
 * time by the database's clock ({@link #now()}), never by the JVM's, so that all nodes agree on
 * leases and expiry.
 * <p>
 * Named parameters used by the statements: {@code scope}, {@code key}, {@code fingerprint},
 * {@code operation}, {@code owner}, {@code leaseMicros}, {@code retentionMicros},
 * {@code response}, {@code max}.
 * <p>
 * The reserve statements return at most one row with the columns {@code owner_token},
 * {@code taken_over}, {@code acquirable}, {@code fingerprint}, {@code operation}, {@code state},
 * {@code lease_expires_at}, {@code expires_at} and {@code response}. The caller owns the record
 * when {@code owner_token} is its token. Otherwise the row is the record as it stands, and
 * {@code acquirable} says that the row seen is already outdated (it would have been acquired):
 * the store then runs the reservation again, as it does when no row comes back.
 */
public enum JdbcIdempotencyDialect {

	/**
	 * PostgreSQL: one statement. It first reads the row as the statement's snapshot sees it
	 * ({@code seen}); only when there is none, or it is acquirable, does
	 * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE} try to write. The outer {@code SELECT}
	 * returns the written row, or else the row seen. So a replay, a key in flight or a reused key
	 * is a plain read: it takes no row lock, needs no transaction id and no WAL flush at commit,
	 * and concurrent replays of one key do not queue behind each other. When a concurrent
	 * transaction inserted the row after the snapshot was taken, neither branch returns a row, and
	 * the store runs it again.
	 */
	POSTGRESQL("now()") {

		@Override
		String plusMicros(String timestamp, String micros) {
			return "(" + timestamp + " + :" + micros + " * INTERVAL '1 microsecond')";
		}

		@Override
		List<String> reserve(String table) {
			String now = now();
			String values = insertValues();
			return List.of("WITH seen AS (SELECT owner_token, " + acquirable("", ":fingerprint") + " AS acquirable, fingerprint,"
					+ " operation, state, lease_expires_at, expires_at, response FROM " + table
					+ " WHERE scope = :scope AND idem_key = :key),"
					// Write only when the row seen is absent or acquirable: anything else is a read.
					+ " ins AS (INSERT INTO " + table + " AS cur " + insertColumns() + " SELECT "
					+ values.substring(1, values.length() - 1)
					+ " WHERE NOT EXISTS (SELECT 1 FROM seen WHERE NOT seen.acquirable)"
					+ " ON CONFLICT (scope, idem_key) DO UPDATE SET"
					+ acquireAssignments((column) -> "EXCLUDED." + column)
					+ " WHERE " + acquirable("cur.", "EXCLUDED.fingerprint")
					// A fresh record is created at now(); a taken-over one keeps its older created_at.
					+ " RETURNING owner_token, created_at <> " + now + " AS taken_over, fingerprint, operation, state,"
					+ " lease_expires_at, expires_at)"
					+ " SELECT owner_token, taken_over, FALSE AS acquirable, fingerprint, operation, state,"
					+ " lease_expires_at, expires_at, CAST(NULL AS BYTEA) AS response FROM ins"
					+ " UNION ALL SELECT owner_token, FALSE, acquirable, fingerprint, operation, state,"
					+ " lease_expires_at, expires_at, response FROM seen WHERE NOT EXISTS (SELECT 1 FROM ins)");
		}

		@Override
		String purge(String table) {
			// SKIP LOCKED: nodes purging at once, or a reserve replacing an expired row, never wait
			// for each other; the ctid of a locked row cannot change before the DELETE.
			return "DELETE FROM " + table + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + table
					+ " WHERE expires_at <= " + now() + " LIMIT :max FOR UPDATE SKIP LOCKED))";
		}

	},

	/**
	 * MariaDB and MySQL: {@code INSERT ... ON DUPLICATE KEY UPDATE}, then a {@code SELECT} of the
	 * row in the same transaction (two round trips). The write is atomic on its own and leaves the
	 * row locked until commit, so the {@code SELECT} reads exactly what the write left. Times are
	 * {@code DATETIME(6)} in UTC ({@code UTC_TIMESTAMP(6)}), so the session time zone never matters.
	 */
	MARIADB("UTC_TIMESTAMP(6)") {

		@Override
		String plusMicros(String timestamp, String micros) {
			return "(" + timestamp + " + INTERVAL :" + micros + " MICROSECOND)";
		}

		@Override
		List<String> reserve(String table) {
			String now = now();
			// Assignments run left to right and each sees the columns already assigned. owner_token
			// goes first, judged on the old row; the others then test "owner_token is the new one"
			// (tokens are unique), and expires_at, which they also test, goes last.
			String acquired = "owner_token <=> VALUES(owner_token)";
			String replaced = acquired + " AND expires_at <= " + now;
			String write = "INSERT INTO " + table + " " + insertColumns() + " VALUES " + insertValues()
					+ " ON DUPLICATE KEY UPDATE"
					+ " owner_token = IF(" + acquirable("", "VALUES(fingerprint)") + ", VALUES(owner_token), owner_token),"
					+ " fingerprint = IF(" + replaced + ", VALUES(fingerprint), fingerprint),"
					+ " operation = IF(" + replaced + ", VALUES(operation), operation),"
					+ " response = IF(" + replaced + ", NULL, response),"
					+ " created_at = IF(" + replaced + ", VALUES(created_at), created_at),"
					+ " state = IF(" + acquired + ", 'IN_PROGRESS', state),"
					+ " lease_expires_at = IF(" + acquired + ", VALUES(lease_expires_at), lease_expires_at),"
					+ " expires_at = IF(" + replaced + ", VALUES(expires_at), expires_at)";
			return List.of(write, readReserved(table, "<=>"));
		}

		@Override
		String purge(String table) {
			return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " ORDER BY expires_at LIMIT :max";
		}

		@Override
		@Nullable Instant readInstant(ResultSet resultSet, String column) throws SQLException {
			LocalDateTime value = resultSet.getObject(column, LocalDateTime.class);
			return (value != null) ? value.toInstant(ZoneOffset.UTC) : null;
		}

	},

	/**
	 * H2, for development and tests: a conditional {@code MERGE}, then a {@code SELECT} in the same
	 * transaction (two round trips). Two transactions racing to insert the same new key end with a
	 * duplicate key in one of them; the store runs that reservation again, and then sees the row.
	 */
	H2("CURRENT_TIMESTAMP(6)") {

		@Override
		String plusMicros(String timestamp, String micros) {
			return "DATEADD(MICROSECOND, :" + micros + ", " + timestamp + ")";
		}

		@Override
		List<String> reserve(String table) {
			String now = now();
			Map<String, String> incoming = Map.of("fingerprint", ":fingerprint", "operation", ":operation",
					"owner_token", ":owner", "lease_expires_at", plusMicros(now, "leaseMicros"), "expires_at",
					plusMicros(now, "retentionMicros"), "created_at", now);
			String write = "MERGE INTO " + table + " AS cur USING (VALUES (CAST(:scope AS VARCHAR(200)),"
					+ " CAST(:key AS VARCHAR(64)))) AS req(scope, idem_key)"
					+ " ON cur.scope = req.scope AND cur.idem_key = req.idem_key"
					+ " WHEN MATCHED AND " + acquirable("cur.", ":fingerprint") + " THEN UPDATE SET"
					+ acquireAssignments(incoming::get)
					+ " WHEN NOT MATCHED THEN INSERT " + insertColumns() + " VALUES " + insertValues();
			return List.of(write, readReserved(table, "="));
		}

		@Override
		String purge(String table) {
			return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " FETCH FIRST :max ROWS ONLY";
		}

	};

	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");

	private final String now;

	JdbcIdempotencyDialect(String now) {
		this.now = now;
	}

	/** The SQL expression for the database's current time. */
	String now() {
		return this.now;
	}

	/** {@code timestamp} plus the named parameter {@code micros} microseconds, in SQL. */
	abstract String plusMicros(String timestamp, String micros);

	/** The reserve statements, run in order in one transaction; the last one returns the row. */
	abstract List<String> reserve(String table);

	/** Deletes at most {@code :max} expired records. */
	abstract String purge(String table);

	/** Reads a timestamp column written by this dialect's statements. */
	/** Reads a timestamp column; PostgreSQL and H2 hand it out with its offset, MariaDB overrides. */
	@Nullable Instant readInstant(ResultSet resultSet, String column) throws SQLException {
		OffsetDateTime value = resultSet.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

	String complete(String table) {
		return "UPDATE " + table + " SET state = 'COMPLETED', owner_token = NULL, lease_expires_at = NULL,"
				+ " response = :response WHERE " + ownedAndLive();
	}

	String release(String table) {
		return "DELETE FROM " + table + " WHERE " + ownedAndLive();
	}

	String heartbeat(String table) {
		return "UPDATE " + table + " SET lease_expires_at = " + plusMicros(now(), "leaseMicros") + " WHERE "
				+ ownedAndLive();
	}

	String find(String table) {
		return "SELECT fingerprint, operation, state, lease_expires_at, expires_at, response FROM " + table
				+ " WHERE scope = :scope AND idem_key = :key AND expires_at > " + now();
	}

	/** The fence of every owner transition: still ours, still in progress, not expired. */
	private String ownedAndLive() {
		return "scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS' AND expires_at > "
				+ now();
	}

	String insertColumns() {
		return "(scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at, expires_at,"
				+ " created_at, response)";
	}

	String insertValues() {
		return "(:scope, :key, :fingerprint, :operation, 'IN_PROGRESS', :owner, " + plusMicros(now(), "leaseMicros")
				+ ", " + plusMicros(now(), "retentionMicros") + ", " + now() + ", NULL)";
	}

	/**
	 * Whether the row ({@code row} is its qualifier, {@code "cur."} or empty) would be acquired
	 * right now by a reservation whose fingerprint is the SQL expression {@code fingerprint}:
	 * expired, or in progress with its lease over and the same fingerprint.
	 */
	String acquirable(String row, String fingerprint) {
		String now = now();
		return "(" + row + "expires_at <= " + now + " OR (" + row + "state = 'IN_PROGRESS' AND " + row
				+ "lease_expires_at <= " + now + " AND " + row + "fingerprint = " + fingerprint + "))";
	}

	/**
	 * The assignments of a reservation that acquires row {@code cur}, {@code incoming} giving the
	 * SQL value of each new column: an expired row is replaced, a taken-over one gets the new owner
	 * and lease but keeps its fingerprint, operation, expiry, creation time and response.
	 */
	String acquireAssignments(Function<String, String> incoming) {
		String expired = "cur.expires_at <= " + now();
		return " fingerprint = CASE WHEN " + expired + " THEN " + incoming.apply("fingerprint")
				+ " ELSE cur.fingerprint END,"
				+ " operation = CASE WHEN " + expired + " THEN " + incoming.apply("operation") + " ELSE cur.operation END,"
				+ " state = 'IN_PROGRESS', owner_token = " + incoming.apply("owner_token") + ","
				+ " lease_expires_at = " + incoming.apply("lease_expires_at") + ","
				+ " expires_at = CASE WHEN " + expired + " THEN " + incoming.apply("expires_at")
				+ " ELSE cur.expires_at END,"
				+ " created_at = CASE WHEN " + expired + " THEN " + incoming.apply("created_at")
				+ " ELSE cur.created_at END,"
				+ " response = CASE WHEN " + expired + " THEN NULL ELSE cur.response END";
	}

	/**
	 * The read after a two-statement reservation. A fresh record has lease_expires_at = created_at
	 * + lease exactly; a taken-over one keeps its older created_at. {@code ownerEquals} compares
	 * owner tokens ({@code <=>} on MariaDB, NULL-safe).
	 */
	String readReserved(String table, String ownerEquals) {
		return "SELECT owner_token, (owner_token " + ownerEquals + " :owner AND lease_expires_at <> "
				+ plusMicros("created_at", "leaseMicros") + ") AS taken_over, " + acquirable("", ":fingerprint")
				+ " AS acquirable, fingerprint, operation, state, lease_expires_at, expires_at, response FROM "
				+ table + " WHERE scope = :scope AND idem_key = :key";
	}

	/**
	 * Checks that {@code tableName} is a plain SQL identifier (letters, digits, underscores, at
	 * most 50 characters, leaving room for the index name suffix within every database's
	 * identifier limit), since it is written into the statements as it is.
	 * @param tableName the configured table name
	 * @return the table name
	 * @throws IllegalArgumentException if it is not a plain identifier
	 */
	public static String validateTableName(String tableName) {
		if (tableName == null || !IDENTIFIER.matcher(tableName).matches()) {
			throw new IllegalArgumentException("Idempotency table name '" + tableName
					+ "' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 50 characters)");
		}
		return tableName;
	}

	/**
	 * Detects the dialect from the database product name the JDBC driver reports.
	 * @param dataSource the data source of the store
	 * @return the dialect
	 * @throws IllegalStateException if the database is not one the store supports
	 */
	public static JdbcIdempotencyDialect detect(DataSource dataSource) {
		String product;
		try {
			product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("Cannot detect the idempotency store's database", ex);
		}
		return fromProductName(product);
	}

	static JdbcIdempotencyDialect fromProductName(@Nullable String product) {
		String name = (product != null) ? product.toLowerCase(Locale.ROOT) : "";
		if (name.contains("postgresql")) {
			return POSTGRESQL;
		}
		if (name.contains("mariadb") || name.contains("mysql")) {
			return MARIADB;
		}
		if (name.equals("h2")) {
			return H2;
		}
		throw new IllegalStateException("The JDBC idempotency store does not support '" + product
				+ "'; supported: PostgreSQL, MariaDB, MySQL, H2 (set idempotency.store.jdbc.dialect to force one)");
	}

}
