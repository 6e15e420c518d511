package dev.idempotency.method;

import java.io.File;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The method door's own form of a call's arguments: two calls share it only when the
 * method can read no difference between them, whatever JSON would make of them; what it
 * cannot read is refused, never compared on less.
 */
class CanonicalArgumentsTests {

	@Test
	void equalValuesInOtherInstancesAreOneCall() {
		assertSame(new Order("o-1", new BigDecimal("1.50"), List.of(new Line("pen", 2))),
				new Order("o-1", new BigDecimal("1.50"), new ArrayList<>(List.of(new Line("pen", 2)))));
		assertSame(new Hidden("a", 1), new Hidden("a", 1));
		assertSame(new Date(1_700_000_000_123L), new Date(1_700_000_000_123L));
	}

	@Test
	void everyValueTheMethodCanReadCounts() {
		assertDifferent(new Hidden("a", 1), new Hidden("a", 2));
		assertDifferent(new Hidden("a", 1), new Hidden("b", 1));
		// The type and the scale are readable: 1 is not 1L, 1.5 is not 1.50.
		assertDifferent(1, 1L);
		assertDifferent(new BigDecimal("1.5"), new BigDecimal("1.50"));
		assertDifferent("1", 1);
		assertDifferent(List.of(1, 2), List.of(2, 1));
		assertDifferent(new int[] { 1, 2 }, new long[] { 1, 2 });
		assertDifferent(new Date(1_000), new Date(1_001));
		assertDifferent(ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneId.of("Europe/Paris")),
				ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneId.of("Europe/Berlin")));
		assertDifferent(Optional.empty(), Optional.of("x"));
		assertDifferent(null, "");
		assertDifferent(new Child("a", "b"), new Child("a", "c"));
		// A subclass's own class counts, and so do fields the declared type does not
		// have.
		assertDifferent(new Base("a"), new Child("a", null));
		// A lone surrogate is a character of its own.
		assertDifferent("\uD800", "?");
	}

	@Test
	void setsAndMapsAreComparedWhateverTheirOrder() {
		assertSame(new LinkedHashSet<>(List.of("a", "b", "c")), new TreeSet<>(Set.of("c", "b", "a")));
		Map<String, Integer> one = new LinkedHashMap<>();
		one.put("x", 1);
		one.put("y", 2);
		Map<String, Integer> other = new HashMap<>();
		other.put("y", 2);
		other.put("x", 1);
		assertSame(one, other);
		other.put("y", 3);
		assertDifferent(one, other);
	}

	@Test
	void cyclesEndAndTheirShapeCounts() {
		Node ring = new Node("a");
		ring.next = new Node("b");
		ring.next.next = ring;
		Node otherRing = new Node("a");
		otherRing.next = new Node("b");
		otherRing.next.next = otherRing;
		assertSame(ring, otherRing);
		Node loop = new Node("a");
		loop.next = new Node("b");
		loop.next.next = loop.next;
		assertDifferent(ring, loop);
	}

	@Test
	void aValueWhoseStateTheDoorCannotReadIsRefusedWithWhereItIs() {
		assertThatExceptionOfType(CanonicalArguments.UnreadableValueException.class)
			.isThrownBy(() -> CanonicalArguments.arguments(new Object[] { "k", new Holder(new File("/tmp/a")) },
					List.of("id", "holder")))
			.withMessage("holder.content is a java.io.File, a JDK type whose state the door does not read");
		Supplier<String> lambda = () -> "x";
		assertThatExceptionOfType(CanonicalArguments.UnreadableValueException.class)
			.isThrownBy(() -> CanonicalArguments.value(List.of(lambda)))
			.withMessageStartingWith("its value[0] is a ")
			.withMessageContaining("generated at run time");
		assertThatExceptionOfType(CanonicalArguments.UnreadableValueException.class)
			.isThrownBy(() -> CanonicalArguments.value(new Worker()))
			.withMessageContaining("extends java.lang.Thread");
	}

	@Test
	void declaredTypesAreCheckedAtStartUpAndOpenOnesLeftToEachValue() throws Exception {
		assertThat(problem("plain")).isNull();
		assertThat(problem("open")).as("Object, an interface: checked on each value").isNull();
		assertThat(problem("stream")).isEqualTo("the argument 'upload' (java.io.InputStream) cannot be compared by"
				+ " its values: upload is a java.io.InputStream, a JDK type whose state the door does not read");
		assertThat(problem("nested")).contains("'lines' (java.util.List<" + Holder.class.getName() + ">)")
			.contains("lines[].content is a java.io.File");
		assertThat(problem("sealed")).contains("shape as Blob").contains("java.io.InputStream");
		assertThat(problem("abstractWithFile")).contains("folder.content is a java.io.File");
		assertThat(problem("callback")).contains("java.util.function.Supplier");
	}

	@Test
	void theClassesReadByFieldsAreThoseTheDeclaredTypesName() {
		assertThat(CanonicalArguments.classesReadByFields(method("plain"), Signatures.class))
			.containsExactlyInAnyOrder(Order.class, Line.class);
	}

	private static @Nullable String problem(String name) {
		Method method = method(name);
		return CanonicalArguments.problem(method, Signatures.class, IdempotentOperation.parameterNames(method));
	}

	private static Method method(String name) {
		for (Method method : ReflectionUtils.getDeclaredMethods(Signatures.class)) {
			if (method.getName().equals(name)) {
				return method;
			}
		}
		throw new IllegalArgumentException(name);
	}

	private static void assertSame(@Nullable Object one, @Nullable Object other) {
		assertThat(CanonicalArguments.value(one)).isEqualTo(CanonicalArguments.value(other));
	}

	private static void assertDifferent(@Nullable Object one, @Nullable Object other) {
		assertThat(CanonicalArguments.value(one)).isNotEqualTo(CanonicalArguments.value(other));
	}

	record Line(String item, int count) {
	}

	record Order(String id, BigDecimal amount, List<Line> lines) {
	}

	/** No getter: JSON would write {@code {}}. */
	static class Hidden {

		private final String name;

		private final int count;

		Hidden(String name, int count) {
			this.name = name;
			this.count = count;
		}

	}

	static class Base {

		final String name;

		Base(String name) {
			this.name = name;
		}

	}

	static class Child extends Base {

		final @Nullable String extra;

		Child(String name, @Nullable String extra) {
			super(name);
			this.extra = extra;
		}

	}

	static class Node {

		final String name;

		@Nullable Node next;

		Node(String name) {
			this.name = name;
		}

	}

	record Holder(File content) {
	}

	static class Worker extends Thread {

	}

	interface Command {

	}

	sealed interface Shape permits Circle, Blob {

	}

	record Circle(double radius) implements Shape {
	}

	record Blob(InputStream data) implements Shape {
	}

	abstract static class Folder {

		File content = new File("/");

	}

	interface Signatures {

		void plain(String id, Order order, Instant at);

		void open(String id, Object payload, Comparable<String> other, Command command);

		void stream(String id, InputStream upload);

		void nested(String id, List<Holder> lines);

		void sealed(String id, Shape shape);

		void abstractWithFile(String id, Folder folder);

		void callback(String id, Supplier<String> then);

	}

}
