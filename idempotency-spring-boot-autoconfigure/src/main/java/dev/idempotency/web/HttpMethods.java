package dev.idempotency.web;

/**
 * The requests the HTTP door protects, on both stacks: the mutations. Kept apart from the
 * servlet and the WebFlux classes so that either stack loads it without the other's API.
 */
final class HttpMethods {

	private HttpMethods() {
	}

	/**
	 * Whether a request with this method may change something: POST, PUT, PATCH, DELETE.
	 */
	static boolean isMutation(String method) {
		return "POST".equals(method) || "PUT".equals(method) || "PATCH".equals(method) || "DELETE".equals(method);
	}

}
