package dev.idempotency.sample.catalog.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.context.TestPropertySource;

/**
 * Runs the annotated test class's catalog with
 * {@code idempotency.mode=record-after-success} instead of the default lease mode.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@TestPropertySource(properties = "idempotency.mode=record-after-success")
public @interface RecordAfterSuccessMode {

}
