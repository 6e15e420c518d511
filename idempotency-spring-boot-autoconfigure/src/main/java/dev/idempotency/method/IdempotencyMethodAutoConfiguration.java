package dev.idempotency.method;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyMethodProperties;
import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.web.IdempotencyScopeResolver;
import dev.idempotency.web.IdempotencyWebMvcAutoConfiguration;
import dev.idempotency.web.PrincipalScopeResolver;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationPackages;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.util.ClassUtils;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The method front door for {@code @Idempotent} on any bean method: the
 * {@link IdempotentMethodPostProcessor} that proxies annotated beans (no AspectJ needed;
 * the application's {@code spring.aop.proxy-target-class} decides the kind of proxy) and
 * the {@link IdempotentMethodInterceptor} it applies, when Jackson and Spring Web (for
 * the problem body of its refusals) are present. In a Spring MVC application its refusals
 * are answered like the HTTP door's (see {@link IdempotencyWebMvcAutoConfiguration}).
 * Beside the door it configures, as the other front door's types are internal to this
 * package.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = { IdempotencyAutoConfiguration.class, IdempotencyWebMvcAutoConfiguration.class },
		afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass({ ObjectMapper.class, ErrorResponseException.class })
@ConditionalOnBean(IdempotencyEngine.class)
@EnableConfigurationProperties(IdempotencyMethodProperties.class)
public final class IdempotencyMethodAutoConfiguration {

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
			IdempotencyMethodAutoConfiguration.class.getClassLoader());

	private static final String REACTIVE_SCOPE_RESOLVER = "dev.idempotency.web.ServerIdempotencyScopeResolver";

	private static final boolean REACTIVE_SCOPE_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			IdempotencyMethodAutoConfiguration.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.web.server.ServerWebExchange",
					IdempotencyMethodAutoConfiguration.class.getClassLoader());

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentMethodPostProcessor idempotentMethodPostProcessor(
			ObjectProvider<IdempotentMethodInterceptor> interceptor) {
		return new IdempotentMethodPostProcessor(interceptor::getObject);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentMethodInterceptor idempotentMethodInterceptor(IdempotencyEngine engine,
			ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<IdempotencyScopeResolver> scopeResolver,
			IdempotencyProperties properties, IdempotencyMethodProperties methodProperties,
			ListableBeanFactory beanFactory) {
		// A WebFlux application's scope resolver, looked up by name: WebFlux may be
		// absent.
		Supplier<@Nullable Object> exchangeScopeResolver = () -> REACTIVE_SCOPE_PRESENT
				? beanFactory.getBeanProvider(ClassUtils.resolveClassName(REACTIVE_SCOPE_RESOLVER, null))
					.getIfAvailable()
				: null;
		ObjectMapper mapper = jsonMapper.getIfAvailable(JsonMapper::new);
		List<String> allowedResultTypes = new ArrayList<>(methodProperties.getAllowedResultTypes());
		if (AutoConfigurationPackages.has(beanFactory)) {
			allowedResultTypes.addAll(AutoConfigurationPackages.get(beanFactory));
		}
		return new IdempotentMethodInterceptor(engine, mapper, scopeSupplier(scopeResolver),
				properties.getWeb().getProblemTypeBase(), engine.listener(), allowedResultTypes, exchangeScopeResolver);
	}

	/** The scope of the current web request when there is one, else anonymous. */
	private static Supplier<String> scopeSupplier(ObjectProvider<IdempotencyScopeResolver> scopeResolver) {
		if (!SERVLET_PRESENT) {
			return () -> PrincipalScopeResolver.ANONYMOUS;
		}
		return () -> {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			if (attributes instanceof ServletRequestAttributes servlet) {
				IdempotencyScopeResolver resolver = scopeResolver.getIfAvailable(PrincipalScopeResolver::new);
				return resolver.resolveScope(servlet.getRequest());
			}
			return PrincipalScopeResolver.ANONYMOUS;
		};
	}

}
