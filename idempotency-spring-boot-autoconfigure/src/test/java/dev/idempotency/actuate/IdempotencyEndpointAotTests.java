package dev.idempotency.actuate;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.launch.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplicationAotProcessor;
import org.springframework.context.aot.AbstractAotProcessor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint under ahead-of-time processing, as Boot's own endpoints behave there: the
 * conditions of every endpoint are decided when the application is built, so the endpoint
 * answers when {@code management.endpoints.web.exposure.include} named it at build time,
 * and an endpoint named at run time only (Boot's {@code env} here) is not there. The
 * application is processed as the {@code native} profile's {@code process-aot} does, its
 * generated sources compiled, and it is started with {@code -Dspring.aot.enabled=true} in
 * a JVM of its own.
 */
class IdempotencyEndpointAotTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void underAotTheEndpointAnswersWhenItWasExposedAtBuildTime(@TempDir Path aot) throws Exception {
		Path sources = aot.resolve("sources");
		Path resources = aot.resolve("resources");
		Path classes = aot.resolve("classes");
		new SpringApplicationAotProcessor(AotEndpointApplication.class,
				AbstractAotProcessor.Settings.builder()
					.sourceOutput(sources)
					.resourceOutput(resources)
					.classOutput(classes)
					.groupId("dev.idempotency")
					.artifactId("endpoint-aot-test")
					.build(),
				new String[] { "--management.endpoints.web.exposure.include=health,idempotency" })
			.process();
		String classPath = compile(sources, classes);
		assertThat(generated(resources)).as("JSON binding of the endpoint's answers in a native image")
			.contains(IdempotencyEndpoint.RecordsDescriptor.class.getName(),
					IdempotencyEndpoint.RecordDescriptor.class.getName(),
					IdempotencyEndpointWebExtension.Problem.class.getName());

		int port = ChildJvm.freePort();
		try (ChildJvm app = ChildJvm.of(AotEndpointApplication.class)
			.jvmOptions("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
			.systemProperty("spring.aot.enabled", "true")
			.classPath(classPath)
			.arguments("--server.port=" + port, "--management.endpoints.web.exposure.include=health,idempotency,env")
			.log(Path.of("target", "child-jvm", "endpoint-aot.log"))
			.start()) {
			app.awaitPort(port, Duration.ofSeconds(90));
			assertThat(Files.readString(app.log())).contains("Starting AOT-processed AotEndpointApplication");

			String key = TestKeys.newKey();
			// Never answered while the test runs: the key stays in flight.
			CompletableFuture<HttpResponse<String>> held = this.http
				.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
					.header("Idempotency-Key", key)
					.header("X-Gate", key)
					.header("Content-Type", "application/json")
					.POST(HttpRequest.BodyPublishers.ofString("{}"))
					.build(), HttpResponse.BodyHandlers.ofString());
			HttpResponse<String> record = get(port, "/actuator/idempotency?key=" + key + "&scope=anonymous");
			for (int attempt = 0; attempt < 100 && record.statusCode() == 404; attempt++) {
				Thread.sleep(50);
				record = get(port, "/actuator/idempotency?key=" + key + "&scope=anonymous");
			}
			assertThat(record.statusCode()).as(record.body()).isEqualTo(200);
			assertThat(record.body()).contains("\"state\":\"in-flight\"");
			assertThat(get(port, "/actuator/idempotency?key=has%20space").statusCode()).isEqualTo(400);
			assertThat(get(port, "/actuator/health").statusCode()).isEqualTo(200);
			assertThat(get(port, "/actuator/env").statusCode())
				.as("Boot's own endpoint, exposed at run time only, is not there either")
				.isEqualTo(404);
			held.cancel(true);
		}
	}

	/**
	 * Compiles the generated sources as the build does after {@code process-aot}.
	 * @return the class path of the processed application: the generated classes and
	 * resources first
	 */
	private static String compile(Path sources, Path classes) throws IOException {
		Files.createDirectories(classes);
		String classPath = classes + File.pathSeparator + System.getProperty("java.class.path");
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null);
				Stream<Path> walk = Files.walk(sources)) {
			List<File> generated = walk.filter((path) -> path.toString().endsWith(".java")).map(Path::toFile).toList();
			boolean compiled = javac
				.getTask(null, files, null, List.of("-d", classes.toString(), "-cp", classPath, "-proc:none"), null,
						files.getJavaFileObjectsFromFiles(generated))
				.call();
			assertThat(compiled).as("the generated sources compile").isTrue();
		}
		return classes + File.pathSeparator + sources.resolveSibling("resources") + File.pathSeparator
				+ System.getProperty("java.class.path");
	}

	/**
	 * The generated resources (the native image's reachability metadata), as one text.
	 */
	private static String generated(Path resources) throws IOException {
		StringBuilder text = new StringBuilder();
		try (Stream<Path> walk = Files.walk(resources)) {
			for (Path file : walk.filter(Files::isRegularFile).toList()) {
				text.append(Files.readString(file));
			}
		}
		return text.toString();
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
