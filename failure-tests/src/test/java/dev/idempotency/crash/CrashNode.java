package dev.idempotency.crash;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One instance of {@link CrashTestApplication} in this JVM: its own context, Tomcat on a
 * random port, Hikari pool (whose sessions carry the node's name as
 * {@code ApplicationName}) and idempotency engine.
 */
final class CrashNode implements AutoCloseable {

	/**
	 * Held while a node starts or closes: Spring Boot sets up and cleans up the JVM's one
	 * logging system as an application starts and closes, and two at once break each
	 * other's logging set-up.
	 */
	private static final Object LIFECYCLE = new Object();

	private final String name;

	private final ConfigurableApplicationContext context;

	private final URI orders;

	private CrashNode(String name, ConfigurableApplicationContext context) {
		this.name = name;
		this.context = context;
		this.orders = URI
			.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port") + "/orders");
	}

	/**
	 * Starts a node on the schema at {@code url} ({@code jdbc:postgresql://...?...}),
	 * with these properties on top of the common ones.
	 */
	static CrashNode start(String name, String url, String adminUrl, Map<String, String> properties) {
		List<String> args = new ArrayList<>();
		args.add("--spring.datasource.url=" + url + "&ApplicationName=" + name);
		args.add("--spring.datasource.username=postgres");
		args.add("--spring.datasource.hikari.pool-name=" + name);
		args.add("--spring.datasource.hikari.maximum-pool-size=4");
		args.add("--spring.datasource.hikari.minimum-idle=1");
		args.add("--spring.datasource.hikari.connection-timeout=10000");
		args.add("--crash.node-name=" + name);
		args.add("--crash.admin-url=" + adminUrl);
		args.add("--idempotency.store.type=jdbc");
		args.add("--idempotency.store.jdbc.initialize-schema=never");
		args.add("--idempotency.store.jdbc.purge.enabled=false");
		args.add("--server.port=0");
		// A crashed process does not drain its requests.
		args.add("--server.shutdown=immediate");
		args.add("--spring.main.banner-mode=off");
		args.add("--spring.jmx.enabled=false");
		properties.forEach((key, value) -> args.add("--" + key + "=" + value));
		synchronized (LIFECYCLE) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(CrashTestApplication.class)
				.registerShutdownHook(false)
				.run(args.toArray(String[]::new));
			return new CrashNode(name, context);
		}
	}

	String name() {
		return this.name;
	}

	URI orders() {
		return this.orders;
	}

	/** The next request crashes this node at {@code point}. */
	void arm(CrashPoint point) {
		this.context.getBean(CrashTestApplication.CrashSwitch.class).arm(point);
	}

	boolean crashed() {
		return this.context.getBean(CrashTestApplication.CrashSwitch.class).crashed();
	}

	/** The {@code idempotency.requests} count of one outcome, over every operation. */
	double outcomes(String outcome) {
		return count(MicrometerIdempotencyListener.METER_NAME, "outcome", outcome);
	}

	/** The {@code idempotency.executions} count of one result, over every operation. */
	double executions(String result) {
		return count(MicrometerIdempotencyListener.EXECUTIONS_METER_NAME, "result", result);
	}

	private double count(String meter, String tag, String value) {
		return this.context.getBean(MeterRegistry.class)
			.find(meter)
			.tag(tag, value)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	/** Closes the context: the web server, the engine's heartbeat thread, the pool. */
	@Override
	public void close() {
		synchronized (LIFECYCLE) {
			this.context.close();
		}
	}

	@Override
	public String toString() {
		return this.name + " at " + this.orders;
	}

}
