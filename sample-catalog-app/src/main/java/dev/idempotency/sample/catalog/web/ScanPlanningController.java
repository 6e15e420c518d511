package dev.idempotency.sample.catalog.web;

import dev.idempotency.Idempotent;
import dev.idempotency.sample.catalog.planning.ScanPlanning;
import dev.idempotency.sample.catalog.planning.UnansweredPlanRelease;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.iceberg.rest.requests.FetchScanTasksRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.responses.FetchPlanningResultResponse;
import org.apache.iceberg.rest.responses.PlanTableScanResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Server-side scan planning: plan a scan, read a plan's state, cancel it, fetch the file
 * scan tasks of one of its plan tasks. The spec keys the three POST/DELETE operations; a
 * retry with the key gets the first answer, plan id included.
 */
@RestController
@RequestMapping(path = { CatalogPaths.V1, CatalogPaths.V1_PREFIX }, produces = MediaType.APPLICATION_JSON_VALUE)
public class ScanPlanningController {

	private static final String TABLE = "/namespaces/{namespace}/tables/{table}";

	private final ScanPlanning planning;

	public ScanPlanningController(ScanPlanning planning) {
		this.planning = planning;
	}

	/**
	 * Plans a scan; the plan is released again if this answer is not the one its client
	 * gets ({@link UnansweredPlanRelease}).
	 */
	@Idempotent(operation = "planTableScan")
	@PostMapping(TABLE + "/plan")
	public PlanTableScanResponse planTableScan(@PathVariable String namespace, @PathVariable String table,
			@RequestBody PlanTableScanRequest request, HttpServletRequest servletRequest) {
		PlanTableScanResponse response = this.planning.plan(CatalogPaths.identifier(namespace, table), request);
		UnansweredPlanRelease.planned(servletRequest, response.planId());
		return response;
	}

	@GetMapping(TABLE + "/plan/{planId}")
	public FetchPlanningResultResponse fetchPlanningResult(@PathVariable String namespace, @PathVariable String table,
			@PathVariable String planId) {
		return this.planning.fetch(CatalogPaths.identifier(namespace, table), planId);
	}

	@Idempotent(operation = "cancelPlanning")
	@DeleteMapping(TABLE + "/plan/{planId}")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void cancelPlanning(@PathVariable String namespace, @PathVariable String table,
			@PathVariable String planId) {
		this.planning.cancel(CatalogPaths.identifier(namespace, table), planId);
	}

	/** The stored answer of one plan task, as JSON ({@code FetchScanTasksResponse}). */
	@Idempotent(operation = "fetchScanTasks")
	@PostMapping(TABLE + "/tasks")
	public String fetchScanTasks(@PathVariable String namespace, @PathVariable String table,
			@RequestBody FetchScanTasksRequest request) {
		return this.planning.fetchTasks(CatalogPaths.identifier(namespace, table), request);
	}

}
