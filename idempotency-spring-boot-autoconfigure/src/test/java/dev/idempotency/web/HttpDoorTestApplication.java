package dev.idempotency.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.multipart.MultipartFile;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * An app for the door over real HTTP, on whichever store the test configures: handlers
 * whose large answers can be held at a gate until the test has reset the client's
 * connection.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class HttpDoorTestApplication {

	/** 400 columns, like a wide {@code createTable} answer: about 52 kB of JSON. */
	static Map<String, Object> wideTable() {
		List<Map<String, Object>> columns = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			Map<String, Object> column = new LinkedHashMap<>();
			column.put("id", i);
			column.put("name", "column_" + i + "_with_a_rather_long_descriptive_name");
			column.put("required", false);
			column.put("type", "decimal(38,10)");
			column.put("doc", "documentation of column " + i);
			columns.add(column);
		}
		return Map.of("name", "wide", "schema", Map.of("type", "struct", "fields", columns));
	}

	static byte[] pattern(int size) {
		byte[] bytes = new byte[size];
		for (int i = 0; i < size; i++) {
			bytes[i] = (byte) ('a' + (i % 26));
		}
		return bytes;
	}

	@RestController
	static class GatedController {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> finished = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		public int runs(String key) {
			AtomicInteger count = this.runs.get(key);
			return (count != null) ? count.get() : 0;
		}

		public int finished(String key) {
			AtomicInteger count = this.finished.get(key);
			return (count != null) ? count.get() : 0;
		}

		/** Lets the handlers waiting for this key go on (and every later one). */
		public void open(String key) {
			gate(key).countDown();
		}

		private CountDownLatch gate(String key) {
			return this.gates.computeIfAbsent(key, (k) -> new CountDownLatch(1));
		}

		private void run(String key) {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		private void finish(String key) {
			this.finished.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		private void await(String key) {
			try {
				if (!gate(key).await(20, TimeUnit.SECONDS)) {
					throw new IllegalStateException("gate " + key + " never opened");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

		@PostMapping("/gated/json")
		@Idempotent
		Map<String, Object> json(@RequestHeader("X-Gate") String gate) {
			run(gate);
			await(gate);
			finish(gate);
			return wideTable();
		}

		@PostMapping("/gated/bytes")
		@Idempotent
		ResponseEntity<byte[]> bytes(@RequestHeader("X-Gate") String gate) {
			run(gate);
			await(gate);
			finish(gate);
			return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(pattern(800_000));
		}

		/**
		 * Writes a first part, waits, then the rest, swallowing a failed write like
		 * careless code does.
		 */
		@PostMapping("/gated/stream")
		@Idempotent
		void stream(@RequestHeader("X-Gate") String gate, HttpServletResponse response) throws IOException {
			run(gate);
			byte[] body = pattern(800_000);
			response.setContentType("application/octet-stream");
			ServletOutputStream out = response.getOutputStream();
			try {
				try {
					out.write(body, 0, 16_384);
					out.flush();
				}
				catch (IOException ex) {
					// swallowed
				}
				await(gate);
				for (int offset = 16_384; offset < body.length; offset += 8192) {
					out.write(body, offset, Math.min(8192, body.length - offset));
				}
			}
			catch (IOException ex) {
				// swallowed
			}
			finish(gate);
		}

		/** Answers 201 with this run's number, once its gate opens. */
		@PostMapping("/gated/created")
		@Idempotent
		ResponseEntity<Map<String, Object>> created(@RequestHeader("X-Gate") String gate) {
			int run = this.runs.computeIfAbsent(gate, (k) -> new AtomicInteger()).incrementAndGet();
			await(gate);
			finish(gate);
			return ResponseEntity.created(java.net.URI.create("/things/" + gate + "/" + run))
				.body(Map.of("gate", gate, "run", run));
		}

		/** As {@code /gated/created}, answered asynchronously. */
		@PostMapping("/async/created")
		@Idempotent
		Callable<Map<String, Object>> asyncCreated(@RequestHeader("X-Gate") String gate) {
			int run = this.runs.computeIfAbsent(gate, (k) -> new AtomicInteger()).incrementAndGet();
			return () -> {
				await(gate);
				finish(gate);
				return Map.of("gate", gate, "run", run);
			};
		}

		@PostMapping("/echo")
		@Idempotent
		Map<String, Object> echo(@RequestBody String body) {
			run("echo");
			return Map.of("length", body.length(), "run", runs("echo"));
		}

		/**
		 * Answers with the query parameters as the application receives them (decoded,
		 * each name's values in order) and this handler's run count.
		 */
		@PostMapping("/params")
		@Idempotent
		Map<String, Object> params(@RequestParam MultiValueMap<String, String> parameters) {
			run("params");
			return Map.of("parameters", parameters, "run", runs("params"));
		}

		/**
		 * Reads a JSON object (Jackson answers another content type 415) and echoes it
		 * with this handler's run count.
		 */
		@PostMapping("/json")
		@Idempotent
		Map<String, Object> json(@RequestBody Map<String, Object> body) {
			run("json");
			return Map.of("received", body, "run", runs("json"));
		}

		@PostMapping("/open")
		Map<String, Object> open() {
			run("open");
			return Map.of("run", runs("open"));
		}

		@PostMapping("/upload")
		@Idempotent
		Map<String, Object> upload(@RequestParam("file") MultipartFile file, @RequestParam("note") String note)
				throws IOException {
			run("upload");
			return Map.of("file", file.getOriginalFilename(), "bytes", file.getBytes().length, "note", note, "run",
					runs("upload"));
		}

		@PostMapping("/open-writer")
		void openWriter(HttpServletResponse response) throws IOException {
			run("open-writer");
			response.setContentType("text/plain");
			response.getWriter().write("written by the writer");
		}

		@PostMapping("/async/callable")
		@Idempotent
		Callable<Map<String, Object>> callable(@RequestHeader("X-Gate") String gate) {
			run(gate);
			return () -> answer(gate);
		}

		@PostMapping("/async/deferred")
		@Idempotent
		DeferredResult<Map<String, Object>> deferred(@RequestHeader("X-Gate") String gate) {
			run(gate);
			DeferredResult<Map<String, Object>> result = new DeferredResult<>();
			Thread thread = new Thread(() -> result.setResult(answer(gate)), "deferred-" + gate);
			thread.start();
			return result;
		}

		@PostMapping("/async/future")
		@Idempotent
		CompletableFuture<Map<String, Object>> future(@RequestHeader("X-Gate") String gate) {
			run(gate);
			return CompletableFuture.supplyAsync(() -> answer(gate));
		}

		@PostMapping("/async/streaming")
		@Idempotent
		StreamingResponseBody streaming(@RequestHeader("X-Gate") String gate) {
			run(gate);
			return (out) -> out.write(answer(gate).toString().getBytes(StandardCharsets.UTF_8));
		}

		@PostMapping("/async/failing")
		@Idempotent
		Callable<Map<String, Object>> failing(@RequestHeader("X-Gate") String gate) {
			run(gate);
			return () -> {
				throw new IllegalStateException("the asynchronous part failed");
			};
		}

		/** Waits at the gate, then answers with this key's run count. */
		private Map<String, Object> answer(String gate) {
			await(gate);
			finish(gate);
			return Map.of("gate", gate, "run", runs(gate));
		}

		@PostMapping("/writer")
		@Idempotent
		void writer(HttpServletResponse response) throws IOException {
			run("writer");
			response.setContentType("text/plain");
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			response.getWriter().write("grüße from the writer");
		}

	}

}
