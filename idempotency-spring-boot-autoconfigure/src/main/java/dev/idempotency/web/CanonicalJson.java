package dev.idempotency.web;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonFactory;

/**
 * A canonical form of a JSON text, so that two bodies that say the same thing have the
 * same fingerprint: object members sorted by name (UTF-16 code units, as RFC 8785 does),
 * no whitespace, strings with only the escapes JSON requires, numbers by their
 * mathematical value ({@code 1}, {@code 1.0} and {@code 1e0} are one number, written
 * without rounding: no two different numbers become one, unlike a conversion to
 * {@code double}), arrays in their order. Read with Jackson's streaming parser (its
 * limits on nesting, number and string length apply).
 */
final class CanonicalJson {

	private static final JsonFactory FACTORY = JsonFactory.builder()
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.build();

	private CanonicalJson() {
	}

	/**
	 * The canonical form (UTF-8) of {@code body}, or {@code null} when it is not one
	 * valid JSON text (empty, malformed, a member name twice in one object, content after
	 * the value, a number beyond {@link BigDecimal}'s range).
	 */
	static byte @Nullable [] of(byte[] body) {
		try (JsonParser parser = FACTORY.createParser(ObjectReadContext.empty(), body)) {
			JsonToken first = parser.nextToken();
			if (first == null) {
				return null;
			}
			Object value = read(parser, first);
			if (parser.nextToken() != null) {
				return null;
			}
			StringBuilder out = new StringBuilder(body.length);
			write(value, out);
			return out.toString().getBytes(StandardCharsets.UTF_8);
		}
		catch (JacksonException | NumberFormatException | ArithmeticException ex) {
			return null;
		}
	}

	/**
	 * A tree of the value: a sorted map for an object, a list for an array, a
	 * {@link Text} for a string, {@link BigDecimal} for a number, else the literal's
	 * text.
	 */
	private static Object read(JsonParser parser, JsonToken token) {
		return switch (token) {
			case START_OBJECT -> {
				Map<String, Object> members = new TreeMap<>();
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
					String name = parser.currentName();
					members.put(name, read(parser, parser.nextToken()));
				}
				yield members;
			}
			case START_ARRAY -> {
				List<Object> elements = new ArrayList<>();
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
					elements.add(read(parser, next));
				}
				yield elements;
			}
			case VALUE_STRING -> new Text(parser.getString());
			case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> new BigDecimal(parser.getText()).stripTrailingZeros();
			case VALUE_TRUE -> "true";
			case VALUE_FALSE -> "false";
			case VALUE_NULL -> "null";
			default -> throw new IllegalStateException("unexpected JSON token " + token);
		};
	}

	private static void write(Object value, StringBuilder out) {
		if (value instanceof Map<?, ?> members) {
			out.append('{');
			boolean first = true;
			for (Map.Entry<?, ?> member : members.entrySet()) {
				if (!first) {
					out.append(',');
				}
				first = false;
				string((String) member.getKey(), out);
				out.append(':');
				write(member.getValue(), out);
			}
			out.append('}');
		}
		else if (value instanceof List<?> elements) {
			out.append('[');
			for (int i = 0; i < elements.size(); i++) {
				if (i > 0) {
					out.append(',');
				}
				write(elements.get(i), out);
			}
			out.append(']');
		}
		else if (value instanceof Text text) {
			string(text.value(), out);
		}
		else if (value instanceof BigDecimal number) {
			// stripTrailingZeros gives one (unscaled value, scale) per number; toString
			// writes it without expanding a large exponent.
			out.append(number.signum() == 0 ? "0" : number.toString());
		}
		else {
			out.append((String) value);
		}
	}

	private static void string(String value, StringBuilder out) {
		out.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				out.append('\\').append(c);
			}
			else if (c < 0x20 || Character.isSurrogate(c)) {
				// Control characters must be escaped; a surrogate is escaped so that an
				// unpaired one is kept as it was instead of becoming '?' in UTF-8.
				out.append(String.format("\\u%04x", (int) c));
			}
			else {
				out.append(c);
			}
		}
		out.append('"');
	}

	/** A JSON string, kept apart from the literals in the tree. */
	private record Text(String value) {
	}

}
