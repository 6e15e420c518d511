package dev.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP door in record-after-success mode, over real HTTP against embedded Tomcat: a
 * retry is replayed and a reuse refused as in lease mode; two first attempts racing with
 * one key both run, and both are answered with the one answer recorded first.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "idempotency.mode=record-after-success")
class RecordAfterSuccessOverHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Test
	void aRetryIsReplayedAndAnotherBodyWithTheKeyIsRefused422() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = send(post("/echo", key).POST(HttpRequest.BodyPublishers.ofString("one")));
		HttpResponse<String> retry = send(post("/echo", key).POST(HttpRequest.BodyPublishers.ofString("one")));
		HttpResponse<String> other = send(post("/echo", key).POST(HttpRequest.BodyPublishers.ofString("two")));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(other.body()).contains("https://idempotency.dev/problems/key-reused");
	}

	@Test
	void twoFirstAttemptsRacingWithOneKeyBothRunAndBothGetTheRecordedAnswer() throws Exception {
		String key = TestKeys.newKey();
		String gate = "race-" + key;
		CompletableFuture<HttpResponse<String>> one = sendAsync(gated("/gated/created", key, gate));
		CompletableFuture<HttpResponse<String>> two = sendAsync(gated("/gated/created", key, gate));
		awaitRuns(gate, 2);
		this.controller.open(gate);
		List<HttpResponse<String>> answers = List.of(one.get(30, TimeUnit.SECONDS), two.get(30, TimeUnit.SECONDS));
		HttpResponse<String> retry = send(gated("/gated/created", key, gate));
		assertThat(this.controller.runs(gate)).as("both found no record and ran").isEqualTo(2);
		assertThat(answers).allSatisfy((answer) -> {
			assertThat(answer.statusCode()).isEqualTo(201);
			assertThat(answer.body()).isEqualTo(retry.body());
			assertThat(answer.headers().firstValue("Location")).isEqualTo(retry.headers().firstValue("Location"));
		});
		assertThat(answers).as("the attempt that lost the recording is answered as a replay")
			.filteredOn((answer) -> answer.headers().firstValue("Idempotent-Replayed").isPresent())
			.singleElement()
			.satisfies((answer) -> assertThat(answer.headers().firstValue("Idempotent-Replayed")).hasValue("true"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	@Test
	void anAsynchronousAnswerThatLostTheRecordingWasSentAlreadyAndIsLogged(CapturedOutput output) throws Exception {
		String key = TestKeys.newKey();
		String gate = "async-race-" + key;
		CompletableFuture<HttpResponse<String>> one = sendAsync(gated("/async/created", key, gate));
		CompletableFuture<HttpResponse<String>> two = sendAsync(gated("/async/created", key, gate));
		awaitRuns(gate, 2);
		this.controller.open(gate);
		List<HttpResponse<String>> answers = List.of(one.get(30, TimeUnit.SECONDS), two.get(30, TimeUnit.SECONDS));
		HttpResponse<String> retry = send(gated("/async/created", key, gate));
		assertThat(answers).extracting(HttpResponse::body)
			.as("each streamed its own answer")
			.doesNotHaveDuplicates()
			.contains(retry.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(output.getOut()).contains("WARN")
			.contains("another attempt of the same request recorded its answer first");
	}

	private void awaitRuns(String gate, int runs) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (this.controller.runs(gate) < runs) {
			assertThat(System.nanoTime()).as("waiting for the handlers to run").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private HttpRequest.Builder post(String path, String key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(30));
	}

	private HttpRequest.Builder gated(String path, String key, String gate) {
		return post(path, key).header("X-Gate", gate).POST(HttpRequest.BodyPublishers.noBody());
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest.Builder request) {
		return this.http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
