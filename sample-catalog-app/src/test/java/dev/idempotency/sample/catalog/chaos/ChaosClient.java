package dev.idempotency.sample.catalog.chaos;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.test.http.RawHttp;

/**
 * One client of the chaos run: it works in a namespace of its own, so what the catalog
 * must hold afterwards follows from what this client was told. Each operation gets a
 * fresh UUIDv7 key and is retried with that same key, as Iceberg's client does, on an I/O
 * error or a 5xx (honouring {@code Retry-After}), on either node, until it gets a final
 * answer.
 */
final class ChaosClient implements Runnable {

	private static final ObjectMapper JSON = new ObjectMapper();

	private static final String SCHEMA = """
			{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}""";

	private final String namespace;

	private final int operations;

	private final Random random;

	private final List<Integer> entryPorts;

	private final long answerDeadlineMillis;

	/**
	 * When the run started: the attempt trails of wrong answers give times since then.
	 */
	private final long originMillis;

	/**
	 * Tables this client was told exist, by name, with the appends it was told were
	 * committed.
	 */
	final Map<String, TableState> tables = new LinkedHashMap<>();

	final List<String> wrongAnswers = new ArrayList<>();

	final List<String> unanswered = new ArrayList<>();

	final List<String> invalidBodies = new ArrayList<>();

	/** Every call, in order: when it started, what, its key, and its final answer. */
	final List<String> history = new ArrayList<>();

	int attempts;

	int replays;

	int done;

	private int nextTable;

	ChaosClient(String namespace, int operations, long seed, List<Integer> entryPorts, long answerDeadlineMillis,
			long originMillis) {
		this.namespace = namespace;
		this.operations = operations;
		this.random = new Random(seed);
		this.entryPorts = entryPorts;
		this.answerDeadlineMillis = answerDeadlineMillis;
		this.originMillis = originMillis;
	}

	String namespace() {
		return this.namespace;
	}

	@Override
	public void run() {
		call("createNamespace", "POST", "/v1/namespaces", "{\"namespace\": [\"" + this.namespace + "\"]}", 200);
		for (int i = 1; i < this.operations; i++) {
			pause(this.random.nextInt(60));
			int draw = this.random.nextInt(100);
			if (this.tables.isEmpty() || draw < 30) {
				createTable();
			}
			else if (draw < 75) {
				append(pickTable());
			}
			else if (draw < 90) {
				rename(pickTable());
			}
			else {
				drop(pickTable());
			}
			this.done = i + 1;
		}
	}

	private String pickTable() {
		List<String> names = new ArrayList<>(this.tables.keySet());
		return names.get(this.random.nextInt(names.size()));
	}

	private void createTable() {
		String name = "t" + (this.nextTable++);
		JsonNode answer = call("createTable " + name, "POST", tablesPath(),
				"{\"name\": \"" + name + "\", \"schema\": " + SCHEMA + "}", 200);
		if (answer != null) {
			this.tables.put(name, TableState.of(answer.path("metadata")));
		}
		else {
			resync(name);
		}
	}

	private void append(String table) {
		TableState state = this.tables.get(table);
		long snapshotId = Math.abs(this.random.nextLong() % 1_000_000_000_000L) + 1;
		String parent = (state.currentSnapshotId != null) ? ", \"parent-snapshot-id\": " + state.currentSnapshotId : "";
		String body = """
				{"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": %s}],
				 "updates": [
				  {"action": "add-snapshot", "snapshot": {"snapshot-id": %d%s, "sequence-number": %d,
				   "timestamp-ms": %d, "manifest-list": "%s/metadata/snap-%d.avro",
				   "summary": {"operation": "append"}, "schema-id": 0}},
				  {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": %d}]}"""
			.formatted(state.currentSnapshotId, snapshotId, parent, state.lastSequenceNumber + 1,
					System.currentTimeMillis(), state.location, snapshotId, snapshotId);
		JsonNode answer = call("append " + table, "POST", tablesPath() + "/" + table, body, 200);
		if (answer != null) {
			TableState next = TableState.of(answer.path("metadata"));
			next.acknowledgedAppends = state.acknowledgedAppends + 1;
			next.unacknowledgedAppends = state.unacknowledgedAppends;
			this.tables.put(table, next);
		}
		else {
			// Told it failed: it may still have taken effect (once) before the answer
			// went wrong.
			state.unacknowledgedAppends++;
			resync(table);
		}
	}

	private void rename(String table) {
		String to = "t" + (this.nextTable++);
		String body = """
				{"source": {"namespace": ["%s"], "name": "%s"}, "destination": {"namespace": ["%s"], "name": "%s"}}"""
			.formatted(this.namespace, table, this.namespace, to);
		if (call("rename " + table + " to " + to, "POST", "/v1/tables/rename", body, 204) != null) {
			this.tables.put(to, this.tables.remove(table));
		}
		else {
			TableState state = this.tables.remove(table);
			resync(to);
			if (this.tables.containsKey(to)) {
				this.tables.get(to).acknowledgedAppends = state.acknowledgedAppends;
				this.tables.get(to).unacknowledgedAppends = state.unacknowledgedAppends;
			}
			else {
				this.tables.put(table, state);
				resync(table);
			}
		}
	}

	private void drop(String table) {
		if (call("drop " + table, "DELETE", tablesPath() + "/" + table, null, 204) != null) {
			this.tables.remove(table);
		}
		else {
			resync(table);
		}
	}

	/**
	 * After a wrong or missing answer, carries on from what the catalog holds (the wrong
	 * answer is already counted); appends already acknowledged for the table are kept.
	 */
	private void resync(String table) {
		TableState known = this.tables.remove(table);
		JsonNode loaded = call("load " + table, "GET", tablesPath() + "/" + table, null, 200, 404);
		if (loaded != null && loaded.has("metadata")) {
			TableState state = TableState.of(loaded.path("metadata"));
			if (known != null) {
				state.acknowledgedAppends = known.acknowledgedAppends;
				state.unacknowledgedAppends = known.unacknowledgedAppends;
			}
			this.tables.put(table, state);
		}
	}

	private String tablesPath() {
		return "/v1/namespaces/" + this.namespace + "/tables";
	}

	/**
	 * Sends the request until a final answer: the parsed body of the expected status (an
	 * empty object for 204), or {@code null} after a wrong final answer or none within
	 * the deadline. A wrong answer is reported with the trail of its attempts: when,
	 * through which node's entry, and what came back.
	 */
	private JsonNode call(String operation, String method, String path, String body, int expected, int... alsoFinal) {
		String key = "GET".equals(method) ? null : uuid7();
		long deadline = System.currentTimeMillis() + this.answerDeadlineMillis;
		StringBuilder trail = new StringBuilder();
		int entryIndex = this.history.size();
		this.history.add("%.2f s %s key=%s".formatted((System.currentTimeMillis() - this.originMillis) / 1000.0,
				operation, key));
		while (System.currentTimeMillis() < deadline) {
			int entry = this.random.nextInt(this.entryPorts.size());
			int port = this.entryPorts.get(entry);
			this.attempts++;
			trail.append("%n    %.2f s node-%c: ".formatted((System.currentTimeMillis() - this.originMillis) / 1000.0,
					'a' + entry));
			RawHttp.Answer answer;
			try {
				answer = RawHttp.exchange(port, method, path, key, body);
			}
			catch (IOException ex) {
				trail.append(ex.getClass().getSimpleName()).append(' ').append(ex.getMessage());
				pause(50 + this.random.nextInt(200));
				continue;
			}
			trail.append(answer.status()).append(answer.replayed() ? " replayed" : "");
			if (answer.status() >= 500) {
				trail.append(' ').append(answer.body(), 0, Math.min(answer.body().length(), 120));
			}
			if (answer.status() >= 500) {
				String retryAfter = answer.headers().get("retry-after");
				pause((retryAfter != null) ? Math.min(2000, Long.parseLong(retryAfter) * 1000)
						: 100 + this.random.nextInt(300));
				continue;
			}
			if (answer.replayed()) {
				this.replays++;
			}
			this.history.set(entryIndex,
					this.history.get(entryIndex) + " -> " + answer.status() + (answer.replayed() ? " replayed" : "")
							+ " after " + (trail.toString().split("\n").length - 1) + " attempts");
			if (answer.status() == expected) {
				if (answer.body().isEmpty()) {
					return JSON.createObjectNode();
				}
				try {
					return JSON.readTree(answer.body());
				}
				catch (IOException ex) {
					this.invalidBodies
						.add(operation + " key=" + key + ": " + answer.status() + (answer.replayed() ? " replayed" : "")
								+ " with a body that is not JSON (" + answer.body().length() + " chars)");
					return null;
				}
			}
			for (int status : alsoFinal) {
				if (answer.status() == status) {
					return null;
				}
			}
			this.wrongAnswers.add(operation + " key=" + key + ": expected " + expected + ", told " + answer.status()
					+ (answer.replayed() ? " (replayed)" : "") + " " + abbreviate(answer.body()) + trail);
			return null;
		}
		this.unanswered.add(operation + " key=" + key + trail);
		return null;
	}

	private static String abbreviate(String text) {
		return (text.length() > 300) ? text.substring(0, 300) + "…" : text;
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static String uuid7() {
		UUID random = UUID.randomUUID();
		long high = (System.currentTimeMillis() << 16) | 0x7000L | (random.getMostSignificantBits() & 0x0FFFL);
		long low = (random.getLeastSignificantBits() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(high, low).toString();
	}

	/** What the client knows of one table. */
	static final class TableState {

		Long currentSnapshotId;

		long lastSequenceNumber;

		String location;

		int acknowledgedAppends;

		/**
		 * Appends answered as failed (or not at all): each may have taken effect at most
		 * once.
		 */
		int unacknowledgedAppends;

		static TableState of(JsonNode metadata) {
			TableState state = new TableState();
			JsonNode current = metadata.path("current-snapshot-id");
			state.currentSnapshotId = (current.isMissingNode() || current.isNull() || current.asLong() == -1) ? null
					: current.asLong();
			state.lastSequenceNumber = metadata.path("last-sequence-number").asLong();
			state.location = metadata.path("location").asText();
			return state;
		}

	}

}
