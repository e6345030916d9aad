// Local Neo4j Community server for development and tests (no Docker, no Neo4j distribution).
//
//   NEO4J_LOCAL_PASSWORD=... java <jvm flags> -cp '<lib>/*' infra/neo4j/LocalNeo4j.java <homeDir> <boltPort>
//
// <lib> holds the jars that infra/neo4j/pom.xml resolves. Runs an embedded DBMS with Bolt on
// 127.0.0.1:<boltPort>, auth on, password of user `neo4j` from NEO4J_LOCAL_PASSWORD, and the APOC
// core routines that @neo4j/graphql needs. Prints exactly one stdout line,
// "NEO4J_READY bolt://127.0.0.1:<port>", once Bolt accepts connections; everything else goes to
// stderr or <homeDir>/logs. Stops cleanly on a "stop" line on stdin (what local-neo4j.ts sends), on
// SIGTERM/SIGINT and when stdin closes (parent died); pass -Dneo4j.local.watchStdin=false to run it
// by hand with no stdin.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.internal.GraphDatabaseAPI;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

public class LocalNeo4j {
    public static void main(String[] args) throws Exception {
        // Keep stdout for the ready line only: anything a library prints goes to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        if (args.length != 2) fail("usage: LocalNeo4j <homeDir> <boltPort>");
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = System.getenv("NEO4J_LOCAL_PASSWORD");
        if (password == null || password.isEmpty()) fail("NEO4J_LOCAL_PASSWORD is not set");
        Files.createDirectories(home);

        long t0 = System.nanoTime();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.err, Level.WARN))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                // Local use: let short dev/test passwords through (the default minimum is 8).
                .setConfig(GraphDatabaseSettings.auth_minimum_password_length, 1)
                // Page cache: -Dneo4j.local.pagecacheMb (NEO4J_PAGECACHE_MB), 128 MiB by default.
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(Long.getLong("neo4j.local.pagecacheMb", 128L)))
                // Small transaction logs: keep one file, rotate at 32 MiB (files are preallocated).
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(32))
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Bolt's Netty event loops otherwise wait a 5 s quiet period each on shutdown (~10 s).
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                // One cached plan per statement, whatever the sizes of its string and list
                // parameters. By default the plan cache keys each statement also by a size bucket
                // per parameter (0, 1, up to 10, up to 100, ...), so the start's warm-up (two rows,
                // namespace "#warm-up") and a first message (one row, "team-a/agent-1") met
                // different cache entries: the first ingest and search after a start planned every
                // statement again, 1.3-3.5 s each on a cold JVM (db.stats 'QUERIES', issue 25).
                // The service's statements seek by id and index, so their plans do not depend on
                // those sizes.
                .setConfig(GraphDatabaseInternalSettings.cypher_size_hint_parameters, false)
                // A cached plan is kept at least 2 minutes (default 10 s) before its statistics may
                // have it planned again: on a new, small store the warm-up's own rows move the
                // statistics, so a first message sent 10-30 s after the start met four search
                // statements planned again on a cold planner (1.2-2.9 s each, issue 25). After two
                // minutes plans still follow the data as it grows.
                .setConfig(GraphDatabaseSettings.cypher_min_replan_interval, Duration.ofMinutes(2))
                .build();
        // From here on a SIGTERM/SIGINT, a "stop" line on stdin or stdin's EOF (below) shuts the DBMS down cleanly.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(dbms), "local-neo4j-shutdown"));

        // The password is set on every start, so a data dir made with another password still opens.
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // Neo4j refuses to "change" a password to the one it already has: that is fine here.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) throw e;
        }

        // APOC: register only the classes @neo4j/graphql 7 calls (apoc.util.validate,
        // apoc.util.validatePredicate, apoc.date.convertFormat). Loading the whole apoc-core jar as a
        // plugin also works but costs start-up time for ~300 routines nobody here uses.
        GraphDatabaseAPI db = (GraphDatabaseAPI) dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        GlobalProcedures procs = db.getDependencyResolver().resolveDependency(GlobalProcedures.class);
        procs.registerProcedure(apoc.util.Utils.class);
        procs.registerFunction(apoc.util.Utils.class);
        procs.registerFunction(apoc.date.Date.class);

        waitForPort(port, Duration.ofSeconds(30));
        System.err.printf("LocalNeo4j: started in %d ms (home %s)%n", (System.nanoTime() - t0) / 1_000_000, home);
        stdout.println("NEO4J_READY bolt://127.0.0.1:" + port);
        stdout.flush();

        if (!"false".equals(System.getProperty("neo4j.local.watchStdin"))) {
            Thread watcher = new Thread(() -> {
                try {
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    for (String line; (line = in.readLine()) != null; ) {
                        // The parent's stop: the DBMS stops first, then the JVM exits. A SIGTERM runs
                        // the JVM's exit sequence first, and with -XX:ArchiveClassesAtExit (the first
                        // run dumps its class-data-sharing archive) JDK 17 links every loaded class
                        // there before any shutdown hook runs: 1.5-2 s before the DBMS began to stop.
                        if (line.equals("stop")) {
                            System.err.println("LocalNeo4j: stop requested on stdin");
                            shutdown(dbms);
                            System.exit(0);
                        }
                    }
                } catch (Exception ignored) { /* treat as closed */ }
                System.err.println("LocalNeo4j: stdin closed");
                System.exit(0); // runs the shutdown hook
            }, "local-neo4j-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        Thread.currentThread().join(); // the DBMS threads keep running; wait for a signal
    }

    private static boolean stopped = false;

    /** Stops the DBMS once, from the stdin watcher or the shutdown hook, whichever comes first. */
    private static synchronized void shutdown(DatabaseManagementService dbms) {
        if (stopped) return;
        stopped = true;
        System.err.println("LocalNeo4j: shutting down");
        dbms.shutdown();
        System.err.println("LocalNeo4j: stopped");
    }

    private static void waitForPort(int port, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (Exception e) {
                if (System.nanoTime() > deadline) fail("Bolt did not accept connections on port " + port);
                Thread.sleep(100);
            }
        }
    }

    private static void fail(String msg) {
        System.err.println("LocalNeo4j: " + msg);
        System.exit(2);
    }
}
