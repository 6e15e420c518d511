package dev.idempotency.web;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.launch.ChildJvm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application whose class path has no servlet API (no Spring MVC, no Tomcat),
 * as {@code spring-boot-starter-webflux} alone gives it: the door loads nothing of the
 * servlet side, answers every request and replays a keyed one.
 */
class WebFluxWithoutServletApiTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@Test
	void aWebFluxApplicationWithoutTheServletApiAnswersAndReplays() throws Exception {
		List<String> entries = List.of(System.getProperty("java.class.path").split(File.pathSeparator));
		String withoutServlets = entries.stream()
			.filter((entry) -> !entry.contains("jakarta.servlet") && !entry.contains("tomcat-embed"))
			.collect(Collectors.joining(File.pathSeparator));
		assertThat(withoutServlets).as("the servlet API was on the class path to leave out")
			.isNotEqualTo(String.join(File.pathSeparator, entries));
		int port = ChildJvm.freePort();
		Path log = Path.of("target", "pure-webflux-" + port + ".log");
		try (ChildJvm application = ChildJvm.of(PureWebFluxApplication.class)
			.classPath(withoutServlets)
			.jvmOptions("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
			.arguments("--server.port=" + port)
			.log(log)
			.start()) {
			application.awaitPort(port, Duration.ofSeconds(90));
			String key = TestKeys.newKey();
			HttpResponse<String> first = post(port, key);
			HttpResponse<String> retry = post(port, key);
			assertThat(first.statusCode()).as(application.logTail(40)).isEqualTo(201);
			assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(retry.body()).isEqualTo(first.body());
			HttpResponse<String> count = this.http.send(
					HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/count")).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(count.statusCode()).isEqualTo(200);
			assertThat(count.body()).isEqualTo("{\"created\":1}");
		}
		try (Stream<String> lines = Files.lines(log)) {
			assertThat(lines.filter((line) -> line.contains("NoClassDefFoundError"))).isEmpty();
		}
	}

	private HttpResponse<String> post(int port, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
