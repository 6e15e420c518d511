package dev.idempotency.autoconfigure.r2dbc;

import java.time.Duration;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import io.r2dbc.spi.ConnectionFactory;
import reactor.core.publisher.Flux;

import org.springframework.boot.r2dbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.r2dbc.BadSqlGrammarException;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The R2DBC store's table at start-up: created from the dialect's DDL (the columns,
 * primary key and indexes of the starter's Liquibase changelog) when
 * {@code idempotency.store.r2dbc.initialize-schema} says so, then looked for; the
 * application does not start without it. Runs on the thread that builds the context,
 * which may block.
 */
final class IdempotencyR2dbcSchema {

	/** Longest the start-up waits for one statement. */
	private static final Duration STATEMENT_WAIT = Duration.ofSeconds(30);

	private IdempotencyR2dbcSchema() {
	}

	static void prepare(ConnectionFactory connectionFactory, JdbcIdempotencyDialect dialect, String table,
			DatabaseInitializationMode mode) {
		DatabaseClient client = DatabaseClient.create(connectionFactory);
		boolean create = switch (mode) {
			case ALWAYS -> true;
			case NEVER -> false;
			case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(connectionFactory);
		};
		if (create) {
			Flux.fromIterable(dialect.createTable(table))
				.concatMap((statement) -> client.sql(statement).then())
				.then()
				.block(STATEMENT_WAIT);
		}
		try {
			client.sql("SELECT 1 FROM " + JdbcIdempotencyDialect.validateTableName(table) + " WHERE 1 = 0")
				.then()
				.block(STATEMENT_WAIT);
		}
		catch (BadSqlGrammarException ex) {
			String why = switch (mode) {
				case NEVER -> "idempotency.store.r2dbc.initialize-schema=never";
				case EMBEDDED -> "idempotency.store.r2dbc.initialize-schema=embedded (the default) and this database"
						+ " is not embedded";
				case ALWAYS -> "it was created, yet it is not in the connection's current schema";
			};
			throw new IdempotencyR2dbcTableMissingException(table,
					dialect + " (" + connectionFactory.getMetadata().getName() + ")", why, ex);
		}
	}

}
