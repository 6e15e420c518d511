package dev.idempotency.sample.catalog.web;

import dev.idempotency.Idempotent;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterViewRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.iceberg.rest.responses.LoadViewResponse;

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

/** The view routes of the Iceberg REST catalog spec. */
@RestController
@RequestMapping(path = { CatalogPaths.V1, CatalogPaths.V1_PREFIX }, produces = MediaType.APPLICATION_JSON_VALUE)
public class ViewController {

	private static final String VIEWS = "/namespaces/{namespace}/views";

	private static final String VIEW = VIEWS + "/{view}";

	private final ViewCatalog catalog;

	public ViewController(ViewCatalog catalog) {
		this.catalog = catalog;
	}

	@GetMapping(VIEWS)
	public ListTablesResponse listViews(@PathVariable String namespace,
			@RequestParam(required = false) String pageToken, @RequestParam(required = false) String pageSize) {
		Namespace parent = CatalogPaths.namespace(namespace);
		return Pages.list(pageToken, pageSize, () -> CatalogHandlers.listViews(this.catalog, parent),
				(token, size) -> CatalogHandlers.listViews(this.catalog, parent, token, size));
	}

	@Idempotent(operation = "createView")
	@PostMapping(VIEWS)
	public LoadViewResponse createView(@PathVariable String namespace, @RequestBody CreateViewRequest request) {
		return CatalogHandlers.createView(this.catalog, CatalogPaths.namespace(namespace), request);
	}

	@Idempotent(operation = "registerView")
	@PostMapping("/namespaces/{namespace}/register-view")
	public LoadViewResponse registerView(@PathVariable String namespace, @RequestBody RegisterViewRequest request) {
		return CatalogHandlers.registerView(this.catalog, CatalogPaths.namespace(namespace), request);
	}

	@GetMapping(VIEW)
	public LoadViewResponse loadView(@PathVariable String namespace, @PathVariable String view) {
		return CatalogHandlers.loadView(this.catalog, CatalogPaths.identifier(namespace, view));
	}

	@RequestMapping(method = RequestMethod.HEAD, path = VIEW)
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void viewExists(@PathVariable String namespace, @PathVariable String view) {
		CatalogHandlers.viewExists(this.catalog, CatalogPaths.identifier(namespace, view));
	}

	/** Replaces a view's definition (commits view metadata updates). */
	@Idempotent(operation = "replaceView")
	@PostMapping(VIEW)
	public LoadViewResponse replaceView(@PathVariable String namespace, @PathVariable String view,
			@RequestBody UpdateTableRequest request) {
		return CatalogHandlers.updateView(this.catalog, CatalogPaths.identifier(namespace, view), request);
	}

	@Idempotent(operation = "dropView")
	@DeleteMapping(VIEW)
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void dropView(@PathVariable String namespace, @PathVariable String view) {
		CatalogHandlers.dropView(this.catalog, CatalogPaths.identifier(namespace, view));
	}

	@Idempotent(operation = "renameView")
	@PostMapping("/views/rename")
	@ResponseStatus(HttpStatus.NO_CONTENT)
	public void renameView(@RequestBody RenameTableRequest request) {
		CatalogHandlers.renameView(this.catalog, request);
	}

}
