package dev.idempotency.store.jdbc;

import java.util.List;

/**
 * Every SQL statement of the JDBC store on PostgreSQL. Time is {@code now()}.
 * <p>
 * <b>reserve</b> is one statement. It first reads the row as the statement's snapshot
 * sees it ({@code seen}); only when there is none, or it is acquirable, does
 * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE} try to write. The outer
 * {@code SELECT} returns the written row, or else the row seen. So a replay, a key in
 * flight or a reused key is a plain read: it takes no row lock, needs no transaction id
 * and no WAL flush at commit, and concurrent replays of one key do not queue behind each
 * other. When a concurrent transaction inserted the row after the snapshot was taken,
 * neither branch returns a row, and the store runs it again. Acquirable: expired, or in
 * progress with its lease over and the same fingerprint. An expired row is replaced; a
 * taken-over one gets the new owner and lease but keeps its fingerprint, operation,
 * expiry, creation time and response. A fresh record is created at {@code now()}, a
 * taken-over one keeps its older {@code created_at}: that is {@code taken_over}.
 * <p>
 * <b>recordCompleted</b> is one {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE} the
 * existing row has expired: one row changed means recorded; none means a live row was
 * there (a conflict with a row a concurrent transaction is inserting waits for that
 * transaction, and then judges the committed row). That row is read with
 * {@code findCurrent}, the plain {@link #FIND}: a later statement, which under READ
 * COMMITTED sees the row that the conflict waited for, while the {@code INSERT}'s own
 * snapshot would not.
 */
final class PostgresqlStatements {

	static final String RESERVE = """
			WITH seen AS (
				SELECT owner_token,
					(expires_at <= now() OR (state = 'IN_PROGRESS' AND lease_expires_at <= now()
						AND fingerprint = :fingerprint)) AS acquirable,
					fingerprint, operation, state, lease_expires_at, expires_at, response
				FROM %TABLE% WHERE scope = :scope AND idem_key = :key),
			ins AS (
				INSERT INTO %TABLE% AS cur (scope, idem_key, fingerprint, operation, state, owner_token,
					lease_expires_at, expires_at, created_at, response)
				SELECT :scope, :key, :fingerprint, :operation, 'IN_PROGRESS', :owner,
					(now() + :leaseMicros * INTERVAL '1 microsecond'), (now() + :retentionMicros * INTERVAL '1 microsecond'),
					now(), NULL
				WHERE NOT EXISTS (SELECT 1 FROM seen WHERE NOT seen.acquirable)
				ON CONFLICT (scope, idem_key) DO UPDATE SET
					fingerprint = CASE WHEN cur.expires_at <= now() THEN EXCLUDED.fingerprint ELSE cur.fingerprint END,
					operation = CASE WHEN cur.expires_at <= now() THEN EXCLUDED.operation ELSE cur.operation END,
					state = 'IN_PROGRESS',
					owner_token = EXCLUDED.owner_token,
					lease_expires_at = EXCLUDED.lease_expires_at,
					expires_at = CASE WHEN cur.expires_at <= now() THEN EXCLUDED.expires_at ELSE cur.expires_at END,
					created_at = CASE WHEN cur.expires_at <= now() THEN EXCLUDED.created_at ELSE cur.created_at END,
					response = CASE WHEN cur.expires_at <= now() THEN NULL ELSE cur.response END
				WHERE (cur.expires_at <= now() OR (cur.state = 'IN_PROGRESS' AND cur.lease_expires_at <= now()
					AND cur.fingerprint = EXCLUDED.fingerprint))
				RETURNING owner_token, created_at <> now() AS taken_over, fingerprint, operation, state,
					lease_expires_at, expires_at)
			SELECT owner_token, taken_over, FALSE AS acquirable, fingerprint, operation, state, lease_expires_at,
				expires_at, CAST(NULL AS BYTEA) AS response
			FROM ins
			UNION ALL
			SELECT owner_token, FALSE, acquirable, fingerprint, operation, state, lease_expires_at, expires_at, response
			FROM seen WHERE NOT EXISTS (SELECT 1 FROM ins)
			""";

	private static final String INSERT_CONDITION = "WHERE NOT EXISTS (SELECT 1 FROM seen WHERE NOT seen.acquirable)";

	private static String asynchronousCommit(String reserve) {
		if (!reserve.contains(INSERT_CONDITION)) {
			throw new IllegalStateException("The reserve statement has no insert condition to extend");
		}
		return reserve.replace(INSERT_CONDITION,
				INSERT_CONDITION + " AND set_config('synchronous_commit', 'off', true) = 'off'");
	}

	/**
	 * The reserve whose commit does not wait for its WAL flush. The {@code INSERT} is
	 * only tried after {@code set_config('synchronous_commit', 'off', true)}
	 * (PostgreSQL's function form of {@code SET LOCAL}) has run in the statement's own
	 * transaction, so the setting ends with that transaction and never stays on the
	 * pooled connection; a reserve that writes nothing (a replay, a key in flight)
	 * commits without a flush anyway. Still one statement, one round trip, in
	 * auto-commit.
	 */
	static final String RESERVE_ASYNCHRONOUS_COMMIT = asynchronousCommit(RESERVE);

	static final String COMPLETE = """
			UPDATE %TABLE% SET state = 'COMPLETED', owner_token = NULL, lease_expires_at = NULL, response = :response
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > now()
			""";

	static final String RELEASE = """
			DELETE FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > now()
			""";

	static final String HEARTBEAT = """
			UPDATE %TABLE% SET lease_expires_at = (now() + :leaseMicros * INTERVAL '1 microsecond')
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > now()
			""";

	static final String FIND = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND expires_at > now()
			""";

	/**
	 * SKIP LOCKED: nodes purging at once, or a reserve replacing an expired row, never
	 * wait for each other; the ctid of a locked row cannot change before the DELETE.
	 */
	static final String PURGE = """
			DELETE FROM %TABLE% WHERE ctid = ANY(ARRAY(
				SELECT ctid FROM %TABLE% WHERE expires_at <= now() LIMIT :max FOR UPDATE SKIP LOCKED))
			""";

	static final String RECORD_COMPLETED = """
			INSERT INTO %TABLE% AS cur (scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at,
				expires_at, created_at, response)
			VALUES (:scope, :key, :fingerprint, :operation, 'COMPLETED', NULL, NULL,
				(now() + :retentionMicros * INTERVAL '1 microsecond'), now(), :response)
			ON CONFLICT (scope, idem_key) DO UPDATE SET
				fingerprint = EXCLUDED.fingerprint, operation = EXCLUDED.operation, state = 'COMPLETED',
				owner_token = NULL, lease_expires_at = NULL, expires_at = EXCLUDED.expires_at,
				created_at = EXCLUDED.created_at, response = EXCLUDED.response
			WHERE cur.expires_at <= now()
			""";

	static final String RECORD_OVER_EXPIRED = """
			UPDATE %TABLE% SET fingerprint = :fingerprint, operation = :operation, state = 'COMPLETED',
				owner_token = NULL, lease_expires_at = NULL, expires_at = (now() + :retentionMicros * INTERVAL '1 microsecond'),
				created_at = now(), response = :response
			WHERE scope = :scope AND idem_key = :key AND expires_at <= now()
			""";

	static final String INSPECT = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > now()
			""";

	static final String REMOVE = """
			DELETE FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > now()
			""";

	/** Scopes in code point order ("C"), whatever the database's collation. */
	static final String INSPECT_BY_KEY = """
			SELECT scope, fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE idem_key = :key AND expires_at > now() ORDER BY scope COLLATE "C" LIMIT :max
			""";

	static final JdbcIdempotencyStatements STATEMENTS = new JdbcIdempotencyStatements(List.of(RESERVE), COMPLETE,
			RELEASE, HEARTBEAT, FIND, PURGE, RECORD_COMPLETED, FIND, RECORD_OVER_EXPIRED, INSPECT, REMOVE,
			INSPECT_BY_KEY);

	/**
	 * The same statements, but a reserve that writes commits asynchronously. A recorded
	 * response is final, so its recording stays durable.
	 */
	static final JdbcIdempotencyStatements ASYNCHRONOUS_COMMIT_RESERVE_STATEMENTS = new JdbcIdempotencyStatements(
			List.of(RESERVE_ASYNCHRONOUS_COMMIT), COMPLETE, RELEASE, HEARTBEAT, FIND, PURGE, RECORD_COMPLETED, FIND,
			RECORD_OVER_EXPIRED, INSPECT, REMOVE, INSPECT_BY_KEY);

	/**
	 * The table, its primary key and its two indexes, as the starter's Liquibase
	 * changelog makes them; each statement leaves what exists alone. Run by the R2DBC
	 * store's schema set-up.
	 */
	static final List<String> CREATE_TABLE = List.of("""
			CREATE TABLE IF NOT EXISTS %TABLE% (
				scope VARCHAR(200) NOT NULL,
				idem_key VARCHAR(64) NOT NULL,
				fingerprint VARCHAR(64) NOT NULL,
				operation VARCHAR(255) NOT NULL,
				state VARCHAR(16) NOT NULL,
				owner_token VARCHAR(64),
				lease_expires_at TIMESTAMP WITH TIME ZONE,
				expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
				created_at TIMESTAMP WITH TIME ZONE NOT NULL,
				response BYTEA,
				CONSTRAINT %TABLE%_pk PRIMARY KEY (scope, idem_key)
			)""", "CREATE INDEX IF NOT EXISTS %TABLE%_expires_idx ON %TABLE% (expires_at)",
			"CREATE INDEX IF NOT EXISTS %TABLE%_key_idx ON %TABLE% (idem_key)");

	private PostgresqlStatements() {
	}

}
