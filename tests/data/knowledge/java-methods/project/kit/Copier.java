package kit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Path;

public final class Copier {
    public static int copy(InputStream input, OutputStream output) throws IOException {
        return 0;
    }

    public static int copy(Reader input, Writer output) throws IOException {
        return 1;
    }

    public static int copy(Reader input, OutputStream output) throws IOException {
        OutputStreamWriter writer = new OutputStreamWriter(output);
        return copy(input, writer);
    }

    public static void writeTo(Path path) {
    }

    public static void writeTo(File file) {
        writeTo(file.toPath());
    }

    public static int indexOf(char c, int from) {
        return from;
    }

    public static int indexOf(String s, int from) {
        return indexOf(s.charAt(0), from);
    }

    public static String label(boolean declaration) {
        return Text.of(declaration ? "!" : "?");
    }

    public static void run(Class<?> type) {
    }

    public static void run(Task task) {
    }

    public static void start(Class<?> type) {
        run(new Task(type.getName()));
        run(type);
    }

    public static void mark(Class<?> type) {
    }

    public static void mark(Task task) {
    }

    public static void flag(Task task, boolean on) {
    }

    public static void flag(Task task, Object on) {
    }

    public static void each(Iterable<?> items) {
    }

    public static void each(java.util.Iterator<?> items) {
    }

    public static void all(Iterable<?> items) {
        mark(Task.class);
        flag(null, null);
        each(items.iterator());
        each(items);
    }
}
