package groupcheck.conformance;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conformance harness's command line.
 *
 * <pre>
 *   java groupcheck.conformance.Main --serve        one step per line on stdin, one result per line on stdout
 *   java groupcheck.conformance.Main FILE.json      FILE holds a JSON list of steps; the results as a JSON list
 *   java groupcheck.conformance.Main -              the same, the list read from stdin
 *   java groupcheck.conformance.Main --version      the Kafka version the harness was built against
 * </pre>
 *
 * A step is a JSON object {@code {"events": [...]}} (or a bare list of events); its result is
 * {@code {"events": [...], "responses": [...], "state": {...}}}: what each event did, every response
 * completed during the step (to which consumer, tagged as its request was), and the group's state after
 * it. Events are {@code reset}, {@code bootstrap}, {@code join}, {@code sync}, {@code heartbeat},
 * {@code leave}, {@code commit}, {@code fetch}, {@code expire}, {@code complete_join}, {@code sync_timeout},
 * {@code commit_writes}, {@code prepare_rebalance}, {@code crash}, {@code unload}, {@code elect},
 * {@code load}; see {@link Harness}. The harness starts with an empty, serving coordinator.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws IOException {
        // Kafka logs through SLF4J; whatever it prints must not mix with the results on stdout
        PrintStream results = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length == 1 && args[0].equals("--version")) {
            results.println(kafkaVersion());
            results.flush();
            return;
        }
        if (args.length == 1 && args[0].equals("--serve")) {
            serve(results);
            return;
        }
        if (args.length != 1) {
            System.err.println("usage: Main --serve | FILE.json | - | --version");
            System.exit(2);
        }
        String text = args[0].equals("-")
            ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
            : Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
        Object steps = Json.parse(text);
        if (!(steps instanceof List)) {
            System.err.println("expected a JSON list of steps");
            System.exit(2);
        }
        Harness harness = new Harness();
        harness.step(List.of(Map.of("op", "reset")));
        List<Object> out = new ArrayList<>();
        for (Object step : (List<?>) steps) {
            out.add(harness.step(events(step)));
        }
        results.println(Json.write(out));
        results.flush();
    }

    private static void serve(PrintStream results) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(results, StandardCharsets.UTF_8), 1 << 16);
        Harness harness = new Harness();
        harness.step(List.of(Map.of("op", "reset")));
        Map<String, Object> hello = new LinkedHashMap<>();
        hello.put("ready", true);
        hello.put("kafka", kafkaVersion());
        out.write(Json.write(hello));
        out.newLine();
        out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Object result;
            try {
                result = harness.step(events(Json.parse(line)));
            } catch (RuntimeException ex) {
                Map<String, Object> err = new LinkedHashMap<>();
                err.put("harness_error", ex.toString());
                result = err;
            }
            out.write(Json.write(result));
            out.newLine();
            out.flush();
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Object> events(Object step) {
        if (step instanceof Map) {
            return (List<Object>) ((Map<String, Object>) step).get("events");
        }
        return (List<Object>) step;
    }

    static String kafkaVersion() {
        return org.apache.kafka.common.utils.AppInfoParser.getVersion();
    }
}
