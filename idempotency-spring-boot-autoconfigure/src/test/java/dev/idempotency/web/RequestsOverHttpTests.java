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
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the door reads of a request, and what it leaves alone, over real HTTP against
 * embedded Tomcat.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.request.max-body-size=64KB", "spring.servlet.multipart.max-file-size=10MB",
				"spring.servlet.multipart.max-request-size=10MB" })
class RequestsOverHttpTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Test
	void anInvalidKeyIsAnswered400WithoutReadingTheBody() throws IOException {
		int before = this.controller.runs("echo");
		// The body is announced but never sent: reading it would wait for it.
		assertThat(statusLineWithoutSendingTheBody("/echo", "not-a-key", 5_000_000)).contains(" 400 ");
		assertThat(this.controller.runs("echo")).isEqualTo(before);
	}

	@Test
	void anUnknownPathIsAnswered404WithoutReadingTheBody() throws IOException {
		assertThat(statusLineWithoutSendingTheBody("/nope", TestKeys.newKey(), 5_000_000)).contains(" 404 ");
	}

	@Test
	void anUnprotectedHandlerRunsWithoutTheBodyBeingRead() throws IOException {
		int before = this.controller.runs("open");
		assertThat(statusLineWithoutSendingTheBody("/open", TestKeys.newKey(), 5_000_000)).contains(" 200 ");
		assertThat(this.controller.runs("open")).isEqualTo(before + 1);
	}

	@Test
	void aDeclaredLengthOverTheLimitIsAnswered413WithoutReadingTheBody() throws IOException {
		int before = this.controller.runs("echo");
		String answer = responseWithoutSendingTheBody("/echo", TestKeys.newKey(), 65_537);
		assertThat(answer).startsWith("HTTP/1.1 413 ")
			.contains("application/problem+json")
			.contains("\"type\":\"" + PROBLEM + "request-too-large\"")
			.contains("\"status\":413");
		assertThat(this.controller.runs("echo")).isEqualTo(before);
	}

	@Test
	void aChunkedBodyOverTheLimitIsAnswered413() throws Exception {
		int before = this.controller.runs("echo");
		byte[] body = new byte[200_000];
		Arrays.fill(body, (byte) 'a');
		HttpRequest request = HttpRequest.newBuilder(uri("/echo"))
			.header("Idempotency-Key", TestKeys.newKey())
			.header("Content-Type", "text/plain")
			// A publisher of unknown length: sent chunked.
			.POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(body)))
			.build();
		HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body()).contains(PROBLEM + "request-too-large");
		assertThat(this.controller.runs("echo")).isEqualTo(before);
	}

	@Test
	void aBodyWithinTheLimitRunsAndIsReplayed() throws Exception {
		String key = TestKeys.newKey();
		String body = "b".repeat(65_536);
		HttpResponse<String> first = post("/echo", key, "text/plain", body);
		HttpResponse<String> retry = post("/echo", key, "text/plain", body);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).contains("\"length\":65536");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	@Test
	void aKeyedMultipartUploadKeepsItsPartsIsReplayedAndAnotherFileIsAReuse() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = upload(key, "report.csv", "a,b\n1,2\n", "first");
		HttpResponse<String> retry = upload(key, "report.csv", "a,b\n1,2\n", "first");
		HttpResponse<String> otherFile = upload(key, "report.csv", "a,b\n1,3\n", "first");
		HttpResponse<String> otherName = upload(key, "other.csv", "a,b\n1,2\n", "first");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(first.body()).contains("\"file\":\"report.csv\"")
			.contains("\"bytes\":8")
			.contains("\"note\":\"first\"");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(otherFile.statusCode()).isEqualTo(422);
		assertThat(otherName.statusCode()).isEqualTo(422);
	}

	@Test
	void anUnprotectedHandlerWritingThroughGetWriterAnswersTheSameWithAKeyAsWithout() throws Exception {
		HttpResponse<byte[]> without = this.http.send(
				HttpRequest.newBuilder(uri("/open-writer")).POST(HttpRequest.BodyPublishers.noBody()).build(),
				HttpResponse.BodyHandlers.ofByteArray());
		HttpResponse<byte[]> with = this.http.send(HttpRequest.newBuilder(uri("/open-writer"))
			.header("Idempotency-Key", TestKeys.newKey())
			.POST(HttpRequest.BodyPublishers.noBody())
			.build(), HttpResponse.BodyHandlers.ofByteArray());
		assertThat(without.body()).asString(StandardCharsets.ISO_8859_1).isEqualTo("written by the writer");
		assertThat(with.statusCode()).isEqualTo(without.statusCode());
		assertThat(with.body()).isEqualTo(without.body());
		assertThat(with.headers().firstValue("Content-Type")).isEqualTo(without.headers().firstValue("Content-Type"));
		assertThat(with.headers().firstValue("Content-Length"))
			.isEqualTo(without.headers().firstValue("Content-Length"));
	}

	@Test
	void aProtectedHandlerWritingThroughGetWriterIsStoredAndReplayedWithItsCharset() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<byte[]> first = this.http.send(HttpRequest.newBuilder(uri("/writer"))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build(), HttpResponse.BodyHandlers.ofByteArray());
		HttpResponse<byte[]> retry = this.http.send(HttpRequest.newBuilder(uri("/writer"))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build(), HttpResponse.BodyHandlers.ofByteArray());
		assertThat(first.body()).asString(StandardCharsets.UTF_8).isEqualTo("grüße from the writer");
		assertThat(first.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type.toLowerCase()).isEqualTo("text/plain;charset=utf-8"));
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "/async/callable", "/async/deferred", "/async/future", "/async/streaming" })
	void anAsynchronousHandlerKeepsItsKeyUntilItsAnswerIsCompleteThenIsReplayed(String path) throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(keyed(path, key),
				HttpResponse.BodyHandlers.ofString());
		awaitRuns(key);
		// The handler is still running on another thread: a retry must not run it a
		// second time.
		HttpResponse<String> during = this.http.send(keyed(path, key), HttpResponse.BodyHandlers.ofString());
		assertThat(during.statusCode()).as(during.body()).isEqualTo(409);
		assertThat(during.body()).contains(PROBLEM + "request-in-flight");
		assertThat(this.controller.runs(key)).isEqualTo(1);

		this.controller.open(key);
		HttpResponse<String> answered = first.get(30, TimeUnit.SECONDS);
		assertThat(answered.statusCode()).isEqualTo(200);
		assertThat(answered.body()).contains(key).containsAnyOf("run=1", "\"run\":1");
		HttpResponse<String> after = this.http.send(keyed(path, key), HttpResponse.BodyHandlers.ofString());
		assertThat(after.statusCode()).isEqualTo(200);
		assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(after.body()).isEqualTo(answered.body());
		assertThat(this.controller.runs(key)).isEqualTo(1);
	}

	@Test
	void anAsynchronousHandlerThatFailsIsReleasedSoARetryRunsAgain() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = this.http.send(keyed("/async/failing", key), HttpResponse.BodyHandlers.ofString());
		HttpResponse<String> retry = this.http.send(keyed("/async/failing", key), HttpResponse.BodyHandlers.ofString());
		assertThat(first.statusCode()).isEqualTo(500);
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.controller.runs(key)).isEqualTo(2);
	}

	private HttpRequest keyed(String path, String key) {
		return HttpRequest.newBuilder(uri(path))
			.header("Idempotency-Key", key)
			.header("X-Gate", key)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
	}

	private void awaitRuns(String key) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (this.controller.runs(key) < 1) {
			assertThat(System.nanoTime()).as("waiting for the handler to run").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private HttpResponse<String> upload(String key, String fileName, String content, String note)
			throws IOException, InterruptedException {
		String boundary = "----door-test-boundary";
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n" + note + "\r\n--"
				+ boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + fileName
				+ "\"\r\nContent-Type: text/csv\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n";
		return post("/upload", key, "multipart/form-data; boundary=" + boundary, body);
	}

	private String statusLineWithoutSendingTheBody(String path, String key, long declared) throws IOException {
		String answer = responseWithoutSendingTheBody(path, key, declared);
		return answer.substring(0, answer.indexOf("\r\n"));
	}

	/** Sends the request head only, and reads what arrives of the answer within 10 s. */
	private String responseWithoutSendingTheBody(String path, String key, long declared) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port));
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key
					+ "\r\nContent-Type: text/plain\r\nContent-Length: " + declared + "\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			StringBuilder answer = new StringBuilder();
			byte[] buffer = new byte[8192];
			int read;
			while (!complete(answer) && (read = in.read(buffer)) > 0) {
				answer.append(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
			}
			return answer.toString();
		}
	}

	/**
	 * Whether the head and a body of the announced length (or a last chunk) have arrived.
	 */
	private static boolean complete(StringBuilder answer) {
		int end = answer.indexOf("\r\n\r\n");
		if (end < 0) {
			return false;
		}
		String head = answer.substring(0, end).toLowerCase();
		int length = head.indexOf("content-length: ");
		if (length >= 0) {
			int value = Integer.parseInt(head.substring(length + 16).split("\r\n")[0].trim());
			return answer.length() >= end + 4 + value;
		}
		return answer.indexOf("0\r\n\r\n", end) > 0;
	}

	private HttpResponse<String> post(String path, String key, String contentType, String body)
			throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(uri(path))
			.header("Idempotency-Key", key)
			.header("Content-Type", contentType)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
