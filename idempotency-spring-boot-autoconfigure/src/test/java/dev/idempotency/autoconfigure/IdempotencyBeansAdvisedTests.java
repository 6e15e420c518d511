package dev.idempotency.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreAutoConfiguration;
import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreAutoConfiguration;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.ResultCodec;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.SharedRedis;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's aspect may advise the starter's store, template, health indicator and
 * lifecycle beans, as it may any bean: with Spring Boot's default class-based proxies
 * ({@code spring.aop.proxy-target-class=true}) each shipped store, the template and the
 * health indicator are subclassed, a store stays of its own type (the starter looks a
 * shipped store up by its class) and the advice runs around their calls. A class that
 * cannot be subclassed would fail the application's start instead. Behind its proxy the
 * health indicator still reports a failing store as down.
 */
class IdempotencyBeansAdvisedTests {

	private final String redisPrefix = "idem-advised-" + UUID.randomUUID() + ":";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataSourceAutoConfiguration.class,
				DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyHealthAutoConfiguration.class, IdempotencyJdbcStoreAutoConfiguration.class,
				IdempotencyRedisStoreAutoConfiguration.class))
		.withUserConfiguration(StoreCallsAspect.class)
		.withPropertyValues(
				"spring.datasource.url=jdbc:h2:mem:advised_" + UUID.randomUUID().toString().replace("-", "")
						+ ";DB_CLOSE_DELAY=-1",
				"spring.datasource.generate-unique-name=false",
				"idempotency.store.redis.key-prefix=" + this.redisPrefix);

	@ParameterizedTest
	@CsvSource({ "memory, dev.idempotency.store.memory.InMemoryIdempotencyStore",
			"jdbc, dev.idempotency.store.jdbc.JdbcIdempotencyStore",
			"redis, dev.idempotency.store.redis.RedisIdempotencyStore" })
	void anAspectOfTheApplicationAdvisesTheStoreTheTemplateAndTheHealthIndicator(String type,
			Class<? extends IdempotencyStore> storeClass) {
		try {
			this.runner.withPropertyValues("idempotency.store.type=" + type).run((context) -> {
				assertThat(context).hasNotFailed();
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(AopUtils.isCglibProxy(store)).as("a class-based proxy").isTrue();
				assertThat(store).isInstanceOf(storeClass);
				assertThat(context.getBean(storeClass)).isSameAs(store);

				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				IdempotentRequest request = IdempotentRequest.of(TestKeys.newKey(), "advised",
						"request".getBytes(StandardCharsets.UTF_8));
				assertThat(template.execute(request, ResultCodec.utf8(), () -> "first")).isEqualTo("first");
				assertThat(template.execute(request, ResultCodec.utf8(), () -> "second")).as("the replay")
					.isEqualTo("first");
				assertThat(AopUtils.isCglibProxy(template)).as("the template, a class-based proxy too").isTrue();
				HealthIndicator health = context.getBean("idempotencyHealthIndicator", HealthIndicator.class);
				assertThat(AopUtils.isCglibProxy(health)).as("the health indicator, a class-based proxy too").isTrue();
				// health(boolean), as the Actuator calls it (Boot makes health() final).
				assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
				assertThat(context.getBean(StoreCallsAspect.class).calls).as("calls the aspect saw")
					.containsSubsequence("execute", "reserve", "complete", "execute", "reserve", "health", "find");
			});
		}
		finally {
			if (type.equals("redis")) {
				SharedRedis.deleteKeys(this.redisPrefix);
			}
		}
	}

	@Test
	void theAdvisedHealthIndicatorReportsAStoreThatFailsAsDown() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc").run((context) -> {
			HealthIndicator health = context.getBean("idempotencyHealthIndicator", HealthIndicator.class);
			assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
			// The store's database goes away: the pool's next connection opens an empty
			// one, without the table.
			JdbcClient.create(context.getBean(DataSource.class)).sql("SHUTDOWN").update();
			assertThat(health.health(true).getStatus()).isEqualTo(Status.DOWN);
		});
	}

	@Test
	void anAspectOnEveryLifecycleBeanAdvisesTheStartersHeartbeatAndPurge() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.withUserConfiguration(LifecycleCallsAspect.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				for (String name : List.of("idempotencyEngineLifecycle", "idempotencyPurgeScheduler")) {
					SmartLifecycle lifecycle = context.getBean(name, SmartLifecycle.class);
					assertThat(AopUtils.isCglibProxy(lifecycle)).as(name + ", a class-based proxy").isTrue();
					assertThat(lifecycle.isRunning()).as(name + " started").isTrue();
				}
				assertThat(context.getBean(LifecycleCallsAspect.class).calls.get()).isPositive();
			});
	}

	/** Every {@code isRunning()} of a lifecycle bean. */
	@Aspect
	@Configuration(proxyBeanMethods = false)
	static class LifecycleCallsAspect {

		final AtomicInteger calls = new AtomicInteger();

		@Around("execution(boolean org.springframework.context.SmartLifecycle+.isRunning())")
		Object record(ProceedingJoinPoint call) throws Throwable {
			this.calls.incrementAndGet();
			return call.proceed();
		}

	}

	/**
	 * Every store, template and health indicator call, as an application's tracing or
	 * timing aspect would see them.
	 */
	@Aspect
	@Configuration(proxyBeanMethods = false)
	static class StoreCallsAspect {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@Around("execution(* dev.idempotency.store.IdempotencyStore+.*(..))"
				+ " || execution(* dev.idempotency.core.IdempotencyTemplate.execute(..))"
				+ " || execution(* org.springframework.boot.health.contributor.HealthIndicator+.health(..))")
		Object record(ProceedingJoinPoint call) throws Throwable {
			this.calls.add(call.getSignature().getName());
			return call.proceed();
		}

	}

}
