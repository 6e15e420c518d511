package dev.idempotency.web;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockPart;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fingerprints as stored by earlier versions: records in a store keep them, so a retry
 * made after an upgrade must still compute the same values. Each list is the request's
 * fingerprint followed by its earlier ones. A query without escapes has had one form
 * throughout; one with escapes is compared decoded, its form as sent being an earlier
 * one.
 */
class HttpRequestFingerprintPinTests {

	@Test
	void aJsonBodyAsBytes() {
		MockHttpServletRequest request = request("application/json");
		request.setContent("{\"b\": 1, \"a\": [1.0, \"é\"]}".getBytes(StandardCharsets.UTF_8));
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.BYTES)).containsExactly(
				"0f2482f1111bd9e2ae0564bd11ff828bfbd62641d7940badb54747088ae4a20e",
				"3c4b1d72726513192e1353df6ffcf250ed7a3b02608c4384a3861e183933f946");
	}

	@Test
	void aJsonBodyInCanonicalForm() {
		MockHttpServletRequest request = request("application/json");
		request.setContent("{\"b\": 1, \"a\": [1.0, \"é\"]}".getBytes(StandardCharsets.UTF_8));
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.CANONICAL)).containsExactly(
				"0c5e4890ea9cbd2113e0311736dd469ddd680f6d5d9dd177702426fe5a2196fd",
				"3c4b1d72726513192e1353df6ffcf250ed7a3b02608c4384a3861e183933f946",
				"0f2482f1111bd9e2ae0564bd11ff828bfbd62641d7940badb54747088ae4a20e");
	}

	@Test
	void aFormPost() {
		MockHttpServletRequest request = request("application/x-www-form-urlencoded; charset=UTF-8");
		request.addParameter("b", "x");
		request.addParameter("a", "2", "1", "");
		request.addParameter("ü", "ç é");
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.BYTES)).containsExactly(
				"8a22b555b1c1aa4e43d576df1d3e3d86b75086e9f4eafa80d64be1698aa5f259",
				"bff8a235656fad0bc309d8269c128570c34410d252aa109bc55e9cfa396c5878");
	}

	@Test
	void aMultipartRequest() {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/uploads");
		request.setQueryString("z=1&a=2");
		request.setContentType("multipart/form-data; boundary=xyz");
		request.addPart(new MockPart("note", "a note".getBytes(StandardCharsets.UTF_8)));
		MockPart file = new MockPart("file", "a.txt", "the file's bytes".getBytes(StandardCharsets.UTF_8));
		file.getHeaders().add("Content-Type", "text/plain");
		file.getHeaders().add("X-Extra", "one");
		file.getHeaders().add("X-Extra", "two");
		request.addPart(file);
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.BYTES)).containsExactly(
				"46658f7b8dbfa37ac1b68fcf112431fa9348255e98166c21dd7ce466b3d1aefd",
				"6d0a6f3cc11ed7d66c590a600a59d23b6074550d3a8db60b00fecf911a948fd7");
	}

	@Test
	void aQueryWithEscapes() {
		// Compared decoded; its earlier fingerprints compared it as sent.
		MockHttpServletRequest request = escapedQuery("name=caf%C3%A9&q=a%20b&a=%31&a=2");
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.BYTES)).containsExactly(
				"1257adf5881c9052defeb72083a1a50def1e3149e6ac61d5471fb55dacfdf42e",
				"12b977cc1585e4edcb21c24e501c7e95f785d85a6818ba33c6e1cf8e3dead8b2",
				"b95d67b0dc2a4a94ca731e7af8155a2f2d5e2b3a79527c1a88a72ce9827849ca");
	}

	@Test
	void aQueryWithTwoNamesAsSentThatAreOneNameDecoded() {
		// As sent, a=1&%61=2 sorted as %61=2&a=1 would read a=[2, 1]: no earlier
		// fingerprint is trusted.
		MockHttpServletRequest request = escapedQuery("a=1&%61=2");
		assertThat(fingerprints(new CachedBodyRequest(request), JsonFingerprint.BYTES))
			.containsExactly("1570da97f7d3f37cc83d39e5ca1db7b7a9863ad08a5f45297e30e2d87359fe11");
	}

	private static MockHttpServletRequest escapedQuery(String query) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/things/7");
		request.setQueryString(query);
		request.setContentType("text/plain");
		request.setContent("body".getBytes(StandardCharsets.UTF_8));
		return request;
	}

	private static MockHttpServletRequest request(String contentType) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/things/7");
		request.setQueryString("z=1&a=2&a=1");
		request.setContentType(contentType);
		return request;
	}

	private static List<String> fingerprints(CachedBodyRequest request, JsonFingerprint json) {
		HttpRequestFingerprint fingerprint = new HttpRequestFingerprint(request, 1024, json);
		List<String> all = new ArrayList<>();
		all.add(fingerprint.fingerprint());
		all.addAll(fingerprint.earlierFingerprints());
		return all;
	}

}
