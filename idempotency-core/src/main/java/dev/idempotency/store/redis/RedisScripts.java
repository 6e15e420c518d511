package dev.idempotency.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of {@link RedisIdempotencyStore}, read once from the single resource
 * {@value #LOCATION} so that a reader finds every Redis transition in one file.
 * <p>
 * One file rather than one file per script because the scripts share helpers (Redis's
 * clock, the owner fence, the expiry test) that must stay identical: the file's
 * {@code -- @common} section is put in front of each {@code -- @script <name>} section.
 * Each script's SHA-1 is computed once, when it is read: the store sends {@code EVALSHA}
 * with it and falls back to {@code EVAL} (which also caches it in Redis) only when the
 * server answers {@code NOSCRIPT}, so after the first call on a server every transition
 * sends the digest, not the source.
 */
final class RedisScripts {

	static final String LOCATION = "dev/idempotency/store/redis/idempotency-scripts.lua";

	private static final Pattern MARKER = Pattern.compile("(?m)^-- @(common|script (\\w+))[ \\t]*$");

	@SuppressWarnings("rawtypes")
	final RedisScript<List> reserve;

	final RedisScript<Long> complete;

	@SuppressWarnings("rawtypes")
	final RedisScript<List> recordCompleted;

	final RedisScript<Long> release;

	final RedisScript<Long> heartbeat;

	@SuppressWarnings("rawtypes")
	final RedisScript<List> find;

	final RedisScript<Long> remove;

	RedisScripts() {
		Map<String, String> scripts = split(read());
		this.reserve = script(scripts, "reserve", List.class);
		this.complete = script(scripts, "complete", Long.class);
		this.recordCompleted = script(scripts, "record_completed", List.class);
		this.release = script(scripts, "release", Long.class);
		this.heartbeat = script(scripts, "heartbeat", Long.class);
		this.find = script(scripts, "find", List.class);
		this.remove = script(scripts, "remove", Long.class);
		if (!scripts.isEmpty()) {
			throw new IllegalStateException("unexpected scripts in " + LOCATION + ": " + scripts.keySet());
		}
	}

	private static <T> RedisScript<T> script(Map<String, String> scripts, String name, Class<T> resultType) {
		String text = scripts.remove(name);
		if (text == null) {
			throw new IllegalStateException("script '" + name + "' missing in " + LOCATION);
		}
		return new Script<>(new DefaultRedisScript<>(text, resultType));
	}

	/**
	 * A script whose digest is read once: {@link DefaultRedisScript#getSha1()} takes a
	 * lock on each call, which racing callers on non-blocking threads would wait for.
	 */
	private record Script<T>(String sha1, @Nullable Class<T> resultType, String source) implements RedisScript<T> {

		Script(DefaultRedisScript<T> script) {
			this(script.getSha1(), script.getResultType(), script.getScriptAsString());
		}

		@Override
		public String getSha1() {
			return this.sha1;
		}

		@Override
		public @Nullable Class<T> getResultType() {
			return this.resultType;
		}

		@Override
		public String getScriptAsString() {
			return this.source;
		}

	}

	private static String read() {
		try (InputStream in = RedisScripts.class.getClassLoader().getResourceAsStream(LOCATION)) {
			if (in == null) {
				throw new IllegalStateException("resource " + LOCATION + " not found");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read " + LOCATION, ex);
		}
	}

	/** Splits the file at its markers; the common section is prefixed to every script. */
	static Map<String, String> split(String file) {
		Matcher marker = MARKER.matcher(file);
		String common = "";
		Map<String, String> bodies = new LinkedHashMap<>();
		String currentName = null;
		int currentStart = -1;
		while (true) {
			boolean found = marker.find();
			if (currentStart >= 0) {
				String body = file.substring(currentStart, found ? marker.start() : file.length()).strip() + "\n";
				if (currentName == null) {
					common = body;
				}
				else if (bodies.put(currentName, body) != null) {
					throw new IllegalStateException("script '" + currentName + "' defined twice in " + LOCATION);
				}
			}
			if (!found) {
				break;
			}
			currentName = marker.group(2);
			currentStart = marker.end();
		}
		Map<String, String> scripts = new LinkedHashMap<>();
		for (Map.Entry<String, String> body : bodies.entrySet()) {
			scripts.put(body.getKey(), common + "\n" + body.getValue());
		}
		return scripts;
	}

}
