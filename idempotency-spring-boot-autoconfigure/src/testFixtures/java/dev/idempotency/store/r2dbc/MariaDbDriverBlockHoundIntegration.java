package dev.idempotency.store.r2dbc;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The two blocking calls of MariaDB's R2DBC driver that are not the store's, allowed on
 * non-blocking threads wherever a test installs BlockHound (registered in the tests'
 * {@code META-INF/services/reactor.blockhound.integration.BlockHoundIntegration}): the one
 * read of its version file (a class initialization, on the first connection), and the
 * lock around a connection's send queue, held for the time of a write into its channel,
 * which parks a thread when it is contended (also where a begin, a commit or a rollback
 * takes it, {@code executeWhenNotInTransaction} and {@code executeWhenTransaction}: the
 * WebFlux door's atomic completion begins and commits from the request's event loop while
 * the driver's own thread may hold it), and (from 1.4) the look-up of its
 * authentication plugins, read by a {@code ServiceLoader} from the jars while a connection
 * authenticates. The lock is taken in lambdas, whose names are those of the driver 1.3
 * (Spring Boot 4.0) and 1.4 (Spring Boot 4.1). Nothing else is allowed.
 */
public class MariaDbDriverBlockHoundIntegration implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside("org.mariadb.r2dbc.util.VersionFactory", "getInstance")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$sendCommand$16")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$sendCommand$19")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$receive$14")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$sendCommand$17")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$sendCommand$20")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "lambda$receive$15")
			.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "sendCommandWithoutResult")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "executeWhenTransaction")
			.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", "executeWhenNotInTransaction");
	}

}
