package dev.idempotency.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreAutoConfiguration;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * idempotency.store.compression and idempotency.store.compress-from, as a user sees them:
 * the bytes an 8 KB JSON answer takes in the store (the in-memory store's retained bytes,
 * the JDBC store's column), and the start-up refusal of a size that cannot be one.
 */
class AnswerCompressionPropertiesTests {

	private static final int ANSWER_BYTES = 8192;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyJdbcStoreAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=jdbc:h2:mem:compression_"
				+ UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1",
				"spring.datasource.generate-unique-name=false");

	@Test
	void theInMemoryStoreKeepsAnswersAsTheyAreUnlessToldToDeflate() {
		this.runner.run((context) -> {
			InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
			store.recordCompleted(completed("kept"));
			assertThat(store.retainedBytes()).isGreaterThan(ANSWER_BYTES);
		});
		this.runner.withPropertyValues("idempotency.store.compression=deflate").run((context) -> {
			InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
			store.recordCompleted(completed("deflated"));
			assertThat(store.retainedBytes()).isLessThan(ANSWER_BYTES / 2);
			assertThat(store.find(new RecordId("anonymous", "deflated")).orElseThrow().response()).isEqualTo(answer());
		});
		// Deflating from a size above the answer's keeps it as it is.
		this.runner.withPropertyValues("idempotency.store.compression=deflate", "idempotency.store.compress-from=9KB")
			.run((context) -> {
				InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
				store.recordCompleted(completed("small"));
				assertThat(store.retainedBytes()).isGreaterThan(ANSWER_BYTES);
			});
	}

	@Test
	void theJdbcStoreDeflatesAnswersUnlessToldNotTo() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(
					storedBytes(context.getBean(IdempotencyStore.class), context.getBean(DataSource.class), "deflated"))
				.isLessThan(ANSWER_BYTES / 2));
		this.runner.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.compression=none")
			.run((context) -> assertThat(
					storedBytes(context.getBean(IdempotencyStore.class), context.getBean(DataSource.class), "kept"))
				.isGreaterThan(ANSWER_BYTES));
	}

	@Test
	void aSizeThatCannotBeOneFailsTheStartUpNamingTheProperty() {
		this.runner.withPropertyValues("idempotency.store.compress-from=-1B")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageStartingWith(
						"idempotency.store.compress-from must be from 0 to 1073741824 bytes, was -1 bytes"));
	}

	private static long storedBytes(IdempotencyStore store, DataSource dataSource, String key) {
		store.recordCompleted(completed(key));
		assertThat(store.find(new RecordId("anonymous", key)).orElseThrow().response()).isEqualTo(answer());
		return JdbcClient.create(dataSource)
			.sql("SELECT OCTET_LENGTH(response) FROM idempotency_record WHERE idem_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	private static CompletedRecordRequest completed(String key) {
		return new CompletedRecordRequest(new RecordId("anonymous", key), "fp", "POST /orders", answer(),
				Duration.ofMinutes(5));
	}

	/** An 8 KB answer of order lines, as compressible as real JSON. */
	private static StoredResponse answer() {
		StringBuilder json = new StringBuilder("[");
		for (int line = 0; json.length() < ANSWER_BYTES - 80; line++) {
			json.append("{\"line\":").append(line).append(",\"sku\":\"SKU-").append(1000 + line * 7).append("\"},");
		}
		while (json.length() < ANSWER_BYTES - 1) {
			json.append(' ');
		}
		json.append(']');
		return new StoredResponse(201, Map.of("Content-Type", List.of("application/json")),
				json.toString().getBytes(StandardCharsets.UTF_8));
	}

}
