package dev.idempotency.sample.catalog.chaos;

import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.idempotency.sample.catalog.support.JdbcStores;
import dev.idempotency.test.chaos.Monkeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import dev.idempotency.test.servers.RedisCluster;

/**
 * Where a chaos run keeps its idempotency records, and the faults it puts on them besides
 * the database cuts every run has. The catalog is on a database of the run's own, on the
 * records' server for the JDBC stores, on PostgreSQL for Redis Cluster.
 * {@code -Dchaos.store=postgresql}, {@code mariadb} or {@code redis-cluster} picks one (a
 * comma-separated list picks several).
 */
enum ChaosStore {

	/**
	 * The records beside the catalog, in the same PostgreSQL database and on the same
	 * {@code DataSource}: atomic completion (the default there). The database cuts are
	 * the store's faults.
	 */
	POSTGRESQL("postgresql", CatalogServer.POSTGRESQL),

	/** As {@link #POSTGRESQL}, the catalog and the records on MariaDB. */
	MARIADB("mariadb", CatalogServer.MARIADB),

	/**
	 * The records in a Redis Cluster of the run's own (three primaries, three replicas):
	 * primaries are killed (a replica takes over; the killed one is started again and
	 * rejoins as a replica) and paused (SIGSTOP for about a second, less than the
	 * cluster's node timeout). The catalog on PostgreSQL.
	 */
	REDIS_CLUSTER("redis-cluster", CatalogServer.POSTGRESQL);

	private final String id;

	private final CatalogServer catalogServer;

	ChaosStore(String id, CatalogServer catalogServer) {
		this.id = id;
		this.catalogServer = catalogServer;
	}

	/** The value of {@code -Dchaos.store}. */
	String id() {
		return this.id;
	}

	/** The server of the catalog's database. */
	CatalogServer catalogServer() {
		return this.catalogServer;
	}

	@Override
	public String toString() {
		return this.id;
	}

	/**
	 * Operations of a short run (the test suite's) unless {@code chaos.operations} says
	 * otherwise: 200 for each JDBC store and mode, 400 for Redis Cluster, so that the two
	 * PostgreSQL runs together take about as long as the one of lease mode did before.
	 */
	int shortRunOperations() {
		return (this == REDIS_CLUSTER) ? 400 : 200;
	}

	/**
	 * Starts what the store needs for one run in {@code mode}; {@code keyPrefix} is the
	 * run's own.
	 */
	Records open(ChaosMode mode, String keyPrefix, Random random) {
		return switch (this) {
			case POSTGRESQL, MARIADB -> new DatabaseRecords(this.catalogServer, mode);
			case REDIS_CLUSTER -> new RedisClusterRecords(mode, keyPrefix, random);
		};
	}

	/**
	 * The database server of the catalog, on 127.0.0.1: the run makes a database of its
	 * own there and drops it afterwards.
	 */
	enum CatalogServer {

		POSTGRESQL("PostgreSQL"),

		MARIADB("MariaDB");

		private final String product;

		CatalogServer(String product) {
			this.product = product;
		}

		/**
		 * The run's database, named {@code name}: a database, not a PostgreSQL schema,
		 * since Iceberg's {@code JdbcCatalog} looks for its tables in every schema;
		 * dropping it on PostgreSQL ends the sessions a killed node left behind.
		 */
		JdbcTestDatabase database(String name) {
			return (this == POSTGRESQL) ? JdbcTestDatabase.postgresDatabase(name) : JdbcTestDatabase.mariadb(name);
		}

		/**
		 * The URL of {@code database} through a link listening on {@code port}. On
		 * MariaDB the catalog's look-up of its own tables is kept to that database (see
		 * {@link JdbcStores#MARIADB_CURRENT_DATABASE_ONLY}).
		 */
		String url(JdbcTestDatabase database, int port) {
			return database.url(port) + ((this == MARIADB) ? "?" + JdbcStores.MARIADB_CURRENT_DATABASE_ONLY : "");
		}

		@Override
		public String toString() {
			return this.product;
		}

	}

	/** The idempotency records of one run. */
	interface Records extends AutoCloseable {

		/** What the report says of where the records are. */
		String description();

		/** The node's settings for the store. */
		List<String> nodeArguments();

		/**
		 * Whether {@link #injectFault} does anything: the database cuts may be the
		 * store's faults.
		 */
		boolean hasOwnFaults();

		/**
		 * One fault on the store, with its pause before; it leaves the store whole again.
		 */
		void injectFault(Monkeys run) throws Exception;

		/** The faults injected, for the report; empty when none of its own. */
		String faultFigures();

		/**
		 * Whether the records commit with the catalog's writes (atomic completion): then
		 * no operation may run twice, and the run asserts 0 re-executions.
		 */
		boolean atomic();

		@Override
		void close();

	}

	private static final class DatabaseRecords implements Records {

		private final CatalogServer server;

		private final ChaosMode mode;

		DatabaseRecords(CatalogServer server, ChaosMode mode) {
			this.server = server;
			this.mode = mode;
		}

		@Override
		public String description() {
			return "records in the catalog's " + this.server + " database, on its DataSource, " + this.mode
					+ " mode, atomic completion";
		}

		/**
		 * The JDBC store on the application's {@code DataSource}: atomic completion
		 * without setting it. The transaction manager logs each transaction it begins at
		 * DEBUG, so the run can check that the door's transactions were there.
		 */
		@Override
		public List<String> nodeArguments() {
			return List.of("--idempotency.store.type=jdbc", "--idempotency.store.jdbc.initialize-schema=always",
					"--idempotency.mode=" + this.mode.id(),
					"--logging.level.org.springframework.jdbc.support.JdbcTransactionManager=DEBUG");
		}

		@Override
		public boolean atomic() {
			return true;
		}

		@Override
		public boolean hasOwnFaults() {
			return false;
		}

		@Override
		public void injectFault(Monkeys run) {
		}

		@Override
		public String faultFigures() {
			return "";
		}

		@Override
		public void close() {
		}

	}

	private static final class RedisClusterRecords implements Records {

		private static final int MASTERS = 3;

		private final RedisCluster cluster = RedisCluster.start(MASTERS);

		private final ChaosMode mode;

		private final String keyPrefix;

		private final Random random;

		private final int replicasToAck = Integer.getInteger("chaos.replicas-to-ack", 0);

		private final AtomicInteger masterKills = new AtomicInteger();

		private final AtomicInteger masterPauses = new AtomicInteger();

		RedisClusterRecords(ChaosMode mode, String keyPrefix, Random random) {
			this.mode = mode;
			this.keyPrefix = keyPrefix;
			this.random = random;
		}

		@Override
		public String description() {
			return "records in a Redis Cluster (%d primaries, %d replicas, replicas-to-ack=%d), %s mode, catalog in PostgreSQL"
				.formatted(MASTERS, MASTERS, this.replicasToAck, this.mode);
		}

		@Override
		public List<String> nodeArguments() {
			String nodes = this.cluster.ports()
				.stream()
				.map((port) -> "127.0.0.1:" + port)
				.collect(Collectors.joining(","));
			return List.of("--idempotency.store.type=redis", "--idempotency.mode=" + this.mode.id(),
					"--spring.data.redis.cluster.nodes=" + nodes,
					// The client follows a failover (docs/redis-store.md).
					"--spring.data.redis.lettuce.cluster.refresh.adaptive=true",
					"--spring.data.redis.lettuce.cluster.refresh.period=1s",
					"--idempotency.store.redis.key-prefix=" + this.keyPrefix,
					"--idempotency.store.redis.replicas-to-ack=" + this.replicasToAck);
		}

		@Override
		public boolean hasOwnFaults() {
			return true;
		}

		@Override
		public boolean atomic() {
			return false;
		}

		/**
		 * Kills a primary or pauses it. Before each fault every primary has a replica in
		 * sync: a primary killed without one would come back empty (no persistence),
		 * which is a lost data set, not a failover.
		 */
		@Override
		public void injectFault(Monkeys run) throws InterruptedException {
			this.cluster.awaitOk();
			if (!run.sleep(2000 + this.random.nextInt(3000))) {
				return;
			}
			List<Integer> masters = this.cluster.masters();
			int victim = masters.get(this.random.nextInt(masters.size()));
			if (this.random.nextBoolean()) {
				this.cluster.kill(victim);
				this.masterKills.incrementAndGet();
				run.event("Redis primary " + victim + " killed");
				awaitPromotion();
				this.cluster.awaitOk();
				run.event("Redis failed over");
				Thread.sleep(500 + this.random.nextInt(1000));
				this.cluster.restart(victim);
				run.event("Redis " + victim + " restarted");
			}
			else {
				this.cluster.pause(victim);
				this.masterPauses.incrementAndGet();
				run.event("Redis primary " + victim + " paused");
				try {
					Thread.sleep(600 + this.random.nextInt(800));
				}
				finally {
					this.cluster.resume(victim);
					run.event("Redis " + victim + " resumed");
				}
			}
		}

		/** Waits until a replica has taken over the killed primary's slots. */
		private void awaitPromotion() throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (this.cluster.masters().size() < MASTERS) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("no replica promoted within 60 s");
				}
				Thread.sleep(100);
			}
		}

		@Override
		public String faultFigures() {
			return "%d Redis primary kills (SIGKILL, failed over, restarted as a replica), %d Redis primary pauses (SIGSTOP, about 1 s)"
				.formatted(this.masterKills.get(), this.masterPauses.get());
		}

		@Override
		public void close() {
			this.cluster.close();
		}

	}

}
