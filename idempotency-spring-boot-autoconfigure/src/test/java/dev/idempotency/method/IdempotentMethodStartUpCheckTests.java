package dev.idempotency.method;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.core.KeyFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.expression.ParseException;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key expression that does not parse fails the start-up naming the bean, the method and
 * the expression, instead of failing every call.
 */
class IdempotentMethodStartUpCheckTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations
		.of(AopAutoConfiguration.class, IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class));

	@Test
	void aKeyExpressionThatDoesNotParseFailsTheStartUp() {
		this.runner.withBean("brokenOrders", BrokenOrders.class).run((context) -> {
			assertThat(context).hasFailed();
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.beanName()).isEqualTo("brokenOrders");
			assertThat(invalid.method()).isEqualTo(BrokenOrders.class.getName() + ".place(java.lang.String)");
			assertThat(invalid.attribute()).isEqualTo("key");
			assertThat(invalid.expression()).isEqualTo("#orderId +");
			assertThat(invalid.reason()).startsWith("the key expression does not parse: ");
			assertThat(invalid).hasMessageContaining("bean 'brokenOrders'")
				.hasMessageContaining("'#orderId +'")
				.hasCauseInstanceOf(ParseException.class);
		});
	}

	@Test
	void anArgumentWhoseStateTheStarterCannotReadFailsTheStartUpSayingHowToNameTheCall() {
		this.runner.withBean("uploads", Uploads.class).run((context) -> {
			assertThat(context).hasFailed();
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.beanName()).isEqualTo("uploads");
			assertThat(invalid.method())
				.isEqualTo(Uploads.class.getName() + ".store(java.lang.String," + Upload.class.getName() + ")");
			assertThat(invalid.reason()).contains("upload")
				.contains(Upload.class.getName())
				.contains("content")
				.contains("java.io.InputStream");
			assertThat(invalid.action()).contains("fingerprint = ");
			FailureAnalysis analysis = new InvalidIdempotentMethodFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("Uploads.store").contains("java.io.InputStream");
			assertThat(analysis.getAction()).contains("fingerprint = ");
		});
	}

	@Test
	void aFingerprintExpressionNamesWhatIdentifiesTheCallInstead() {
		this.runner.withBean("uploads", NamedUploads.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aFingerprintExpressionThatDoesNotParseOrHasNoKeyFailsTheStartUp() {
		this.runner.withBean("brokenFingerprint", BrokenFingerprint.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.attribute()).isEqualTo("fingerprint");
			assertThat(invalid.expression()).isEqualTo("{#id,");
			assertThat(invalid).hasMessageContaining("(fingerprint = '{#id,')");
		});
		this.runner.withBean("keylessFingerprint", KeylessFingerprint.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason()).contains("without key");
		});
	}

	@Test
	void aBeanThatIsAlreadyAProxyIsCheckedToo() {
		// @Transactional makes the auto-proxy creator proxy it before the method door
		// sees it.
		this.runner.withBean("transactionalBroken", TransactionalBroken.class)
			.withBean(TransactionManager.class, NoTransactions::new)
			.withConfiguration(AutoConfigurations.of(TransactionAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(invalid(context.getStartupFailure()).beanName()).isEqualTo("transactionalBroken");
			});
	}

	private static InvalidIdempotentMethodException invalid(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidIdempotentMethodException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("no InvalidIdempotentMethodException in " + failure, failure);
	}

	@Test
	void aMonoOrAFluxStarts() {
		this.runner.withBean("reactiveOrders", ReactiveOrders.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aFutureOrAPublisherOtherThanMonoOrFluxFailsTheStartUpSayingWhatTheDoorFollows() {
		this.runner.withBean("futureOrders", FutureOrders.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason()).contains("java.util.concurrent.CompletableFuture")
				.contains("follows a Reactor Mono or Flux");
			assertThat(invalid.action()).contains("Mono.fromFuture");
			FailureAnalysis analysis = new InvalidIdempotentMethodFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("FutureOrders.place");
		});
		this.runner.withBean("publisherOrders", PublisherOrders.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason()).contains("org.reactivestreams.Publisher")
				.contains("follows a Reactor Mono or Flux");
			assertThat(invalid.action()).contains("Mono.from(publisher)");
		});
	}

	@Test
	void aMonoOfAResponseEntityFailsTheStartUp() {
		this.runner.withBean("entityOrders", EntityOrders.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason())
				.contains("reactor.core.publisher.Mono of org.springframework.http.ResponseEntity")
				.contains("cannot be replayed from JSON");
		});
	}

	/**
	 * A keyless annotation on a bean that is not a controller: nothing would protect the
	 * method (the HTTP door protects handlers; the method door needs a key).
	 */
	@Test
	void aKeylessAnnotationOutsideAControllerFailsTheStartUp() {
		this.runner.withBean("keylessService", KeylessService.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.beanName()).isEqualTo("keylessService");
			assertThat(invalid.reason()).contains("not a controller").contains("nothing would protect it");
			assertThat(invalid.action()).contains("key = ");
		});
		this.runner.withBean("keylessClass", KeylessClass.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason()).contains("not a controller");
		});
		this.runner.withBean("keylessHelper", KeylessHelperController.class).run((context) -> {
			InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
			assertThat(invalid.reason()).contains("not a handler");
		});
		this.runner.withBean("keylessController", KeylessController.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * A method the proxy never sees (private, final, static) would run unprotected on
	 * every call: refused, for the annotation on the method as for a final method the
	 * annotated class declares.
	 */
	@Test
	void aMethodTheProxyCannotInterceptFailsTheStartUp() {
		for (Class<?> type : List.of(PrivateOrders.class, FinalOrders.class, StaticOrders.class,
				FinalInAnnotatedClass.class)) {
			this.runner.withBean("orders", type).run((context) -> {
				InvalidIdempotentMethodException invalid = invalid(context.getStartupFailure());
				assertThat(invalid.reason()).as(type.getSimpleName())
					.containsAnyOf("a private method", "a final method", "a static method")
					.contains("every call would run unprotected");
			});
		}
		this.runner.withBean("orders", PrivateHelperInAnnotatedClass.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * A result the caller reads once (a stream, an iterator), a JDK publisher, and a
	 * publisher inside the result are refused, as a future is.
	 */
	@Test
	void aResultReadOnceOrAPublisherInsideTheResultFailsTheStartUp() {
		this.runner.withBean("orders", StreamOrders.class)
			.run((context) -> assertThat(invalid(context.getStartupFailure()).reason())
				.contains("java.util.stream.Stream")
				.contains("read once"));
		this.runner.withBean("orders", FlowOrders.class)
			.run((context) -> assertThat(invalid(context.getStartupFailure()).reason())
				.contains("java.util.concurrent.Flow$Publisher")
				.contains("follows a Reactor Mono or Flux"));
		this.runner.withBean("orders", OptionalMonoOrders.class)
			.run((context) -> assertThat(invalid(context.getStartupFailure()).reason())
				.contains("holds a reactor.core.publisher.Mono"));
		this.runner.withBean("orders", MonoOfStreamOrders.class)
			.run((context) -> assertThat(invalid(context.getStartupFailure()).reason())
				.contains("holds a java.util.stream.Stream"));
	}

	/**
	 * Elements declared as an interface or an abstract class cannot be read back from
	 * JSON (a Flux of them, a list, a map's values, an Optional): refused. A result that
	 * is such a type itself is stored with its class, and Object elements are checked as
	 * each result is stored: both start.
	 */
	@Test
	void elementsDeclaredAsAnInterfaceOrAnAbstractClassFailTheStartUp() {
		for (Class<?> type : List.of(FluxOfInterface.class, MonoOfListOfInterface.class, ListOfNumber.class,
				MapOfInterface.class, OptionalOfInterface.class)) {
			this.runner.withBean("orders", type)
				.run((context) -> assertThat(invalid(context.getStartupFailure()).reason()).as(type.getSimpleName())
					.contains("whose elements are declared")
					.containsAnyOf(Shape.class.getName(), Number.class.getName()));
		}
		this.runner.withBean("orders", StartingShapes.class).run((context) -> assertThat(context).hasNotFailed());
	}

	interface Shape {

	}

	/** An enum whose constants have bodies: an abstract class, which Jackson reads. */
	enum Grade {

		A {
			@Override
			String label() {
				return "a";
			}
		};

		abstract String label();

	}

	public static class KeylessService {

		@Idempotent
		public String place(String orderId) {
			return orderId;
		}

	}

	@Idempotent
	public static class KeylessClass {

		public String hello() {
			return "hello";
		}

	}

	@org.springframework.web.bind.annotation.RestController
	public static class KeylessHelperController {

		@org.springframework.web.bind.annotation.PostMapping("/orders")
		public String place(String orderId) {
			return helper(orderId);
		}

		@Idempotent
		public String helper(String orderId) {
			return orderId;
		}

	}

	@org.springframework.web.bind.annotation.RestController
	public static class KeylessController {

		@Idempotent
		@org.springframework.web.bind.annotation.PostMapping("/orders")
		public String place(String orderId) {
			return orderId;
		}

		@Idempotent(key = "#orderId")
		public String keyed(String orderId) {
			return orderId;
		}

	}

	public static class PrivateOrders {

		public String place(String orderId) {
			return charge(orderId);
		}

		@Idempotent(key = "#orderId")
		private String charge(String orderId) {
			return orderId;
		}

	}

	public static class FinalOrders {

		@Idempotent(key = "#orderId")
		public final String place(String orderId) {
			return orderId;
		}

	}

	public static class StaticOrders {

		@Idempotent(key = "#orderId")
		public static String place(String orderId) {
			return orderId;
		}

	}

	@Idempotent(key = "#p0")
	public static class FinalInAnnotatedClass {

		public final String place(String orderId) {
			return orderId;
		}

	}

	@Idempotent(key = "#p0")
	public static class PrivateHelperInAnnotatedClass {

		public String place(String orderId) {
			return normalized(orderId);
		}

		private String normalized(String orderId) {
			return orderId.trim();
		}

	}

	public static class StreamOrders {

		@Idempotent(key = "#orderId")
		public java.util.stream.Stream<String> place(String orderId) {
			return java.util.stream.Stream.of(orderId);
		}

	}

	public static class FlowOrders {

		@Idempotent(key = "#orderId")
		public java.util.concurrent.Flow.Publisher<String> place(String orderId) {
			return java.util.concurrent.Flow.Subscriber::onComplete;
		}

	}

	public static class OptionalMonoOrders {

		@Idempotent(key = "#orderId")
		public java.util.Optional<Mono<String>> place(String orderId) {
			return java.util.Optional.of(Mono.just(orderId));
		}

	}

	public static class MonoOfStreamOrders {

		@Idempotent(key = "#orderId")
		public Mono<java.util.stream.Stream<String>> place(String orderId) {
			return Mono.just(java.util.stream.Stream.of(orderId));
		}

	}

	public static class FluxOfInterface {

		@Idempotent(key = "#orderId")
		public Flux<Shape> place(String orderId) {
			return Flux.empty();
		}

	}

	public static class MonoOfListOfInterface {

		@Idempotent(key = "#orderId")
		public Mono<List<Shape>> place(String orderId) {
			return Mono.empty();
		}

	}

	public static class ListOfNumber {

		@Idempotent(key = "#orderId")
		public List<Number> place(String orderId) {
			return List.of();
		}

	}

	public static class MapOfInterface {

		@Idempotent(key = "#orderId")
		public java.util.Map<String, Shape> place(String orderId) {
			return java.util.Map.of();
		}

	}

	public static class OptionalOfInterface {

		@Idempotent(key = "#orderId")
		public java.util.Optional<Shape> place(String orderId) {
			return java.util.Optional.empty();
		}

	}

	public static class StartingShapes {

		@Idempotent(key = "#orderId")
		public Mono<Shape> one(String orderId) {
			return Mono.empty();
		}

		@Idempotent(key = "#orderId")
		public Flux<Object> any(String orderId) {
			return Flux.empty();
		}

		@Idempotent(key = "#orderId")
		public java.util.Map<String, Object> fields(String orderId) {
			return java.util.Map.of();
		}

		@Idempotent(key = "#orderId")
		public List<List<String>> table(String orderId) {
			return List.of();
		}

		@Idempotent(key = "#orderId")
		public Flux<tools.jackson.databind.JsonNode> nodes(String orderId) {
			return Flux.empty();
		}

		@Idempotent(key = "#orderId")
		public java.util.Set<Grade> grades(String orderId) {
			return java.util.Set.of(Grade.A);
		}

		@Idempotent(key = "#orderId")
		public List<java.time.ZoneId> zones(String orderId) {
			return List.of(java.time.ZoneId.of("Europe/Paris"));
		}

	}

	public static class ReactiveOrders {

		@Idempotent(key = "#orderId")
		public Mono<String> place(String orderId) {
			return Mono.just(orderId);
		}

		@Idempotent(key = "#orderId")
		public Flux<String> lines(String orderId) {
			return Flux.just(orderId);
		}

	}

	public static class FutureOrders {

		@Idempotent(key = "#orderId")
		public CompletableFuture<String> place(String orderId) {
			return CompletableFuture.completedFuture(orderId);
		}

	}

	public static class PublisherOrders {

		@Idempotent(key = "#orderId")
		public Publisher<String> place(String orderId) {
			return Mono.just(orderId);
		}

	}

	public static class EntityOrders {

		@Idempotent(key = "#orderId")
		public Mono<ResponseEntity<String>> place(String orderId) {
			return Mono.just(ResponseEntity.ok(orderId));
		}

	}

	@Test
	void validMethodsStart() {
		this.runner.withBean("orders", Orders.class).run((context) -> assertThat(context).hasNotFailed());
	}

	public static class BrokenOrders {

		@Idempotent(key = "#orderId +")
		public String place(String orderId) {
			return orderId;
		}

	}

	public record Upload(String name, java.io.InputStream content) {
	}

	public static class Uploads {

		@Idempotent(key = "#id")
		public String store(String id, Upload upload) {
			return id;
		}

	}

	public static class NamedUploads {

		@Idempotent(key = "#id", fingerprint = "{#id, #upload.name}")
		public String store(String id, Upload upload) {
			return id;
		}

	}

	public static class BrokenFingerprint {

		@Idempotent(key = "#id", fingerprint = "{#id,")
		public String store(String id, Upload upload) {
			return id;
		}

	}

	public static class KeylessFingerprint {

		@Idempotent(fingerprint = "#id")
		public String store(String id) {
			return id;
		}

	}

	public static class TransactionalBroken {

		@Transactional
		@Idempotent(key = "#(")
		public String place(String orderId) {
			return orderId;
		}

	}

	static class NoTransactions extends AbstractPlatformTransactionManager {

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

	}

	public static class Orders {

		@Idempotent(key = "#orderId", keyFormat = KeyFormat.UUID)
		public String place(String orderId) {
			return orderId;
		}

	}

}
