package dev.idempotency.sample.orders.chaos;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.http.RawHttp;

/**
 * One client of the reactive chaos run, issuing operations one after another until the
 * run's end. Each operation creates an order of its own item ({@code <client>-<n>}), so
 * the orders table says per operation how often it took effect. It gets a fresh UUIDv7
 * key and is sent, with that same key, on either node, again after an I/O error, a
 * {@code 409} (in flight) or a {@code 503} (honouring {@code Retry-After}), as a real
 * client does, until another answer or its deadline.
 */
final class OrdersChaosClient implements Runnable {

	private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");

	private final String name;

	/** When the client starts no further operation (epoch milliseconds). */
	private final long endMillis;

	private final Random random;

	private final List<Integer> entryPorts;

	private final long answerDeadlineMillis;

	private final long originMillis;

	/** Every operation, in order, with what the client was told. */
	final List<Operation> operations = new ArrayList<>();

	int attempts;

	OrdersChaosClient(String name, long endMillis, long seed, List<Integer> entryPorts, long answerDeadlineMillis,
			long originMillis) {
		this.name = name;
		this.endMillis = endMillis;
		this.random = new Random(seed);
		this.entryPorts = entryPorts;
		this.answerDeadlineMillis = answerDeadlineMillis;
		this.originMillis = originMillis;
	}

	@Override
	public void run() {
		for (int i = 0; System.currentTimeMillis() < this.endMillis; i++) {
			pause(this.random.nextInt(60));
			Operation operation = new Operation(TestKeys.newKey(), this.name + "-" + i, 1 + this.random.nextInt(9),
					seconds());
			this.operations.add(operation);
			send(operation);
		}
	}

	private void send(Operation operation) {
		String body = "{\"item\":\"%s\",\"quantity\":%d}".formatted(operation.item, operation.quantity);
		long deadline = System.currentTimeMillis() + this.answerDeadlineMillis;
		while (System.currentTimeMillis() < deadline) {
			int entry = this.random.nextInt(this.entryPorts.size());
			this.attempts++;
			operation.trail.append("%n    %.2f s node-%c: ".formatted(seconds(), 'a' + entry));
			RawHttp.Answer answer;
			try {
				answer = RawHttp.exchange(this.entryPorts.get(entry), "POST", "/orders", operation.key, body);
			}
			catch (IOException ex) {
				operation.trail.append(ex.getClass().getSimpleName()).append(' ').append(ex.getMessage());
				pause(50 + this.random.nextInt(200));
				continue;
			}
			operation.trail.append(answer.status()).append(answer.replayed() ? " replayed" : "");
			if (answer.status() == 409 || answer.status() == 503) {
				String retryAfter = answer.headers().get("retry-after");
				pause((retryAfter != null) ? Math.min(2000, Long.parseLong(retryAfter) * 1000)
						: 100 + this.random.nextInt(300));
				continue;
			}
			operation.status = answer.status();
			operation.replayed = answer.replayed();
			operation.body = answer.body();
			Matcher id = ID.matcher(answer.body());
			if (answer.status() == 201 && id.find()) {
				operation.answeredId = Long.parseLong(id.group(1));
			}
			if (answer.status() >= 400) {
				operation.trail.append(' ').append(answer.body(), 0, Math.min(answer.body().length(), 200));
			}
			return;
		}
		operation.trail.append("%n    gave up after %d s".formatted(this.answerDeadlineMillis / 1000));
	}

	private double seconds() {
		return (System.currentTimeMillis() - this.originMillis) / 1000.0;
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

	/** One order to create, and what its client was told. */
	static final class Operation {

		final String key;

		final String item;

		final int quantity;

		final double startedAt;

		/** When, through which node, and what came back, per attempt. */
		final StringBuilder trail = new StringBuilder();

		/** The final answer's status; 0 when the client gave up. */
		int status;

		boolean replayed;

		String body = "";

		/** The order's id in a {@code 201}'s body. */
		Long answeredId;

		Operation(String key, String item, int quantity, double startedAt) {
			this.key = key;
			this.item = item;
			this.quantity = quantity;
			this.startedAt = startedAt;
		}

		/** Whether the client was told the order was created. */
		boolean acknowledged() {
			return this.status == 201;
		}

		@Override
		public String toString() {
			return "%.2f s %s key=%s -> %s%s".formatted(this.startedAt, this.item, this.key,
					(this.status == 0) ? "gave up" : this.status, this.replayed ? " replayed" : "");
		}

		/** The operation and the trail of its attempts. */
		String withTrail() {
			return this + this.trail.toString();
		}

	}

}
