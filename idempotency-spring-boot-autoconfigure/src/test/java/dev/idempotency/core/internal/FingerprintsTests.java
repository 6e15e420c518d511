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
	void namesAndValuesAreComparedDecoded() {
		assertThat(query("%61=%31")).isEqualTo(query("a=1"));
		assertThat(query("a=1&%61=2")).isEqualTo(query("a=1&a=2")).isNotEqualTo(query("%61=2&a=1"));
		assertThat(query("q=a+b")).isEqualTo(query("q=a%20b")).isNotEqualTo(query("q=a%2Bb"));
		assertThat(query("q=caf%c3%a9")).isEqualTo(query("q=caf%C3%A9"));
	}

	@Test
	void anEscapedSeparatorStaysPartOfItsNameOrValue() {
		assertThat(query("v=1%262")).isNotEqualTo(query("v=1&2"));
		assertThat(query("v=1%3D2")).isEqualTo(query("v=1=2"));
		assertThat(query("a%3Db=1")).isNotEqualTo(query("a=b=1"));
		assertThat(query("a%25=1")).isNotEqualTo(query("a%=1"));
	}

	@Test
	void aQueryWithoutEscapesKeepsTheFormItHadWhenComparedAsSent() {
		for (String query : new String[] { "z=1&a=2&a=1", "q=a+b&x", "v=1=2&b=,:/@!$'()*;[]~", "é=ü" }) {
			assertThat(Fingerprints.decodedQuery(query)).isEqualTo(Fingerprints.sortedQuery(query));
		}
		assertThat(Fingerprints.decodedQuery("b=%2C&a=%61")).isEqualTo("a=a&b=,");
	}

	@Test
	void aPairThatDoesNotDecodeIsKeptAsSent() {
		assertThat(Fingerprints.decodedQuery("b=%zz&a=%4&c=%\u0661\u0661")).isEqualTo("a=%4&b=%zz&c=%\u0661\u0661");
		assertThat(query("a=%zz")).isNotEqualTo(query("a=%25zz"));
	}

	@Test
	void theQueryAsSentIsTrustedOnlyWhereNoTwoNamesAsSentAreOneName() {
		assertThat(Fingerprints.queryAsSentIsUnambiguous("a=1&a=2&b=%61&c%2C=1")).isTrue();
		assertThat(Fingerprints.queryAsSentIsUnambiguous(null)).isTrue();
		assertThat(Fingerprints.queryAsSentIsUnambiguous("a=1&%61=2")).isFalse();
		assertThat(Fingerprints.queryAsSentIsUnambiguous("a+b=1&a%20b=2")).isFalse();
	}

	@Test
	void aNameWithoutValueAndAnEmptyQueryAreKeptApart() {
		assertThat(query("a")).isNotEqualTo(query(null)).isNotEqualTo(query("a="));
		assertThat(query("")).isEqualTo(query(null));
	}

}
