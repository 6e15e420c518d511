package dev.idempotency.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.idempotency.client.IdempotencyKeyClientInterceptor;
import dev.idempotency.client.IdempotencyKeyExchangeFilterFunction;
import dev.idempotency.core.IdempotencySettings;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

class IdempotencyClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyClientAutoConfiguration.class,
				RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, WebClientAutoConfiguration.class));

	@Test
	void offUnlessAskedFor() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotencyKeyClientInterceptor.class);
			assertThat(interceptorsOf(context.getBean(RestClient.Builder.class))).isEmpty();
			assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors()).isEmpty();
			assertThat(context).doesNotHaveBean(IdempotencyKeyExchangeFilterFunction.class);
			assertThat(filtersOf(context.getBean(WebClient.Builder.class))).isEmpty();
		});
	}

	@Test
	void whenEnabledTheWebClientBuildersBootMakesCarryTheFilterWithTheSameSettings() {
		this.runner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=6")
			.run((context) -> {
				IdempotencyKeyExchangeFilterFunction filter = context
					.getBean(IdempotencyKeyExchangeFilterFunction.class);
				assertThat(filter.settings())
					.isEqualTo(context.getBean(IdempotencyKeyClientInterceptor.class).settings());
				assertThat(filter.settings().maxAttempts()).isEqualTo(6);
				assertThat(filtersOf(context.getBean(WebClient.Builder.class))).containsExactly(filter);
			});
	}

	@Test
	void anApplicationWithWebClientAndWithoutRestClientGetsTheFilterAlone() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(IdempotencyClientAutoConfiguration.class, WebClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.client.max-attempts must be at least 1"));
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(IdempotencyClientAutoConfiguration.class, WebClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.withPropertyValues("idempotency.client.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyKeyClientInterceptor.class);
				assertThat(filtersOf(context.getBean(WebClient.Builder.class)))
					.containsExactly(context.getBean(IdempotencyKeyExchangeFilterFunction.class));
			});
	}

	@Test
	void whenEnabledTheBuildersBootMakesCarryTheInterceptorWithTheConfiguredSettings() {
		this.runner
			.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.methods=POST,PATCH",
					"idempotency.client.max-attempts=6", "idempotency.client.initial-backoff=50ms",
					"idempotency.client.max-delay=3s", "idempotency.client.key-lifetime=PT30M")
			.run((context) -> {
				IdempotencyKeyClientInterceptor interceptor = context.getBean(IdempotencyKeyClientInterceptor.class);
				assertThat(interceptor.settings()).isEqualTo(new IdempotencyKeyClientInterceptor.Settings(
						"Idempotency-Key", Set.of(HttpMethod.POST, HttpMethod.PATCH), 6, Duration.ofMillis(50),
						Duration.ofSeconds(3), Duration.ofMinutes(30)));
				assertThat(interceptorsOf(context.getBean(RestClient.Builder.class))).containsExactly(interceptor);
				assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors())
					.containsExactly(interceptor);
			});
	}

	@Test
	void theDefaultsArePostFourAttemptsAndTheServersDefaultKeyLifetime() {
		this.runner.withPropertyValues("idempotency.client.enabled=true").run((context) -> {
			IdempotencyKeyClientInterceptor.Settings settings = context.getBean(IdempotencyKeyClientInterceptor.class)
				.settings();
			assertThat(settings).isEqualTo(IdempotencyKeyClientInterceptor.Settings.defaults());
			assertThat(settings.keyLifetime()).as("the server side's default idempotency.lifetime")
				.isEqualTo(IdempotencySettings.defaults().lifetime());
		});
	}

	@Test
	void anApplicationsOwnInterceptorBeanIsTheOneAdded() {
		this.runner.withPropertyValues("idempotency.client.enabled=true")
			.withUserConfiguration(OwnInterceptor.class)
			.run((context) -> assertThat(interceptorsOf(context.getBean(RestClient.Builder.class)))
				.containsExactly(context.getBean("ownInterceptor", IdempotencyKeyClientInterceptor.class)));
	}

	@Test
	void invalidSettingsStopTheStartNamingTheProperty() {
		this.runner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageContaining("idempotency.client.max-attempts must be at least 1")
				.hasMessageContaining("was 0"));
		this.runner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.key-lifetime=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.client.key-lifetime must be positive"));
	}

	@Test
	void everyInvalidClientPropertyIsReportedAtOnceWithWhatToSet() {
		this.runner
			.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.header-name= ",
					"idempotency.client.methods=", "idempotency.client.max-attempts=0",
					"idempotency.client.initial-backoff=-1s", "idempotency.client.max-delay=-1s",
					"idempotency.client.key-lifetime=0s")
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable failure = context.getStartupFailure();
				assertThat(failure).rootCause().isInstanceOf(InvalidIdempotencySettingsException.class);
				InvalidIdempotencySettingsException invalid = (InvalidIdempotencySettingsException) rootCause(failure);
				assertThat(invalid.properties()).containsExactly("idempotency.client.header-name",
						"idempotency.client.methods", "idempotency.client.max-attempts",
						"idempotency.client.initial-backoff", "idempotency.client.max-delay",
						"idempotency.client.key-lifetime");
				FailureAnalysis analysis = new InvalidIdempotencySettingsFailureAnalyzer().analyze(failure);
				assertThat(analysis.getDescription())
					.startsWith("The Idempotency-Key settings are invalid (6 problems)");
				assertThat(analysis.getAction()).contains("Set idempotency.client.max-attempts to 1")
					.contains("Set idempotency.client.key-lifetime to a positive duration");
			});
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static List<ExchangeFilterFunction> filtersOf(WebClient.Builder builder) {
		List<ExchangeFilterFunction> seen = new ArrayList<>();
		builder.clone().filters(seen::addAll);
		return seen;
	}

	private static List<ClientHttpRequestInterceptor> interceptorsOf(RestClient.Builder builder) {
		List<ClientHttpRequestInterceptor> seen = new ArrayList<>();
		builder.clone().requestInterceptors(seen::addAll);
		return seen;
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnInterceptor {

		@Bean
		IdempotencyKeyClientInterceptor ownInterceptor() {
			return new IdempotencyKeyClientInterceptor(IdempotencyKeyClientInterceptor.Settings.defaults());
		}

	}

}
