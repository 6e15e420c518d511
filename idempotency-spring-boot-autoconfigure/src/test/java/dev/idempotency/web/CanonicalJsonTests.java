package dev.idempotency.web;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CanonicalJsonTests {

	private static String canonical(String json) {
		byte[] bytes = CanonicalJson.of(json.getBytes(StandardCharsets.UTF_8));
		return (bytes != null) ? new String(bytes, StandardCharsets.UTF_8) : null;
	}

	@Test
	void memberOrderAndWhitespaceDoNotCountArrayOrderDoes() {
		assertThat(canonical(" {\"b\": [1, 2], \"a\" : {\"y\":true,\"x\":null}}\n"))
			.isEqualTo("{\"a\":{\"x\":null,\"y\":true},\"b\":[1,2]}")
			.isEqualTo(canonical("{\"a\":{\"x\":null,\"y\":true},\"b\":[1,2]}"));
		assertThat(canonical("[2,1]")).isNotEqualTo(canonical("[1,2]"));
	}

	@Test
	void numbersAreComparedByValueWithoutRounding() {
		assertThat(canonical("[1, 1.0, 1e0, 10E-1, 1.000]")).isEqualTo("[1,1,1,1,1]");
		assertThat(canonical("[0, -0, 0.0, 0e5]")).isEqualTo("[0,0,0,0]");
		assertThat(canonical("100")).isEqualTo(canonical("1e2"));
		// Equal as doubles, different as numbers.
		assertThat(canonical("12345678901234567890")).isNotEqualTo(canonical("12345678901234567891"));
		assertThat(canonical("0.1")).isNotEqualTo(canonical("0.10000000000000001"));
		assertThat(canonical("1")).isNotEqualTo(canonical("\"1\""));
	}

	@Test
	void stringsAreComparedByTheirCharactersNotTheirEscapes() {
		assertThat(canonical("\"\\u0041\\/\\u00e9\"")).isEqualTo(canonical("\"A/\u00e9\""));
		assertThat(canonical("\"a\\\"b\\\\c\\n\"")).isEqualTo("\"a\\\"b\\\\c\\u000a\"");
		assertThat(canonical("\"\\ud83d\\ude00\"")).isEqualTo(canonical("\"\uD83D\uDE00\""));
		assertThat(canonical("\"\\ud800\"")).isNotEqualTo(canonical("\"\\udc00\""));
		assertThat(canonical("{\"true\":1}")).isNotEqualTo(canonical("{\"true\":true}"));
	}

	@Test
	void whatIsNotOneValidJsonTextHasNoCanonicalForm() {
		assertThat(canonical("")).isNull();
		assertThat(canonical("{\"a\":1")).isNull();
		assertThat(canonical("{\"a\":1} {}")).isNull();
		assertThat(canonical("{\"a\":1,\"a\":2}")).isNull();
		assertThat(canonical("{'a':1}")).isNull();
		assertThat(canonical("[1e99999999999]")).isNull();
		assertThat(canonical("[".repeat(100_000) + "]".repeat(100_000))).isNull();
	}

}
