package dev.idempotency.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;

import liquibase.CatalogAndSchema.CatalogAndSchemaCase;
import liquibase.database.Database;
import liquibase.database.core.H2Database;
import liquibase.exception.DatabaseException;
import org.jspecify.annotations.Nullable;

/**
 * Liquibase's H2 support for an H2 database that does not store unquoted names in upper
 * case. Liquibase's own {@link H2Database} corrects every name to upper case and looks
 * tables up so, while H2 opened with {@code DATABASE_TO_LOWER=TRUE} (as Iceberg's
 * {@code JdbcCatalog} needs) stores {@code idempotency_databasechangelog} in schema
 * {@code public}, and with {@code DATABASE_TO_UPPER=FALSE} keeps names as written (its
 * catalog, the database name, included). Liquibase then does not find the changelog
 * tables it created on an earlier start and fails creating them again. This one corrects
 * names as H2 stores them: to lower case, or not at all.
 * <p>
 * Used only by {@link IdempotencyJdbcSchemaInitializer}; it is not registered with
 * Liquibase, so an application's own changelog is not affected.
 */
final class CaseMatchingH2Database extends H2Database {

	private final CatalogAndSchemaCase schemaAndCatalogCase;

	private CaseMatchingH2Database(@Nullable Boolean unquotedObjectsAreUppercased,
			CatalogAndSchemaCase schemaAndCatalogCase) {
		this.unquotedObjectsAreUppercased = unquotedObjectsAreUppercased;
		this.schemaAndCatalogCase = schemaAndCatalogCase;
	}

	@Override
	public CatalogAndSchemaCase getSchemaAndCatalogCase() {
		return this.schemaAndCatalogCase;
	}

	/**
	 * A database for the connection if it is to an H2 database that stores unquoted names
	 * in lower case or as written, without its connection set.
	 * @return the database, or {@code null} for any other connection, for which
	 * Liquibase's own choice is right
	 */
	static @Nullable Database forConnection(@Nullable Connection connection) throws DatabaseException {
		if (connection == null) {
			return null;
		}
		try {
			DatabaseMetaData metaData = connection.getMetaData();
			if (!"H2".equals(metaData.getDatabaseProductName()) || metaData.storesUpperCaseIdentifiers()) {
				return null;
			}
			if (metaData.storesLowerCaseIdentifiers()) {
				return new CaseMatchingH2Database(false, CatalogAndSchemaCase.LOWER_CASE);
			}
			return new CaseMatchingH2Database(null, CatalogAndSchemaCase.ORIGINAL_CASE);
		}
		catch (SQLException ex) {
			throw new DatabaseException(ex);
		}
	}

}
