package dev.idempotency.resilience;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.store.IdempotencyStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One instance of {@link ResilienceTestApplication} in this JVM, on its own random port.
 */
final class Node implements AutoCloseable {

	private final String name;

	private final ConfigurableApplicationContext context;

	private final URI base;

	private Node(String name, ConfigurableApplicationContext context) {
		this.name = name;
		this.context = context;
		this.base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
	}

	static Node start(String name, Map<String, String> properties) {
		List<String> args = new ArrayList<>(Settings.arguments(properties));
		args.add("--server.port=0");
		args.add("--test.node-name=" + name);
		ConfigurableApplicationContext context = new SpringApplicationBuilder(ResilienceTestApplication.class)
			.registerShutdownHook(false)
			.run(args.toArray(String[]::new));
		return new Node(name, context);
	}

	String name() {
		return this.name;
	}

	URI uri(String pathAndQuery) {
		return this.base.resolve(pathAndQuery);
	}

	/** The node's store, through the SPI: what the node itself reads and writes. */
	IdempotencyStore store() {
		return this.context.getBean(IdempotencyStore.class);
	}

	/** One of the node's beans, by name. */
	<T> T bean(String name, Class<T> type) {
		return this.context.getBean(name, type);
	}

	/** What the node's idempotency health indicator reports now. */
	Health storeHealth() {
		return this.context.getBean("idempotencyHealthIndicator", HealthIndicator.class).health(true);
	}

	int runs(String endpoint, String key) {
		return this.context.getBean(ResilienceTestApplication.CountingController.class).runs(endpoint, key);
	}

	/** The {@code idempotency.requests} count of one outcome, over every operation. */
	double outcomes(String outcome) {
		return this.context.getBean(MeterRegistry.class)
			.find(MicrometerIdempotencyListener.METER_NAME)
			.tag("outcome", outcome)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	/** The {@code idempotency.executions} count of one result, over every operation. */
	double executions(String result) {
		return this.context.getBean(MeterRegistry.class)
			.find(MicrometerIdempotencyListener.EXECUTIONS_METER_NAME)
			.tag("result", result)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	@Override
	public void close() {
		this.context.close();
	}

	@Override
	public String toString() {
		return "node " + this.name + " at " + this.base;
	}

}
