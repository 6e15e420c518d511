package dev.idempotency.testing.outside;

/**
 * A class a forged record names: it must never be initialized nor constructed by the
 * method door. Only its name is used by the tests.
 */
public class Gadget {

	static {
		Instantiations.GADGET_INITIALIZED.incrementAndGet();
	}

	public Gadget() {
		Instantiations.GADGET_CONSTRUCTED.incrementAndGet();
	}

}
