package dev.idempotency.store;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The one stored form of an answer: every answer comes back byte for byte, compressible
 * ones are kept smaller, and records written by earlier builds (deflated through
 * {@code DeflaterOutputStream}) still read.
 */
class StoredResponseCodecTests {

	private static final Map<String, List<String>> HEADERS = Map.of("Content-Type", List.of("application/json"),
			"Location", List.of("/orders/42"));

	@ParameterizedTest
	@ValueSource(ints = { 0, 1, 40, 255, 256, 257, 1024, 8192, 1 << 20 })
	void aJsonAnswerOfAnySizeComesBackByteForByte(int size) {
		StoredResponse answer = new StoredResponse(201, HEADERS, json(size));
		StoredResponse decoded = StoredResponseCodec.decode(StoredResponseCodec.encode(answer));
		assertThat(decoded.status()).isEqualTo(201);
		assertThat(decoded.headers()).isEqualTo(HEADERS);
		assertThat(decoded.body()).isEqualTo(answer.body());
	}

	@ParameterizedTest
	@ValueSource(ints = { 1024, 8192, 1 << 20 })
	void aCompressibleAnswerIsKeptSmallerThanItsBody(int size) {
		byte[] body = json(size);
		assertThat(StoredResponseCodec.encode(new StoredResponse(200, Map.of(), body)))
			.hasSizeLessThan(body.length / 2);
	}

	/**
	 * The in-memory and Redis stores keep bodies as they are (deflating costs more CPU
	 * than those bytes); what a deflating store or an earlier build wrote still reads
	 * there.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 0, 40, 256, 1024, 8192 })
	void aStoreThatDoesNotDeflateKeepsTheBodyAsItIsAndReadsADeflatedOne(int size) {
		StoredResponse answer = new StoredResponse(201, HEADERS, json(size));
		byte[] kept = StoredResponseCodec.encode(answer, StoredResponseCodec.NEVER_DEFLATE);
		assertThat(kept).as("format byte, status, headers, body length, the body as it is")
			.hasSize(1 + 2 + 2 + headersLength() + 4 + size);
		assertThat(StoredResponseCodec.decode(kept).body()).isEqualTo(answer.body());
		byte[] deflated = StoredResponseCodec.encode(answer, StoredResponseCodec.DEFAULT_DEFLATE_FROM);
		if (size >= 1024) {
			assertThat(deflated).hasSizeLessThan(kept.length / 2);
		}
		assertThat(StoredResponseCodec.decode(deflated).body()).isEqualTo(answer.body());
	}

	private static int headersLength() {
		int length = 0;
		for (Map.Entry<String, List<String>> header : HEADERS.entrySet()) {
			length += 2 + header.getKey().length() + 2;
			for (String value : header.getValue()) {
				length += 2 + value.length();
			}
		}
		return length;
	}

	/**
	 * What a store that keeps answers as they are counts against its bound without
	 * encoding them: the length encoding would give, headers in any script, a sealed
	 * envelope included.
	 */
	@Test
	void theEncodedLengthIsCountedWithoutEncoding() {
		List<StoredResponse> answers = List.of(new StoredResponse(201, HEADERS, json(300)),
				new StoredResponse(204, Map.of(), new byte[0]),
				new StoredResponse(200,
						Map.of("Content-Disposition",
								List.of("attachment; filename=\"r\u00e9sum\u00e9 \u6587\u4ef6.pdf\""), "X-Nul",
								List.of("a\u0000b", "\ud83d\ude00")),
						json(1024)),
				StoredResponseCodec.sealed(new byte[] { 1, 2, 3, 4 }));
		for (StoredResponse answer : answers) {
			assertThat(StoredResponseCodec.encodedLength(answer)).as(answer.toString())
				.isEqualTo(StoredResponseCodec.encode(answer, StoredResponseCodec.NEVER_DEFLATE).length);
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 256, 4096, 1 << 20 })
	void anIncompressibleAnswerIsKeptAsItIsAndComesBack(int size) {
		byte[] body = new byte[size];
		new Random(size).nextBytes(body);
		byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, Map.of(), body));
		// format byte, status, header count, body length: nothing deflated added
		assertThat(encoded).hasSize(1 + 2 + 2 + 4 + size);
		assertThat(StoredResponseCodec.decode(encoded).body()).isEqualTo(body);
	}

	@Test
	void aRecordDeflatedByAnEarlierBuildStillReads() throws IOException {
		byte[] body = json(4096);
		ByteArrayOutputStream deflated = new ByteArrayOutputStream();
		try (DeflaterOutputStream out = new DeflaterOutputStream(deflated, new Deflater(Deflater.BEST_SPEED))) {
			out.write(body);
		}
		ByteArrayOutputStream encoded = new ByteArrayOutputStream();
		try (DataOutputStream out = new DataOutputStream(encoded)) {
			out.writeByte(2);
			out.writeShort(201);
			out.writeShort(1);
			out.writeUTF("Content-Type");
			out.writeShort(1);
			out.writeUTF("application/json");
			out.writeInt(body.length);
			out.writeInt(deflated.size());
			out.write(deflated.toByteArray());
		}
		StoredResponse decoded = StoredResponseCodec.decode(encoded.toByteArray());
		assertThat(decoded.status()).isEqualTo(201);
		assertThat(decoded.headers()).containsEntry("Content-Type", List.of("application/json"));
		assertThat(decoded.body()).isEqualTo(body);
	}

	@Test
	void aDeflatedBodyCutShortOrDamagedIsAnIntegrityFailureAndLaterAnswersStillRead() {
		byte[] body = json(8192);
		byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, Map.of(), body));
		byte[] cut = java.util.Arrays.copyOf(encoded, encoded.length - 20);
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> StoredResponseCodec.decode(cut));
		byte[] damaged = encoded.clone();
		for (int i = 20; i < damaged.length; i += 7) {
			damaged[i] ^= 0x5a;
		}
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> StoredResponseCodec.decode(damaged));
		for (int i = 0; i < 50; i++) {
			assertThat(StoredResponseCodec.decode(encoded).body()).isEqualTo(body);
		}
	}

	@Test
	void answersEncodedAndDecodedOnManyThreadsAtOnceComeBackEachAsItWas() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(16);
		try {
			List<Future<Boolean>> results = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				int seed = t;
				results.add(threads.submit(() -> {
					Random random = new Random(seed);
					for (int i = 0; i < 2_000; i++) {
						byte[] body = json(256 + random.nextInt(9000), random.nextLong());
						StoredResponse decoded = StoredResponseCodec
							.decode(StoredResponseCodec.encode(new StoredResponse(200, HEADERS, body)));
						if (!java.util.Arrays.equals(decoded.body(), body)) {
							return false;
						}
					}
					return true;
				}));
			}
			for (Future<Boolean> result : results) {
				assertThat(result.get()).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static byte[] json(int size) {
		return json(size, size);
	}

	/** A JSON-like answer of exactly {@code size} bytes, as compressible as real ones. */
	static byte[] json(int size, long seed) {
		Random random = new Random(seed);
		StringBuilder json = new StringBuilder("{\"lines\":[");
		while (json.length() < size) {
			json.append("{\"sku\":\"SKU-")
				.append(100000 + random.nextInt(900000))
				.append("\",\"name\":\"Item ")
				.append(random.nextInt(1000))
				.append("\",\"price\":")
				.append(random.nextInt(10000) / 100.0)
				.append(",\"quantity\":")
				.append(1 + random.nextInt(9))
				.append("},");
		}
		byte[] bytes = json.toString().getBytes(StandardCharsets.UTF_8);
		return java.util.Arrays.copyOf(bytes, size);
	}

}
