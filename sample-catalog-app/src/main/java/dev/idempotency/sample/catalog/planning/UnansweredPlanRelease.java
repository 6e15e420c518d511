package dev.idempotency.sample.catalog.planning;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Releases the plan a request made when its client was answered with something else, so
 * that the plan does not hold a place of {@code max-live-plans} until it expires: no
 * client knows its id, so none can read or cancel it.
 * <p>
 * That happens to a keyed plan request in record-after-success mode whose attempt raced
 * another attempt of the same request: both plan, the first to record its answer wins,
 * and the other is answered with the recorded answer ({@code Idempotent-Replayed: true});
 * on the catalog's database its transaction is rolled back, which takes its tasks but not
 * its reservation (committed on its own). It happens too when the request's transaction
 * does not commit (the answer is then an error). So a plan is released unless its own
 * answer, a success that is not a replay, is what the client got.
 * <p>
 * Runs outside the Idempotency-Key starter's filter, which decides the answer and ends
 * the request's transaction.
 */
public class UnansweredPlanRelease extends OncePerRequestFilter {

	private static final Logger logger = LoggerFactory.getLogger(UnansweredPlanRelease.class);

	private static final String PLAN_ID = UnansweredPlanRelease.class.getName() + ".planId";

	private static final String REPLAYED = "Idempotent-Replayed";

	private final ScanPlanning planning;

	UnansweredPlanRelease(ScanPlanning planning) {
		this.planning = planning;
	}

	/** Tells the filter that this request made the plan {@code planId}. */
	public static void planned(HttpServletRequest request, String planId) {
		request.setAttribute(PLAN_ID, planId);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		boolean completed = false;
		try {
			chain.doFilter(request, response);
			completed = true;
		}
		finally {
			if (request.getAttribute(PLAN_ID) instanceof String planId && !(completed && answeredWith(response))) {
				release(planId, response);
			}
		}
	}

	/** Whether the client got the answer that named this request's plan. */
	private static boolean answeredWith(HttpServletResponse response) {
		int status = response.getStatus();
		return status >= 200 && status < 300 && !"true".equals(response.getHeader(REPLAYED));
	}

	private void release(String planId, HttpServletResponse response) {
		try {
			this.planning.release(planId);
			logger.debug("Released scan plan {}: its request was answered {} with another answer", planId,
					response.getStatus());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release scan plan {}, whose answer was not sent; it takes a place until it expires",
					planId, ex);
		}
	}

}
