package dev.idempotency.sample.catalog.web;

import java.util.function.BiFunction;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/** The paging parameters of the list routes. */
final class Pages {

	private Pages() {
	}

	/**
	 * One listing route: the whole list without {@code pageSize}, else the page the
	 * checked {@code pageToken} and {@code pageSize} select.
	 */
	static <T> T list(String pageToken, @Nullable String pageSize, Supplier<T> whole,
			BiFunction<String, String, T> page) {
		String size = pageSize(pageSize);
		return (size != null) ? page.apply(pageToken(pageToken), size) : whole.get();
	}

	/**
	 * Checks {@code pageSize}: {@code null} means "no paging", anything else must be a
	 * positive integer.
	 */
	static @Nullable String pageSize(@Nullable String pageSize) {
		if (pageSize == null || pageSize.isEmpty()) {
			return null;
		}
		try {
			if (Integer.parseInt(pageSize) > 0) {
				return pageSize;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException("Invalid pageSize: " + pageSize + " (must be a positive integer)");
	}

	/**
	 * Checks {@code pageToken}: the handlers' tokens are offsets into the full listing.
	 */
	static String pageToken(String pageToken) {
		if (pageToken == null || pageToken.isEmpty()) {
			return pageToken;
		}
		try {
			if (Integer.parseInt(pageToken) >= 0) {
				return pageToken;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException("Invalid pageToken: " + pageToken);
	}

}
