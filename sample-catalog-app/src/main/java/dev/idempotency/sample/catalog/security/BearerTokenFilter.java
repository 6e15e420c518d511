package dev.idempotency.sample.catalog.security;

import java.io.IOException;
import java.security.Principal;
import java.util.Map;

import dev.idempotency.sample.catalog.web.IcebergErrors;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Optional bearer-token authentication: a request must carry
 * {@code Authorization: Bearer <token>} with a configured token, else it is refused with
 * 401. The token's principal becomes the request's user principal, which scopes
 * idempotency keys.
 */
public class BearerTokenFilter extends OncePerRequestFilter {

	private static final String BEARER = "Bearer ";

	private final Map<String, String> principalsByToken;

	public BearerTokenFilter(Map<String, String> principalsByToken) {
		this.principalsByToken = Map.copyOf(principalsByToken);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
		String principal = null;
		if (authorization != null && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
			principal = this.principalsByToken.get(authorization.substring(BEARER.length()).trim());
		}
		if (principal == null) {
			response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
			IcebergErrors.write(response, 401, "NotAuthorizedException",
					(authorization == null) ? "Missing bearer token" : "Unknown bearer token");
			return;
		}
		chain.doFilter(new AuthenticatedRequest(request, principal), response);
	}

	private static final class AuthenticatedRequest extends HttpServletRequestWrapper {

		private final Principal principal;

		AuthenticatedRequest(HttpServletRequest request, String name) {
			super(request);
			this.principal = () -> name;
		}

		@Override
		public Principal getUserPrincipal() {
			return this.principal;
		}

		@Override
		public String getRemoteUser() {
			return this.principal.getName();
		}

		@Override
		public String getAuthType() {
			return "BEARER";
		}

	}

}
