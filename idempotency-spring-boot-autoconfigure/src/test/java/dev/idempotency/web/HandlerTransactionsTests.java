package dev.idempotency.web;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.OptimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The door's transactions begin only where the store joins them: a transaction manager on
 * another {@code DataSource} is found out at the first protected request, said once in a
 * WARN, and no transaction is left bound to the thread. A commit that fails is the
 * store's failure only when the database or its connection failed.
 */
@ExtendWith(OutputCaptureExtension.class)
class HandlerTransactionsTests {

	private static DataSource h2() {
		return DataSourceBuilder.create()
			.url("jdbc:h2:mem:tx_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1")
			.username("sa")
			.build();
	}

	private static IdempotentExchange exchange() {
		return IdempotentExchange.start(new MockHttpServletRequest("POST", "/things"),
				new CapturingResponse(new MockHttpServletResponse()));
	}

	@Test
	void onTheStoresDataSourceTheTransactionBeginsAndTheStoreJoinsIt() {
		DataSource dataSource = h2();
		JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource)
			.dialect(JdbcIdempotencyDialect.H2)
			.tableName("idempotency_record")
			.transactionalCompletion(true)
			.queryTimeout(java.time.Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
		HandlerTransactions transactions = new HandlerTransactions(new JdbcTransactionManager(dataSource), store,
				new IdempotencyErrorExceptionResolver(List::of, null), List::of, "https://idempotency.dev/problems/");
		IdempotentExchange exchange = exchange();
		assertThat(transactions.begin(exchange)).isTrue();
		assertThat(store.joinsCurrentTransaction()).isTrue();
		assertThat(exchange.transaction()).isNotNull();
		transactions.rollback(exchange);
		assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isFalse();
		assertThat(exchange.transaction()).isNull();
	}

	@Test
	void aTransactionManagerOnAnotherDataSourceIsDroppedWithOneWarning(CapturedOutput output) {
		JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(h2())
			.dialect(JdbcIdempotencyDialect.H2)
			.tableName("idempotency_record")
			.transactionalCompletion(true)
			.queryTimeout(java.time.Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
		HandlerTransactions transactions = new HandlerTransactions(new JdbcTransactionManager(h2()), store,
				new IdempotencyErrorExceptionResolver(List::of, null), List::of, "https://idempotency.dev/problems/");
		for (int i = 0; i < 3; i++) {
			IdempotentExchange exchange = exchange();
			assertThat(transactions.begin(exchange)).isFalse();
			assertThat(exchange.transaction()).isNull();
			assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isFalse();
		}
		assertThat(output.getOut().split("Atomic completion is off", -1)).as("one WARN").hasSize(2);
	}

	@Test
	void aFailedCommitIsTheStoresOnlyWhenTheDatabaseOrItsConnectionFailed() {
		assertThat(
				TransactionFailures.isStoreFailure(new TransactionSystemException("Could not commit JDBC transaction",
						new SQLException("An I/O error occurred while sending to the backend", "08006"))))
			.isTrue();
		assertThat(TransactionFailures.isStoreFailure(
				new DataAccessResourceFailureException("JDBC commit", new SQLException("disk full", "53100"))))
			.isTrue();
		assertThat(TransactionFailures.isStoreFailure(
				new RuntimeException(new SQLException("terminating connection due to administrator command", "57P01"))))
			.isTrue();
		assertThat(TransactionFailures.isStoreFailure(new RuntimeException(new SQLNonTransientConnectionException())))
			.isTrue();
		assertThat(TransactionFailures.isStoreFailure(new QueryTimeoutException("commit timed out"))).isTrue();
		// The application's own writes, checked or sent at the commit.
		assertThat(TransactionFailures
			.isStoreFailure(new DuplicateKeyException("JDBC commit", new SQLException("duplicate key", "23505"))))
			.isFalse();
		assertThat(
				TransactionFailures.isStoreFailure(new TransactionSystemException("Could not commit JDBC transaction",
						new SQLException("raised by a deferred trigger", "P0001"))))
			.isFalse();
		assertThat(TransactionFailures.isStoreFailure(new OptimisticLockingFailureException("row changed"))).isFalse();
		assertThat(TransactionFailures.isStoreFailure(new IllegalStateException("a session's own failure"))).isFalse();
	}

}
