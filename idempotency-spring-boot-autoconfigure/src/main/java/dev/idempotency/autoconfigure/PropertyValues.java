package dev.idempotency.autoconfigure;

import java.time.Duration;

import org.springframework.util.unit.DataSize;

/**
 * A value as it would be written in application properties ({@code 30s}, {@code 1MB}),
 * for messages that name the engine's defaults without repeating them.
 */
final class PropertyValues {

	private PropertyValues() {
	}

	/** In its largest whole unit: {@code 30s}, {@code 5m}, {@code 50ms}. */
	static String written(Duration duration) {
		if (duration.isZero() || duration.toNanos() % 1_000_000 != 0) {
			return duration.toString();
		}
		long millis = duration.toMillis();
		String[] units = { "d", "h", "m", "s" };
		long[] unitMillis = { 86_400_000L, 3_600_000L, 60_000L, 1_000L };
		for (int i = 0; i < units.length; i++) {
			if (millis % unitMillis[i] == 0) {
				return (millis / unitMillis[i]) + units[i];
			}
		}
		return millis + "ms";
	}

	/** In its largest whole unit: {@code 1MB}, {@code 64KB}, {@code 10B}. */
	static String written(DataSize size) {
		long bytes = size.toBytes();
		if (bytes != 0) {
			String[] units = { "TB", "GB", "MB", "KB" };
			long[] unitBytes = { 1L << 40, 1L << 30, 1L << 20, 1L << 10 };
			for (int i = 0; i < units.length; i++) {
				if (bytes % unitBytes[i] == 0) {
					return (bytes / unitBytes[i]) + units[i];
				}
			}
		}
		return bytes + "B";
	}

}
