package dev.idempotency.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.seal.SealingStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.ExceptionHandlerExceptionResolver;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * The HTTP front door for Spring MVC: the {@link IdempotencyFilter}, the
 * {@link IdempotencyInterceptor}, the replaceable scope resolver, and the
 * {@link IdempotencyErrorExceptionResolver} that answers the refusals of both doors
 * (problem details through Spring MVC's message converters, or the application's
 * {@link IdempotencyErrorRenderer}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBean(IdempotencyEngine.class)
public final class IdempotencyWebMvcAutoConfiguration {

	/**
	 * The filter's order: after security filters (so the principal is known), before most
	 * others.
	 */
	public static final int FILTER_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	@Bean
	@ConditionalOnMissingBean
	IdempotencyScopeResolver idempotencyScopeResolver() {
		return new PrincipalScopeResolver();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyInterceptor idempotencyInterceptor(IdempotencyEngine engine, IdempotencyScopeResolver scopeResolver,
			IdempotencyProperties properties, ObjectProvider<HandlerTransactions> transactions) {
		IdempotencyInterceptor interceptor = new IdempotencyInterceptor(engine, scopeResolver,
				properties.getWeb().getProblemTypeBase(), properties.getHeaderName(),
				properties.getWeb().getPathPatterns(), properties.getWeb().isPathPatternsKeyRequired(),
				properties.getRequest().getMaxBodySize().toBytes(), properties.getKey().getFormat(),
				properties.getFingerprint().getJson());
		interceptor.setHandlerTransactions(transactions.getIfAvailable());
		return interceptor;
	}

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyFilterRegistration")
	FilterRegistrationBean<IdempotencyFilter> idempotencyFilterRegistration(IdempotencyEngine engine,
			IdempotencyProperties properties, ObjectProvider<HandlerTransactions> transactions) {
		IdempotencyFilter filter = new IdempotencyFilter(engine, properties.getHeaderName(),
				properties.getResponse().getStoredHeaders());
		filter.setHandlerTransactions(transactions.getIfAvailable());
		FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setOrder(FILTER_ORDER);
		registration.setName("idempotencyFilter");
		return registration;
	}

	/**
	 * Atomic completion: protected synchronous handlers run inside a transaction of the
	 * application's transaction manager, whose commit holds their record. Only with the
	 * JDBC store when it joins transactions
	 * ({@code idempotency.store.jdbc.transactional-completion}, on by default when the
	 * store uses the application's {@code DataSource}) and a single transaction manager.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.transaction.PlatformTransactionManager",
			"org.springframework.jdbc.core.simple.JdbcClient" })
	static class AtomicCompletionConfiguration {

		private static final Log logger = LogFactory.getLog(AtomicCompletionConfiguration.class);

		@Bean
		@ConditionalOnMissingBean
		@Nullable HandlerTransactions idempotencyHandlerTransactions(IdempotencyEngine engine,
				ObjectProvider<PlatformTransactionManager> transactionManager, IdempotencyProperties properties,
				ObjectProvider<IdempotencyErrorRenderer> errorRenderer, ListableBeanFactory beanFactory) {
			if (!(SealingStore.unwrap(engine.store()) instanceof JdbcIdempotencyStore store)
					|| !store.transactionalCompletion()) {
				return null;
			}
			PlatformTransactionManager manager = transactionManager.getIfUnique();
			if (manager == null) {
				logger.info("The JDBC idempotency store joins transactions, but there is no single"
						+ " PlatformTransactionManager: the HTTP door runs protected handlers without a transaction");
				return null;
			}
			return new HandlerTransactions(manager, store, errorResolver(errorRenderer, beanFactory),
					SingletonSupplier.of(() -> exceptionResolvers(beanFactory)),
					properties.getWeb().getProblemTypeBase());
		}

		/**
		 * The application's exception resolvers as the {@code DispatcherServlet} finds
		 * them (every bean of the type, ancestors included, in their order), looked up
		 * once, when the first commit fails with the application's own error.
		 */
		private static List<HandlerExceptionResolver> exceptionResolvers(ListableBeanFactory beanFactory) {
			List<HandlerExceptionResolver> resolvers = new ArrayList<>(BeanFactoryUtils
				.beansOfTypeIncludingAncestors(beanFactory, HandlerExceptionResolver.class, true, false)
				.values());
			AnnotationAwareOrderComparator.sort(resolvers);
			return resolvers;
		}

	}

	@Bean
	WebMvcConfigurer idempotencyWebMvcConfigurer(IdempotencyInterceptor interceptor,
			ObjectProvider<IdempotencyErrorRenderer> errorRenderer, ListableBeanFactory beanFactory) {
		return new WebMvcConfigurer() {

			@Override
			public void addInterceptors(InterceptorRegistry registry) {
				registry.addInterceptor(interceptor);
			}

			/**
			 * Both doors refuse with an {@code IdempotencyRejectedException}. By default
			 * the application's {@code @ExceptionHandler}s and {@code @ControllerAdvice}
			 * see it first, and the resolver answers it when none did, before Spring
			 * MVC's default resolver would send a bare error status. An application that
			 * declares an {@link IdempotencyErrorRenderer} has chosen how refusals look,
			 * so the resolver answers them before any advice. Before all of them, the
			 * {@link InnerRefusalResolver} keeps a refusal of the method door or the
			 * template thrown out of a handler from being stored as its answer.
			 */
			@Override
			public void extendHandlerExceptionResolvers(List<HandlerExceptionResolver> resolvers) {
				boolean applicationRenderer = errorRenderer.getIfAvailable() != null;
				int advice = -1;
				for (int i = 0; i < resolvers.size(); i++) {
					if (resolvers.get(i) instanceof ExceptionHandlerExceptionResolver) {
						advice = i;
						break;
					}
				}
				resolvers.add((!applicationRenderer && advice >= 0) ? advice + 1 : 0,
						errorResolver(errorRenderer, beanFactory));
				resolvers.add(0, new InnerRefusalResolver());
			}

		};
	}

	/**
	 * Answers refusals with the application's renderer if it declares one, else with
	 * problem details written by Spring MVC's message converters (those of its request
	 * handling, so the application's JSON mapper), looked up once, when the first refusal
	 * is written.
	 */
	static IdempotencyErrorExceptionResolver errorResolver(ObjectProvider<IdempotencyErrorRenderer> errorRenderer,
			ListableBeanFactory beanFactory) {
		Supplier<List<HttpMessageConverter<?>>> converters = SingletonSupplier
			.of(() -> mvcMessageConverters(beanFactory));
		return new IdempotencyErrorExceptionResolver(converters, errorRenderer.getIfAvailable());
	}

	/**
	 * The converters of Spring MVC's handler adapter; with several adapters (Spring Data
	 * REST adds its own), those of Spring MVC's.
	 */
	static List<HttpMessageConverter<?>> mvcMessageConverters(ListableBeanFactory beanFactory) {
		Map<String, RequestMappingHandlerAdapter> adapters = beanFactory
			.getBeansOfType(RequestMappingHandlerAdapter.class);
		RequestMappingHandlerAdapter adapter = (adapters.size() == 1) ? adapters.values().iterator().next()
				: adapters.get("requestMappingHandlerAdapter");
		return (adapter != null) ? adapter.getMessageConverters() : List.of();
	}

}
