package dev.idempotency.autoconfigure;

import java.util.Locale;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.IdempotencyEngine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;

/**
 * Runs the engine's heartbeat thread with the application context. Its phase is below the
 * web server's (whose graceful shutdown is at {@code DEFAULT_PHASE - 2048}), so on close
 * the server first lets running requests finish, with their leases still extended, and
 * the heartbeats stop after them. Not final: the class-based proxy of an application's
 * aspect on lifecycle beans subclasses it.
 */
class IdempotencyEngineLifecycle implements SmartLifecycle {

	/** Started before and stopped after the web server's lifecycle beans. */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private static final Log logger = LogFactory.getLog(IdempotencyEngineLifecycle.class);

	private final IdempotencyEngine engine;

	IdempotencyEngineLifecycle(IdempotencyEngine engine) {
		this.engine = engine;
	}

	@Override
	public void start() {
		this.engine.start();
		if (logger.isInfoEnabled()) {
			logger.info(description(this.engine));
		}
	}

	/**
	 * One line at start-up that says which store keeps the records and how keys are
	 * protected, so that a configuration can be checked without the Actuator.
	 */
	static String description(IdempotencyEngine engine) {
		IdempotencySettings settings = engine.settings();
		return "Idempotency-Key protection started: store '" + engine.store().name() + "', model "
				+ kebab(settings.mode().name()) + ", keys kept " + settings.lifetime().plus(settings.grace())
				+ " (lifetime " + settings.lifetime() + " + grace " + settings.grace() + "), on a store failure "
				+ kebab(settings.storeFailure().mode().name());
	}

	private static String kebab(String constant) {
		return constant.toLowerCase(Locale.ROOT).replace('_', '-');
	}

	@Override
	public void stop() {
		this.engine.stop();
	}

	@Override
	public boolean isRunning() {
		return this.engine.isRunning();
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
