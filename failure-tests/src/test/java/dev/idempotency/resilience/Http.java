package dev.idempotency.resilience;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Real HTTP to the nodes, with the JDK client. */
final class Http {

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private static final JsonMapper JSON = new JsonMapper();

	static final String PROBLEMS = "https://idempotency.dev/problems/";

	private Http() {
	}

	/** A POST with a JSON body and the given headers (name, value, name, value...). */
	static HttpRequest post(URI uri, String key, String jsonBody, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri)
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(jsonBody));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		if (headers.length > 0) {
			request.headers(headers);
		}
		return request.build();
	}

	static HttpResponse<byte[]> send(HttpRequest request) {
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new IllegalStateException(request + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static CompletableFuture<HttpResponse<byte[]>> sendAsync(HttpRequest request) {
		return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
	}

	static HttpResponse<byte[]> get(URI uri) {
		return send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build());
	}

	static JsonNode json(HttpResponse<byte[]> response) {
		return JSON.readTree(response.body());
	}

	static boolean replayed(HttpResponse<?> response) {
		return response.headers().firstValue("Idempotent-Replayed").filter("true"::equals).isPresent();
	}

	/**
	 * The problem type of an {@code application/problem+json} answer, or {@code null}.
	 */
	static String problemType(HttpResponse<byte[]> response) {
		boolean problem = response.headers()
			.firstValue("Content-Type")
			.filter((type) -> type.startsWith("application/problem+json"))
			.isPresent();
		return problem ? json(response).path("type").asString() : null;
	}

	static String describe(HttpResponse<byte[]> response) {
		return response.statusCode() + " " + response.headers().map() + " "
				+ new String(response.body(), java.nio.charset.StandardCharsets.UTF_8);
	}

}
