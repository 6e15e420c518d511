package dev.idempotency.sample.catalog.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A {@link FileIO} on the local file system through {@code java.nio}: Iceberg's own local
 * IO goes through Hadoop, which this app does not ship. Accepts plain paths and
 * {@code file:} URIs.
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
		return new LocatedInputFile(location, org.apache.iceberg.Files.localInput(toPath(location).toFile()));
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
		return new LocatedOutputFile(location, org.apache.iceberg.Files.localOutput(path.toFile()));
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
		// Iceberg writes locations unencoded: "file:/a/b", "file:///a/b" and "/a/b" are
		// one file.
		return Path.of(location.startsWith("file:") ? location.replaceFirst("^file:/*", "/") : location);
	}

	/**
	 * Keeps the location as given ({@code file:} scheme included): it ends up in the
	 * catalog's metadata.
	 */
	private record LocatedInputFile(String location, InputFile file) implements InputFile {

		@Override
		public long getLength() {
			return this.file.getLength();
		}

		@Override
		public SeekableInputStream newStream() {
			if (!this.file.exists()) {
				// Worded like Iceberg's HadoopFileIO, which clients (and the
				// compatibility kit) know.
				throw new NotFoundException("Failed to open input stream for file: %s", this.location);
			}
			return this.file.newStream();
		}

		@Override
		public boolean exists() {
			return this.file.exists();
		}

	}

	/**
	 * Keeps the location as given ({@code file:} scheme included): it ends up in the
	 * catalog's metadata.
	 */
	private record LocatedOutputFile(String location, OutputFile file) implements OutputFile {

		@Override
		public PositionOutputStream create() {
			return this.file.create();
		}

		@Override
		public PositionOutputStream createOrOverwrite() {
			return this.file.createOrOverwrite();
		}

		@Override
		public InputFile toInputFile() {
			return new LocatedInputFile(this.location, this.file.toInputFile());
		}

	}

}
