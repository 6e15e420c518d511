package dev.idempotency.web;

import java.util.List;
import java.util.UUID;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreAutoConfiguration;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.converter.StringHttpMessageConverter;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which beans the HTTP door's auto-configuration contributes, beside the door's
 * package-private types it builds.
 */
class IdempotencyWebMvcAutoConfigurationTests {

	@Test
	void isRegisteredAsAnAutoConfigurationBesideTheDoor() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(IdempotencyWebMvcAutoConfiguration.class.getName())
			.doesNotContain("dev.idempotency.autoconfigure.IdempotencyWebMvcAutoConfiguration");
	}

	@Test
	void aServletApplicationGetsTheFilterAndTheInterceptor() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyWebMvcAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyInterceptor.class)
					.hasSingleBean(IdempotencyScopeResolver.class)
					.hasBean("idempotencyFilterRegistration");
				assertThat(context.getBean(IdempotencyScopeResolver.class)).isInstanceOf(PrincipalScopeResolver.class);
			});
	}

	@Test
	void theWebDoorStaysOutOfNonWebApplications() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyWebMvcAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEngine.class)
				.hasBean("idempotentMethodInterceptor")
				.doesNotHaveBean(IdempotencyInterceptor.class)
				.doesNotHaveBean("idempotencyFilterRegistration"));
	}

	@Test
	void refusalsAreWrittenWithTheConvertersOfSpringMvcsOwnHandlerAdapter() {
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		assertThat(IdempotencyWebMvcAutoConfiguration.mvcMessageConverters(beans)).isEmpty();
		HttpMessageConverter<?> mvcs = new JacksonJsonHttpMessageConverter();
		beans.addBean("requestMappingHandlerAdapter", adapter(mvcs));
		assertThat(IdempotencyWebMvcAutoConfiguration.mvcMessageConverters(beans)).containsExactly(mvcs);
		beans.addBean("anotherLibrarysHandlerAdapter", adapter(new StringHttpMessageConverter()));
		assertThat(IdempotencyWebMvcAutoConfiguration.mvcMessageConverters(beans)).containsExactly(mvcs);
	}

	private static RequestMappingHandlerAdapter adapter(HttpMessageConverter<?> converter) {
		RequestMappingHandlerAdapter adapter = new RequestMappingHandlerAdapter();
		adapter.setMessageConverters(List.of(converter));
		return adapter;
	}

	@Test
	void theHttpDoorRunsHandlersInTransactionsWhenTheStoreJoinsThem() {
		WebApplicationContextRunner web = new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, IdempotencyJdbcStoreAutoConfiguration.class,
					IdempotencyAutoConfiguration.class, IdempotencyWebMvcAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + h2Url(), "spring.datasource.generate-unique-name=false");
		// What the door gets: none when the store does not join (the factory method
		// returns null then).
		web.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context.getBeanProvider(HandlerTransactions.class).getIfAvailable())
				.isNotNull());
		web.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.transactional-completion=false")
			.run((context) -> assertThat(context.getBeanProvider(HandlerTransactions.class).getIfAvailable()).isNull());
		web.withPropertyValues("idempotency.store.type=memory")
			.run((context) -> assertThat(context.getBeanProvider(HandlerTransactions.class).getIfAvailable()).isNull());
	}

	private static String h2Url() {
		return "jdbc:h2:mem:app_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";
	}

}
