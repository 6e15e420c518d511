package dev.idempotency.method;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.store.StoredResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import tools.jackson.databind.DatabindContext;
import tools.jackson.databind.DefaultTyping;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.jsontype.PolymorphicTypeValidator;
import tools.jackson.databind.type.TypeFactory;

/**
 * A method's result as JSON: stored with its concrete class when the declared return type
 * does not say how to read it back ({@code Object}, an interface or an abstract class),
 * and read back as the declared (generic) return type or as that class, if the door may
 * build it.
 */
final class MethodResultCodec {

	/**
	 * Kept with a stored result whose declared return type does not say which class to
	 * read it as.
	 */
	private static final String RESULT_TYPE_HEADER = "Result-Type";

	/**
	 * Kept with a stored result whose values declared {@code Object} carry their classes
	 * in its JSON.
	 */
	private static final String RESULT_TYPING_HEADER = "Result-Typing";

	private static final String TYPED = "classes";

	private static final Log logger = LogFactory.getLog(MethodResultCodec.class);

	private final Map<Method, ObjectMapper> typedMappers = new ConcurrentHashMap<>();

	/** The methods whose replay was said to differ: once each. */
	private final Set<Method> warned = ConcurrentHashMap.newKeySet();

	private final ObjectMapper objectMapper;

	private final List<String> allowedResultTypes;

	/**
	 * @param objectMapper writes results and reads them back
	 * @param allowedResultTypes classes and packages (with their sub-packages) that a
	 * stored result may name as its class, besides the packages of the bean and of its
	 * declared return type, and JDK values
	 */
	MethodResultCodec(ObjectMapper objectMapper, List<String> allowedResultTypes) {
		this.objectMapper = objectMapper;
		this.allowedResultTypes = List.copyOf(allowedResultTypes);
	}

	/**
	 * The result as JSON, with its concrete class when the declared return type does not
	 * say how to read it back, after checking that it reads back as a value of the
	 * declared return type. For a {@code Mono}, the result is its value ({@code null} for
	 * none) and the declared type the {@code Mono}'s; for a {@code Flux}, a list of its
	 * elements ({@link IdempotentOperation#resultType()}).
	 * @throws RuntimeException if it does not: a retry could not replay it
	 */
	StoredResponse write(IdempotentOperation operation, @Nullable Object result) {
		Class<?> declared = operation.resultClass();
		byte[] body = this.objectMapper.writeValueAsBytes(result);
		Map<String, List<String>> headers = Map.of();
		if (result != null && needsConcreteType(declared)) {
			headers = Map.of(RESULT_TYPE_HEADER, List.of(result.getClass().getName()));
		}
		StoredResponse stored = new StoredResponse(200, headers, body);
		Object readBack = read(operation, stored);
		Class<?> boxed = ClassUtils.resolvePrimitiveIfNecessary(declared);
		if (readBack != null && boxed != Void.class && !boxed.isInstance(readBack)) {
			throw new IllegalStateException(
					"it reads back as " + readBack.getClass().getName() + ", not as " + declared.getName());
		}
		String changed = (boxed != Void.class) ? changed(result, readBack, "the result") : null;
		if (changed == null) {
			return stored;
		}
		// Plain JSON gives some value back as another class (a Long in a List<Object>
		// as an Integer): stored with the classes of the values declared Object, it
		// comes back as it was. The method has run by now: whatever happens, its result
		// is stored and its key is never released, so a retry never runs it again.
		Map<String, List<String>> typedHeaders = new LinkedHashMap<>(headers);
		typedHeaders.put(RESULT_TYPING_HEADER, List.of(TYPED));
		try {
			StoredResponse typed = new StoredResponse(200, typedHeaders, typed(operation).writeValueAsBytes(result));
			String still = changed(result, read(operation, typed), "the result");
			if (still == null) {
				return typed;
			}
			changed = still;
		}
		catch (RuntimeException ex) {
			changed = changed + " (and with its classes kept it does not read back: " + ex.getMessage() + ")";
		}
		if (this.warned.add(operation.method())) {
			logger.warn("The result of " + operation.name() + " is replayed with values of other classes than the"
					+ " call's own: " + changed + ". It is stored as it reads back, never run again; to replay it as"
					+ " it was, declare what it holds with concrete types (a record, Long, BigDecimal), or allow its"
					+ " classes in idempotency.method.allowed-result-types");
		}
		return stored;
	}

	/**
	 * Where a value read back differs from the one written, through collections, maps,
	 * arrays and {@code Optional}s: each element, key and value must read back as its own
	 * class. JSON does not say which class a number or an object inside a container of
	 * {@code Object} was: without this, a {@code Long} would be replayed as an
	 * {@code Integer}, a {@code BigDecimal} as a {@code Double} and a record as a
	 * {@code Map}. A record's components are compared as a container's values; any other
	 * value by its class alone (read back as that class or a superclass of it, as an
	 * entity's proxy is), not field by field.
	 * @return what changed, {@code null} for nothing
	 */
	static @Nullable String changed(@Nullable Object written, @Nullable Object read, String where) {
		if (written == null || read == null) {
			return (written == read) ? null : where + " reads back as " + read + ", not as " + written;
		}
		if (written instanceof Optional<?> writtenOptional && read instanceof Optional<?> readOptional) {
			return changed(writtenOptional.orElse(null), readOptional.orElse(null), where);
		}
		if (written instanceof Collection<?> writtenItems && read instanceof Collection<?> readItems) {
			if (writtenItems.size() != readItems.size()) {
				return where + " reads back with " + readItems.size() + " elements, not " + writtenItems.size();
			}
			if (written instanceof Set<?> && !(written instanceof SortedSet<?>)) {
				// In no order of its own: the classes of its elements, each read back as
				// itself or as a superclass of a class written.
				Set<Class<?>> writtenClasses = classes(writtenItems);
				Set<Class<?>> readClasses = classes(readItems);
				boolean same = writtenClasses.stream()
					.allMatch((type) -> readClasses.stream().anyMatch((back) -> back.isAssignableFrom(type)))
						&& readClasses.stream()
							.allMatch((back) -> writtenClasses.stream().anyMatch(back::isAssignableFrom));
				return same ? null : where + "'s elements read back as " + readClasses + ", not as " + writtenClasses;
			}
			Iterator<?> readIterator = readItems.iterator();
			int index = 0;
			for (Object item : writtenItems) {
				String changed = changed(item, readIterator.next(), where + "[" + index++ + "]");
				if (changed != null) {
					return changed;
				}
			}
			return null;
		}
		if (written instanceof Map<?, ?> writtenMap && read instanceof Map<?, ?> readMap) {
			if (writtenMap.size() != readMap.size()) {
				return where + " reads back with " + readMap.size() + " entries, not " + writtenMap.size();
			}
			// Each value under its key when the key reads back equal; else (a key of
			// another class) the entry read back in the order written.
			Iterator<? extends Map.Entry<?, ?>> readEntries = readMap.entrySet().iterator();
			for (Map.Entry<?, ?> entry : writtenMap.entrySet()) {
				Map.Entry<?, ?> readEntry = readEntries.next();
				String value = where + "[" + entry.getKey() + "]";
				String changed;
				if (readMap.containsKey(entry.getKey())) {
					changed = changed(entry.getValue(), readMap.get(entry.getKey()), value);
				}
				else {
					changed = changed(entry.getKey(), readEntry.getKey(), where + "'s key " + entry.getKey());
					if (changed == null) {
						changed = changed(entry.getValue(), readEntry.getValue(), value);
					}
				}
				if (changed != null) {
					return changed;
				}
			}
			return null;
		}
		if (written.getClass().isArray() && read.getClass().isArray()
				&& !written.getClass().getComponentType().isPrimitive()) {
			return changed(Arrays.asList((Object[]) written), Arrays.asList((Object[]) read), where);
		}
		// A subclass read back as its declared class (an entity's proxy, say) was
		// replayed so before; a value of another class never is.
		if (!read.getClass().isAssignableFrom(written.getClass())) {
			return where + " reads back as " + read.getClass().getName() + ", not as " + written.getClass().getName();
		}
		if (written.getClass().isRecord() && read.getClass() == written.getClass()) {
			// Its components, as a container's values (a Map<String, Object> inside).
			for (RecordComponent component : written.getClass().getRecordComponents()) {
				String changed = changed(component(component, written), component(component, read),
						where + "." + component.getName());
				if (changed != null) {
					return changed;
				}
			}
		}
		return null;
	}

	private static @Nullable Object component(RecordComponent component, Object record) {
		try {
			Method accessor = component.getAccessor();
			ReflectionUtils.makeAccessible(accessor);
			return accessor.invoke(record);
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			// Not read here (a module that does not open it): not compared.
			return null;
		}
	}

	private static Set<Class<?>> classes(Collection<?> items) {
		Set<Class<?>> classes = new LinkedHashSet<>();
		for (Object item : items) {
			classes.add((item != null) ? item.getClass() : Void.class);
		}
		return classes;
	}

	/**
	 * A stored result to replay. It was read back when it was stored, so failing now
	 * means the method or the result's class changed since.
	 * @param key the call's key, for the message
	 * @throws IllegalStateException if it cannot be read back, or names a class the door
	 * does not build
	 */
	@Nullable Object replay(IdempotentOperation operation, @Nullable Object key, StoredResponse stored) {
		try {
			return read(operation, stored);
		}
		catch (ResultTypeRefusedException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException(
					"The stored result of " + operation.name() + " for key " + key + " cannot be read back as "
							+ operation.resultType() + "; did its class change since it was stored?",
					ex);
		}
	}

	/**
	 * The mapper of results stored with the classes of their values declared
	 * {@code Object}: each class named is checked, before it is loaded, as a stored
	 * result's own class is ({@link #allowedResultClass}).
	 */
	private ObjectMapper typed(IdempotentOperation operation) {
		return this.typedMappers.computeIfAbsent(operation.method(),
				(method) -> this.objectMapper.rebuild()
					.activateDefaultTyping(new AllowedValueClasses(operation), DefaultTyping.JAVA_LANG_OBJECT)
					.build());
	}

	/** A stored result as a value of the method's return type. */
	@Nullable Object read(IdempotentOperation operation, StoredResponse stored) {
		Method method = operation.method();
		Class<?> declared = operation.resultClass();
		if (declared == void.class || declared == Void.class) {
			return null;
		}
		List<String> concrete = stored.headers().get(RESULT_TYPE_HEADER);
		JavaType type;
		if (concrete != null) {
			Class<?> resultClass = allowedResultClass(concrete.get(0), operation);
			if (!declared.isAssignableFrom(resultClass)) {
				throw new IllegalStateException("The stored result of " + method.toGenericString() + " is a "
						+ resultClass.getName() + ", which the method does not return");
			}
			type = this.objectMapper.getTypeFactory().constructType(resultClass);
		}
		else {
			type = javaType(operation.resultType());
		}
		ObjectMapper mapper = stored.headers().containsKey(RESULT_TYPING_HEADER) ? typed(operation) : this.objectMapper;
		return mapper.readValue(stored.body(), type);
	}

	private static boolean needsConcreteType(Class<?> declared) {
		if (declared.isPrimitive() || declared.isArray() || Collection.class.isAssignableFrom(declared)
				|| Map.class.isAssignableFrom(declared)) {
			// Jackson reads these as their declared (generic) type.
			return false;
		}
		return declared == Object.class || declared.isInterface() || Modifier.isAbstract(declared.getModifiers());
	}

	/**
	 * The class a stored result names, if the door may build it. The record comes from
	 * the store, and whoever can write the store would otherwise choose which class
	 * Jackson builds (for a method declared {@code Object}, any class on the class path).
	 * The declared return type cannot restrict that, and neither can the class loader (in
	 * a packaged application one loader loads the application and every library). So the
	 * name must be in the application's own packages (those of the bean, of its declared
	 * return type, and of {@code @SpringBootApplication}), or allowed by
	 * {@code idempotency.method.allowed-result-types}, or be a JDK value (string, number,
	 * collection, map, java.time) which Jackson reads without a bean deserializer. The
	 * name is checked before the class is loaded; it is loaded without being initialized.
	 */
	private Class<?> allowedResultClass(String name, IdempotentOperation operation) {
		Method method = operation.method();
		boolean jdk = isJdkName(name);
		if (!jdk && !isAllowedName(name, operation)) {
			throw new ResultTypeRefusedException(refusal(name, method, "it is outside the application's packages"));
		}
		Class<?> resultClass;
		try {
			resultClass = ClassUtils.forName(name, method.getDeclaringClass().getClassLoader());
		}
		catch (ClassNotFoundException | LinkageError ex) {
			throw new IllegalStateException("The stored result of " + method.toGenericString() + " names the class "
					+ name + ", which cannot be loaded", ex);
		}
		if (jdk && !isJdkValue(resultClass)) {
			throw new ResultTypeRefusedException(refusal(name, method, "it is a JDK class but not a value"));
		}
		return resultClass;
	}

	private boolean isAllowedName(String name, IdempotentOperation operation) {
		List<String> allowed = new ArrayList<>(this.allowedResultTypes);
		allowed.add(operation.targetClass().getPackageName());
		allowed.add(operation.method().getDeclaringClass().getPackageName());
		allowed.add(operation.resultClass().getPackageName());
		for (String entry : allowed) {
			if (entry.isEmpty() || isJdkName(entry + ".")) {
				// The default package or a JDK package: never a prefix of everything.
				continue;
			}
			if (name.equals(entry) || name.startsWith(entry + ".") || name.startsWith(entry + "$")) {
				return true;
			}
		}
		return false;
	}

	private static boolean isJdkName(String name) {
		return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.")
				|| name.startsWith("sun.") || name.startsWith("com.sun.");
	}

	private static boolean isJdkValue(Class<?> type) {
		return type.getName().startsWith("java.") && (CharSequence.class.isAssignableFrom(type)
				|| Number.class.isAssignableFrom(type) || type == Boolean.class || type == Character.class
				|| type.isEnum() || type == java.util.UUID.class || type.getName().startsWith("java.time.")
				|| (type.getName().startsWith("java.util.")
						&& (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type))));
	}

	private static String refusal(String name, Method method, String reason) {
		return "The stored result of " + method.toGenericString() + " names the class " + name
				+ ", which the method door does not build (" + reason + "); if the method returns it, add it or its"
				+ " package to idempotency.method.allowed-result-types";
	}

	private JavaType javaType(ResolvableType type) {
		TypeFactory types = this.objectMapper.getTypeFactory();
		if (type.isArray()) {
			return types.constructArrayType(javaType(type.getComponentType()));
		}
		Class<?> raw = type.resolve(Object.class);
		if (!type.hasGenerics()) {
			return types.constructType(raw);
		}
		JavaType[] arguments = Arrays.stream(type.getGenerics()).map(this::javaType).toArray(JavaType[]::new);
		return types.constructParametricType(raw, arguments);
	}

	/**
	 * The classes a result stored with its values' classes may name: those a stored
	 * result's own class may be ({@link #allowedResultClass}), and arrays of them; a name
	 * outside the application is refused before its class is loaded.
	 */
	private final class AllowedValueClasses extends PolymorphicTypeValidator.Base {

		private static final long serialVersionUID = 1L;

		private final transient IdempotentOperation operation;

		AllowedValueClasses(IdempotentOperation operation) {
			this.operation = operation;
		}

		@Override
		public Validity validateSubClassName(DatabindContext context, JavaType baseType, String subClassName) {
			// An array is named by its elements' class ("[Lorg.example.Order;"), which
			// loading the array's class would load: checked by that name first.
			String name = subClassName;
			while (name.startsWith("[")) {
				name = name.substring(1);
			}
			if (name.startsWith("L") && name.endsWith(";")) {
				name = name.substring(1, name.length() - 1);
			}
			if (name.length() == 1 || isJdkName(name)) {
				// A primitive's or the JDK's: told from the class itself
				// (validateSubType).
				return Validity.INDETERMINATE;
			}
			return isAllowedName(name, this.operation) ? Validity.ALLOWED : Validity.DENIED;
		}

		@Override
		public Validity validateSubType(DatabindContext context, JavaType baseType, JavaType subType) {
			Class<?> type = subType.getRawClass();
			while (type.isArray()) {
				type = type.getComponentType();
			}
			if (type.isPrimitive() || isJdkValue(type) || type == Optional.class || type == java.util.Date.class
					|| type.getName().startsWith("java.sql.") && java.util.Date.class.isAssignableFrom(type)) {
				return Validity.ALLOWED;
			}
			return (!isJdkName(type.getName()) && isAllowedName(type.getName(), this.operation)) ? Validity.ALLOWED
					: Validity.DENIED;
		}

	}

	/** A stored result names a class the door does not build. */
	private static final class ResultTypeRefusedException extends IllegalStateException {

		ResultTypeRefusedException(String message) {
			super(message);
		}

	}

}
