package dev.idempotency.method;

import java.util.List;

import dev.idempotency.Idempotent;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationCode;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * A native image can store and replay the results of the method door: their declared
 * return types, generic arguments included, are registered for JSON binding; and its
 * fingerprint can read the arguments' fields.
 */
class IdempotentMethodHintsTests {

	private final DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();

	@Test
	void declaredReturnTypesOfIdempotentMethodsAreRegisteredForBinding() {
		DefaultGenerationContext generationContext = contribute(Payments.class);

		assertThat(RuntimeHintsPredicates.reflection().onType(Receipt.class))
			.accepts(generationContext.getRuntimeHints());
		assertThat(RuntimeHintsPredicates.reflection().onType(Batch.class))
			.accepts(generationContext.getRuntimeHints());
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Receipt.class, "amount"))
			.accepts(generationContext.getRuntimeHints());
		assertThat(RuntimeHintsPredicates.reflection().onType(Unprotected.class).negate())
			.accepts(generationContext.getRuntimeHints());
	}

	@Test
	void argumentClassesReadFieldByFieldHaveTheirFieldsRegistered() {
		DefaultGenerationContext generationContext = contribute(Payments.class);

		assertThat(RuntimeHintsPredicates.reflection().onFieldAccess(Charge.class, "cents"))
			.accepts(generationContext.getRuntimeHints());
		assertThat(RuntimeHintsPredicates.reflection().onFieldAccess(Card.class, "number"))
			.accepts(generationContext.getRuntimeHints());
	}

	@Test
	void aClassWideAnnotationCoversEachMethod() {
		DefaultGenerationContext generationContext = contribute(AllIdempotent.class);

		assertThat(RuntimeHintsPredicates.reflection().onType(Receipt.class))
			.accepts(generationContext.getRuntimeHints());
	}

	@Test
	void beansWithoutIdempotentMethodsContributeNothing() {
		this.beanFactory.registerBeanDefinition("plain", new RootBeanDefinition(Unprotected.class));
		assertThat(new IdempotentMethodHints().processAheadOfTime(RegisteredBean.of(this.beanFactory, "plain")))
			.isNull();
	}

	private DefaultGenerationContext contribute(Class<?> beanClass) {
		this.beanFactory.registerBeanDefinition("bean", new RootBeanDefinition(beanClass));
		BeanRegistrationAotContribution contribution = new IdempotentMethodHints()
			.processAheadOfTime(RegisteredBean.of(this.beanFactory, "bean"));
		assertThat(contribution).isNotNull();
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass().getPackageName(), "Hints")),
				new InMemoryGeneratedFiles());
		contribution.applyTo(generationContext, mock(BeanRegistrationCode.class));
		return generationContext;
	}

	record Receipt(String id, long amount) {
	}

	record Batch(String name) {
	}

	record Card(String number) {
	}

	record Charge(long cents, List<Card> cards) {
	}

	static class Unprotected {

		public Unprotected lookUp() {
			return this;
		}

	}

	static class Payments {

		@Idempotent(key = "#id")
		public Receipt pay(String id) {
			return new Receipt(id, 1);
		}

		@Idempotent(key = "#id")
		public List<Batch> batches(String id) {
			return List.of();
		}

		@Idempotent(key = "#id")
		public void forget(String id) {
		}

		@Idempotent(key = "#id")
		public void charge(String id, Charge charge) {
		}

		public Unprotected other() {
			return new Unprotected();
		}

	}

	@Idempotent(key = "#id")
	static class AllIdempotent {

		public Receipt pay(String id) {
			return new Receipt(id, 1);
		}

	}

}
