package dev.idempotency.sample.catalog.support;

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

import dev.idempotency.sample.catalog.iceberg.LocalFileIO;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.rest.RESTCatalog;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Runs the catalog on a random port, on an in-memory H2 database and a temporary
 * warehouse directory of its own (removed when the JVM exits).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
public abstract class CatalogServerTestSupport {

	@LocalServerPort
	protected int port;

	@DynamicPropertySource
	static void catalogStorage(DynamicPropertyRegistry registry) throws IOException {
		Path warehouse = Files.createTempDirectory("catalog-warehouse-");
		Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteRecursively(warehouse)));
		String database = "jdbc:h2:mem:catalog-" + UUID.randomUUID() + ";DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1";
		registry.add("catalog.warehouse", warehouse::toString);
		registry.add("spring.datasource.url", () -> database);
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
