package dev.idempotency.sample.catalog.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Plain HTTP calls to the catalog, for what the Iceberg client hides (statuses, headers,
 * bodies).
 */
public final class CatalogHttp {

	private static final ObjectMapper JSON = new ObjectMapper();

	private final URI base;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	public CatalogHttp(URI base) {
		this.base = base;
	}

	public Response get(String path, String... headers) {
		return send(request(path, headers).GET());
	}

	public Response head(String path, String... headers) {
		return send(request(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()));
	}

	public Response delete(String path, String... headers) {
		return send(request(path, headers).DELETE());
	}

	public Response post(String path, String json, String... headers) {
		return send(request(path, headers).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	private HttpRequest.Builder request(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(this.base + path));
		for (int i = 0; i < headers.length; i += 2) {
			builder.header(headers[i], headers[i + 1]);
		}
		return builder;
	}

	private Response send(HttpRequest.Builder request) {
		try {
			return new Response(this.http.send(request.build(), HttpResponse.BodyHandlers.ofString()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** A response with its body parsed as JSON when there is one. */
	public record Response(HttpResponse<String> raw) {

		public int status() {
			return this.raw.statusCode();
		}

		public String body() {
			return this.raw.body();
		}

		public String header(String name) {
			return this.raw.headers().firstValue(name).orElse(null);
		}

		public JsonNode json() {
			try {
				return JSON.readTree(this.raw.body());
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/** The {@code type} of an Iceberg {@code ErrorResponse}. */
		public String errorType() {
			return json().path("error").path("type").asText(null);
		}

		@Override
		public String toString() {
			return this.raw.request().method() + " " + this.raw.uri() + " -> " + status() + " " + body();
		}

	}

}
