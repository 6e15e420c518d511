package dev.idempotency.autoconfigure.internal;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * The response headers the HTTP door never stores for replay, each with why: its filters
 * (Spring MVC's and WebFlux's) leave them out of a stored response whatever
 * {@code idempotency.response.stored-headers} says, and
 * {@code IdempotencyPropertiesValidator} refuses them there at start-up, so that a header
 * an application asked for is not dropped without a word. Also the headers both filters
 * store, so that the two stacks replay the same answer.
 *
 * @since 0.1.0
 */
public final class NeverStoredHeaders {

	private static final String CREDENTIALS = "it carries credentials, which a replay would hand to every"
			+ " retry with the key";

	private static final String CHALLENGE = "it is an authentication challenge, which belongs to the answer it"
			+ " was sent with and is asked afresh of each request";

	private static final String HOP_BY_HOP = "it is a hop-by-hop header (RFC 9110, section 7.6.1): it is about"
			+ " one connection, not the answer, and the server writes its own for each";

	/** Lower-case names and why each is never stored. */
	private static final Map<String, String> REASONS = Map.ofEntries(
			Map.entry("set-cookie",
					"it sets a cookie (a session, a token) for one client, which a replay would hand to every retry"
							+ " with the key"),
			Map.entry("set-cookie2",
					"it sets a cookie (the obsolete Set-Cookie2), which a replay would hand to every retry with the key"),
			Map.entry("authorization", CREDENTIALS), Map.entry("proxy-authorization", CREDENTIALS),
			Map.entry("www-authenticate", CHALLENGE), Map.entry("proxy-authenticate", CHALLENGE),
			Map.entry("connection", HOP_BY_HOP), Map.entry("keep-alive", HOP_BY_HOP),
			Map.entry("transfer-encoding", HOP_BY_HOP), Map.entry("te", HOP_BY_HOP), Map.entry("trailer", HOP_BY_HOP),
			Map.entry("upgrade", HOP_BY_HOP),
			Map.entry("content-length", "a replay writes it from the length of the stored body"),
			Map.entry("idempotent-replayed", "a replay writes it itself (true), and a first answer has none"));

	/** Stored whatever the configuration says, when present. */
	private static final List<String> DEFAULT_STORED = List.of("Location", "Content-Location", "ETag", "Last-Modified");

	private NeverStoredHeaders() {
	}

	/**
	 * The response headers the HTTP door stores besides {@code Content-Type}:
	 * {@code Location}, {@code Content-Location}, {@code ETag}, {@code Last-Modified} and
	 * those named, less the ones never stored (refused at start-up by the properties'
	 * validator, which does not run when the application declares its own
	 * {@code IdempotencySettings}: left out here too).
	 * @param named the headers of {@code idempotency.response.stored-headers}
	 * @return the names, each once whatever its case
	 */
	public static List<String> storedWith(Collection<String> named) {
		Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
		names.addAll(DEFAULT_STORED);
		names.addAll(named);
		names.removeIf(NeverStoredHeaders::contains);
		return List.copyOf(names);
	}

	/**
	 * Whether a header is never stored.
	 * @param name a header name, in any case
	 */
	public static boolean contains(String name) {
		return REASONS.containsKey(name.toLowerCase(Locale.ROOT));
	}

	/**
	 * Why a header is never stored.
	 * @param name a header name, in any case
	 * @return the reason in words, or {@code null} if the header may be stored
	 */
	public static @Nullable String reason(String name) {
		return REASONS.get(name.toLowerCase(Locale.ROOT));
	}

}
