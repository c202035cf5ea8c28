package kit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;

public class Use {
    public String all(Task task, Text text) throws IOException {
        Copier.copy(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream());
        Copier.copy(new StringReader("a"), new StringWriter());
        Copier.copy(new StringReader("b"), new ByteArrayOutputStream());
        Copier.indexOf("abc", 1);
        Copier.indexOf('a', 1);
        Copier.start(Task.class);
        task.close();
        return task.get() + text.get() + Copier.label(true);
    }
}
