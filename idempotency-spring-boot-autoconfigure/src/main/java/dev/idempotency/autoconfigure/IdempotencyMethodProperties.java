package dev.idempotency.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The method front door ({@code @Idempotent} with a key expression), under the
 * {@code idempotency.method} prefix.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.method")
public class IdempotencyMethodProperties {

	/**
	 * Classes, or packages (with their sub-packages), that a stored result of a method
	 * declared Object, an interface or an abstract class may be replayed as, besides the
	 * application's own packages (those of @SpringBootApplication, of the bean and of its
	 * declared return type) and JDK values (strings, numbers, collections, maps,
	 * java.time). The stored record names the class: any other is refused, and never
	 * loaded, so whoever can write the store cannot choose what is built.
	 */
	private List<String> allowedResultTypes = new ArrayList<>();

	public List<String> getAllowedResultTypes() {
		return this.allowedResultTypes;
	}

	public void setAllowedResultTypes(List<String> allowedResultTypes) {
		this.allowedResultTypes = allowedResultTypes;
	}

}
