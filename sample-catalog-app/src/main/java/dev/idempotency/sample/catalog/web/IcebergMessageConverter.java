package dev.idempotency.sample.catalog.web;

import java.io.IOException;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import org.apache.iceberg.rest.RESTMessage;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTSerializers;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.MediaType;
import org.springframework.http.converter.AbstractHttpMessageConverter;
import org.springframework.http.converter.HttpMessageNotReadableException;

/**
 * Reads and writes Iceberg's REST model ({@link RESTMessage} requests and responses) with
 * a Jackson 2 mapper set up the way Iceberg's own client sets up its mapper. Every other
 * type is left to Spring Boot's own (Jackson 3) converters.
 */
public class IcebergMessageConverter extends AbstractHttpMessageConverter<Object> {

	private final ObjectMapper mapper;

	public IcebergMessageConverter() {
		super(MediaType.APPLICATION_JSON, new MediaType("application", "*+json"));
		this.mapper = createMapper();
	}

	/**
	 * A mapper configured like Iceberg's: kebab-case, field access, unknown properties
	 * ignored.
	 */
	public static ObjectMapper createMapper() {
		ObjectMapper mapper = new ObjectMapper();
		mapper.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
		mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
		mapper.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
		RESTSerializers.registerAll(mapper);
		return mapper;
	}

	public ObjectMapper mapper() {
		return this.mapper;
	}

	@Override
	protected boolean supports(Class<?> clazz) {
		return RESTMessage.class.isAssignableFrom(clazz);
	}

	/**
	 * Reads a JSON object into the model class. Anything else is refused: Iceberg's
	 * parsers read missing fields of a JSON array as absent, so {@code []} would pass as
	 * a request with every field left out.
	 */
	@Override
	protected Object readInternal(Class<?> clazz, HttpInputMessage inputMessage) throws IOException {
		try (JsonParser parser = this.mapper.createParser(inputMessage.getBody())) {
			JsonToken first = parser.nextToken();
			if (first == null) {
				throw new HttpMessageNotReadableException("Request body is empty", inputMessage);
			}
			if (first != JsonToken.START_OBJECT) {
				throw new HttpMessageNotReadableException(
						"Invalid " + clazz.getSimpleName() + ": expected a JSON object, found " + first.asString(),
						inputMessage);
			}
			Object value = this.mapper.readValue(parser, clazz);
			if (value == null) {
				throw new HttpMessageNotReadableException("Request body is empty", inputMessage);
			}
			if (value instanceof RESTRequest request) {
				// Required fields missing: refuse at the door (400) before any handler
				// sees a half request.
				request.validate();
			}
			return value;
		}
		catch (JacksonException | IllegalArgumentException | NullPointerException ex) {
			// Iceberg's parsers report missing or invalid fields with
			// IllegalArgumentException.
			throw new HttpMessageNotReadableException("Invalid " + clazz.getSimpleName() + ": " + ex.getMessage(), ex,
					inputMessage);
		}
	}

	@Override
	protected void writeInternal(Object value, HttpOutputMessage outputMessage) throws IOException {
		// Leave the response stream open: filters after us may still add to or copy the
		// response.
		try (JsonGenerator generator = this.mapper.getFactory().createGenerator(outputMessage.getBody())) {
			generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
			this.mapper.writeValue(generator, value);
		}
	}

	@Override
	protected boolean canRead(@Nullable MediaType mediaType) {
		// Iceberg clients do not always send a Content-Type with their JSON bodies.
		return mediaType == null || super.canRead(mediaType) || MediaType.APPLICATION_OCTET_STREAM.includes(mediaType);
	}

	@Override
	public List<MediaType> getSupportedMediaTypes(Class<?> clazz) {
		return supports(clazz) ? super.getSupportedMediaTypes() : List.of();
	}

}
