package dev.idempotency.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.type.classreading.MetadataReader;
import org.springframework.core.type.classreading.MetadataReaderFactory;
import org.springframework.core.type.classreading.SimpleMetadataReaderFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What Spring Boot reads to find the starter's auto-configurations: every line names an
 * {@code @AutoConfiguration} class, and every such class of the starter is named.
 */
class AutoConfigurationImportsTests {

	private static final String IMPORTS = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

	@Test
	void everyAutoConfigurationIsListedOnceAndEveryLineIsOne() throws Exception {
		List<String> lines = imports();
		assertThat(lines).doesNotHaveDuplicates();
		for (String line : lines) {
			assertThat(Class.forName(line)).as(line).hasAnnotation(AutoConfiguration.class);
		}
		List<String> declared = new ArrayList<>();
		MetadataReaderFactory readers = new SimpleMetadataReaderFactory();
		for (Resource resource : new PathMatchingResourcePatternResolver()
			.getResources("classpath*:dev/idempotency/**/*.class")) {
			if (resource.getURL().toString().contains("/test-classes/")) {
				continue;
			}
			MetadataReader reader = readers.getMetadataReader(resource);
			if (reader.getAnnotationMetadata().hasAnnotation(AutoConfiguration.class.getName())) {
				declared.add(reader.getClassMetadata().getClassName());
			}
		}
		assertThat(declared).isNotEmpty();
		assertThat(lines).containsExactlyInAnyOrderElementsOf(declared);
	}

	private static List<String> imports() throws IOException {
		try (InputStream in = AutoConfigurationImportsTests.class.getClassLoader().getResourceAsStream(IMPORTS)) {
			assertThat(in).as(IMPORTS).isNotNull();
			return Arrays.stream(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"))
				.map(String::strip)
				.filter((line) -> !line.isEmpty() && !line.startsWith("#"))
				.toList();
		}
	}

}
