package dev.idempotency.method;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link MethodResultCodec#changed} finds between a result and the value read back
 * from its JSON: a value inside a container read back as another class, never a value
 * read back as itself or as the class it was declared (a subclass's superclass), nor
 * entries that a map read back holds in another order.
 */
class MethodResultCodecChangedTests {

	@Test
	void aNumberReadBackAsAnotherClassIsNamedWithWhereItIs() {
		assertThat(MethodResultCodec.changed(List.of(5L, "a"), List.of(5, "a"), "the result"))
			.isEqualTo("the result[0] reads back as java.lang.Integer, not as java.lang.Long");
		assertThat(
				MethodResultCodec.changed(Map.of("price", new BigDecimal("1.50")), Map.of("price", 1.5), "the result"))
			.isEqualTo("the result[price] reads back as java.lang.Double, not as java.math.BigDecimal");
		assertThat(MethodResultCodec.changed(Set.of(1L, 2L), Set.of(1, 2), "the result"))
			.startsWith("the result's elements read back as");
		assertThat(MethodResultCodec.changed(Map.of(7L, "x"), Map.of("7", "x"), "the result"))
			.isEqualTo("the result's key 7 reads back as java.lang.String, not as java.lang.Long");
		assertThat(MethodResultCodec.changed(Optional.of(List.of(new Line("a"))), Optional.of(List.of(Map.of("a", 1))),
				"the result"))
			.contains("reads back as java.util.");
		assertThat(MethodResultCodec.changed(List.of(1, 2), List.of(1), "the result"))
			.isEqualTo("the result reads back with 1 elements, not 2");
	}

	@Test
	void valuesReadBackAsTheyWereOrAsTheirSuperclassAreUnchanged() {
		assertThat(MethodResultCodec.changed(List.of(1, "a", true, 2.5), new ArrayList<>(List.of(1, "a", true, 2.5)),
				"the result"))
			.isNull();
		assertThat(MethodResultCodec.changed(new SpecialLine("a"), new Line("a"), "the result")).as("a subclass")
			.isNull();
		assertThat(MethodResultCodec.changed(new Object[] { 1, "a" }, new Object[] { 1, "a" }, "the result")).isNull();
		assertThat(MethodResultCodec.changed(new int[] { 1 }, new int[] { 1 }, "the result")).isNull();
		assertThat(MethodResultCodec.changed(null, null, "the result")).isNull();
		assertThat(MethodResultCodec.changed("a", null, "the result"))
			.isEqualTo("the result reads back as null, not as a");
	}

	@Test
	void aRecordsComponentsAreComparedAsAContainersValues() {
		assertThat(MethodResultCodec.changed(new Holder(5L), new Holder(5), "the result"))
			.isEqualTo("the result.payload reads back as java.lang.Integer, not as java.lang.Long");
		assertThat(MethodResultCodec.changed(new Holder(List.of("a")), new Holder(List.of("a")), "the result"))
			.isNull();
	}

	@Test
	void aSetsElementsMayReadBackAsASuperclassOfTheirClass() {
		assertThat(MethodResultCodec.changed(Set.of(new SpecialLine("a")), Set.of(new Line("a")), "the result"))
			.isNull();
		assertThat(MethodResultCodec.changed(Set.of(new Line("a")), Set.of(new SpecialLine("a")), "the result"))
			.startsWith("the result's elements read back as");
	}

	record Holder(Object payload) {
	}

	/**
	 * A map written in one order (a large hash map) and read back in another: each value
	 * is compared with the one under its key.
	 */
	@Test
	void aMapReadBackInAnotherOrderIsComparedKeyByKey() {
		Map<String, Object> written = new HashMap<>(1024);
		Map<String, Object> read = new LinkedHashMap<>();
		for (int i = 0; i < 20; i++) {
			written.put("k" + i, (i % 2 == 0) ? i : "v" + i);
		}
		List<String> keys = new ArrayList<>(written.keySet());
		java.util.Collections.reverse(keys);
		keys.forEach((key) -> read.put(key, written.get(key)));
		assertThat(MethodResultCodec.changed(written, read, "the result")).isNull();
	}

	static class Line {

		final String text;

		Line(String text) {
			this.text = text;
		}

	}

	static class SpecialLine extends Line {

		SpecialLine(String text) {
			super(text);
		}

	}

}
