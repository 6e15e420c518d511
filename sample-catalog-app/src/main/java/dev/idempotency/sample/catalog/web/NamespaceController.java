package dev.idempotency.sample.catalog.web;

import dev.idempotency.Idempotent;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.responses.CreateNamespaceResponse;
import org.apache.iceberg.rest.responses.GetNamespaceResponse;
import org.apache.iceberg.rest.responses.ListNamespacesResponse;
import org.apache.iceberg.rest.responses.UpdateNamespacePropertiesResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** The namespace routes of the Iceberg REST catalog spec. */
@RestController
@RequestMapping(path = { CatalogPaths.V1, CatalogPaths.V1_PREFIX }, produces = MediaType.APPLICATION_JSON_VALUE)
public class NamespaceController {

	private final SupportsNamespaces catalog;

	public NamespaceController(SupportsNamespaces catalog) {
		this.catalog = catalog;
	}

	@GetMapping("/namespaces")
	public ListNamespacesResponse listNamespaces(@RequestParam(required = false) String parent,
			@RequestParam(required = false) String pageToken, @RequestParam(required = false) String pageSize) {
		Namespace parentNamespace = CatalogPaths.namespace(parent);
		return Pages.list(pageToken, pageSize, () -> CatalogHandlers.listNamespaces(this.catalog, parentNamespace),
				(token, size) -> CatalogHandlers.listNamespaces(this.catalog, parentNamespace, token, size));
	}

	@Idempotent(operation = "createNamespace")
	@PostMapping("/namespaces")
	public CreateNamespaceResponse createNamespace(@RequestBody CreateNamespaceRequest request) {
		return CatalogHandlers.createNamespace(this.catalog, request);
	}

	@GetMapping("/namespaces/{namespace}")
	public GetNamespaceResponse loadNamespace(@PathVariable String namespace) {
		return CatalogHandlers.loadNamespace(this.catalog, CatalogPaths.namespace(namespace));
	}

	@RequestMapping(method = RequestMethod.HEAD, path = "/namespaces/{namespace}")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void namespaceExists(@PathVariable String namespace) {
		CatalogHandlers.namespaceExists(this.catalog, CatalogPaths.namespace(namespace));
	}

	@Idempotent(operation = "dropNamespace")
	@DeleteMapping("/namespaces/{namespace}")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void dropNamespace(@PathVariable String namespace) {
		CatalogHandlers.dropNamespace(this.catalog, CatalogPaths.namespace(namespace));
	}

	@Idempotent(operation = "updateNamespaceProperties")
	@PostMapping("/namespaces/{namespace}/properties")
	public UpdateNamespacePropertiesResponse updateProperties(@PathVariable String namespace,
			@RequestBody UpdateNamespacePropertiesRequest request) {
		return CatalogHandlers.updateNamespaceProperties(this.catalog, CatalogPaths.namespace(namespace), request);
	}

}
