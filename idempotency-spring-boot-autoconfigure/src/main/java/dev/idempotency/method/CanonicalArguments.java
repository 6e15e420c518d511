package dev.idempotency.method;

import java.io.ByteArrayOutputStream;
import java.io.Serializable;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.MonthDay;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.Temporal;
import java.time.temporal.TemporalAccessor;
import java.time.temporal.TemporalAmount;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Currency;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;
import org.springframework.lang.Contract;

/**
 * The arguments of a call in a form of the method door's own, for its fingerprint: every
 * value the method can read, independent of how the application's JSON mapper writes them
 * (a field without a getter, {@code @JsonIgnore}, a write-only property all count).
 * <ul>
 * <li>JDK values by their value: strings, primitives and their wrappers (the type counts:
 * {@code 1} and {@code 1L} differ), {@code BigDecimal} with its scale,
 * {@code BigInteger}, {@code UUID}, {@code URI}, {@code Locale}, {@code Currency}, the
 * {@code java.time} values, {@code Date} and its {@code java.sql} kinds, {@code Optional}
 * and its primitive kinds; enums by class and name;</li>
 * <li>arrays and lists in order, sets and maps (by their entries) in any order, as
 * {@code equals} compares them;</li>
 * <li>records and other classes field by field (every instance field of the class and its
 * superclasses, {@code transient} ones too), with their class; an object met again on its
 * own path is written as a reference to it, so that cycles end.</li>
 * </ul>
 * Anything else has state the door cannot read: a JDK class that is not a value (a
 * stream, a file, a thread), a class extending one, a class whose fields its module does
 * not open, a lambda or another generated class, a proxy (whose state is not in its
 * fields). {@link #problem(Method, Class, List)} finds those among the declared parameter
 * types at start-up; a type the declaration leaves open ({@code Object}, an interface, an
 * abstract class, a type variable) is checked on the class of each value met, and
 * {@link #arguments} and {@link #value} throw {@link UnreadableValueException} for one
 * they cannot read: never a fingerprint over less than the method can read.
 */
final class CanonicalArguments {

	/** JDK classes written as their value. */
	private static final Set<Class<?>> VALUES = Set.of(String.class, Boolean.class, Character.class, Byte.class,
			Short.class, Integer.class, Long.class, Float.class, Double.class, BigInteger.class, BigDecimal.class,
			UUID.class, URI.class, Locale.class, Currency.class, OptionalInt.class, OptionalLong.class,
			OptionalDouble.class, Instant.class, LocalDate.class, LocalTime.class, LocalDateTime.class,
			OffsetDateTime.class, OffsetTime.class, ZonedDateTime.class, Duration.class, Period.class, Year.class,
			YearMonth.class, MonthDay.class);

	/**
	 * Declared types that say nothing of their values' classes: each value is checked by
	 * its class.
	 */
	private static final Set<Class<?>> OPEN = Set.of(Object.class, Serializable.class, Comparable.class,
			CharSequence.class, Number.class, Cloneable.class, Iterable.class, Enum.class, Record.class, Temporal.class,
			TemporalAccessor.class, TemporalAmount.class);

	/** Why a class cannot be read field by field; empty if it can. Checked once. */
	private static final ClassValue<Optional<String>> READABLE = new ClassValue<>() {

		@Override
		protected Optional<String> computeValue(Class<?> type) {
			// The path is the value's, prepended where the value is met.
			return Optional.ofNullable(new TypeCheck().problem(ResolvableType.forClass(type), ""));
		}

	};

	/** The instance fields of a class read field by field, in their written order. */
	private static final ClassValue<List<Field>> FIELDS = new ClassValue<>() {

		@Override
		protected List<Field> computeValue(Class<?> type) {
			List<Class<?>> hierarchy = new ArrayList<>();
			for (Class<?> level = type; hasFields(level); level = level.getSuperclass()) {
				hierarchy.add(0, level);
			}
			List<Field> fields = new ArrayList<>();
			for (Class<?> level : hierarchy) {
				Field[] declared = level.getDeclaredFields();
				Arrays.sort(declared, Comparator.comparing(Field::getName));
				for (Field field : declared) {
					if (!Modifier.isStatic(field.getModifiers())) {
						// Made accessible by the check, which refuses a field it cannot.
						field.trySetAccessible();
						fields.add(field);
					}
				}
			}
			return List.copyOf(fields);
		}

	};

	private CanonicalArguments() {
	}

	/**
	 * Why the arguments of {@code method}, called on a bean of {@code targetClass},
	 * cannot be fingerprinted by their values, naming the argument and the part of it at
	 * fault; {@code null} if they can, as far as their declared types tell (a type left
	 * open is checked at each call).
	 * @param parameterNames the names of the parameters, for the reason
	 */
	static @Nullable String problem(Method method, Class<?> targetClass, List<String> parameterNames) {
		TypeCheck check = new TypeCheck();
		for (int i = 0; i < method.getParameterCount(); i++) {
			ResolvableType type = ResolvableType.forMethodParameter(method, i, targetClass);
			String name = parameterNames.get(i);
			String problem = check.problem(type, name);
			if (problem != null) {
				return "the argument '" + name + "' (" + type + ") cannot be compared by its values: " + problem;
			}
		}
		return null;
	}

	/**
	 * The classes whose fields are read for the arguments of {@code method}, as far as
	 * the declared types tell: what a native image must be able to reflect on.
	 */
	static Set<Class<?>> classesReadByFields(Method method, Class<?> targetClass) {
		TypeCheck check = new TypeCheck();
		for (int i = 0; i < method.getParameterCount(); i++) {
			check.problem(ResolvableType.forMethodParameter(method, i, targetClass), "p" + i);
		}
		return check.readByFields;
	}

	/**
	 * The canonical form of a call's arguments.
	 * @param parameterNames the names of the parameters, for the error
	 * @throws UnreadableValueException if a value is of a class whose state the door
	 * cannot read
	 */
	static byte[] arguments(@Nullable Object[] arguments, List<String> parameterNames) {
		Writer writer = new Writer();
		writer.writeInt(arguments.length);
		for (int i = 0; i < arguments.length; i++) {
			writer.write(arguments[i], parameterNames.get(i));
		}
		return writer.bytes();
	}

	/**
	 * The canonical form of one value (a fingerprint expression's).
	 * @throws UnreadableValueException if a part of it is of a class whose state the door
	 * cannot read
	 */
	static byte[] value(@Nullable Object value) {
		Writer writer = new Writer();
		writer.write(value, "its value");
		return writer.bytes();
	}

	/**
	 * Whether a class in a hierarchy may declare fields: not the end of it, nor
	 * {@code Object} or {@code Record}, which declare none.
	 */
	@Contract("null -> false")
	private static boolean hasFields(@Nullable Class<?> level) {
		return level != null && level != Object.class && level != Record.class;
	}

	private static boolean isJdk(Class<?> type) {
		ClassLoader loader = type.getClassLoader();
		return loader == null || loader == ClassLoader.getPlatformClassLoader();
	}

	private static boolean isValue(Class<?> type) {
		return type.isPrimitive() || VALUES.contains(type)
				|| (isJdk(type) && (ZoneId.class.isAssignableFrom(type) || Date.class.isAssignableFrom(type)));
	}

	/**
	 * A class made at run time whose fields do not hold the state its methods read: a
	 * lambda or another hidden class, a JDK proxy, a CGLIB or Byte Buddy subclass
	 * (Spring's proxies, Hibernate's lazy entities).
	 */
	private static boolean isGenerated(Class<?> type) {
		String name = type.getName();
		return type.isHidden() || type.isSynthetic() || Proxy.isProxyClass(type) || name.contains("$$")
				|| name.contains("$HibernateProxy$") || name.contains("$ByteBuddy$");
	}

	/**
	 * What the door can read of declared types, each generic type checked once per check.
	 */
	private static final class TypeCheck {

		private final Set<String> checked = new HashSet<>();

		final Set<Class<?>> readByFields = new LinkedHashSet<>();

		/**
		 * Why values of this type cannot be read; {@code null} if they can, or if only
		 * each value's class can tell.
		 * @param path where the type is met, for the reason
		 */
		@Nullable String problem(ResolvableType type, String path) {
			Class<?> resolved = type.resolve();
			if (resolved == null || isValue(resolved) || resolved.isEnum() || OPEN.contains(resolved)) {
				return null;
			}
			if (resolved.isArray()) {
				return problem(type.getComponentType(), path + "[]");
			}
			if (resolved == Optional.class) {
				return problem(type.getGeneric(0), path + ".get()");
			}
			if (Collection.class.isAssignableFrom(resolved)) {
				return problem(type.asCollection().getGeneric(0), path + "[]");
			}
			if (Map.class.isAssignableFrom(resolved)) {
				ResolvableType map = type.asMap();
				String problem = problem(map.getGeneric(0), path + ".key");
				return (problem != null) ? problem : problem(map.getGeneric(1), path + ".value");
			}
			if (isJdk(resolved)) {
				return path + " is a " + resolved.getName() + ", a JDK type whose state the door does not read";
			}
			if (isGenerated(resolved)) {
				return path + " is a " + resolved.getName()
						+ ", a class generated at run time (a lambda, a proxy) whose state is not in its fields";
			}
			if (!this.checked.add(type.toString())) {
				return null;
			}
			if (resolved.isInterface()) {
				return permittedSubclassesProblem(resolved, path);
			}
			// An abstract class's fields are read for each of its subclasses.
			this.readByFields.add(resolved);
			String problem = fieldsProblem(type, resolved, path);
			if (problem != null || !Modifier.isAbstract(resolved.getModifiers())) {
				return problem;
			}
			return permittedSubclassesProblem(resolved, path);
		}

		/**
		 * A sealed type is read as its permitted subclasses; any other interface or
		 * abstract class by the class of each value.
		 */
		private @Nullable String permittedSubclassesProblem(Class<?> type, String path) {
			if (!type.isSealed()) {
				return null;
			}
			for (Class<?> permitted : type.getPermittedSubclasses()) {
				String problem = problem(ResolvableType.forClass(permitted), path + " as " + permitted.getSimpleName());
				if (problem != null) {
					return problem;
				}
			}
			return null;
		}

		private @Nullable String fieldsProblem(ResolvableType type, Class<?> resolved, String path) {
			for (Class<?> level = resolved; hasFields(level); level = level.getSuperclass()) {
				if (isJdk(level)) {
					return path + " is a " + resolved.getName() + ", which extends " + level.getName()
							+ ", a JDK class whose state the door does not read";
				}
				for (Field field : level.getDeclaredFields()) {
					if (Modifier.isStatic(field.getModifiers())) {
						continue;
					}
					String fieldPath = path + "." + field.getName();
					if (!field.trySetAccessible()) {
						return fieldPath + " cannot be read: " + level.getModule()
								+ " does not open its package to the door";
					}
					String problem = problem(ResolvableType.forField(field, type), fieldPath);
					if (problem != null) {
						return problem;
					}
				}
			}
			return null;
		}

	}

	/**
	 * Writes values in the canonical form, tracking where it is for cycles and errors.
	 */
	private static final class Writer {

		private final ByteArrayOutputStream out = new ByteArrayOutputStream();

		/** The objects being written, outermost first: a cycle refers to one of them. */
		private final List<Object> open;

		/** The path to the value being written, for the error. */
		private final List<String> path;

		Writer() {
			this(new ArrayList<>(), new ArrayList<>());
		}

		private Writer(List<Object> open, List<String> path) {
			this.open = open;
			this.path = path;
		}

		byte[] bytes() {
			return this.out.toByteArray();
		}

		/**
		 * Writes a value found at {@code where} (appended to the path, for the error).
		 */
		void write(@Nullable Object value, String where) {
			this.path.add(where);
			try {
				write(value);
			}
			finally {
				this.path.remove(this.path.size() - 1);
			}
		}

		private void write(@Nullable Object value) {
			if (value == null) {
				this.out.write('N');
				return;
			}
			Class<?> type = value.getClass();
			if (value instanceof Date date && isJdk(type)) {
				this.out.write('d');
				writeString(type.getName());
				writeLong(date.getTime());
				writeInt((date instanceof java.sql.Timestamp timestamp) ? timestamp.getNanos() : 0);
			}
			else if (isValue(type)) {
				// Their text is their whole value, one text per value: a number with its
				// type (and a decimal with its scale), a time with its offset and zone.
				this.out.write('V');
				writeString(type.getName());
				writeString(value.toString());
			}
			else if (value instanceof Enum<?> constant) {
				this.out.write('e');
				writeString(constant.getDeclaringClass().getName());
				writeString(constant.name());
			}
			else if (value instanceof Optional<?> optional) {
				this.out.write('O');
				write(optional.orElse(null), ".get()");
			}
			else if (value instanceof byte[] array) {
				this.out.write('b');
				writeBytes(array);
			}
			else if (enter(value)) {
				try {
					writeContainer(value, type);
				}
				finally {
					this.open.remove(this.open.size() - 1);
				}
			}
		}

		/**
		 * Enters an array, a collection, a map or an object: false when it is being
		 * written already, further out (then it is written as a reference to that one).
		 */
		private boolean enter(Object value) {
			for (int depth = 0; depth < this.open.size(); depth++) {
				if (this.open.get(depth) == value) {
					this.out.write('R');
					writeInt(depth);
					return false;
				}
			}
			this.open.add(value);
			return true;
		}

		private void writeContainer(Object value, Class<?> type) {
			if (type.isArray()) {
				this.out.write('A');
				writeString(type.getComponentType().getName());
				int length = Array.getLength(value);
				writeInt(length);
				for (int i = 0; i < length; i++) {
					write(Array.get(value, i), "[" + i + "]");
				}
			}
			else if (value instanceof Set<?> set) {
				this.out.write('S');
				writeUnordered(set, (element, writer) -> writer.write(element, "[]"));
			}
			else if (value instanceof Collection<?> collection) {
				this.out.write('L');
				writeInt(collection.size());
				int index = 0;
				for (Object element : collection) {
					write(element, "[" + index++ + "]");
				}
			}
			else if (value instanceof Map<?, ?> map) {
				this.out.write('M');
				writeUnordered(map.entrySet(), (entry, writer) -> {
					writer.write(entry.getKey(), ".key");
					writer.write(entry.getValue(), ".value");
				});
			}
			else {
				writeObject(value, type);
			}
		}

		private void writeObject(Object value, Class<?> type) {
			String problem = READABLE.get(type).orElse(null);
			if (problem != null) {
				throw new UnreadableValueException(String.join("", this.path) + problem);
			}
			this.out.write('X');
			writeString(type.getName());
			List<Field> fields = FIELDS.get(type);
			writeInt(fields.size());
			for (Field field : fields) {
				writeString(field.getDeclaringClass().getName());
				writeString(field.getName());
				Object fieldValue;
				try {
					fieldValue = field.get(value);
				}
				catch (IllegalAccessException ex) {
					throw new UnreadableValueException(
							String.join("", this.path) + "." + field.getName() + " cannot be read: " + ex.getMessage());
				}
				write(fieldValue, "." + field.getName());
			}
		}

		/**
		 * Elements whose order does not count: each written apart, then all in the order
		 * of their bytes.
		 */
		private <E> void writeUnordered(Collection<E> elements, BiConsumer<E, Writer> writeElement) {
			List<byte[]> written = new ArrayList<>(elements.size());
			for (E element : elements) {
				Writer writer = new Writer(this.open, this.path);
				writeElement.accept(element, writer);
				written.add(writer.bytes());
			}
			written.sort(Arrays::compareUnsigned);
			writeInt(written.size());
			written.forEach(this::writeBytes);
		}

		/** UTF-16 code units, as Java compares strings: a lone surrogate counts. */
		private void writeString(String text) {
			writeInt(text.length());
			for (int i = 0; i < text.length(); i++) {
				char c = text.charAt(i);
				this.out.write(c >>> 8);
				this.out.write(c);
			}
		}

		private void writeBytes(byte[] data) {
			writeInt(data.length);
			this.out.writeBytes(data);
		}

		void writeInt(int value) {
			this.out.write(value >>> 24);
			this.out.write(value >>> 16);
			this.out.write(value >>> 8);
			this.out.write(value);
		}

		private void writeLong(long value) {
			writeInt((int) (value >>> 32));
			writeInt((int) value);
		}

	}

	/**
	 * A value met at a call whose class the door cannot read: the call is not
	 * fingerprinted, and does not run.
	 */
	static final class UnreadableValueException extends RuntimeException {

		UnreadableValueException(String message) {
			super(message);
		}

	}

}
