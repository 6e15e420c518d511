package dev.idempotency.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Says whom a request's key belongs to. Records are kept per (scope, key): the same key
 * from another scope is another record, never a replay of someone else's response. The
 * default uses Spring Security's authenticated principal when present, else the servlet
 * user principal, else {@code anonymous}. Declare a bean to add a tenant or catalog
 * prefix.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface IdempotencyScopeResolver {

	String resolveScope(HttpServletRequest request);

}
