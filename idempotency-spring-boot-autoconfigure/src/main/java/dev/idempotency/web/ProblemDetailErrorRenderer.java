package dev.idempotency.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import dev.idempotency.engine.IdempotencyError;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ProblemDetail;

/**
 * Writes an error as RFC 9457 {@code application/problem+json}: {@code type} (one URI per
 * cause), {@code title}, {@code status}, {@code detail} (those of
 * {@link IdempotencyProblemDetails#of}) and {@code instance} (the request path).
 */
public class ProblemDetailErrorRenderer implements IdempotencyErrorRenderer {

	private final String typeBase;

	public ProblemDetailErrorRenderer(String typeBase) {
		this.typeBase = typeBase;
	}

	@Override
	public void render(IdempotencyError error, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		ProblemDetail problem = IdempotencyProblemDetails.of(error, this.typeBase);
		// A member the problem does not have is left out (RFC 9457 section 3.1).
		StringBuilder json = new StringBuilder("{");
		member(json, "type", problem.getType());
		member(json, "title", problem.getTitle());
		json.append("\"status\":").append(problem.getStatus()).append(',');
		member(json, "detail", problem.getDetail());
		json.append("\"instance\":").append(quote(request.getRequestURI())).append('}');
		byte[] body = json.toString().getBytes(StandardCharsets.UTF_8);
		response.setStatus(error.status());
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	private static void member(StringBuilder json, String name, @Nullable Object value) {
		if (value != null) {
			json.append(quote(name)).append(':').append(quote(value.toString())).append(',');
		}
	}

	static String quote(String text) {
		StringBuilder out = new StringBuilder(text.length() + 2).append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				case '\r' -> out.append("\\r");
				case '\t' -> out.append("\\t");
				default -> {
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		return out.append('"').toString();
	}

}
