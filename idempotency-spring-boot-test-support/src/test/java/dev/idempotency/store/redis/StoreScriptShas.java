package dev.idempotency.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The SHA-1 digests of the Redis store's scripts, made from its script file as the store
 * splits it: the names a Redis server that has run every transition knows them by
 * ({@code SCRIPT EXISTS}).
 */
final class StoreScriptShas {

	private StoreScriptShas() {
	}

	static List<String> all() {
		String file;
		try (InputStream in = Objects.requireNonNull(
				StoreScriptShas.class.getClassLoader().getResourceAsStream(RedisScripts.LOCATION),
				RedisScripts.LOCATION)) {
			file = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return RedisScripts.split(file).values().stream().map(StoreScriptShas::sha1).toList();
	}

	private static String sha1(String script) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
