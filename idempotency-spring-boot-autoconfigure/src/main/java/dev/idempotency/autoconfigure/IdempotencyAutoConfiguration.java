package dev.idempotency.autoconfigure;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.autoconfigure.internal.AnswerCompression;
import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.seal.Sealing;
import dev.idempotency.store.seal.SealingKeys;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.context.annotation.Bean;
import org.springframework.util.unit.DataSize;

/**
 * The engine, its settings, the sealing of its stored answers, the lifecycle of its
 * heartbeat thread, the {@link IdempotencyTemplate} over it, and the in-memory store when
 * no other store is configured. The store's health indicator and the Micrometer binding
 * are auto-configured apart ({@link IdempotencyHealthAutoConfiguration},
 * {@link IdempotencyMetricsAutoConfiguration}). Store auto-configurations (JDBC, Redis)
 * run before this one and contribute the {@link IdempotencyStore} bean for their
 * {@code idempotency.store.type}. Invalid settings and a missing store fail the start-up
 * with a failure analysis.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ IdempotencyProperties.class, IdempotencyMemoryStoreProperties.class,
		IdempotencyObservationProperties.class, IdempotencyEncryptionProperties.class })
public final class IdempotencyAutoConfiguration {

	/**
	 * The engine's settings from the idempotency.* properties, checked first, every
	 * property at once (the in-memory store's too when it is the store, the JDBC or Redis
	 * store's own when one is configured, and the lease against the configured store's
	 * timeout).
	 */
	@Bean
	@ConditionalOnMissingBean
	IdempotencySettings idempotencySettings(IdempotencyProperties properties, IdempotencyMemoryStoreProperties memory,
			ObjectProvider<IdempotencyStoreTimeout> storeTimeout,
			ObjectProvider<IdempotencyStorePropertyValues> storeValues) {
		IdempotencyPropertiesValidator.validate(properties,
				(properties.getStore().getType() == IdempotencyProperties.StoreType.MEMORY) ? memory : null,
				storeTimeout.getIfAvailable(), storeValues.getIfAvailable());
		return settings(properties);
	}

	/** Maps the properties onto the engine's settings, unchecked. */
	static IdempotencySettings settings(IdempotencyProperties properties) {
		IdempotencySettings.Builder builder = IdempotencySettings.builder();
		PropertyMapper map = PropertyMapper.get();
		map.from(properties::getLifetime).to(builder::lifetime);
		map.from(properties::getGrace).to(builder::grace);
		map.from(properties::getLease).to(builder::lease);
		map.from(properties::getHeartbeatInterval).to(builder::heartbeatInterval);
		map.from(properties::getClockSkew).to(builder::clockSkew);
		map.from(properties::getKeyAgePolicy).to(builder::keyAgePolicy);
		map.from(properties::getMode).to(builder::mode);
		IdempotencyProperties.InFlight inFlight = properties.getInFlight();
		map.from(inFlight::getWait).to(builder::inFlightWait);
		map.from(inFlight::getPollInterval).to(builder::inFlightPollInterval);
		map.from(inFlight::getStatus).to(builder::inFlightStatus);
		map.from(inFlight::getRetryAfter).to(builder::inFlightRetryAfter);
		IdempotencyProperties.Store store = properties.getStore();
		map.from(store::getFailureMode).to(builder::failureMode);
		map.from(store::getRetryAfter).to(builder::storeRetryAfter);
		map.from(properties.getResponse()::getMaxBodySize).as(DataSize::toBytes).to(builder::maxBodyBytes);
		return builder.build();
	}

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	@ConditionalOnProperty(name = "idempotency.store.type", havingValue = "memory", matchIfMissing = true)
	InMemoryIdempotencyStore inMemoryIdempotencyStore(IdempotencyMemoryStoreProperties memory,
			IdempotencyProperties properties) {
		// Checked here too: another bean may ask for the store before the settings exist.
		IdempotencyPropertiesValidator.validate(memory);
		InMemoryIdempotencyStore.Builder builder = InMemoryIdempotencyStore.builder()
			.maxEntries(memory.getMaxEntries())
			.maxSharePerScope(memory.getMaxSharePerScope())
			.onFull(memory.getOnFull())
			.deflateFrom(AnswerCompression.deflateFrom(properties.getStore(), false));
		DataSize maxBytes = memory.getMaxBytes();
		if (maxBytes != null) {
			builder.maxBytes(maxBytes.toBytes());
		}
		return builder.build();
	}

	/**
	 * How the engine seals stored answers and keys fingerprints: under the application's
	 * {@link SealingKeys} bean, else under idempotency.encryption.keys, else not at all
	 * (an answer found sealed then fails its integrity check). The properties are checked
	 * first; a key that cannot work fails the start-up.
	 */
	@Bean
	@ConditionalOnMissingBean
	Sealing idempotencySealing(IdempotencyEncryptionProperties encryption, ObjectProvider<SealingKeys> keysBean) {
		SealingKeys keys = keysBean.getIfAvailable();
		IdempotencyPropertiesValidator.validate(encryption, keys != null);
		if (keys == null) {
			String sealingKeyId = encryption.getSealingKeyId();
			if (encryption.getKeys().isEmpty() || sealingKeyId == null) {
				return Sealing.none();
			}
			Map<String, byte[]> rootKeys = new LinkedHashMap<>();
			encryption.getKeys()
				.forEach((id, base64) -> rootKeys.put(id, IdempotencyPropertiesValidator.keyBytes(base64)));
			keys = SealingKeys.of(rootKeys, sealingKeyId);
		}
		return Sealing.of(keys, encryption.isRequireSealed());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	IdempotencyEngine idempotencyEngine(ObjectProvider<IdempotencyStore> store, IdempotencySettings settings,
			Sealing sealing, IdempotencyProperties properties, IdempotencyObservationProperties observation,
			ObjectProvider<IdempotencyStoreTimeout> storeTimeout, ObjectProvider<IdempotencyListener> listener,
			ObjectProvider<ObservationRegistry> observationRegistry, ListableBeanFactory beanFactory) {
		IdempotencyStore available = store.getIfUnique();
		if (available == null) {
			throw new IdempotencyStoreNotFoundException(properties.getStore().getType(),
					List.of(beanFactory.getBeanNamesForType(IdempotencyStore.class)));
		}
		// Settings of the application's own (a bean) are checked here; those from the
		// properties were checked with them and pass again.
		IdempotencyPropertiesValidator.validateLease(settings, storeTimeout.getIfAvailable());
		// Every listener bean, in order: the application's own and the Micrometer
		// binding. Without an ObservationRegistry bean (Boot makes one with Actuator),
		// nothing is observed and a call pays one check.
		return new IdempotencyEngine(available, settings, Clock.systemUTC(),
				CompositeIdempotencyListener.of(listener.orderedStream().toList()),
				observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP), observation.isKeyHash(), sealing);
	}

	/**
	 * The programmatic API over the engine the doors share: its heartbeat, store,
	 * settings, listeners and observations. Closing it leaves the engine to its
	 * lifecycle.
	 */
	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotencyEngine engine) {
		return new IdempotencyTemplate(engine);
	}

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyEngineLifecycle")
	IdempotencyEngineLifecycle idempotencyEngineLifecycle(IdempotencyEngine engine) {
		return new IdempotencyEngineLifecycle(engine);
	}

}
