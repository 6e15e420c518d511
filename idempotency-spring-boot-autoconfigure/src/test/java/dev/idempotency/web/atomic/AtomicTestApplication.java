package dev.idempotency.web.atomic;

import java.net.URI;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * One node of the atomic-completion tests: {@code POST /things} (protected by the HTTP
 * door) inserts a business row through a {@code @Transactional} service on the same
 * {@code DataSource} as the idempotency records, and answers {@code 201} with the row's
 * run id, so every run answers differently. Headers steer a run: {@code X-Hold} makes it
 * wait after its insert until the test opens that gate, {@code X-Sleep} (milliseconds)
 * makes it linger, {@code X-Fail} makes it throw ({@code exception}) or answer
 * {@code 500} ({@code status}) after its insert, or makes its insert fail at the commit
 * ({@code at-commit}), which the application answers {@code 409}. None of them is part of
 * the fingerprint.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = { "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.observation.LettuceObservationAutoConfiguration" })
class AtomicTestApplication {

	/** Gates the test opens, shared by the nodes of this JVM. */
	static final Map<String, CountDownLatch> GATES = new ConcurrentHashMap<>();

	/** How many runs entered the handler, per key, over the nodes of this JVM. */
	static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

	static int runs(String key) {
		AtomicInteger runs = RUNS.get(key);
		return (runs != null) ? runs.get() : 0;
	}

	static CountDownLatch gate(String name) {
		return GATES.computeIfAbsent(name, (k) -> new CountDownLatch(1));
	}

	@Bean
	Things things(JdbcClient jdbc, @Value("${atomic.node-name}") String node) {
		return new Things(jdbc, node);
	}

	/**
	 * The business write, in a transaction of its own boundary (joined when one runs).
	 */
	static class Things {

		private final JdbcClient jdbc;

		private final String node;

		Things(JdbcClient jdbc, String node) {
			this.jdbc = jdbc;
			this.node = node;
		}

		@Transactional
		public String insert(String key, String body) {
			String run = UUID.randomUUID().toString();
			insert(run, key, body);
			return run;
		}

		/**
		 * Inserts the row, and sends it once more when the transaction commits, as a JPA
		 * session sends at the commit an entity persisted without a flush: its primary
		 * key is taken, so the commit fails with the application's own duplicate key.
		 * Without an outer transaction that commit is this method's, and the handler sees
		 * the failure.
		 */
		@Transactional
		public String insertAgainAtCommit(String key, String body) {
			String run = insert(key, body);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void beforeCommit(boolean readOnly) {
					insert(run, key, body);
				}

			});
			return run;
		}

		/**
		 * Inserts the key into {@code unique_at_commit}, a table the test made with a
		 * unique constraint checked at the commit ({@code DEFERRABLE INITIALLY
		 * DEFERRED}): two runs of one key each insert theirs, and the commit of one waits
		 * for the other's transaction.
		 */
		@Transactional
		public void insertUniqueAtCommit(String key) {
			this.jdbc.sql("INSERT INTO unique_at_commit (idem_key) VALUES (?)").param(key).update();
		}

		private void insert(String run, String key, String body) {
			this.jdbc.sql("INSERT INTO thing (run, idem_key, body, node) VALUES (?, ?, ?, ?)")
				.params(run, key, body, this.node)
				.update();
		}

	}

	@RestController
	static class ThingController {

		private final Things things;

		ThingController(Things things) {
			this.things = things;
		}

		@PostMapping("/things")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Hold", required = false) @Nullable String hold,
				@RequestHeader(name = "X-Sleep", required = false) @Nullable Long sleep,
				@RequestHeader(name = "X-Fail", required = false) @Nullable String fail,
				@RequestHeader(name = "X-Unique-At-Commit", required = false) @Nullable String uniqueAtCommit,
				@RequestBody String body) throws InterruptedException {
			RUNS.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			String run = "at-commit".equals(fail) ? this.things.insertAgainAtCommit(key, body)
					: this.things.insert(key, body);
			if (uniqueAtCommit != null) {
				this.things.insertUniqueAtCommit(key);
			}
			if (hold != null) {
				gate(hold + "-entered").countDown();
				if (!gate(hold).await(20, TimeUnit.SECONDS)) {
					throw new IllegalStateException("gate " + hold + " never opened");
				}
			}
			if (sleep != null) {
				Thread.sleep(sleep);
			}
			if ("exception".equals(fail)) {
				throw new IllegalStateException("failed after the insert");
			}
			if ("status".equals(fail)) {
				return ResponseEntity.internalServerError()
					.body(Map.of("run", run, "error", "failed after the insert"));
			}
			return ResponseEntity.created(URI.create("/things/" + run)).body(Map.of("run", run, "body", body));
		}

		/**
		 * How the application answers a duplicate key, whether its write failed in the
		 * handler or at the commit.
		 */
		@ExceptionHandler(DuplicateKeyException.class)
		ResponseEntity<Map<String, Object>> duplicate(DuplicateKeyException ex) {
			return ResponseEntity.status(409).body(Map.of("error", "duplicate thing"));
		}

		/** Writes nothing: answers with what it was sent. */
		@PostMapping("/things/echo")
		@Idempotent
		ResponseEntity<Map<String, Object>> echo(@RequestBody String body) {
			return ResponseEntity.status(201).body(Map.of("body", body));
		}

		/** Answered asynchronously: runs without the door's transaction. */
		@PostMapping("/things/async")
		@Idempotent
		Callable<Map<String, Object>> createLater(@RequestHeader("Idempotency-Key") String key,
				@RequestBody String body) {
			return () -> Map.of("run", this.things.insert(key, body), "body", body);
		}

	}

}
