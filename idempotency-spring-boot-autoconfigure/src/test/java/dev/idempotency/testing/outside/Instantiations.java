package dev.idempotency.testing.outside;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts what the classes of this package (outside the test applications' packages, as a
 * library's classes are) went through: a class initialized, an instance constructed.
 */
public final class Instantiations {

	public static final AtomicInteger GADGET_INITIALIZED = new AtomicInteger();

	public static final AtomicInteger GADGET_CONSTRUCTED = new AtomicInteger();

	private Instantiations() {
	}

}
