package dev.idempotency.sample.catalog.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * A {@link FileIO} on the local file system through {@code java.nio}: Iceberg's own local IO goes
 * through Hadoop, which this app does not ship. Accepts plain paths and {@code file:} URIs.
 */
public class LocalFileIO implements FileIO {

	private static final long serialVersionUID = 1L;

	private Map<String, String> properties = Map.of();

	@Override
	public void initialize(Map<String, String> properties) {
		this.properties = Map.copyOf(properties);
	}

	@Override
	public Map<String, String> properties() {
		return this.properties;
	}

	@Override
	public InputFile newInputFile(String location) {
		return org.apache.iceberg.Files.localInput(toPath(location).toFile());
	}

	@Override
	public OutputFile newOutputFile(String location) {
		Path path = toPath(location);
		try {
			Files.createDirectories(path.toAbsolutePath().getParent());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create directory for " + location, ex);
		}
		return org.apache.iceberg.Files.localOutput(path.toFile());
	}

	@Override
	public void deleteFile(String location) {
		try {
			Files.deleteIfExists(toPath(location));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot delete " + location, ex);
		}
	}

	static Path toPath(String location) {
		// Iceberg writes locations unencoded: "file:/a/b", "file:///a/b" and "/a/b" are one file.
		return Path.of(location.startsWith("file:") ? location.replaceFirst("^file:/*", "/") : location);
	}

}
