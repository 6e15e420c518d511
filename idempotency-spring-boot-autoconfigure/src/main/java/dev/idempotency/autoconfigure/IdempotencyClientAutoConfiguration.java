package dev.idempotency.autoconfigure;

import dev.idempotency.client.IdempotencyKeyClientInterceptor;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestTemplate;

/**
 * The client side, off unless {@code idempotency.client.enabled=true}: an
 * {@link IdempotencyKeyClientInterceptor} bean, added to every {@code RestClient.Builder}
 * and {@code RestTemplateBuilder} that Spring Boot builds (through a
 * {@link RestClientCustomizer} and a {@link RestTemplateCustomizer}). Independent of the
 * server side: it needs no store.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass({ ClientHttpRequestInterceptor.class, RestClientCustomizer.class })
@ConditionalOnBooleanProperty(name = "idempotency.client.enabled")
@EnableConfigurationProperties(IdempotencyClientProperties.class)
public final class IdempotencyClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyKeyClientInterceptor idempotencyKeyClientInterceptor(IdempotencyClientProperties properties) {
		IdempotencyPropertiesValidator.validate(properties);
		return new IdempotencyKeyClientInterceptor(properties.toSettings());
	}

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyKeyRestClientCustomizer")
	RestClientCustomizer idempotencyKeyRestClientCustomizer(IdempotencyKeyClientInterceptor interceptor) {
		return (builder) -> builder.requestInterceptor(interceptor);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RestTemplate.class)
	static class RestTemplateConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "idempotencyKeyRestTemplateCustomizer")
		RestTemplateCustomizer idempotencyKeyRestTemplateCustomizer(IdempotencyKeyClientInterceptor interceptor) {
			return (restTemplate) -> restTemplate.getInterceptors().add(interceptor);
		}

	}

}
