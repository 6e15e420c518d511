package dev.idempotency.method;

import java.lang.reflect.Method;

import dev.idempotency.Idempotent;
import dev.idempotency.core.KeyFormat;
import org.junit.jupiter.api.Test;

import org.springframework.expression.ParseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class IdempotentOperationSourceTests {

	private final IdempotentOperationSource source = new IdempotentOperationSource();

	@Test
	void theMethodsAnnotationIsReadOnceWithItsKeyExpressionParsed() throws Exception {
		IdempotentOperation operation = this.source.find(method(Orders.class, "place"), Orders.class);
		assertThat(operation).isNotNull();
		assertThat(this.source.find(method(Orders.class, "place"), Orders.class)).isSameAs(operation);
		assertThat(operation.declaredOnMethod()).isTrue();
		assertThat(operation.hasKey()).isTrue();
		assertThat(operation.name()).isEqualTo("Orders.place");
		assertThat(operation.keyValue(new Orders(), new Object[] { "order-7" })).isEqualTo("order-7");
		assertThat(operation.identity()).isEqualTo(Orders.class.getName() + "#place[java.lang.String]");
		assertThat(operation.call("someone", "order-7", () -> "f").keyFormat()).isEqualTo(KeyFormat.OPAQUE);
	}

	@Test
	void anInterfaceMethodIsReadAsTheBeansOwnMethod() throws Exception {
		IdempotentOperation operation = this.source.find(method(Placing.class, "place"), Orders.class);
		assertThat(operation).isNotNull();
		assertThat(operation.method()).isEqualTo(method(Orders.class, "place"));
		assertThat(operation.targetClass()).isEqualTo(Orders.class);
	}

	@Test
	void theClassesAnnotationAppliesToEachMethodButNotToThoseOfObject() throws Exception {
		IdempotentOperation operation = this.source.find(method(Ledger.class, "move"), Ledger.class);
		assertThat(operation).isNotNull();
		assertThat(operation.declaredOnMethod()).isFalse();
		assertThat(operation.hasKey()).isFalse();
		assertThat(operation.name()).isEqualTo("ledger");
		assertThat(this.source.find(Object.class.getMethod("toString"), Ledger.class)).isNull();
		assertThat(this.source.find(method(Orders.class, "list"), Orders.class)).isNull();
	}

	@Test
	void aKeyExpressionThatDoesNotParseFailsEveryCall() throws Exception {
		Method broken = method(Broken.class, "run");
		assertThatExceptionOfType(ParseException.class).isThrownBy(() -> this.source.find(broken, Broken.class));
		assertThatExceptionOfType(ParseException.class).isThrownBy(() -> this.source.find(broken, Broken.class));
	}

	@Test
	void aKeyFormatTheAnnotationNamesIsTheCallsFormat() throws Exception {
		IdempotentOperation operation = this.source.find(method(Uuids.class, "place"), Uuids.class);
		assertThat(operation).isNotNull();
		assertThat(operation.call("someone", "k", () -> "f").keyFormat()).isEqualTo(KeyFormat.UUID);
	}

	private static Method method(Class<?> type, String name) {
		for (Method method : type.getMethods()) {
			if (method.getName().equals(name)) {
				return method;
			}
		}
		throw new IllegalArgumentException(name);
	}

	interface Placing {

		String place(String orderId);

	}

	static class Orders implements Placing {

		@Override
		@Idempotent(key = "#orderId")
		public String place(String orderId) {
			return orderId;
		}

		public String list() {
			return "";
		}

	}

	@Idempotent(operation = "ledger")
	static class Ledger {

		public void move() {
		}

	}

	static class Broken {

		@Idempotent(key = "#(")
		public void run() {
		}

	}

	static class Uuids {

		@Idempotent(key = "#k", keyFormat = KeyFormat.UUID)
		public void place(String k) {
		}

	}

}
