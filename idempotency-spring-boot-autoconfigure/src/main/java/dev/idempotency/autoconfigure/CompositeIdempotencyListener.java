package dev.idempotency.autoconfigure;

import java.util.List;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;

/**
 * Every {@link IdempotencyListener} bean of the context, in their order (the Micrometer
 * binding among them): the engine takes one listener. Each event reaches every listener;
 * an exception of one is thrown after the others have been called.
 */
final class CompositeIdempotencyListener implements IdempotencyListener {

	private final List<IdempotencyListener> listeners;

	private CompositeIdempotencyListener(List<IdempotencyListener> listeners) {
		this.listeners = List.copyOf(listeners);
	}

	/** {@link IdempotencyListener#NONE} for none, the listener itself for one. */
	static IdempotencyListener of(List<IdempotencyListener> listeners) {
		if (listeners.isEmpty()) {
			return IdempotencyListener.NONE;
		}
		return (listeners.size() == 1) ? listeners.get(0) : new CompositeIdempotencyListener(listeners);
	}

	@Override
	public void onOutcome(IdempotencyOutcome outcome, String operation) {
		each((listener) -> listener.onOutcome(outcome, operation));
	}

	@Override
	public void onExecutionFinished(ExecutionResult result, String operation) {
		each((listener) -> listener.onExecutionFinished(result, operation));
	}

	@Override
	public void onStoreCall(String call, long nanos, boolean failed) {
		each((listener) -> listener.onStoreCall(call, nanos, failed));
	}

	private void each(java.util.function.Consumer<IdempotencyListener> event) {
		RuntimeException first = null;
		for (IdempotencyListener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				if (first == null) {
					first = ex;
				}
				else {
					first.addSuppressed(ex);
				}
			}
		}
		if (first != null) {
			throw first;
		}
	}

}
