package kit;

public class Task {
    private final String name;

    public Task(String name) {
        this.name = name;
    }

    public String get() {
        return name;
    }

    public void close() {
    }
}
