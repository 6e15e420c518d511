package dev.idempotency.store.jdbc;

import java.util.List;

/**
 * Every SQL statement of the JDBC store on MariaDB and MySQL. Times are
 * {@code DATETIME(6)} in UTC ({@code UTC_TIMESTAMP(6)}), so the session time zone never
 * matters.
 * <p>
 * <b>reserve</b> is {@code INSERT ... ON DUPLICATE KEY UPDATE}, then a {@code SELECT} of
 * the row in the same transaction (two round trips). The write is atomic on its own and
 * leaves the row locked until commit, so the {@code SELECT} reads exactly what the write
 * left. The assignments run left to right and each sees the columns already assigned:
 * {@code owner_token} goes first, judged on the old row (acquirable: expired, or in
 * progress with its lease over and the same fingerprint); the others then test
 * "{@code owner_token} is the new one" (tokens are unique), and {@code expires_at}, which
 * they also test, goes last. A fresh record has
 * {@code lease_expires_at = created_at + lease} exactly; a taken-over one keeps its older
 * {@code created_at}: that is {@code taken_over}. {@code <=>} is the NULL-safe
 * comparison.
 */
final class MariaDbStatements {

	/**
	 * A fresh key's reservation in one statement, without a transaction of its own: a
	 * plain insert, refused by the primary key when a row is there (then
	 * {@link #RESERVE_READ} tells whose it is, and only a row free to take runs the
	 * two-statement transaction). Not {@code INSERT IGNORE}: that would turn a value too
	 * long for its column into a truncation warning.
	 */
	static final String RESERVE_INSERT = """
			INSERT INTO %TABLE% (scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at,
				expires_at, created_at, response)
			VALUES (:scope, :key, :fingerprint, :operation, 'IN_PROGRESS', :owner,
				(UTC_TIMESTAMP(6) + INTERVAL :leaseMicros MICROSECOND), (UTC_TIMESTAMP(6) + INTERVAL :retentionMicros MICROSECOND),
				UTC_TIMESTAMP(6), NULL)
			""";

	static final String RESERVE_WRITE = RESERVE_INSERT + """
			ON DUPLICATE KEY UPDATE
				owner_token = IF((expires_at <= UTC_TIMESTAMP(6) OR (state = 'IN_PROGRESS'
					AND lease_expires_at <= UTC_TIMESTAMP(6) AND fingerprint = VALUES(fingerprint))),
					VALUES(owner_token), owner_token),
				fingerprint = IF(owner_token <=> VALUES(owner_token) AND expires_at <= UTC_TIMESTAMP(6),
					VALUES(fingerprint), fingerprint),
				operation = IF(owner_token <=> VALUES(owner_token) AND expires_at <= UTC_TIMESTAMP(6),
					VALUES(operation), operation),
				response = IF(owner_token <=> VALUES(owner_token) AND expires_at <= UTC_TIMESTAMP(6), NULL, response),
				created_at = IF(owner_token <=> VALUES(owner_token) AND expires_at <= UTC_TIMESTAMP(6),
					VALUES(created_at), created_at),
				state = IF(owner_token <=> VALUES(owner_token), 'IN_PROGRESS', state),
				lease_expires_at = IF(owner_token <=> VALUES(owner_token), VALUES(lease_expires_at), lease_expires_at),
				expires_at = IF(owner_token <=> VALUES(owner_token) AND expires_at <= UTC_TIMESTAMP(6),
					VALUES(expires_at), expires_at)
			""";

	static final String RESERVE_READ = """
			SELECT owner_token,
				(owner_token <=> :owner AND lease_expires_at <> (created_at + INTERVAL :leaseMicros MICROSECOND)) AS taken_over,
				(expires_at <= UTC_TIMESTAMP(6) OR (state = 'IN_PROGRESS' AND lease_expires_at <= UTC_TIMESTAMP(6)
					AND fingerprint = :fingerprint)) AS acquirable,
				fingerprint, operation, state, lease_expires_at, expires_at, response
			FROM %TABLE% WHERE scope = :scope AND idem_key = :key
			""";

	static final String COMPLETE = """
			UPDATE %TABLE% SET state = 'COMPLETED', owner_token = NULL, lease_expires_at = NULL, response = :response
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > UTC_TIMESTAMP(6)
			""";

	static final String RELEASE = """
			DELETE FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > UTC_TIMESTAMP(6)
			""";

	static final String HEARTBEAT = """
			UPDATE %TABLE% SET lease_expires_at = (UTC_TIMESTAMP(6) + INTERVAL :leaseMicros MICROSECOND)
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > UTC_TIMESTAMP(6)
			""";

	static final String FIND = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND expires_at > UTC_TIMESTAMP(6)
			""";

	static final String PURGE = """
			DELETE FROM %TABLE% WHERE expires_at <= UTC_TIMESTAMP(6) ORDER BY expires_at LIMIT :max
			""";

	static final String RECORD_COMPLETED = """
			INSERT INTO %TABLE% (scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at,
				expires_at, created_at, response)
			VALUES (:scope, :key, :fingerprint, :operation, 'COMPLETED', NULL, NULL,
				(UTC_TIMESTAMP(6) + INTERVAL :retentionMicros MICROSECOND), UTC_TIMESTAMP(6), :response)
			""";

	static final String FIND_CURRENT = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND expires_at > UTC_TIMESTAMP(6)
			LOCK IN SHARE MODE
			""";

	static final String RECORD_OVER_EXPIRED = """
			UPDATE %TABLE% SET fingerprint = :fingerprint, operation = :operation, state = 'COMPLETED',
				owner_token = NULL, lease_expires_at = NULL,
				expires_at = (UTC_TIMESTAMP(6) + INTERVAL :retentionMicros MICROSECOND),
				created_at = UTC_TIMESTAMP(6), response = :response
			WHERE scope = :scope AND idem_key = :key AND expires_at <= UTC_TIMESTAMP(6)
			""";

	static final String INSPECT = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > UTC_TIMESTAMP(6)
			""";

	static final String REMOVE = """
			DELETE FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > UTC_TIMESTAMP(6)
			""";

	/** Scopes in their binary collation's order (utf8mb4_nopad_bin). */
	static final String INSPECT_BY_KEY = """
			SELECT scope, fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE idem_key = :key AND expires_at > UTC_TIMESTAMP(6) ORDER BY scope LIMIT :max
			""";

	static final JdbcIdempotencyStatements STATEMENTS = new JdbcIdempotencyStatements(
			List.of(RESERVE_WRITE, RESERVE_READ), COMPLETE, RELEASE, HEARTBEAT, FIND, PURGE, RECORD_COMPLETED,
			FIND_CURRENT, RECORD_OVER_EXPIRED, INSPECT, REMOVE, INSPECT_BY_KEY);

	/**
	 * The table, its primary key and its two indexes, as the starter's Liquibase
	 * changelog makes them (scope and key compared as sent: utf8mb4_nopad_bin); each
	 * statement leaves what exists alone. Run by the R2DBC store's schema set-up.
	 */
	static final List<String> CREATE_TABLE = List.of("""
			CREATE TABLE IF NOT EXISTS %TABLE% (
				scope VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
				idem_key VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
				fingerprint VARCHAR(64) NOT NULL,
				operation VARCHAR(255) NOT NULL,
				state VARCHAR(16) NOT NULL,
				owner_token VARCHAR(64),
				lease_expires_at DATETIME(6),
				expires_at DATETIME(6) NOT NULL,
				created_at DATETIME(6) NOT NULL,
				response LONGBLOB,
				CONSTRAINT %TABLE%_pk PRIMARY KEY (scope, idem_key),
				INDEX %TABLE%_expires_idx (expires_at),
				INDEX %TABLE%_key_idx (idem_key)
			)""");

	private MariaDbStatements() {
	}

}
