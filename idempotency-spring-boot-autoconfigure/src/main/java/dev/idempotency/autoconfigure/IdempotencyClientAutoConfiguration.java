package dev.idempotency.autoconfigure;

import dev.idempotency.client.IdempotencyKeyClientInterceptor;
import dev.idempotency.client.IdempotencyKeyExchangeFilterFunction;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The client side, off unless {@code idempotency.client.enabled=true}: an
 * {@link IdempotencyKeyClientInterceptor} bean, added to every {@code RestClient.Builder}
 * and {@code RestTemplateBuilder} that Spring Boot builds (through a
 * {@link RestClientCustomizer} and a {@link RestTemplateCustomizer}), and an
 * {@link IdempotencyKeyExchangeFilterFunction} bean, added to every
 * {@code WebClient.Builder} that Spring Boot builds (through a
 * {@link WebClientCustomizer}); each where its client is on the class path, with the same
 * settings. Independent of the server side: it needs no store.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass(HttpMethod.class)
@ConditionalOnBooleanProperty(name = "idempotency.client.enabled")
@EnableConfigurationProperties(IdempotencyClientProperties.class)
public final class IdempotencyClientAutoConfiguration {

	private static IdempotencyKeyClientInterceptor.Settings settings(IdempotencyClientProperties properties) {
		IdempotencyPropertiesValidator.validate(properties);
		return properties.toSettings();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ ClientHttpRequestInterceptor.class, RestClientCustomizer.class })
	static class RestClientConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyKeyClientInterceptor idempotencyKeyClientInterceptor(IdempotencyClientProperties properties) {
			return new IdempotencyKeyClientInterceptor(settings(properties));
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ WebClient.class, WebClientCustomizer.class })
	static class WebClientConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyKeyExchangeFilterFunction idempotencyKeyExchangeFilterFunction(
				IdempotencyClientProperties properties) {
			return new IdempotencyKeyExchangeFilterFunction(settings(properties));
		}

		@Bean
		@ConditionalOnMissingBean(name = "idempotencyKeyWebClientCustomizer")
		WebClientCustomizer idempotencyKeyWebClientCustomizer(IdempotencyKeyExchangeFilterFunction filter) {
			return (builder) -> builder.filter(filter);
		}

	}

}
