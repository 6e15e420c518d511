package dev.idempotency.store;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class IdempotencyRecordTests {

	private static final RecordId ID = new RecordId("scope", "key");

	private static final Instant EXPIRES = Instant.parse("2026-12-03T18:00:00Z");

	@Test
	void aCompletedRecordGivesItsResponse() {
		StoredResponse response = new StoredResponse(201, Map.of("Location", List.of("/x")), new byte[] { 1 });
		IdempotencyRecord completed = new IdempotencyRecord(ID, "fp", "op", RecordState.COMPLETED, null, EXPIRES,
				response);
		assertThat(completed.completedResponse()).isSameAs(response);
	}

	@Test
	void aRecordInProgressHasNoCompletedResponse() {
		IdempotencyRecord inProgress = new IdempotencyRecord(ID, "fp", "op", RecordState.IN_PROGRESS, EXPIRES, EXPIRES,
				null);
		assertThatIllegalStateException().isThrownBy(inProgress::completedResponse)
			.withMessageContaining("in progress");
	}

}
