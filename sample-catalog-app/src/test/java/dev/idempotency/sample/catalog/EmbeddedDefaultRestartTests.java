package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.store.IdempotencyStore;
import org.apache.iceberg.rest.RESTUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The embedded default (no profile) keeps its idempotency records where it keeps its
 * catalog, in the H2 file: a keyed request retried after a restart of the application is
 * replayed, not run again (which would answer 409 AlreadyExists for a namespace the first
 * attempt created). Two application contexts one after the other on the same H2 file and
 * warehouse, with nothing but their locations set: every other setting is the sample's
 * own {@code application.yaml}.
 */
class EmbeddedDefaultRestartTests {

	@TempDir
	Path directory;

	@Test
	void aKeyedRetryAfterARestartIsReplayedNotRunAgain() {
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"namespace\":[\"restarted\"],\"properties\":{\"owner\":\"alice\"}}";

		Response first;
		try (ConfigurableApplicationContext app = start()) {
			first = http(app).post("/v1/namespaces", body, "Idempotency-Key", key);
		}
		assertThat(first.status()).isEqualTo(200);

		try (ConfigurableApplicationContext app = start()) {
			CatalogHttp http = http(app);
			Response retry = http.post("/v1/namespaces", body, "Idempotency-Key", key);
			assertThat(retry.status()).as(retry.toString()).isEqualTo(200);
			assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
			assertThat(retry.body()).isEqualTo(first.body());
			assertThat(http.get("/v1/namespaces").json().path("namespaces")).hasSize(1);
			assertThat(app.getBean(IdempotencyStore.class).name()).isEqualTo("jdbc");
		}
	}

	private ConfigurableApplicationContext start() {
		return SpringApplication.run(SampleCatalogApplication.class, "--server.port=0", "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--catalog.warehouse=" + this.directory.resolve("warehouse"),
				"--spring.datasource.url=jdbc:h2:file:" + this.directory.resolve("catalog")
						+ ";DATABASE_TO_LOWER=TRUE");
	}

	private static CatalogHttp http(ConfigurableApplicationContext app) {
		int port = ((WebServerApplicationContext) app).getWebServer().getPort();
		return new CatalogHttp(URI.create("http://127.0.0.1:" + port));
	}

}
