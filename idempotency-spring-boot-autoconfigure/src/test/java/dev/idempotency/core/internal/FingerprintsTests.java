package dev.idempotency.core.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FingerprintsTests {

	private static final byte[] BODY = "{}".getBytes();

	private static String query(String query) {
		return Fingerprints.http("POST", "/things", query, "application/json", BODY);
	}

	@Test
	void theOrderOfDifferentParameterNamesDoesNotMatter() {
		assertThat(query("a=1&b=2")).isEqualTo(query("b=2&a=1"));
	}

	@Test
	void theOrderOfTheValuesOfOneNameIsPartOfTheRequest() {
		assertThat(query("a=1&a=2")).isNotEqualTo(query("a=2&a=1"));
		assertThat(query("a=1&b=0&a=2")).isEqualTo(query("b=0&a=1&a=2")).isNotEqualTo(query("a=2&b=0&a=1"));
	}

	@Test
	void aNameWithoutValueAndAnEmptyQueryAreKeptApart() {
		assertThat(query("a")).isNotEqualTo(query(null)).isNotEqualTo(query("a="));
		assertThat(query("")).isEqualTo(query(null));
	}

}
