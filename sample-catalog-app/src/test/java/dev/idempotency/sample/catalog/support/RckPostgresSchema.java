package dev.idempotency.sample.catalog.support;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Creates or drops the PostgreSQL schema that one compatibility-kit run keeps its
 * idempotency records in (the {@code rck} Maven profile calls it before the app starts
 * and after the kit ran), so that runs sharing the server never see each other's records.
 * <p>
 * Usage: {@code RckPostgresSchema create|drop <schema>}.
 */
public final class RckPostgresSchema {

	private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private RckPostgresSchema() {
	}

	public static void main(String[] args) throws SQLException {
		if (args.length != 2 || !args[1].matches("idem_rck_[0-9a-z_]+")) {
			throw new IllegalArgumentException("usage: RckPostgresSchema create|drop idem_rck_<suffix>");
		}
		String sql = switch (args[0]) {
			case "create" -> "CREATE SCHEMA " + args[1];
			case "drop" -> "DROP SCHEMA IF EXISTS " + args[1] + " CASCADE";
			default -> throw new IllegalArgumentException("unknown action " + args[0]);
		};
		java.util.Properties user = new java.util.Properties();
		user.setProperty("user", "postgres");
		// The driver directly, not DriverManager: Maven runs each call in a class loader
		// of its own, and DriverManager refuses a driver registered by another one.
		try (Connection connection = new org.postgresql.Driver().connect(URL, user);
				Statement statement = connection.createStatement()) {
			if (args[0].equals("drop")) {
				try (java.sql.ResultSet count = statement
					.executeQuery("SELECT count(*) FROM " + args[1] + ".idempotency_record")) {
					count.next();
					System.out.println("compatibility kit: the run left " + count.getLong(1)
							+ " idempotency records in PostgreSQL schema " + args[1]);
				}
			}
			statement.execute(sql);
		}
		System.out.println("compatibility kit: " + sql);
	}

}
