package dev.idempotency.store.seal;

import java.sql.SQLException;

import javax.sql.DataSource;

import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link SealedAnswersOverHttpTests} on the shared PostgreSQL, in a schema of this run's
 * own: the answer read from the table's {@code response} column, swapped with
 * {@code UPDATE}.
 */
class PostgresSealedAnswersOverHttpTests extends SealedAnswersOverHttpTests {

	private static JdbcTestDatabase schema;

	@Autowired
	private DataSource dataSource;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		schema = JdbcTestDatabase.postgres().create();
		schema.registerAsApplicationStore(registry);
	}

	@AfterAll
	static void dropSchema() throws SQLException {
		schema.drop();
	}

	@Override
	byte[] storedAnswer(String key) {
		return JdbcClient.create(this.dataSource)
			.sql("SELECT response FROM idempotency_record WHERE idem_key = ?")
			.param(key)
			.query(byte[].class)
			.single();
	}

	@Override
	void swapStoredAnswers(String key, String otherKey) {
		byte[] answer = storedAnswer(key);
		byte[] otherAnswer = storedAnswer(otherKey);
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		String update = "UPDATE idempotency_record SET response = ? WHERE idem_key = ?";
		jdbc.sql(update).params(otherAnswer, key).update();
		jdbc.sql(update).params(answer, otherKey).update();
	}

}
