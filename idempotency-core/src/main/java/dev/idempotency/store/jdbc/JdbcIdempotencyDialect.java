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
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * The databases the JDBC store speaks. The SQL of each is in a class of its own, as whole
 * statements: {@link PostgresqlStatements}, {@link MariaDbStatements} (also MySQL),
 * {@link H2Statements}. Each statement judges time by the database's clock, never by the
 * JVM's, so that all nodes agree on leases and expiry.
 *
 * @since 0.1.0
 */
public enum JdbcIdempotencyDialect {

	/** PostgreSQL: reserve is one statement. */
	POSTGRESQL(PostgresqlStatements.STATEMENTS),

	/** MariaDB and MySQL: reserve is a write and a read of the locked row. */
	MARIADB(MariaDbStatements.STATEMENTS) {

		@Override
		@Nullable Instant readInstant(ResultSet resultSet, String column) throws SQLException {
			// DATETIME(6) written in UTC.
			LocalDateTime value = resultSet.getObject(column, LocalDateTime.class);
			return (value != null) ? value.toInstant(ZoneOffset.UTC) : null;
		}

	},

	/** H2, for development and tests: reserve is a conditional MERGE and a read. */
	H2(H2Statements.STATEMENTS);

	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");

	private final JdbcIdempotencyStatements statements;

	JdbcIdempotencyDialect(JdbcIdempotencyStatements statements) {
		this.statements = statements;
	}

	/**
	 * This database's statements on {@code table}. Internal: public only for the R2DBC
	 * store, which runs the same statements; not supported.
	 * @param table the table, a plain SQL identifier ({@link #validateTableName})
	 * @return the statements
	 */
	public JdbcIdempotencyStatements statements(String table) {
		return this.statements.forTable(validateTableName(table));
	}

	/**
	 * MariaDB's and MySQL's reservation of a fresh key, without a transaction: a plain
	 * insert, and when the primary key refuses it, the read of the row that is there;
	 * {@code null} on the other databases. Only a row free to take goes on to the
	 * transaction of {@link JdbcIdempotencyStatements#reserve()}. Internal: public only
	 * for the R2DBC store; not supported.
	 * @param table the table, a plain SQL identifier ({@link #validateTableName})
	 * @return the insert and the read, or {@code null}
	 */
	public @Nullable List<String> reserveByInsert(String table) {
		if (this != MARIADB) {
			return null;
		}
		String validated = validateTableName(table);
		return List.of(MariaDbStatements.RESERVE_INSERT.replace(JdbcIdempotencyStatements.TABLE, validated),
				MariaDbStatements.RESERVE_READ.replace(JdbcIdempotencyStatements.TABLE, validated));
	}

	/**
	 * PostgreSQL's reservation whose commit does not wait for its WAL flush
	 * ({@code set_config('synchronous_commit', 'off', true)} in the same statement; see
	 * {@link JdbcIdempotencyStore.ReserveCommit}); {@code null} on the other databases,
	 * which have no per-transaction equivalent. Internal: public only for the R2DBC
	 * store; not supported.
	 * @param table the table, a plain SQL identifier ({@link #validateTableName})
	 * @return the reserve statements, or {@code null}
	 */
	public @Nullable List<String> asynchronousCommitReserve(String table) {
		if (this != POSTGRESQL) {
			return null;
		}
		return PostgresqlStatements.ASYNCHRONOUS_COMMIT_RESERVE_STATEMENTS.forTable(validateTableName(table)).reserve();
	}

	/**
	 * Which reservations commit without waiting for their WAL flush on this database when
	 * {@code requested} is set: {@code requested} on PostgreSQL, every reservation
	 * durable ({@link JdbcIdempotencyStore.ReserveCommit#OFF}) elsewhere. Internal:
	 * public only for the R2DBC store; not supported.
	 * @param requested the setting asked for
	 * @return the setting in effect
	 * @throws IllegalArgumentException for {@link JdbcIdempotencyStore.ReserveCommit#ON}
	 * on another database than PostgreSQL
	 */
	public JdbcIdempotencyStore.ReserveCommit reserveCommit(JdbcIdempotencyStore.ReserveCommit requested) {
		if (this == POSTGRESQL) {
			return requested;
		}
		if (requested == JdbcIdempotencyStore.ReserveCommit.ON) {
			throw new IllegalArgumentException("An asynchronous commit of the reservation (synchronous_commit = off)"
					+ " exists on PostgreSQL only, not on " + this);
		}
		return JdbcIdempotencyStore.ReserveCommit.OFF;
	}

	/**
	 * The statements that create this database's table of records on {@code table}, with
	 * the columns, primary key and indexes of the starter's Liquibase changelog, where
	 * they do not exist yet. Internal: public only for the R2DBC store's schema set-up,
	 * which has no JDBC connection for Liquibase; not supported.
	 * @param table the table, a plain SQL identifier ({@link #validateTableName})
	 * @return the statements, in order
	 */
	public List<String> createTable(String table) {
		String validated = validateTableName(table);
		List<String> ddl = switch (this) {
			case POSTGRESQL -> PostgresqlStatements.CREATE_TABLE;
			case MARIADB -> MariaDbStatements.CREATE_TABLE;
			case H2 -> H2Statements.CREATE_TABLE;
		};
		return ddl.stream().map((statement) -> statement.replace(JdbcIdempotencyStatements.TABLE, validated)).toList();
	}

	/** Reads a timestamp column; PostgreSQL and H2 hand it out with its offset. */
	@Nullable Instant readInstant(ResultSet resultSet, String column) throws SQLException {
		OffsetDateTime value = resultSet.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

	/**
	 * Checks that {@code tableName} is a plain SQL identifier (letters, digits,
	 * underscores, at most 50 characters, leaving room for the index name suffix within
	 * every database's identifier limit), since it is written into the statements as it
	 * is.
	 * @param tableName the configured table name
	 * @return the table name
	 * @throws IllegalArgumentException if it is not a plain identifier
	 */
	public static String validateTableName(@Nullable String tableName) {
		if (tableName == null || !IDENTIFIER.matcher(tableName).matches()) {
			throw new IllegalArgumentException("Idempotency table name '" + tableName
					+ "' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 50 characters)");
		}
		return tableName;
	}

	/**
	 * Detects the dialect from the database product name the JDBC driver reports (the
	 * names Boot's {@code DatabaseDriver} knows them by; this module does without Boot).
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
		String name = (product != null) ? product.trim().toLowerCase(Locale.ROOT) : "";
		return switch (name) {
			case "postgresql" -> POSTGRESQL;
			case "mariadb", "mysql" -> MARIADB;
			case "h2" -> H2;
			default -> throw new IllegalStateException("The JDBC idempotency store does not support '" + product
					+ "'; supported: PostgreSQL, MariaDB, MySQL, H2 (set idempotency.store.jdbc.dialect to force one)");
		};
	}

}
