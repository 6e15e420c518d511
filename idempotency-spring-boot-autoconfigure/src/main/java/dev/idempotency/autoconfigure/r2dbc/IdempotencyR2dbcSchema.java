package dev.idempotency.autoconfigure.r2dbc;

import java.time.Duration;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.r2dbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.r2dbc.BadSqlGrammarException;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The R2DBC store's table: created from the dialect's DDL (the columns, primary key and
 * indexes of the starter's Liquibase changelog) when
 * {@code idempotency.store.r2dbc.initialize-schema} says so, then looked for; without it
 * the application does not start. A database that cannot be reached at start-up does not
 * stop the application: the same set-up then runs before the store's first connection
 * once the database answers ({@link IdempotencySchemaPendingConnectionFactory}).
 */
final class IdempotencyR2dbcSchema {

	/** Longest the start-up waits for one statement, or for a connection. */
	static final Duration STATEMENT_WAIT = Duration.ofSeconds(30);

	private final ConnectionFactory connectionFactory;

	private final JdbcIdempotencyDialect dialect;

	private final String table;

	private final DatabaseInitializationMode mode;

	IdempotencyR2dbcSchema(ConnectionFactory connectionFactory, JdbcIdempotencyDialect dialect, String table,
			DatabaseInitializationMode mode) {
		this.connectionFactory = connectionFactory;
		this.dialect = dialect;
		this.table = table;
		this.mode = mode;
	}

	/**
	 * Whether a connection can be had within {@code wait}: a database that refuses
	 * connections, or does not answer, is not reachable.
	 */
	boolean reachable(Duration wait) {
		try {
			Mono.usingWhen(this.connectionFactory.create(), (connection) -> Mono.empty(), Connection::close)
				.block(wait);
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** Sets the table up, on the calling thread, which may block. */
	void prepare() {
		setUp().block(STATEMENT_WAIT.multipliedBy(this.dialect.createTable(this.table).size() + 1));
	}

	/**
	 * The table's set-up: created when the mode says so, then looked for.
	 * @return a publisher that completes once the table is there, or fails with
	 * {@link IdempotencyR2dbcTableMissingException} when it is not
	 */
	Mono<Void> setUp() {
		DatabaseClient client = DatabaseClient.create(this.connectionFactory);
		boolean create = switch (this.mode) {
			case ALWAYS -> true;
			case NEVER -> false;
			case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(this.connectionFactory);
		};
		Mono<Void> created = create ? Flux.fromIterable(this.dialect.createTable(this.table))
			.concatMap((statement) -> client.sql(statement).then())
			.then() : Mono.empty();
		Mono<Void> found = client
			.sql("SELECT 1 FROM " + JdbcIdempotencyDialect.validateTableName(this.table) + " WHERE 1 = 0")
			.then()
			.onErrorMap(BadSqlGrammarException.class, this::missing);
		return created.then(found);
	}

	private IdempotencyR2dbcTableMissingException missing(BadSqlGrammarException ex) {
		String why = switch (this.mode) {
			case NEVER -> "idempotency.store.r2dbc.initialize-schema=never";
			case EMBEDDED -> "idempotency.store.r2dbc.initialize-schema=embedded (the default) and this database"
					+ " is not embedded";
			case ALWAYS -> "it was created, yet it is not in the connection's current schema";
		};
		return new IdempotencyR2dbcTableMissingException(this.table,
				this.dialect + " (" + this.connectionFactory.getMetadata().getName() + ")", why, ex);
	}

}
