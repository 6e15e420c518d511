package dev.idempotency.autoconfigure;

import java.util.List;

import dev.idempotency.engine.IdempotencyEngine;
import dev.idempotency.engine.InvalidIdempotencySettingsException;
import dev.idempotency.web.IdempotencyErrorException;
import dev.idempotency.web.IdempotencyErrorExceptionResolver;
import dev.idempotency.web.IdempotencyErrorRenderer;
import dev.idempotency.web.IdempotencyFilter;
import dev.idempotency.web.IdempotencyInterceptor;
import dev.idempotency.web.IdempotencyScopeResolver;
import dev.idempotency.web.JsonFingerprint;
import dev.idempotency.web.PrincipalScopeResolver;
import dev.idempotency.web.ProblemDetailErrorRenderer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.ExceptionHandlerExceptionResolver;

/**
 * The HTTP front door for Spring MVC: the {@link IdempotencyFilter}, the
 * {@link IdempotencyInterceptor}, and the replaceable error renderer and scope resolver.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBean(IdempotencyEngine.class)
public class IdempotencyWebMvcAutoConfiguration {

	/**
	 * The filter's order: after security filters (so the principal is known), before most
	 * others.
	 */
	public static final int FILTER_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	@Bean
	@ConditionalOnMissingBean
	IdempotencyErrorRenderer idempotencyErrorRenderer(IdempotencyProperties properties) {
		return new ProblemDetailErrorRenderer(properties.getWeb().getProblemTypeBase());
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyScopeResolver idempotencyScopeResolver() {
		return new PrincipalScopeResolver();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyInterceptor idempotencyInterceptor(IdempotencyEngine engine, IdempotencyScopeResolver scopeResolver,
			IdempotencyProperties properties) {
		return new IdempotencyInterceptor(engine, scopeResolver, properties.getWeb().getProblemTypeBase(),
				properties.getHeaderName(), properties.getWeb().getPathPatterns(),
				properties.getWeb().isPathPatternsKeyRequired(),
				IdempotencyProperties.bytes(properties.getRequest().getMaxBodySize(),
						"idempotency.request.max-body-size", true),
				properties.getKey().getFormat(), jsonFingerprint(properties));
	}

	/**
	 * The JSON fingerprint setting, checked: canonical JSON is read with jackson-core.
	 * @throws InvalidIdempotencySettingsException if canonical is set without it
	 */
	static JsonFingerprint jsonFingerprint(IdempotencyProperties properties) {
		JsonFingerprint json = properties.getFingerprint().getJson();
		if (json == JsonFingerprint.CANONICAL && !ClassUtils.isPresent("tools.jackson.core.json.JsonFactory",
				IdempotencyWebMvcAutoConfiguration.class.getClassLoader())) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency.fingerprint.json"),
					"idempotency.fingerprint.json=canonical reads JSON bodies with Jackson 3"
							+ " (tools.jackson.core:jackson-core), which is not on the classpath",
					"Add tools.jackson.core:jackson-core (spring-boot-starter-json brings it), or remove"
							+ " idempotency.fingerprint.json to compare JSON bodies as bytes.");
		}
		return json;
	}

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyFilterRegistration")
	FilterRegistrationBean<IdempotencyFilter> idempotencyFilterRegistration(IdempotencyEngine engine,
			IdempotencyProperties properties) {
		FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(
				new IdempotencyFilter(engine, properties.getHeaderName(), properties.getResponse().getStoredHeaders()));
		registration.setOrder(FILTER_ORDER);
		registration.setName("idempotencyFilter");
		return registration;
	}

	@Bean
	WebMvcConfigurer idempotencyWebMvcConfigurer(IdempotencyInterceptor interceptor,
			IdempotencyErrorRenderer errorRenderer) {
		return new WebMvcConfigurer() {

			@Override
			public void addInterceptors(InterceptorRegistry registry) {
				registry.addInterceptor(interceptor);
			}

			/**
			 * The door's refusals are {@link IdempotencyErrorException}s. With the
			 * default renderer, the application's {@code @ExceptionHandler}s and
			 * {@code @ControllerAdvice} see them first; an application that declares its
			 * own renderer has chosen how they look, so it answers them before any
			 * advice.
			 */
			@Override
			public void extendHandlerExceptionResolvers(List<HandlerExceptionResolver> resolvers) {
				IdempotencyErrorExceptionResolver resolver = new IdempotencyErrorExceptionResolver(errorRenderer);
				int advice = -1;
				for (int i = 0; i < resolvers.size(); i++) {
					if (resolvers.get(i) instanceof ExceptionHandlerExceptionResolver) {
						advice = i;
						break;
					}
				}
				boolean defaultRenderer = errorRenderer instanceof ProblemDetailErrorRenderer;
				resolvers.add((defaultRenderer && advice >= 0) ? advice + 1 : 0, resolver);
			}

		};
	}

}
