package dev.idempotency.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;

import dev.idempotency.core.internal.Fingerprints;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.Part;

import org.springframework.web.util.WebUtils;

/**
 * The {@link HttpRequestFingerprint} of a servlet request: what of its body is
 * fingerprinted is read here, through the {@link IdempotencyFilter}'s cached body, the
 * container's form parameters or its parts.
 */
final class ServletRequestBodies {

	private ServletRequestBodies() {
	}

	/** A servlet request's fingerprint, its body read when first needed. */
	static HttpRequestFingerprint fingerprint(HttpServletRequest request, long maxRequestBytes, JsonFingerprint json) {
		return new HttpRequestFingerprint(request.getMethod(), request.getRequestURI(), request.getQueryString(),
				request.getContentType(), () -> readBody(request, maxRequestBytes), json);
	}

	private static byte[] readBody(HttpServletRequest request, long maxRequestBytes) {
		try {
			return servletBody(request, maxRequestBytes);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not read the request body", ex);
		}
		catch (ServletException ex) {
			throw new IllegalStateException("could not read the request's parts", ex);
		}
	}

	/**
	 * What of the body goes into the fingerprint: the bytes as sent; for a form post, the
	 * parameters (the container parses them); for a multipart request, each part's name,
	 * headers and bytes (the container parses them, and they stay readable for the
	 * handler).
	 */
	private static byte[] servletBody(HttpServletRequest request, long maxRequestBytes)
			throws IOException, ServletException {
		String contentType = request.getContentType();
		String type = (contentType != null) ? contentType.toLowerCase(Locale.ROOT) : "";
		if (type.startsWith("multipart/")) {
			checkDeclaredLength(request, maxRequestBytes);
			return multipartBody(request, maxRequestBytes);
		}
		if (type.startsWith("application/x-www-form-urlencoded")) {
			checkDeclaredLength(request, maxRequestBytes);
			return Fingerprints.formBody(request.getParameterMap());
		}
		CachedBodyRequest cached = WebUtils.getNativeRequest(request, CachedBodyRequest.class);
		if (cached == null) {
			throw new IllegalStateException(
					"IdempotencyFilter is not installed in front of " + request.getRequestURI());
		}
		return cached.body(maxRequestBytes);
	}

	private static void checkDeclaredLength(HttpServletRequest request, long maxRequestBytes) {
		long declared = request.getContentLengthLong();
		if (declared > maxRequestBytes) {
			throw new RequestTooLargeException("the request body declares " + declared + " bytes, more than the "
					+ maxRequestBytes + " bytes this server reads for an idempotency key", maxRequestBytes);
		}
	}

	private static byte[] multipartBody(HttpServletRequest request, long maxRequestBytes)
			throws IOException, ServletException {
		Fingerprints.MultipartBody body = new Fingerprints.MultipartBody();
		long total = 0;
		for (Part part : request.getParts()) {
			total += part.getSize();
			if (total > maxRequestBytes) {
				throw new RequestTooLargeException("the request's parts are longer than the " + maxRequestBytes
						+ " bytes this server reads for an idempotency key", maxRequestBytes);
			}
			try (InputStream in = part.getInputStream()) {
				body.part(part.getName(), part.getHeaderNames(), part::getHeaders, in.readAllBytes());
			}
		}
		return body.toByteArray();
	}

}
