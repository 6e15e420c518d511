package dev.idempotency.sample.catalog.planning;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Limits of server-side scan planning, under {@code catalog.scan-planning}.
 */
@ConfigurationProperties("catalog.scan-planning")
public class ScanPlanningProperties {

	/**
	 * File scan tasks per plan task: a plan with more is answered as plan tasks that the
	 * client fetches one by one. Also the most tasks the server holds in memory at once.
	 */
	private int tasksPerPlanTask = 100;

	/**
	 * Most file scan tasks one plan may have. A scan that would produce more is refused
	 * with 406 (plan it on the client, or narrow the filter).
	 */
	private int maxFileScanTasks = 10_000;

	/**
	 * Most plans that may be live (planning or completed, neither cancelled nor expired)
	 * at once, over all nodes. One more is refused with 503 and {@code Retry-After}.
	 */
	private int maxLivePlans = 100;

	/**
	 * Most scans one node plans at once; one more is refused with 503 and
	 * {@code Retry-After}. A keyed plan request holds two database connections while it
	 * reserves its plan (its own transaction's and the reservation's): keep this below
	 * the connection pool's size, or concurrent plans wait on each other for connections.
	 */
	private int maxConcurrentPlans = 4;

	/** How long a plan and its tasks are kept after planning, unless cancelled first. */
	private Duration planLifetime = Duration.ofHours(1);

	public int getTasksPerPlanTask() {
		return this.tasksPerPlanTask;
	}

	public void setTasksPerPlanTask(int tasksPerPlanTask) {
		this.tasksPerPlanTask = tasksPerPlanTask;
	}

	public int getMaxFileScanTasks() {
		return this.maxFileScanTasks;
	}

	public void setMaxFileScanTasks(int maxFileScanTasks) {
		this.maxFileScanTasks = maxFileScanTasks;
	}

	public int getMaxLivePlans() {
		return this.maxLivePlans;
	}

	public void setMaxLivePlans(int maxLivePlans) {
		this.maxLivePlans = maxLivePlans;
	}

	public int getMaxConcurrentPlans() {
		return this.maxConcurrentPlans;
	}

	public void setMaxConcurrentPlans(int maxConcurrentPlans) {
		this.maxConcurrentPlans = maxConcurrentPlans;
	}

	public Duration getPlanLifetime() {
		return this.planLifetime;
	}

	public void setPlanLifetime(Duration planLifetime) {
		this.planLifetime = planLifetime;
	}

}
