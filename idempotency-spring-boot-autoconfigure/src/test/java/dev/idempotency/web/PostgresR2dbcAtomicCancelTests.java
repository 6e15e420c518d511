package dev.idempotency.web;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;

import dev.idempotency.NonBlockingThreads;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients that go away at any moment of an atomic run on the WebFlux door (its
 * transaction beginning, the handler running, the answer being recorded, the commit)
 * leave no connection taken from the pool and no run going on. Each request is reset (TCP
 * RST) a random few milliseconds after it was sent; a deferred trigger makes each commit
 * take 10 ms, so that many resets land on one. The pool has 3 connections: before the
 * door's transaction ends were run to their end whatever the client did, a commit or a
 * begin cancelled half-way kept its connection for good, and after a few hundred such
 * clients every request waited for a connection that never came; a run cancelled while
 * its transaction began was never told so, and its heartbeats kept its key in flight
 * until the record expired.
 */
@SpringBootTest(classes = AbstractR2dbcAtomicWebFluxTests.AtomicApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotency.lease=5s",
				"idempotency.heartbeat-interval=1s" })
@Import(R2dbcAutoConfiguration.class)
@ExtendWith(NonBlockingThreads.class)
class PostgresR2dbcAtomicCancelTests {

	private static final JdbcTestDatabase DATABASE = R2dbcWebTestDatabases.create(JdbcTestDatabase.postgres());

	private static final int RESETS = 300;

	@LocalServerPort
	int port;

	@Autowired
	DatabaseClient database;

	@Autowired
	ConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		registry.add("idempotency.store.type", () -> "r2dbc");
		registry.add("spring.r2dbc.url", DATABASE::r2dbcUrl);
		registry.add("spring.r2dbc.username", DATABASE::user);
		registry.add("spring.r2dbc.pool.initial-size", () -> "1");
		registry.add("spring.r2dbc.pool.max-size", () -> "3");
		registry.add("idempotency.store.r2dbc.initialize-schema", () -> "always");
	}

	@AfterAll
	static void dropDatabase() throws Exception {
		DATABASE.drop();
	}

	@AfterEach
	void nothingBlocked() {
		NonBlockingThreads.assertNoneBlocked();
	}

	@Test
	void clientsThatGoAwayMidRunLeaveNoConnectionTakenAndNoRunGoingOn() throws Exception {
		sql("CREATE TABLE IF NOT EXISTS atomic_orders (order_key VARCHAR(100) NOT NULL)");
		sql("CREATE OR REPLACE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
				+ " PERFORM pg_sleep(0.01); RETURN NULL; END $$");
		sql("CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON atomic_orders DEFERRABLE INITIALLY DEFERRED"
				+ " FOR EACH ROW EXECUTE FUNCTION slow_commit()");
		long seed = System.nanoTime();
		Random random = new Random(seed);
		for (int i = 0; i < RESETS; i++) {
			resetAfter(random.nextInt(25_000));
		}
		ConnectionPool pool = (ConnectionPool) this.connectionFactory;
		long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
		while (pool.getMetrics().orElseThrow().acquiredSize() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(pool.getMetrics().orElseThrow().acquiredSize())
			.as("connections still taken after %d resets (seed %d)", RESETS, seed)
			.isZero();
		WebTestClient client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
		assertThat(client.post()
			.uri("/atomic/orders")
			.header("Idempotency-Key", TestKeys.newKey())
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"item\":\"book\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getStatus()).isEqualTo(HttpStatus.CREATED);
		// A run still going on has its lease extended every second; after one lease
		// (5 s) with nothing going on, no record is left in flight with a live lease.
		Thread.sleep(6_500);
		assertThat(count("SELECT COUNT(*) AS n FROM idempotency_record WHERE state = 'IN_PROGRESS'"
				+ " AND lease_expires_at > now()"))
			.as("records whose lease is still extended (seed %d)", seed)
			.isZero();
	}

	/**
	 * Sends a keyed {@code POST /atomic/orders} and resets the connection {@code micros}
	 * after.
	 */
	private void resetAfter(int micros) throws Exception {
		byte[] body = "{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8);
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("POST /atomic/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ "Idempotency-Key: " + TestKeys.newKey() + "\r\nContent-Length: " + body.length + "\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.write(body);
			out.flush();
			Thread.sleep(micros / 1000, (micros % 1000) * 1000);
			socket.setSoLinger(true, 0);
		}
	}

	private void sql(String sql) {
		this.database.sql(sql).then().block(Duration.ofSeconds(10));
	}

	private long count(String sql) {
		Number count = this.database.sql(sql)
			.map((row, metadata) -> row.get("n", Number.class))
			.one()
			.block(Duration.ofSeconds(10));
		return (count != null) ? count.longValue() : -1;
	}

}
