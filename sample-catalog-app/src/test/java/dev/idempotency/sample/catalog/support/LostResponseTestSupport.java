package dev.idempotency.sample.catalog.support;

import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * An unmodified Iceberg client behind a proxy that lets the first attempt of each keyed
 * mutation reach the catalog and loses its response, and a second client straight to the
 * catalog that checks what really happened.
 */
public abstract class LostResponseTestSupport extends CatalogServerTestSupport {

	protected CatalogProxy proxy;

	protected RESTCatalog client;

	protected RESTCatalog direct;

	@BeforeEach
	void connectThroughLossyProxy() throws Exception {
		this.proxy = CatalogProxy.losingFirstResponses(catalogUri());
		this.client = connect(this.proxy.uri());
		this.direct = connect(catalogUri());
	}

	@AfterEach
	void closeClientsAndProxy() throws Exception {
		this.client.close();
		this.direct.close();
		this.proxy.close();
	}

}
