package kit;

public final class Text {
    private final String value;

    private Text(String value) {
        this.value = value;
    }

    public static String of(String value) {
        return value;
    }

    public static String of(char value) {
        return String.valueOf(value);
    }

    public String get() {
        return value;
    }
}
