package dev.idempotency.method;

import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyMetricsAutoConfiguration;
import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.internal.Fingerprints;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.NameMatchMethodPointcut;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

@ExtendWith(OutputCaptureExtension.class)
class IdempotentMethodInterceptorTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMetricsAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class))
		.withUserConfiguration(Beans.class);

	@Test
	void aRepeatedCallReplaysTheStoredResultAsTheDeclaredType() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Receipt first = payments.pay(new Charge("order-1", 250));
			Receipt again = payments.pay(new Charge("order-1", 250));
			assertThat(again).isEqualTo(first);
			assertThat(payments.runs()).isEqualTo(1);
			List<Receipt> history = payments.history("order-1", 2);
			assertThat(payments.history("order-1", 2)).isEqualTo(history)
				.allSatisfy((receipt) -> assertThat(receipt).isInstanceOf(Receipt.class));
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@Test
	void eachCallIsAnObservationOfTheMethodDoor() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> observations).run((context) -> {
			Payments payments = context.getBean(Payments.class);
			payments.pay(new Charge("order-observed", 250));
			payments.pay(new Charge("order-observed", 250));
			TestObservationRegistryAssert.assertThat(observations)
				.hasNumberOfObservationsWithNameEqualTo("idempotency.request", 2)
				.forAllObservationsWithNameEqualTo("idempotency.request",
						(observation) -> observation.hasLowCardinalityKeyValue("idempotency.door", "method")
							.doesNotHaveHighCardinalityKeyValueWithKey("idempotency.key.hash"))
				.hasAnObservationWithAKeyValue("idempotency.outcome", "executed")
				.hasAnObservationWithAKeyValue("idempotency.outcome", "replayed");
		});
	}

	@Test
	void theKeysHashIsInTheObservationOnlyWhenAPropertyAsks() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> observations)
			.withPropertyValues("idempotency.observation.key-hash=true")
			.run((context) -> {
				context.getBean(Payments.class).pay(new Charge("order-hashed", 250));
				TestObservationRegistryAssert.assertThat(observations)
					.hasSingleObservationThat()
					.hasHighCardinalityKeyValue("idempotency.key.hash",
							Fingerprints.sha256Hex("order-hashed").substring(0, 16));
			});
	}

	@Test
	void aCallIsTheParentOfWhatItsMethodObservesAndCarriesWhatTheMethodThrew() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> observations)
			.withBean(ObservedWork.class, () -> new ObservedWork(observations))
			.run((context) -> {
				assertThat(context.getBean(ObservedWork.class).work("work-1")).isEqualTo("done");
				assertThatIllegalStateException()
					.isThrownBy(() -> context.getBean(Payments.class).failing("failing-1"));
				TestObservationRegistryAssert.assertThat(observations)
					.hasObservationWithNameEqualTo("work")
					.that()
					.hasParentObservationContextMatching((parent) -> "idempotency.request".equals(parent.getName()));
				TestObservationRegistryAssert.assertThat(observations)
					.hasHandledContextsThatSatisfy((contexts) -> assertThat(contexts)
						.filteredOn((observed) -> "idempotency.request".equals(observed.getName()))
						.extracting(Observation.Context::getError)
						.satisfiesExactly((error) -> assertThat(error).isNull(),
								(error) -> assertThat(error).isInstanceOf(IllegalStateException.class)
									.hasMessage("declined")));
			});
	}

	@Test
	void theSameKeyWithOtherArgumentsIsRejected() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			payments.pay(new Charge("order-2", 100));
			assertThatExceptionOfType(IdempotencyRejectedException.class)
				.isThrownBy(() -> payments.pay(new Charge("order-2", 999)))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED))
				.satisfies((ex) -> assertThat(ex.error().status()).isEqualTo(422));
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void argumentsAreComparedByEveryValueTheMethodCanReadNotByTheirJson() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			// No getters: {} as JSON.
			assertThat(payments.apply("nog-1", new NoGetters("A"))).isEqualTo("applied A");
			assertThat(payments.apply("nog-1", new NoGetters("A"))).as("the same values in a new instance")
				.isEqualTo("applied A");
			assertThat(payments.runs()).isEqualTo(1);
			assertThatExceptionOfType(IdempotencyRejectedException.class)
				.isThrownBy(() -> payments.apply("nog-1", new NoGetters("B")))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED));
			// A secret the JSON mapper never writes, and a field it ignores.
			assertThat(payments.rotate("secret-1", new Credentials("alice", "old", "note"))).isEqualTo("alice:old");
			assertThatExceptionOfType(IdempotencyRejectedException.class)
				.isThrownBy(() -> payments.rotate("secret-1", new Credentials("alice", "NEW", "note")))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED));
			assertThatExceptionOfType(IdempotencyRejectedException.class)
				.isThrownBy(() -> payments.rotate("secret-1", new Credentials("alice", "old", "other note")))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED));
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@Test
	void aFingerprintExpressionIdentifiesACallInsteadOfItsArguments() {
		this.runner.withBean(Uploads.class).run((context) -> {
			Uploads uploads = context.getBean(Uploads.class);
			assertThat(uploads.store("u-1", new Upload("a.txt", new ByteArrayInputStream(new byte[] { 1 }))))
				.isEqualTo("stored a.txt #1");
			// Another stream with the same name: the same call, as the expression says.
			assertThat(uploads.store("u-1", new Upload("a.txt", new ByteArrayInputStream(new byte[] { 2 }))))
				.isEqualTo("stored a.txt #1");
			assertThatExceptionOfType(IdempotencyRejectedException.class)
				.isThrownBy(() -> uploads.store("u-1", new Upload("b.txt", InputStream.nullInputStream())))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED));
		});
	}

	@Test
	void aValueTheDoorCannotReadBehindAnOpenTypeFailsTheCallBeforeItRuns() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			assertThat(payments.post("post-1", new Charge("o-1", 5))).isEqualTo("posted");
			assertThat(payments.post("post-1", new Charge("o-1", 5))).isEqualTo("posted");
			assertThat(payments.runs()).isEqualTo(1);
			assertThatIllegalStateException().isThrownBy(() -> payments.post("post-2", new File("/tmp/x")))
				.withMessageContaining("Payments.post")
				.withMessageContaining("payload is a java.io.File")
				.withMessageContaining("fingerprint = ");
			assertThat(payments.runs()).isEqualTo(1);
			// Nothing was reserved: the key is free.
			assertThat(payments.post("post-2", "text")).isEqualTo("posted");
		});
	}

	@Test
	void aFailedCallIsReleasedSoItRunsAgain() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			assertThatIllegalStateException().isThrownBy(() -> payments.failing("k-1"));
			assertThatIllegalStateException().isThrownBy(() -> payments.failing("k-1"));
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@Test
	void aNullKeyRunsUnprotectedWithAWarningAndACountUnlessRequired(CapturedOutput output) {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			Payments payments = context.getBean(Payments.class);
			payments.pay(new Charge(null, 1));
			payments.pay(new Charge(null, 1));
			assertThat(payments.runs()).isEqualTo(2);
			assertThat(output.getOut()).contains("WARN")
				.contains("#charge.orderId")
				.contains("Payments.pay")
				.contains("null");
			Counter nullKeys = context.getBean(MeterRegistry.class)
				.find(MicrometerIdempotencyListener.METER_NAME)
				.tag("outcome", "null_key")
				.tag("operation", "Payments.pay")
				.counter();
			assertThat(nullKeys).isNotNull();
			assertThat(nullKeys.count()).isEqualTo(2);
			assertThatExceptionOfType(IdempotencyRejectedException.class).isThrownBy(() -> payments.strict(null))
				.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REQUIRED))
				.satisfies((ex) -> assertThat(ex.getStatusCode().value()).isEqualTo(400));
		});
	}

	@Test
	void aControllerWhoseAnnotationsHaveNoKeyIsLeftToTheHttpDoorAndNotProxied() {
		this.runner.run((context) -> {
			assertThat(AopUtils.isAopProxy(context.getBean(HeaderController.class))).isFalse();
			assertThat(AopUtils.isAopProxy(context.getBean(KeyedController.class))).isTrue();
			assertThat(AopUtils.isAopProxy(context.getBean(Payments.class))).isTrue();
			KeyedController keyed = context.getBean(KeyedController.class);
			assertThat(keyed.place("controller-1")).isEqualTo(keyed.place("controller-1"));
		});
	}

	/**
	 * A keyless handler of a controller the method door proxies (another of its methods
	 * has a key) is the HTTP door's: the proxy lets it through, on Spring MVC as on
	 * WebFlux (where no request is bound to the thread). A keyless annotation outside a
	 * controller fails the start-up ({@code IdempotentMethodStartUpCheckTests}).
	 */
	@Test
	void aKeylessHandlerOfAProxiedControllerIsLeftToTheHttpDoor() {
		this.runner.run((context) -> {
			KeyedController keyed = context.getBean(KeyedController.class);
			assertThat(AopUtils.isAopProxy(keyed)).isTrue();
			assertThat(keyed.create()).isEqualTo("created");
			assertThat(keyed.create()).isEqualTo("created");
		});
	}

	@Test
	void aResultDeclaredAsAnInterfaceIsReplayedAsItsConcreteType() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Shape first = payments.shape("shape-1");
			Shape again = payments.shape("shape-1");
			assertThat(again).isInstanceOf(Circle.class).isEqualTo(first);
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void aGenericResultIsReplayedWithTheTypeArgumentsOfTheBeansClass() {
		this.runner.withBean(ReceiptBatches.class).run((context) -> {
			ReceiptBatches batches = context.getBean(ReceiptBatches.class);
			List<Receipt> first = batches.createAll("batch-1", List.of(new Receipt("o-1", 5, 0)));
			List<Receipt> again = batches.createAll("batch-1", List.of(new Receipt("o-1", 5, 0)));
			assertThat(again).isEqualTo(first).allSatisfy((receipt) -> assertThat(receipt).isInstanceOf(Receipt.class));
			assertThat(batches.runs()).isEqualTo(1);
		});
	}

	@Test
	void aNullResultDeclaredAsAnInterfaceIsReplayedAsNull() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			assertThat(payments.noShape("shape-none")).isNull();
			assertThat(payments.noShape("shape-none")).isNull();
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void aResultDeclaredAsObjectIsReplayedAsItsConcreteType() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Object first = payments.anything("any-1");
			Object again = payments.anything("any-1");
			assertThat(again).isInstanceOf(Receipt.class).isEqualTo(first);
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void aResultThatCannotBeReadBackIsNotStoredAndItsKeyIsReleased() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			assertThatIllegalStateException().isThrownBy(() -> payments.unreadable("unreadable-1"))
				.withMessageContaining("cannot be replayed")
				.withMessageContaining("Drawing");
			// Not stuck: the retry runs again instead of failing on a stored answer it
			// cannot read.
			assertThatIllegalStateException().isThrownBy(() -> payments.unreadable("unreadable-1"))
				.withMessageContaining("cannot be replayed");
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	/**
	 * Values inside a container of {@code Object} that plain JSON would give back as
	 * other classes (a {@code Long} as an {@code Integer}, a {@code BigDecimal} as a
	 * {@code Double}) are stored with their classes and replayed as they were. Before,
	 * the replay gave {@code [5, 1.5]} as an {@code Integer} and a {@code Double}. Values
	 * plain JSON gives back as they were are stored as plain JSON.
	 */
	@Test
	void aResultWhoseValuesPlainJsonWouldChangeIsReplayedWithItsOwnClasses() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Object first = payments.amounts("amounts-1");
			Object again = payments.amounts("amounts-1");
			assertThat(again).isEqualTo(first)
				.asInstanceOf(InstanceOfAssertFactories.LIST)
				.extracting(Object::getClass)
				.containsExactly(Long.class, java.math.BigDecimal.class);
			assertThat(payments.runs()).isEqualTo(1);
			Map<String, Object> fields = payments.fields("fields-1");
			assertThat(payments.fields("fields-1")).isEqualTo(fields);
			assertThat(payments.runs()).isEqualTo(2);
			// Inside a record too.
			Order order = payments.order("order-1");
			Order replayed = payments.order("order-1");
			assertThat(replayed).isEqualTo(order);
			assertThat(replayed.attributes().get("id")).isInstanceOf(Long.class);
			assertThat(replayed.attributes().get("total")).isEqualTo(new java.math.BigDecimal("10.50"));
			assertThat(payments.runs()).isEqualTo(3);
		});
	}

	public record Order(String ref, Map<String, Object> attributes) {
	}

	/**
	 * A value no stored class may name (a JDK class that is not a value) cannot be kept
	 * with its class: the result is stored as plain JSON gives it back, with a WARN
	 * saying what differs, and the method is never run again for that key (it has run;
	 * its effects are done).
	 */
	@Test
	void aResultThatCannotKeepItsClassesIsStillStoredAndNeverRunAgain() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Object first = payments.file("file-1");
			assertThat(first).isEqualTo(Map.of("path", new java.io.File("/tmp/receipt")));
			assertThat(payments.file("file-1")).as("replayed as plain JSON gives it back")
				.isEqualTo(Map.of("path", "/tmp/receipt"));
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	/**
	 * A key expression yielding a value whose text is its identity (an array, a class
	 * without its own toString) would make a key no retry finds again: the call is
	 * refused before it runs, saying so.
	 */
	@Test
	void aKeyWhoseTextIsAnIdentityIsRefusedBeforeTheCallRuns() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			byte[] id = "order-1".getBytes(java.nio.charset.StandardCharsets.UTF_8);
			assertThatIllegalStateException().isThrownBy(() -> payments.byBytes(id))
				.withMessageContaining("yields a byte[], whose text is its identity");
			assertThat(payments.runs()).isZero();
		});
	}

	@Test
	void interfaceAndClassBasedBeansAreProxiedAsSpringAopProxyTargetClassSays() {
		this.runner.withPropertyValues("spring.aop.proxy-target-class=false").run((context) -> {
			// A controller always by its class: behind an interface its handlers would no
			// longer be found.
			assertThat(AopUtils.isCglibProxy(context.getBean(InterfacedController.class))).isTrue();
			Ledger ledger = context.getBean(Ledger.class);
			assertThat(AopUtils.isJdkDynamicProxy(ledger)).isTrue();
			assertThat(ledger.record(new Charge("ledger-1", 5))).isEqualTo(ledger.record(new Charge("ledger-1", 5)));
			assertThat(ledger.runs()).isEqualTo(1);
			Payments payments = context.getBean(Payments.class);
			assertThat(AopUtils.isCglibProxy(payments)).isTrue();
			payments.pay(new Charge("jdk-1", 1));
			payments.pay(new Charge("jdk-1", 1));
			assertThat(payments.runs()).isEqualTo(1);
		});
		this.runner.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			assertThat(AopUtils.isCglibProxy(ledger)).isTrue();
			ledger.record(new Charge("ledger-2", 5));
			ledger.record(new Charge("ledger-2", 5));
			assertThat(ledger.runs()).isEqualTo(1);
		});
	}

	@Test
	void anAnnotationOnTheClassProtectsEachMethod() {
		this.runner.run((context) -> {
			Tickets tickets = context.getBean(Tickets.class);
			assertThat(tickets.issue("t-1")).isEqualTo(tickets.issue("t-1"));
			assertThat(tickets.issue("t-2")).isEqualTo(2);
			assertThat(tickets.toString()).isEqualTo("tickets");
		});
	}

	@Test
	void theMethodDoorRunsOutsideTheBeansOtherAdvice() {
		AtomicInteger transactions = new AtomicInteger();
		this.runner.withBean("transactionLikeAdvisor", Advisor.class,
				() -> new DefaultPointcutAdvisor(new NameMatchMethodPointcut().addMethodName("pay"),
						(MethodInterceptor) (invocation) -> {
							transactions.incrementAndGet();
							return invocation.proceed();
						}))
			.run((context) -> {
				Payments payments = context.getBean(Payments.class);
				payments.pay(new Charge("outer-1", 1));
				payments.pay(new Charge("outer-1", 1));
				// The replay did not enter the other advice (a transaction would not be
				// opened).
				assertThat(transactions).hasValue(1);
				assertThat(payments.runs()).isEqualTo(1);
			});
	}

	@Test
	void aKeyIsOneTo255VisibleAsciiCharacters() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String longest = "~!#$%&'()*+,-./:;<=>?@[]^_`{|}" + "k".repeat(225);
			assertThat(payments.strict(longest)).isEqualTo(payments.strict(longest));
			for (String bad : new String[] { "", longest + "k", "with space", "caf\u00e9" }) {
				assertThatExceptionOfType(IdempotencyRejectedException.class).isThrownBy(() -> payments.strict(bad))
					.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.INVALID_KEY))
					.satisfies((ex) -> assertThat(ex.getStatusCode().value()).isEqualTo(400));
			}
		});
	}

	@Test
	void anAsynchronousMethodIsRefusedAtStartUp() {
		this.runner.withBean(Later.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("Later.charge")
				.hasMessageContaining("CompletableFuture"));
	}

	@Test
	void aResponseEntityIsRefusedAtStartUp() {
		this.runner.withBean(Entities.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("Entities.create")
				.hasMessageContaining("ResponseEntity")
				.hasMessageContaining("return the body"));
	}

	@Test
	void aspectJIsNotNeeded() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, IdempotencyAutoConfiguration.class,
					IdempotencyMethodAutoConfiguration.class))
			.withBean(Payments.class)
			.withClassLoader(new FilteredClassLoader("org.aspectj"))
			.run((context) -> {
				Payments payments = context.getBean(Payments.class);
				payments.pay(new Charge("no-aspectj-1", 1));
				payments.pay(new Charge("no-aspectj-1", 1));
				assertThat(payments.runs()).isEqualTo(1);
			});
	}

	public record Charge(String orderId, int cents) {
	}

	interface Ledger {

		Receipt record(Charge charge);

		int runs();

	}

	static class CountingLedger implements Ledger {

		private final AtomicInteger runs = new AtomicInteger();

		@Override
		@Idempotent(key = "#charge.orderId")
		public Receipt record(Charge charge) {
			return new Receipt(charge.orderId(), charge.cents(), this.runs.incrementAndGet());
		}

		@Override
		public int runs() {
			return this.runs.get();
		}

	}

	static class Later {

		@Idempotent(key = "#p0")
		public java.util.concurrent.CompletableFuture<String> charge(String key) {
			return java.util.concurrent.CompletableFuture.completedFuture(key);
		}

	}

	static class Entities {

		@Idempotent(key = "#p0")
		public org.springframework.http.ResponseEntity<String> create(String key) {
			return org.springframework.http.ResponseEntity.ok(key);
		}

	}

	@RestController
	static class HeaderController {

		@Idempotent
		@org.springframework.web.bind.annotation.PostMapping("/header")
		public String create() {
			return "created";
		}

	}

	interface Named {

		String name();

	}

	@RestController
	static class InterfacedController implements Named {

		@Override
		public String name() {
			return "interfaced";
		}

		@Idempotent(key = "#p0")
		public String place(String orderId) {
			return orderId;
		}

	}

	@RestController
	static class KeyedController {

		private final AtomicInteger placed = new AtomicInteger();

		@Idempotent
		@org.springframework.web.bind.annotation.PostMapping("/keyed")
		public String create() {
			return "created";
		}

		@Idempotent(key = "#p0")
		public int place(String orderId) {
			return this.placed.incrementAndGet();
		}

	}

	@Idempotent(key = "#p0")
	static class Tickets {

		private final AtomicInteger issued = new AtomicInteger();

		public int issue(String id) {
			return this.issued.incrementAndGet();
		}

		@Override
		public String toString() {
			return "tickets";
		}

	}

	interface Shape {

		double area();

	}

	record Circle(double radius) implements Shape {

		@Override
		public double area() {
			return Math.PI * this.radius * this.radius;
		}

	}

	/**
	 * Serializable as JSON but not readable back: its field is an interface without type
	 * information.
	 */
	public static class Drawing {

		public Shape shape = new Circle(1);

	}

	public record Receipt(String orderId, int cents, int run) {
	}

	public record Upload(String name, InputStream content) {
	}

	/** Its calls are identified by the upload's name, not by its stream. */
	public static class Uploads {

		private final AtomicInteger runs = new AtomicInteger();

		@Idempotent(key = "#id", fingerprint = "{#id, #upload.name}")
		public String store(String id, Upload upload) {
			return "stored " + upload.name() + " #" + this.runs.incrementAndGet();
		}

	}

	/** Written by Jackson as {@code {}}: no getter, no public field. */
	public static class NoGetters {

		private final String value;

		NoGetters(String value) {
			this.value = value;
		}

		String value() {
			return this.value;
		}

	}

	/** Fields that Jackson does not write: a write-only secret and an ignored note. */
	public static class Credentials {

		@JsonProperty
		final String user;

		@JsonProperty(access = JsonProperty.Access.WRITE_ONLY)
		final String secret;

		@JsonIgnore
		final String note;

		Credentials(String user, String secret, String note) {
			this.user = user;
			this.secret = secret;
			this.note = note;
		}

	}

	/**
	 * Public: proxied by CGLIB also from the filtered class loader of
	 * {@link #aspectJIsNotNeeded()}.
	 */
	public static class Payments {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#charge.orderId")
		public Receipt pay(Charge charge) {
			return new Receipt(charge.orderId(), charge.cents(), this.runs.incrementAndGet());
		}

		@Idempotent(key = "'history-' + #orderId")
		public List<Receipt> history(String orderId, int count) {
			int run = this.runs.incrementAndGet();
			return java.util.stream.IntStream.range(0, count).mapToObj((i) -> new Receipt(orderId, i, run)).toList();
		}

		@Idempotent(key = "#p0")
		public Shape shape(String key) {
			return new Circle(this.runs.incrementAndGet());
		}

		@Idempotent(key = "#p0")
		public Shape noShape(String key) {
			this.runs.incrementAndGet();
			return null;
		}

		@Idempotent(key = "#p0")
		public Object anything(String key) {
			return new Receipt(key, 1, this.runs.incrementAndGet());
		}

		@Idempotent(key = "#p0", fingerprint = "#p0.length")
		public String byBytes(byte[] id) {
			this.runs.incrementAndGet();
			return "paid";
		}

		@Idempotent(key = "#p0")
		public Object amounts(String key) {
			this.runs.incrementAndGet();
			return List.of(5L, new java.math.BigDecimal("1.50"));
		}

		@Idempotent(key = "#p0")
		public Order order(String key) {
			long run = this.runs.incrementAndGet();
			return new Order(key, Map.of("id", run + 5_000_000_000L, "total", new java.math.BigDecimal("10.50")));
		}

		@Idempotent(key = "#p0")
		public Map<String, Object> file(String key) {
			this.runs.incrementAndGet();
			return Map.of("path", new java.io.File("/tmp/receipt"));
		}

		@Idempotent(key = "#p0")
		public Map<String, Object> fields(String key) {
			Map<String, Object> fields = new java.util.LinkedHashMap<>();
			fields.put("run", this.runs.incrementAndGet());
			fields.put("name", key);
			fields.put("tags", List.of("a", "b"));
			fields.put("nested", Map.of("ok", true));
			return fields;
		}

		@Idempotent(key = "#p0")
		public Drawing unreadable(String key) {
			this.runs.incrementAndGet();
			return new Drawing();
		}

		@Idempotent(key = "#id")
		public String apply(String id, NoGetters change) {
			this.runs.incrementAndGet();
			return "applied " + change.value();
		}

		@Idempotent(key = "#id")
		public String post(String id, Object payload) {
			this.runs.incrementAndGet();
			return "posted";
		}

		@Idempotent(key = "#id")
		public String rotate(String id, Credentials credentials) {
			this.runs.incrementAndGet();
			return credentials.user + ":" + credentials.secret;
		}

		@Idempotent(key = "#p0")
		public void failing(String key) {
			this.runs.incrementAndGet();
			throw new IllegalStateException("declined");
		}

		@Idempotent(key = "#key", keyRequired = true)
		public String strict(String key) {
			return key;
		}

	}

	/** Observes its own work, as an application's instrumented code does. */
	public static class ObservedWork {

		private final ObservationRegistry registry;

		ObservedWork(ObservationRegistry registry) {
			this.registry = registry;
		}

		@Idempotent(key = "#p0")
		public String work(String key) {
			return Observation.createNotStarted("work", this.registry).observe(() -> "done");
		}

	}

	/** A generic service whose subclass binds the type argument of the result. */
	abstract static class Batches<T> {

		private int runs;

		@Idempotent(key = "#key")
		public List<T> createAll(String key, List<T> items) {
			this.runs++;
			return new ArrayList<>(items);
		}

		public int runs() {
			return this.runs;
		}

	}

	static class ReceiptBatches extends Batches<Receipt> {

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Payments payments() {
			return new Payments();
		}

		@Bean
		Ledger ledger() {
			return new CountingLedger();
		}

		@Bean
		Tickets tickets() {
			return new Tickets();
		}

		@Bean
		HeaderController headerController() {
			return new HeaderController();
		}

		@Bean
		KeyedController keyedController() {
			return new KeyedController();
		}

		@Bean
		InterfacedController interfacedController() {
			return new InterfacedController();
		}

	}

}
