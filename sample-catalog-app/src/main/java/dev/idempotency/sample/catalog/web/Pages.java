package dev.idempotency.sample.catalog.web;

/** The paging parameters of the list routes. */
final class Pages {

	private Pages() {
	}

	/**
	 * Checks {@code pageSize}: {@code null} means "no paging", anything else must be a positive
	 * integer.
	 */
	static String pageSize(String pageSize) {
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

	/** Checks {@code pageToken}: the handlers' tokens are offsets into the full listing. */
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
