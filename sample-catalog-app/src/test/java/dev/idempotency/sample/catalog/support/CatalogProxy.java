package dev.idempotency.sample.catalog.support;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * An HTTP proxy on 127.0.0.1 between an Iceberg client and the catalog that records every
 * exchange and, when told to, loses responses: the first attempt of each mutation is
 * forwarded to the catalog (which runs it), but the client gets {@code 502 Bad Gateway}
 * instead of the catalog's answer, as when a load balancer or the network drops a
 * response.
 */
public final class CatalogProxy implements AutoCloseable {

	private static final Set<String> UNFORWARDED_HEADERS = Set.of("connection", "content-length", "expect", "host",
			"upgrade", "transfer-encoding", "keep-alive", "date");

	private final URI target;

	private final boolean loseFirstResponses;

	private final HttpServer server;

	private final ExecutorService executor = Executors.newFixedThreadPool(4);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final Set<String> attempted = ConcurrentHashMap.newKeySet();

	private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();

	private CatalogProxy(URI target, boolean loseFirstResponses) throws IOException {
		this.target = target;
		this.loseFirstResponses = loseFirstResponses;
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", this::handle);
		this.server.setExecutor(this.executor);
		this.server.start();
	}

	/** A proxy that relays every answer. */
	public static CatalogProxy relaying(URI target) throws IOException {
		return new CatalogProxy(target, false);
	}

	/** A proxy that loses the catalog's answer to the first attempt of every mutation. */
	public static CatalogProxy losingFirstResponses(URI target) throws IOException {
		return new CatalogProxy(target, true);
	}

	public URI uri() {
		return URI.create("http://127.0.0.1:" + this.server.getAddress().getPort());
	}

	/** Every exchange so far, in the order the catalog answered them. */
	public List<Exchange> exchanges() {
		return List.copyOf(this.exchanges);
	}

	/** The exchanges that change the catalog (metrics reports left out). */
	public List<Exchange> mutations() {
		return this.exchanges.stream().filter(Exchange::isMutation).toList();
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			byte[] body = exchange.getRequestBody().readAllBytes();
			String method = exchange.getRequestMethod();
			String pathAndQuery = exchange.getRequestURI().getRawPath()
					+ ((exchange.getRequestURI().getRawQuery() != null) ? "?" + exchange.getRequestURI().getRawQuery()
							: "");
			String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");

			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.target + pathAndQuery))
				.timeout(Duration.ofSeconds(60))
				.method(method, (body.length == 0) ? HttpRequest.BodyPublishers.noBody()
						: HttpRequest.BodyPublishers.ofByteArray(body));
			exchange.getRequestHeaders().forEach((name, values) -> {
				if (!UNFORWARDED_HEADERS.contains(name.toLowerCase())) {
					values.forEach(value -> request.header(name, value));
				}
			});
			HttpResponse<byte[]> response;
			try {
				response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IOException(ex);
			}

			boolean mutation = Exchange.isMutation(method, exchange.getRequestURI().getPath());
			// A keyed retry carries the same key; an unkeyed one repeats method, path and
			// body.
			String attempt = (key != null) ? key : method + " " + pathAndQuery + " " + sha256(body);
			boolean lost = this.loseFirstResponses && mutation && this.attempted.add(attempt);
			this.exchanges.add(new Exchange(method, exchange.getRequestURI().getPath(), key,
					new String(body, StandardCharsets.UTF_8), response.statusCode(), response.headers().map(),
					new String(response.body(), StandardCharsets.UTF_8), lost));

			if (lost) {
				exchange.sendResponseHeaders(502, -1);
				return;
			}
			response.headers().map().forEach((name, values) -> {
				if (!UNFORWARDED_HEADERS.contains(name.toLowerCase())) {
					exchange.getResponseHeaders().put(name, values);
				}
			});
			boolean noBody = "HEAD".equals(method) || response.body().length == 0;
			exchange.sendResponseHeaders(response.statusCode(), noBody ? -1 : response.body().length);
			if (!noBody) {
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(response.body());
				}
			}
		}
	}

	private static String sha256(byte[] body) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * One request as the catalog saw it and the catalog's answer.
	 *
	 * @param lost whether the client got 502 instead of this answer
	 */
	public record Exchange(String method, String path, String idempotencyKey, String requestBody, int status,
			Map<String, List<String>> responseHeaders, String responseBody, boolean lost) {

		static boolean isMutation(String method, String path) {
			return ("POST".equals(method) || "DELETE".equals(method)) && !path.endsWith("/metrics");
		}

		public boolean isMutation() {
			return isMutation(this.method, this.path);
		}

		public boolean replayed() {
			return this.responseHeaders.entrySet()
				.stream()
				.anyMatch(header -> header.getKey().equalsIgnoreCase("Idempotent-Replayed")
						&& header.getValue().contains("true"));
		}

		@Override
		public String toString() {
			return this.method + " " + this.path + " key=" + this.idempotencyKey + " -> " + this.status
					+ (this.lost ? " (lost)" : "") + (replayed() ? " (replayed)" : "");
		}

	}

}
