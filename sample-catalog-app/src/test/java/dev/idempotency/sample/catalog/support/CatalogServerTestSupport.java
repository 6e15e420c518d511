package dev.idempotency.sample.catalog.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.sample.catalog.iceberg.LocalFileIO;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Runs the catalog on a random port, on an in-memory H2 database (catalog and idempotency
 * records, the embedded default's JDBC store on the catalog's database) and a temporary
 * warehouse directory of its own (removed when the JVM exits), in the configured
 * {@code idempotency.mode} (lease unless a test class says otherwise, e.g. with
 * {@link RecordAfterSuccessMode}), and tells from the starter's meters whether the
 * requests of a test really ran in that mode.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = CatalogServerTestSupport.EMBEDDED_CATALOG_DATABASE)
public abstract class CatalogServerTestSupport {

	/**
	 * The catalog's database: H2 in memory, one per context. An inlined property, so that
	 * a test class that puts the catalog elsewhere ({@link JdbcStores}) overrides it with
	 * a {@link DynamicPropertySource} of its own (those of a superclass run after those
	 * of its subclass, and the last registration of a name wins).
	 */
	static final String EMBEDDED_CATALOG_DATABASE = "spring.datasource.url=jdbc:h2:mem:catalog-${sample-test.catalog-id}"
			+ ";DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1";

	@LocalServerPort
	protected int port;

	@Autowired
	private MeterRegistry meters;

	private long reservesBefore;

	private long recordingsBefore;

	private long completedBefore;

	@BeforeEach
	void countIdempotencyMetersFromHere() {
		this.reservesBefore = storeCalls("reserve");
		this.recordingsBefore = storeCalls("record_completed");
		this.completedBefore = executions("completed");
	}

	/**
	 * Whether this test class asks for record-after-success mode
	 * ({@link RecordAfterSuccessMode}). Taken from the annotation, not from the property
	 * it sets, so that a setting the application ignored fails
	 * {@link #assertRanInTheConfiguredMode}.
	 */
	protected boolean recordAfterSuccess() {
		return MergedAnnotations.from(getClass(), SearchStrategy.TYPE_HIERARCHY)
			.isPresent(RecordAfterSuccessMode.class);
	}

	/**
	 * Asserts that the test so far stored the answers of {@code operations} keyed
	 * operations, and did it the configured mode's way: lease mode reserves each key
	 * before its operation and never records after it; record-after-success never
	 * reserves (so never holds an {@code IN_PROGRESS} record) and records each answer
	 * with one conditional insert. A mode setting that were silently ignored fails here.
	 */
	protected void assertRanInTheConfiguredMode(int operations) {
		long reserves = storeCalls("reserve") - this.reservesBefore;
		long recordings = storeCalls("record_completed") - this.recordingsBefore;
		assertThat(executions("completed") - this.completedBefore).as("answers stored").isEqualTo(operations);
		if (recordAfterSuccess()) {
			assertThat(reserves).as("reserve calls in record-after-success mode").isZero();
			assertThat(recordings).as("record_completed calls in record-after-success mode")
				.isGreaterThanOrEqualTo(operations);
		}
		else {
			assertThat(reserves).as("reserve calls in lease mode").isGreaterThanOrEqualTo(operations);
			assertThat(recordings).as("record_completed calls in lease mode").isZero();
		}
	}

	/** Calls of the store's method {@code call} (the engine's store-call timer). */
	protected long storeCalls(String call) {
		return this.meters.find(MicrometerIdempotencyListener.TIMER_NAME)
			.tag("call", call)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	/** Finished runs with this {@code result} ({@code idempotency.executions}). */
	protected long executions(String result) {
		return (long) this.meters.find(MicrometerIdempotencyListener.EXECUTIONS_METER_NAME)
			.tag("result", result)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	@DynamicPropertySource
	static void catalogStorage(DynamicPropertyRegistry registry) throws IOException {
		Path warehouse = Files.createTempDirectory("catalog-warehouse-");
		Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteRecursively(warehouse)));
		String catalogId = UUID.randomUUID().toString();
		registry.add("catalog.warehouse", warehouse::toString);
		registry.add("sample-test.catalog-id", () -> catalogId);
	}

	protected URI catalogUri() {
		return URI.create("http://127.0.0.1:" + this.port);
	}

	/**
	 * Iceberg's own REST client, unmodified, writing manifests through the same local
	 * file system.
	 */
	protected static RESTCatalog connect(URI uri) {
		return connect(uri, Map.of());
	}

	protected static RESTCatalog connect(URI uri, Map<String, String> extra) {
		Map<String, String> properties = new HashMap<>();
		properties.put(CatalogProperties.URI, uri.toString());
		properties.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
		properties.putAll(extra);
		RESTCatalog catalog = new RESTCatalog();
		catalog.initialize("test-client", properties);
		return catalog;
	}

	private static void deleteRecursively(Path root) {
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
