package dev.idempotency.store.jdbc;

import java.util.List;

/**
 * Every SQL statement of the JDBC store on H2 (development and tests). Time is
 * {@code CURRENT_TIMESTAMP(6)}.
 * <p>
 * <b>reserve</b> is a conditional {@code MERGE}, then a {@code SELECT} in the same
 * transaction (two round trips). Two transactions racing to insert the same new key end
 * with a duplicate key in one of them; the store runs that reservation again, and then
 * sees the row. Acquirable: expired, or in progress with its lease over and the same
 * fingerprint. An expired row is replaced; a taken-over one gets the new owner and lease
 * but keeps its fingerprint, operation, expiry, creation time and response. A fresh
 * record has {@code lease_expires_at = created_at +
 * lease} exactly; a taken-over one keeps its older {@code created_at}: that is
 * {@code taken_over}.
 * <p>
 * <b>recordCompleted</b> is a {@code MERGE} that inserts, or replaces a row that has
 * expired (one row changed), and leaves a live row alone (none changed). A race on a new
 * key ends with a duplicate key in the loser, which then reads the winner's row.
 */
final class H2Statements {

	static final String RESERVE_WRITE = """
			MERGE INTO %TABLE% AS cur
			USING (VALUES (CAST(:scope AS VARCHAR(200)), CAST(:key AS VARCHAR(64)))) AS req(scope, idem_key)
			ON cur.scope = req.scope AND cur.idem_key = req.idem_key
			WHEN MATCHED AND (cur.expires_at <= CURRENT_TIMESTAMP(6) OR (cur.state = 'IN_PROGRESS'
				AND cur.lease_expires_at <= CURRENT_TIMESTAMP(6) AND cur.fingerprint = :fingerprint)) THEN UPDATE SET
				fingerprint = CASE WHEN cur.expires_at <= CURRENT_TIMESTAMP(6) THEN :fingerprint ELSE cur.fingerprint END,
				operation = CASE WHEN cur.expires_at <= CURRENT_TIMESTAMP(6) THEN :operation ELSE cur.operation END,
				state = 'IN_PROGRESS',
				owner_token = :owner,
				lease_expires_at = DATEADD(MICROSECOND, :leaseMicros, CURRENT_TIMESTAMP(6)),
				expires_at = CASE WHEN cur.expires_at <= CURRENT_TIMESTAMP(6)
					THEN DATEADD(MICROSECOND, :retentionMicros, CURRENT_TIMESTAMP(6)) ELSE cur.expires_at END,
				created_at = CASE WHEN cur.expires_at <= CURRENT_TIMESTAMP(6) THEN CURRENT_TIMESTAMP(6) ELSE cur.created_at END,
				response = CASE WHEN cur.expires_at <= CURRENT_TIMESTAMP(6) THEN NULL ELSE cur.response END
			WHEN NOT MATCHED THEN INSERT (scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at,
				expires_at, created_at, response)
			VALUES (:scope, :key, :fingerprint, :operation, 'IN_PROGRESS', :owner,
				DATEADD(MICROSECOND, :leaseMicros, CURRENT_TIMESTAMP(6)),
				DATEADD(MICROSECOND, :retentionMicros, CURRENT_TIMESTAMP(6)), CURRENT_TIMESTAMP(6), NULL)
			""";

	static final String RESERVE_READ = """
			SELECT owner_token,
				(owner_token = :owner AND lease_expires_at <> DATEADD(MICROSECOND, :leaseMicros, created_at)) AS taken_over,
				(expires_at <= CURRENT_TIMESTAMP(6) OR (state = 'IN_PROGRESS' AND lease_expires_at <= CURRENT_TIMESTAMP(6)
					AND fingerprint = :fingerprint)) AS acquirable,
				fingerprint, operation, state, lease_expires_at, expires_at, response
			FROM %TABLE% WHERE scope = :scope AND idem_key = :key
			""";

	static final String COMPLETE = """
			UPDATE %TABLE% SET state = 'COMPLETED', owner_token = NULL, lease_expires_at = NULL, response = :response
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String RELEASE = """
			DELETE FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String HEARTBEAT = """
			UPDATE %TABLE% SET lease_expires_at = DATEADD(MICROSECOND, :leaseMicros, CURRENT_TIMESTAMP(6))
			WHERE scope = :scope AND idem_key = :key AND owner_token = :owner AND state = 'IN_PROGRESS'
				AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String FIND = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response FROM %TABLE%
			WHERE scope = :scope AND idem_key = :key AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String PURGE = """
			DELETE FROM %TABLE% WHERE expires_at <= CURRENT_TIMESTAMP(6) FETCH FIRST :max ROWS ONLY
			""";

	static final String RECORD_COMPLETED = """
			MERGE INTO %TABLE% AS cur
			USING (VALUES (CAST(:scope AS VARCHAR(200)), CAST(:key AS VARCHAR(64)))) AS req(scope, idem_key)
			ON cur.scope = req.scope AND cur.idem_key = req.idem_key
			WHEN MATCHED AND cur.expires_at <= CURRENT_TIMESTAMP(6) THEN UPDATE SET
				fingerprint = :fingerprint, operation = :operation, state = 'COMPLETED', owner_token = NULL,
				lease_expires_at = NULL, expires_at = DATEADD(MICROSECOND, :retentionMicros, CURRENT_TIMESTAMP(6)),
				created_at = CURRENT_TIMESTAMP(6), response = :response
			WHEN NOT MATCHED THEN INSERT (scope, idem_key, fingerprint, operation, state, owner_token, lease_expires_at,
				expires_at, created_at, response)
			VALUES (:scope, :key, :fingerprint, :operation, 'COMPLETED', NULL, NULL,
				DATEADD(MICROSECOND, :retentionMicros, CURRENT_TIMESTAMP(6)), CURRENT_TIMESTAMP(6), :response)
			""";

	static final String RECORD_OVER_EXPIRED = """
			UPDATE %TABLE% SET fingerprint = :fingerprint, operation = :operation, state = 'COMPLETED',
				owner_token = NULL, lease_expires_at = NULL,
				expires_at = DATEADD(MICROSECOND, :retentionMicros, CURRENT_TIMESTAMP(6)),
				created_at = CURRENT_TIMESTAMP(6), response = :response
			WHERE scope = :scope AND idem_key = :key AND expires_at <= CURRENT_TIMESTAMP(6)
			""";

	static final String INSPECT = """
			SELECT fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String REMOVE = """
			DELETE FROM %TABLE% WHERE scope = :scope AND idem_key = :key AND expires_at > CURRENT_TIMESTAMP(6)
			""";

	static final String INSPECT_BY_KEY = """
			SELECT scope, fingerprint, operation, state, lease_expires_at, expires_at, response, created_at, owner_token
			FROM %TABLE% WHERE idem_key = :key AND expires_at > CURRENT_TIMESTAMP(6) ORDER BY scope LIMIT :max
			""";

	static final JdbcIdempotencyStatements STATEMENTS = new JdbcIdempotencyStatements(
			List.of(RESERVE_WRITE, RESERVE_READ), COMPLETE, RELEASE, HEARTBEAT, FIND, PURGE, RECORD_COMPLETED, FIND,
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
				lease_expires_at TIMESTAMP(6) WITH TIME ZONE,
				expires_at TIMESTAMP(6) WITH TIME ZONE NOT NULL,
				created_at TIMESTAMP(6) WITH TIME ZONE NOT NULL,
				response BLOB,
				CONSTRAINT %TABLE%_pk PRIMARY KEY (scope, idem_key)
			)""", "CREATE INDEX IF NOT EXISTS %TABLE%_expires_idx ON %TABLE% (expires_at)",
			"CREATE INDEX IF NOT EXISTS %TABLE%_key_idx ON %TABLE% (idem_key)");

	private H2Statements() {
	}

}
