package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import dev.idempotency.sample.catalog.support.RequestGate;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequestParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

/**
 * Server-side scan planning with Iceberg's own 1.12.0 client in
 * {@code scan-planning-mode=server}, and over HTTP for what the client does not do (it
 * sends no {@code Idempotency-Key} with its planning calls): replay of a plan with its
 * key, cancel twice, a key reused for another filter, and the bounds on a plan's size and
 * on live plans. Small bounds, so that a handful of data files exercises them: two file
 * scan tasks per plan task, at most six per plan, at most four live plans (and eight
 * scans planned at once per node, so that the eight concurrent clients meet the limit on
 * live plans). A retry of a running plan request is answered in flight after 0.2 s (lease
 * mode).
 * <p>
 * This class runs on the embedded default (H2); {@link ScanPlanningOnPostgresTests} runs
 * the same on PostgreSQL, and adds a second node on the same database.
 */
@Import(RequestGate.Configuration.class)
@TestPropertySource(properties = { "catalog.scan-planning.tasks-per-plan-task=2",
		"catalog.scan-planning.max-file-scan-tasks=6", "catalog.scan-planning.max-live-plans=4",
		"catalog.scan-planning.max-concurrent-plans=8", "idempotency.in-flight.wait=PT0.2S" })
class ScanPlanningTests extends CatalogServerTestSupport {

	static final int MAX_LIVE_PLANS = 4;

	static final PartitionSpec BY_DATA = PartitionSpec.builderFor(IcebergFixtures.SCHEMA).identity("data").build();

	@Autowired
	private RequestGate gate;

	protected CatalogHttp http;

	protected CatalogProxy proxy;

	/** Plans its scans on the server, through the recording proxy. */
	protected RESTCatalog serverPlanning;

	/** Plans its scans itself: what the server's plans must equal. */
	protected RESTCatalog localPlanning;

	private final List<String> plansToCancel = new ArrayList<>();

	@BeforeEach
	void connectClients() throws IOException {
		this.http = new CatalogHttp(catalogUri());
		this.proxy = CatalogProxy.relaying(catalogUri());
		this.serverPlanning = connect(this.proxy.uri(), java.util.Map.of(RESTCatalogProperties.SCAN_PLANNING_MODE,
				RESTCatalogProperties.ScanPlanningMode.SERVER.modeName()));
		this.localPlanning = connect(catalogUri());
	}

	@AfterEach
	void closeClients() throws IOException {
		// Plans a test left live would count against the next test's limit.
		this.plansToCancel.forEach(path -> this.http.delete(path, "Idempotency-Key", newKey()));
		this.serverPlanning.close();
		this.localPlanning.close();
		this.proxy.close();
	}

	@Test
	void configAdvertisesThePlanningRoutes() {
		List<String> endpoints = new ArrayList<>();
		this.http.get("/v1/config").json().path("endpoints").forEach(endpoint -> endpoints.add(endpoint.asText()));
		assertThat(endpoints).contains(Endpoint.V1_SUBMIT_TABLE_SCAN_PLAN.toString(),
				Endpoint.V1_FETCH_TABLE_SCAN_PLAN.toString(), Endpoint.V1_CANCEL_TABLE_SCAN_PLAN.toString(),
				Endpoint.V1_FETCH_TABLE_SCAN_PLAN_TASKS.toString());
	}

	/**
	 * Five data files in two partitions, appended by the client in three commits. The
	 * server plans every scan the same as the client plans it itself: all files (three
	 * plan tasks fetched with {@code /tasks}), a partition filter (two plan tasks), a
	 * filter whose two files come inline, and an older snapshot.
	 */
	@Test
	void theClientPlansOnTheServerWhatItWouldPlanItself() {
		TableIdentifier identifier = tableWithFiles("client_ns", "events", 3, 2);
		Table server = this.serverPlanning.loadTable(identifier);
		Table local = this.localPlanning.loadTable(identifier);
		long firstSnapshot = local.history().get(0).snapshotId();

		assertThat(tasks(server.newScan())).hasSize(5).isEqualTo(tasks(local.newScan()));
		assertThat(tasks(server.newScan().filter(Expressions.equal("data", "a")))).hasSize(3)
			.isEqualTo(tasks(local.newScan().filter(Expressions.equal("data", "a"))));
		assertThat(tasks(server.newScan().filter(Expressions.equal("data", "b")))).hasSize(2)
			.isEqualTo(tasks(local.newScan().filter(Expressions.equal("data", "b"))));
		assertThat(tasks(server.newScan().useSnapshot(firstSnapshot))).hasSize(1)
			.isEqualTo(tasks(local.newScan().useSnapshot(firstSnapshot)));

		// Four plans, each planned, its tasks fetched, and cancelled when the client
		// was done with them.
		assertThat(requests("POST", "/plan")).hasSize(4).allMatch(exchange -> exchange.status() == 200);
		assertThat(requests("POST", "/tasks")).hasSize(3 + 2).allMatch(exchange -> exchange.status() == 200);
		assertThat(requests("DELETE", "/plan/")).hasSize(4).allMatch(exchange -> exchange.status() == 204);
		// The 1.12.0 client keys none of its planning calls (it sends the table's headers
		// only): what the keys do is tested over HTTP below.
		assertThat(this.proxy.exchanges())
			.filteredOn(exchange -> exchange.path().contains("/plan") || exchange.path().endsWith("/tasks"))
			.allMatch(exchange -> exchange.idempotencyKey() == null);
	}

	@Test
	void aPlanRetriedWithItsKeyIsAnsweredAgainWithTheSamePlanId() {
		tableWithFiles("retry_ns", "events", 3, 2);
		String plan = "/v1/namespaces/retry_ns/tables/events/plan";
		String key = newKey();
		Response first = this.http.post(plan, planRequest(Expressions.equal("data", "a")), "Idempotency-Key", key);
		assertThat(first.status()).as(first.toString()).isEqualTo(200);
		String planId = first.json().path("plan-id").asText();
		this.plansToCancel.add(plan + "/" + planId);
		assertThat(first.json().path("status").asText()).isEqualTo("completed");
		assertThat(first.json().path("plan-tasks")).hasSize(2);

		Response retry = this.http.post(plan, planRequest(Expressions.equal("data", "a")), "Idempotency-Key", key);
		assertThat(retry.status()).isEqualTo(200);
		assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.json()).isEqualTo(first.json());

		Response reused = this.http.post(plan, planRequest(Expressions.equal("data", "b")), "Idempotency-Key", key);
		assertThat(reused.status()).as(reused.toString()).isEqualTo(422);

		// The plan's tasks, fetched with a key and again with the same key.
		String taskKey = newKey();
		String fetch = "{\"plan-task\":\"" + first.json().path("plan-tasks").get(0).asText() + "\"}";
		Response tasks = this.http.post("/v1/namespaces/retry_ns/tables/events/tasks", fetch, "Idempotency-Key",
				taskKey);
		assertThat(tasks.status()).as(tasks.toString()).isEqualTo(200);
		assertThat(tasks.json().path("file-scan-tasks")).hasSize(2);
		Response tasksAgain = this.http.post("/v1/namespaces/retry_ns/tables/events/tasks", fetch, "Idempotency-Key",
				taskKey);
		assertThat(tasksAgain.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(tasksAgain.json()).isEqualTo(tasks.json());

		// Read back: completed, with the same plan tasks.
		Response state = this.http.get(plan + "/" + planId);
		assertThat(state.status()).isEqualTo(200);
		assertThat(state.json().path("status").asText()).isEqualTo("completed");
		assertThat(state.json().path("plan-tasks")).isEqualTo(first.json().path("plan-tasks"));

		// The client's five keyed writes of the table, then one stored answer for the
		// plan and one for its tasks, in the configured mode's way.
		assertRanInTheConfiguredMode(5 + 2);
	}

	@Test
	void aPlanCancelledTwiceIsCancelledAndItsTasksAreGone() {
		tableWithFiles("cancel_ns", "events", 3, 2);
		String plan = "/v1/namespaces/cancel_ns/tables/events/plan";
		Response planned = this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
		String planPath = plan + "/" + planned.json().path("plan-id").asText();
		String cancelKey = newKey();

		Response cancelled = this.http.delete(planPath, "Idempotency-Key", cancelKey);
		assertThat(cancelled.status()).as(cancelled.toString()).isEqualTo(204);
		Response replayed = this.http.delete(planPath, "Idempotency-Key", cancelKey);
		assertThat(replayed.status()).isEqualTo(204);
		assertThat(replayed.header("Idempotent-Replayed")).isEqualTo("true");
		Response again = this.http.delete(planPath, "Idempotency-Key", newKey());
		assertThat(again.status()).as(again.toString()).isEqualTo(204);
		assertThat(again.header("Idempotent-Replayed")).isNull();

		assertThat(this.http.get(planPath).json().path("status").asText()).isEqualTo("cancelled");
		Response tasks = this.http.post("/v1/namespaces/cancel_ns/tables/events/tasks",
				"{\"plan-task\":\"" + planned.json().path("plan-tasks").get(0).asText() + "\"}", "Idempotency-Key",
				newKey());
		assertThat(tasks.status()).isEqualTo(404);
		assertThat(tasks.errorType()).isEqualTo("NoSuchPlanTaskException");

		Response unknown = this.http.delete(plan + "/no-such-plan", "Idempotency-Key", newKey());
		assertThat(unknown.status()).isEqualTo(404);
		assertThat(unknown.errorType()).isEqualTo("NoSuchPlanIdException");
		Response otherTable = this.http.get("/v1/namespaces/cancel_ns/tables/nothing/plan/x");
		assertThat(otherTable.status()).isEqualTo(404);
		assertThat(otherTable.errorType()).isEqualTo("NoSuchTableException");
	}

	/**
	 * A scan of seven files is more than a plan may have (six): 406, and nothing is left
	 * live, so four plans still fit after it.
	 */
	@Test
	void aScanOverTheFileLimitIsRefusedAndTakesNoPlace() {
		tableWithFiles("large_ns", "events", 4, 3);
		String plan = "/v1/namespaces/large_ns/tables/events/plan";
		Response refused = this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
		assertThat(refused.status()).as(refused.toString()).isEqualTo(406);
		assertThat(refused.errorType()).isEqualTo("UnsupportedOperationException");
		assertThat(refused.json().path("error").path("message").asText())
			.contains("catalog.scan-planning.max-file-scan-tasks");

		for (int i = 0; i < MAX_LIVE_PLANS; i++) {
			Response planned = this.http.post(plan, planRequest(Expressions.equal("data", "a")), "Idempotency-Key",
					newKey());
			assertThat(planned.status()).as(planned.toString()).isEqualTo(200);
			this.plansToCancel.add(plan + "/" + planned.json().path("plan-id").asText());
		}
	}

	/**
	 * Eight clients plan at once where four plans may be live: four get a plan, four get
	 * 503 with {@code Retry-After}; once one plan is cancelled, the next one fits.
	 */
	@Test
	void noMorePlansThanTheLimitAreLiveAtOnce() throws Exception {
		tableWithFiles("limit_ns", "events", 1, 1);
		String plan = "/v1/namespaces/limit_ns/tables/events/plan";
		int clients = 2 * MAX_LIVE_PLANS;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(clients);
		List<Future<Response>> answers = new ArrayList<>();
		try {
			for (int i = 0; i < clients; i++) {
				Callable<Response> attempt = () -> {
					start.await();
					return this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
				};
				answers.add(threads.submit(attempt));
			}
			start.countDown();
			List<Response> planned = new ArrayList<>();
			List<Response> refused = new ArrayList<>();
			for (Future<Response> answer : answers) {
				Response response = answer.get();
				(response.status() == 200 ? planned : refused).add(response);
			}
			planned.forEach(response -> this.plansToCancel.add(plan + "/" + response.json().path("plan-id").asText()));
			assertThat(planned).hasSize(MAX_LIVE_PLANS);
			assertThat(refused).hasSize(clients - MAX_LIVE_PLANS).allSatisfy(response -> {
				assertThat(response.status()).as(response.toString()).isEqualTo(503);
				assertThat(response.header("Retry-After")).isNotNull();
				assertThat(response.errorType()).isEqualTo("ServiceUnavailableException");
			});
		}
		finally {
			threads.shutdownNow();
		}

		String cancelled = this.plansToCancel.remove(0);
		assertThat(this.http.delete(cancelled, "Idempotency-Key", newKey()).status()).isEqualTo(204);
		Response next = this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
		assertThat(next.status()).as(next.toString()).isEqualTo(200);
		this.plansToCancel.add(plan + "/" + next.json().path("plan-id").asText());
	}

	/**
	 * Plans end with their table. Three plans of two tables that are then dropped and
	 * unregistered take no place afterwards: four plans of a third table fit. The old
	 * plans are gone for good: a table created again under the dropped one's name does
	 * not serve them. A plan follows its table through a rename.
	 */
	@Test
	void plansEndWithTheirTable() {
		tableWithFiles("ending_ns", "dropped", 1, 1);
		this.localPlanning.createTable(TableIdentifier.of("ending_ns", "unregistered"), IcebergFixtures.SCHEMA);
		this.localPlanning.createTable(TableIdentifier.of("ending_ns", "kept"), IcebergFixtures.SCHEMA);
		String tables = "/v1/namespaces/ending_ns/tables/";
		String dropped = planned(tables + "dropped/plan");
		planned(tables + "dropped/plan");
		planned(tables + "unregistered/plan");

		Response drop = this.http.delete(tables + "dropped", "Idempotency-Key", newKey());
		assertThat(drop.status()).as(drop.toString()).isEqualTo(204);
		Response unregister = this.http.post(tables + "unregistered/unregister", "", "Idempotency-Key", newKey());
		assertThat(unregister.status()).as(unregister.toString()).isEqualTo(200);

		List<String> kept = new ArrayList<>();
		for (int i = 0; i < MAX_LIVE_PLANS; i++) {
			kept.add(planned(tables + "kept/plan"));
		}
		Response cancelOfDropped = this.http.delete(tables + "dropped/plan/" + dropped, "Idempotency-Key", newKey());
		assertThat(cancelOfDropped.status()).as(cancelOfDropped.toString()).isEqualTo(404);
		assertThat(cancelOfDropped.errorType()).isEqualTo("NoSuchTableException");

		this.localPlanning.createTable(TableIdentifier.of("ending_ns", "dropped"), IcebergFixtures.SCHEMA);
		Response oldPlan = this.http.get(tables + "dropped/plan/" + dropped);
		assertThat(oldPlan.status()).as(oldPlan.toString()).isEqualTo(404);
		assertThat(oldPlan.errorType()).isEqualTo("NoSuchPlanIdException");

		Response renamed = this.http.post("/v1/tables/rename",
				"{\"source\":{\"namespace\":[\"ending_ns\"],\"name\":\"kept\"},"
						+ "\"destination\":{\"namespace\":[\"ending_ns\"],\"name\":\"moved\"}}",
				"Idempotency-Key", newKey());
		assertThat(renamed.status()).as(renamed.toString()).isEqualTo(204);
		this.plansToCancel.removeIf(path -> path.startsWith(tables + "kept/"));
		kept.forEach(planId -> this.plansToCancel.add(tables + "moved/plan/" + planId));
		Response moved = this.http.get(tables + "moved/plan/" + kept.get(0));
		assertThat(moved.status()).as(moved.toString()).isEqualTo(200);
		assertThat(moved.json().path("status").asText()).isEqualTo("completed");
	}

	/**
	 * A retry of a keyed plan request while the first attempt plans
	 * ({@link #retryWhileTheFirstAttemptPlans}) leaves one plan live: three more fit, the
	 * next is refused.
	 */
	@Test
	void aRetryWhileTheFirstAttemptPlansLeavesOnePlanLive() throws Exception {
		tableWithFiles("race_ns", "events", 1, 1);
		String plan = "/v1/namespaces/race_ns/tables/events/plan";
		this.plansToCancel
			.add(plan + "/" + retryWhileTheFirstAttemptPlans(this.http, this.gate, plan, recordAfterSuccess()));
		for (int i = 1; i < MAX_LIVE_PLANS; i++) {
			planned(plan);
		}
		Response full = this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
		assertThat(full.status()).as(full.toString()).isEqualTo(503);
		assertThat(full.errorType()).isEqualTo("ServiceUnavailableException");
	}

	/**
	 * A retry of a keyed plan request while the first attempt is held before the
	 * controller. Lease mode: the retry is answered in flight and never plans. Record
	 * after success: the retry plans and records its answer; the first attempt plans too,
	 * and is answered with the recorded plan. Either way the client knows one plan; that
	 * it is the only one live is for the caller to check (the plan of an attempt whose
	 * answer was not sent must take no place).
	 * @return the id of the plan the client was answered with
	 */
	static String retryWhileTheFirstAttemptPlans(CatalogHttp http, RequestGate gate, String plan,
			boolean recordAfterSuccess) throws Exception {
		String request = planRequest(Expressions.alwaysTrue());
		String key = newKey();
		RequestGate.Hold hold = gate.holdFirst(key);
		CompletableFuture<Response> first = CompletableFuture
			.supplyAsync(() -> http.post(plan, request, "Idempotency-Key", key));
		Response retry;
		try {
			hold.awaitEntered();
			retry = http.post(plan, request, "Idempotency-Key", key);
		}
		finally {
			hold.release();
		}
		Response firstAnswer = first.get();
		assertThat(firstAnswer.status()).as(firstAnswer.toString()).isEqualTo(200);
		String planId = firstAnswer.json().path("plan-id").asText();
		if (recordAfterSuccess) {
			assertThat(retry.status()).as(retry.toString()).isEqualTo(200);
			assertThat(firstAnswer.header("Idempotent-Replayed")).isEqualTo("true");
			assertThat(planId).isEqualTo(retry.json().path("plan-id").asText());
		}
		else {
			assertThat(retry.status()).as(retry.toString()).isEqualTo(503);
			assertThat(retry.errorType()).isEqualTo("IdempotentRequestInFlightException");
		}
		return planId;
	}

	/**
	 * Plan requests the catalog cannot plan are refused with 400 in Iceberg's error
	 * shape: column statistics of a column the table does not have, and a body that is
	 * not a JSON object. Column names are matched as the request's {@code case-sensitive}
	 * says.
	 */
	@Test
	void badPlanRequestsAreRefusedWithBadRequest() {
		tableWithFiles("bad_ns", "events", 1, 1);
		String plan = "/v1/namespaces/bad_ns/tables/events/plan";
		Response unknownColumn = this.http.post(plan, "{\"stats-fields\":[\"nope\"]}", "Idempotency-Key", newKey());
		assertThat(unknownColumn.status()).as(unknownColumn.toString()).isEqualTo(400);
		assertThat(unknownColumn.errorType()).isEqualTo("IllegalArgumentException");
		assertThat(unknownColumn.json().path("error").path("message").asText()).contains("nope");
		Response otherCase = this.http.post(plan, "{\"stats-fields\":[\"DATA\"]}", "Idempotency-Key", newKey());
		assertThat(otherCase.status()).as(otherCase.toString()).isEqualTo(400);
		assertThat(otherCase.errorType()).isEqualTo("IllegalArgumentException");

		Response array = this.http.post(plan, "[]", "Idempotency-Key", newKey());
		assertThat(array.status()).as(array.toString()).isEqualTo(400);
		assertThat(array.errorType()).isEqualTo("BadRequestException");
		assertThat(array.json().path("error").path("code").asInt()).isEqualTo(400);

		Response caseInsensitive = this.http.post(plan, "{\"stats-fields\":[\"DATA\"],\"case-sensitive\":false}",
				"Idempotency-Key", newKey());
		assertThat(caseInsensitive.status()).as(caseInsensitive.toString()).isEqualTo(200);
		this.plansToCancel.add(plan + "/" + caseInsensitive.json().path("plan-id").asText());
		assertThat(caseInsensitive.json().path("file-scan-tasks")).hasSize(2);
	}

	/** Plans a scan of every file with a new key, and cancels it after the test. */
	private String planned(String plan) {
		Response planned = this.http.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
		assertThat(planned.status()).as(planned.toString()).isEqualTo(200);
		String planId = planned.json().path("plan-id").asText();
		this.plansToCancel.add(plan + "/" + planId);
		return planId;
	}

	/**
	 * A partitioned table with {@code inA} files in partition {@code data=a} (the first
	 * in a commit of its own) and {@code inB} in {@code data=b}, appended by the client.
	 */
	protected TableIdentifier tableWithFiles(String namespace, String name, int inA, int inB) {
		this.localPlanning.createNamespace(Namespace.of(namespace));
		TableIdentifier identifier = TableIdentifier.of(Namespace.of(namespace), name);
		Table table = this.localPlanning.createTable(identifier, IcebergFixtures.SCHEMA, BY_DATA);
		table.newAppend().appendFile(dataFile(table, "a")).commit();
		AppendFiles append = table.newAppend();
		for (int i = 1; i < inA; i++) {
			append.appendFile(dataFile(table, "a"));
		}
		append.commit();
		append = table.newAppend();
		for (int i = 0; i < inB; i++) {
			append.appendFile(dataFile(table, "b"));
		}
		append.commit();
		return identifier;
	}

	private static org.apache.iceberg.DataFile dataFile(Table table, String partition) {
		return DataFiles.builder(table.spec())
			.withPath(table.location() + "/data/data=" + partition + "/" + java.util.UUID.randomUUID() + ".parquet")
			.withPartitionPath("data=" + partition)
			.withFormat(FileFormat.PARQUET)
			.withFileSizeInBytes(1024)
			.withRecordCount(10)
			.build();
	}

	/** What a reader needs of each planned task, comparable across the two plans. */
	protected static Set<String> tasks(org.apache.iceberg.TableScan scan) {
		Set<String> described = new HashSet<>();
		try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
			for (FileScanTask task : tasks) {
				described.add(task.file().location() + " partition=" + task.file().partition() + " spec="
						+ task.spec().specId() + " start=" + task.start() + " length=" + task.length() + " records="
						+ task.file().recordCount() + " residual=" + task.residual());
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return described;
	}

	protected List<CatalogProxy.Exchange> requests(String method, String pathPart) {
		return this.proxy.exchanges()
			.stream()
			.filter(exchange -> exchange.method().equals(method) && exchange.path().contains(pathPart))
			.toList();
	}

	protected static String planRequest(Expression filter) {
		return PlanTableScanRequestParser.toJson(PlanTableScanRequest.builder().withFilter(filter).build());
	}

	protected static String newKey() {
		return RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
	}

	/** Cancels the plan at {@code path} after the test, so that it frees its place. */
	protected void cancelAfterwards(String path) {
		synchronized (this.plansToCancel) {
			this.plansToCancel.add(path);
		}
	}

}
