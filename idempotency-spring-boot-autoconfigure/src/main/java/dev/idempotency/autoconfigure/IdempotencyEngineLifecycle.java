package dev.idempotency.autoconfigure;

import dev.idempotency.core.internal.IdempotencyEngine;

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

	private final IdempotencyEngine engine;

	IdempotencyEngineLifecycle(IdempotencyEngine engine) {
		this.engine = engine;
	}

	@Override
	public void start() {
		this.engine.start();
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
