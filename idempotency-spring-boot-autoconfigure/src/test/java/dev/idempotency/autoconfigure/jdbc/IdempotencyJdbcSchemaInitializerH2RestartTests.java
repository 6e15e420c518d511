package dev.idempotency.autoconfigure.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application started again on the H2 database it used before, for each way H2 can be
 * told to treat unquoted names: upper case (its default), lower case
 * ({@code DATABASE_TO_LOWER=TRUE}, as Iceberg's {@code JdbcCatalog} needs and the sample
 * catalog opens its file), case-insensitive, or as written. The second start finds the
 * changelog tables and the records of the first, and its store works.
 */
class IdempotencyJdbcSchemaInitializerH2RestartTests {

	private static final String CHANGELOG_PATH = IdempotencyJdbcSchemaInitializer.CHANGELOG
		.substring("classpath:".length());

	@TempDir
	Path directory;

	@ParameterizedTest
	@ValueSource(strings = { "", ";DATABASE_TO_LOWER=TRUE", ";DATABASE_TO_LOWER=TRUE;CASE_INSENSITIVE_IDENTIFIERS=TRUE",
			";CASE_INSENSITIVE_IDENTIFIERS=TRUE", ";DATABASE_TO_UPPER=FALSE" })
	void anApplicationStartsAgainOnItsH2FileAndItsStoreWorks(String settings) {
		startTwiceAndUseTheStore("jdbc:h2:file:" + this.directory.resolve("app") + settings);
	}

	@Test
	void anApplicationStartsAgainOnANamedInMemoryDatabaseKeptOpen() {
		// The sample catalog's tests open their catalog so.
		startTwiceAndUseTheStore("jdbc:h2:mem:restart_" + UUID.randomUUID().toString().replace("-", "")
				+ ";DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1");
	}

	@Test
	void aChangeSetAddedToTheChangelogBetweenStartsIsAppliedOnTheSecond() throws IOException {
		String url = "jdbc:h2:file:" + this.directory.resolve("app") + ";DATABASE_TO_LOWER=TRUE";
		runner(url).run((context) -> assertThat(context).hasNotFailed());
		runner(url).withClassLoader(changelogWithAddedChangeSet()).run((context) -> {
			assertThat(context).hasNotFailed();
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			assertThat(jdbc
				.sql("SELECT column_name FROM information_schema.columns"
						+ " WHERE LOWER(table_name) = 'idempotency_record' AND LOWER(column_name) = 'added_later'")
				.query(String.class)
				.list()).hasSize(1);
			assertThat(jdbc.sql("SELECT id FROM " + IdempotencyJdbcSchemaInitializer.CHANGELOG_TABLE)
				.query(String.class)
				.list()).contains("added-later-idempotency_record");
		});
	}

	private void startTwiceAndUseTheStore(String url) {
		RecordId first = new RecordId("restart", UUID.randomUUID().toString());
		runner(url).run((context) -> {
			assertThat(context).hasNotFailed();
			reserveAndComplete(context.getBean(IdempotencyStore.class), first);
		});
		runner(url).run((context) -> {
			assertThat(context).hasNotFailed();
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			assertThat(store.find(first)).get().extracting(IdempotencyRecord::response).isNotNull();
			reserveAndComplete(store, new RecordId("restart", UUID.randomUUID().toString()));
			assertThat(changelogTables(context)).hasSize(1);
		});
	}

	private static ApplicationContextRunner runner(String url) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					IdempotencyJdbcStoreAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + url, "idempotency.store.type=jdbc");
	}

	private static void reserveAndComplete(IdempotencyStore store, RecordId id) {
		String owner = UUID.randomUUID().toString();
		assertThat(
				store.reserve(new ReserveRequest(id, "fp", "op", owner, Duration.ofMinutes(1), Duration.ofMinutes(10))))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(store.complete(id, owner, new StoredResponse(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))))
			.isTrue();
	}

	/**
	 * The changelog tables of the starter, whatever case H2 gave their names (the query's
	 * own names are in upper case: H2 folds them if it folds to lower case, and finds its
	 * upper-case {@code INFORMATION_SCHEMA} if it keeps them as written).
	 */
	private static List<String> changelogTables(AssertableApplicationContext context) {
		return JdbcClient.create(context.getBean(DataSource.class))
			.sql("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE UPPER(TABLE_NAME) = ?")
			.param(IdempotencyJdbcSchemaInitializer.CHANGELOG_TABLE)
			.query(String.class)
			.list();
	}

	/**
	 * A class loader that serves the starter's changelog with one more change set at its
	 * end, as a later version of the starter would ship it.
	 */
	private ClassLoader changelogWithAddedChangeSet() throws IOException {
		ClassLoader parent = getClass().getClassLoader();
		String changelog;
		try (InputStream in = parent.getResourceAsStream(CHANGELOG_PATH)) {
			changelog = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		changelog += """
				  - changeSet:
				      id: added-later-${idempotency.table-name}
				      author: idempotency-spring-boot-tests
				      changes:
				        - addColumn:
				            tableName: ${idempotency.table-name}
				            columns:
				              - column:
				                  name: added_later
				                  type: VARCHAR(16)
				""";
		Path file = this.directory.resolve("changelog-master.yaml");
		Files.writeString(file, changelog);
		URL url = file.toUri().toURL();
		return new ClassLoader(parent) {

			@Override
			public URL getResource(String name) {
				return CHANGELOG_PATH.equals(name) ? url : super.getResource(name);
			}

			@Override
			public Enumeration<URL> getResources(String name) throws IOException {
				return CHANGELOG_PATH.equals(name) ? Collections.enumeration(List.of(url)) : super.getResources(name);
			}

		};
	}

}
