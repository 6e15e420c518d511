package dev.idempotency.autoconfigure.jdbc;

import java.sql.DatabaseMetaData;

import javax.sql.DataSource;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * The start-up check that the store's table exists once schema set-up is over.
 */
final class IdempotencyTableCheck {

	private IdempotencyTableCheck() {
	}

	/**
	 * Checks that the table can be read on the data source, in the connection's current
	 * schema. A database that cannot be reached is not judged here: the store then
	 * answers 503 until it can.
	 * @param dataSource the store's data source
	 * @param tableName the store's table
	 * @param notCreatedBecause why schema set-up did not create it, for the report
	 * @throws IdempotencyTableMissingException if the table does not exist
	 */
	static void verify(DataSource dataSource, String tableName, String notCreatedBecause) {
		try {
			JdbcClient.create(dataSource).sql("SELECT 1 FROM " + tableName + " WHERE 1 = 0").query().listOfRows();
		}
		catch (BadSqlGrammarException ex) {
			throw new IdempotencyTableMissingException(tableName, describe(dataSource), notCreatedBecause);
		}
		catch (DataAccessResourceFailureException ex) {
			// Unreachable now: the health indicator and the 503s say so until it answers.
		}
	}

	private static String describe(DataSource dataSource) {
		try {
			return JdbcUtils.extractDatabaseMetaData(dataSource,
					(DatabaseMetaData metaData) -> metaData.getDatabaseProductName() + " at " + metaData.getURL());
		}
		catch (MetaDataAccessException ex) {
			return "the store's database";
		}
	}

}
