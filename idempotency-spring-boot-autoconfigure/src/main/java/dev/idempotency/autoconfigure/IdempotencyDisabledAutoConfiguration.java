package dev.idempotency.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;

/**
 * With {@code idempotency.enabled=false} nothing of the starter runs, and the
 * application's {@code @Idempotent} handlers and methods run unprotected: one WARN at
 * start-up says so, so that the switch left on from a test or a profile is seen.
 *
 * @since 0.2.0
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "idempotency.enabled", havingValue = false)
public final class IdempotencyDisabledAutoConfiguration {

	@Bean
	static SmartInitializingSingleton idempotencyDisabledNotice() {
		return new DisabledNotice();
	}

	/** Says, once the application's beans exist, that nothing protects them. */
	static final class DisabledNotice implements SmartInitializingSingleton {

		private static final Log logger = LogFactory.getLog(IdempotencyDisabledAutoConfiguration.class);

		@Override
		public void afterSingletonsInstantiated() {
			logger.warn("Idempotency-Key protection is off (idempotency.enabled=false): @Idempotent handlers and"
					+ " methods run unprotected, every retry runs again; remove the property to protect them");
		}

	}

}
