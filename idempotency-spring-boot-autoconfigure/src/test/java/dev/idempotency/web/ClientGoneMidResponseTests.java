package dev.idempotency.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that resets its connection (a raw socket with {@code SO_LINGER 0}, against
 * embedded Tomcat) while its large answer is produced or sent: the answer is stored
 * before it is sent, so the retry gets the whole answer, replayed, and the handler ran
 * once; never a truncated one. One subclass per store.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.in-flight.wait=10s", "idempotency.response.max-body-size=2MB" })
abstract class ClientGoneMidResponseTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@ParameterizedTest
	@ValueSource(strings = { "/gated/json", "/gated/bytes", "/gated/stream" })
	void aRetryAfterTheClientResetMidResponseGetsTheWholeAnswerNeverATruncatedOne(String path) throws Exception {
		String baselineGate = "baseline-" + TestKeys.newKey();
		this.controller.open(baselineGate);
		HttpResponse<byte[]> baseline = post(path, baselineGate, null);
		assertThat(baseline.statusCode()).isEqualTo(200);
		assertThat(baseline.body().length).isGreaterThan(50_000);

		String key = TestKeys.newKey();
		try (Socket socket = new Socket()) {
			socket.setReceiveBufferSize(4096);
			socket.connect(new InetSocketAddress("127.0.0.1", this.port));
			OutputStream out = socket.getOutputStream();
			out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key + "\r\nX-Gate: " + key
					+ "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			awaitRuns(key, 1);
			socket.setSoLinger(true, 0);
		}
		this.controller.open(key);
		awaitFinished(key, 1);

		// The answer was stored before it was sent: the retry gets all of it, and the
		// handler ran once.
		HttpResponse<byte[]> retry = post(path, key, key);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).hasSize(baseline.body().length).isEqualTo(baseline.body());
		assertThat(this.controller.runs(key)).isEqualTo(1);
	}

	@Test
	void aClientThatReadsPartOfTheAnswerThenResetsGetsTheWholeAnswerOnItsRetry() throws Exception {
		String baselineGate = "baseline-" + TestKeys.newKey();
		this.controller.open(baselineGate);
		HttpResponse<byte[]> baseline = post("/gated/json", baselineGate, null);

		String key = TestKeys.newKey();
		this.controller.open(key);
		try (Socket socket = new Socket()) {
			socket.setReceiveBufferSize(4096);
			socket.connect(new InetSocketAddress("127.0.0.1", this.port));
			OutputStream out = socket.getOutputStream();
			out.write(("POST /gated/json HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key + "\r\nX-Gate: " + key
					+ "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			assertThat(in.readNBytes(200)).asString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200");
			socket.setSoLinger(true, 0);
		}
		awaitFinished(key, 1);

		HttpResponse<byte[]> retry = post("/gated/json", key, key);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(baseline.body());
		assertThat(this.controller.runs(key)).isEqualTo(1);
	}

	private HttpResponse<byte[]> post(String path, String gate, String key) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.header("X-Gate", gate)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString("{}"));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
	}

	private void awaitRuns(String key, int runs) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (this.controller.runs(key) < runs) {
			assertThat(System.nanoTime()).as("waiting for the handler to run").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private void awaitFinished(String key, int finished) throws InterruptedException {
		// A write to a reset connection fails at once, or after Tomcat's write timeout at
		// worst.
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (this.controller.finished(key) < finished) {
			assertThat(System.nanoTime()).as("waiting for the handler to finish").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

}
