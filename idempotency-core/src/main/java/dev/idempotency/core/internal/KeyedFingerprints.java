package dev.idempotency.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import dev.idempotency.store.seal.Sealing;
import org.jspecify.annotations.Nullable;

/**
 * A call's fingerprints as records keep them once fingerprints are keyed
 * ({@link Sealing#keysFingerprints()}): the door's fingerprint keyed under the key in
 * use; and, to recognise a record of the same request made before a rotation, before
 * keying, or under an earlier fingerprint format, each of those fingerprints keyed under
 * every other key and as it is. A retry across a rotation is then replayed, waited for or
 * taken over, never refused 422, as long as the earlier key is configured.
 */
final class KeyedFingerprints {

	private KeyedFingerprints() {
	}

	static IdempotentCall of(IdempotentCall call, Sealing sealing) {
		if (!sealing.keysFingerprints()) {
			return call;
		}
		Supplier<String> fingerprint = once(call.fingerprint());
		return call.withFingerprints(() -> sealing.fingerprint(fingerprint.get()), () -> {
			List<String> earlier = new ArrayList<>(sealing.otherFingerprints(fingerprint.get()));
			for (String format : call.earlierFingerprints().get()) {
				earlier.add(sealing.fingerprint(format));
				earlier.addAll(sealing.otherFingerprints(format));
			}
			return earlier;
		});
	}

	/** The door's fingerprint, computed once (it reads the request's body). */
	private static Supplier<String> once(Supplier<String> fingerprint) {
		return new Supplier<>() {

			private @Nullable String value;

			@Override
			public String get() {
				String computed = this.value;
				if (computed == null) {
					computed = fingerprint.get();
					this.value = computed;
				}
				return computed;
			}

		};
	}

}
