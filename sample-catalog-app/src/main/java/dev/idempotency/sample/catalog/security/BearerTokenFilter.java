package dev.idempotency.sample.catalog.security;

import java.io.IOException;
import java.security.Principal;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import dev.idempotency.sample.catalog.web.IcebergErrors;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Bearer-token authentication: a request must carry {@code Authorization: Bearer <token>}
 * with one of the filter's tokens, else it is refused with 401, or with 403 when the
 * token is one that authenticates elsewhere only (a catalog token on the operator
 * endpoints, or the other way round). The token's principal becomes the request's user
 * principal, which scopes idempotency keys on the catalog's routes and names who asked on
 * the operator endpoints. Requests that {@code open} accepts pass without a token.
 */
public class BearerTokenFilter extends OncePerRequestFilter {

	private static final String BEARER = "Bearer ";

	private final String kind;

	private final Map<String, String> principalsByToken;

	private final Set<String> tokensOfElsewhere;

	private final Predicate<HttpServletRequest> open;

	/**
	 * @param kind what the tokens are, for the refusals ("bearer token", "operator
	 * token")
	 * @param principalsByToken the tokens accepted here, each with the principal it
	 * authenticates
	 * @param tokensOfElsewhere tokens that authenticate elsewhere but not here: 403
	 * @param open the requests that need no token
	 */
	public BearerTokenFilter(String kind, Map<String, String> principalsByToken, Set<String> tokensOfElsewhere,
			Predicate<HttpServletRequest> open) {
		this.kind = kind;
		this.principalsByToken = Map.copyOf(principalsByToken);
		this.tokensOfElsewhere = Set.copyOf(tokensOfElsewhere);
		this.open = open;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return this.open.test(request);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
		String token = null;
		if (authorization != null && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
			token = authorization.substring(BEARER.length()).trim();
		}
		String principal = (token != null) ? this.principalsByToken.get(token) : null;
		if (principal == null) {
			if (token != null && this.tokensOfElsewhere.contains(token)) {
				IcebergErrors.write(response, 403, "ForbiddenException",
						"This token is not an accepted " + this.kind + " for " + request.getRequestURI());
				return;
			}
			response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
			IcebergErrors.write(response, 401, "NotAuthorizedException",
					((authorization == null) ? "Missing " : "Unknown ") + this.kind);
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
