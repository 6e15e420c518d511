package dev.idempotency.method;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.core.KeyFormat;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.expression.ParseException;
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
			assertThat(invalid.keyExpression()).isEqualTo("#orderId +");
			assertThat(invalid.reason()).startsWith("the key expression does not parse: ");
			assertThat(invalid).hasMessageContaining("bean 'brokenOrders'")
				.hasMessageContaining("'#orderId +'")
				.hasCauseInstanceOf(ParseException.class);
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
	void validMethodsStart() {
		this.runner.withBean("orders", Orders.class).run((context) -> assertThat(context).hasNotFailed());
	}

	public static class BrokenOrders {

		@Idempotent(key = "#orderId +")
		public String place(String orderId) {
			return orderId;
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
