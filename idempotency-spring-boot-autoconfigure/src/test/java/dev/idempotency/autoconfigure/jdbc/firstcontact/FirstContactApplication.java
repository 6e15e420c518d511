package dev.idempotency.autoconfigure.jdbc.firstcontact;

import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * What a new user writes: one application class, one protected POST. Boot's own Liquibase
 * auto-configuration is excluded only because this test module has it on its classpath
 * (without an application changelog); a user who follows the README has liquibase-core
 * alone.
 */
@SpringBootApplication(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
public class FirstContactApplication {

	@RestController
	static class OrderController {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		String create(@RequestBody String order) {
			return "{\"order\":" + this.runs.incrementAndGet() + "}";
		}

	}

}
