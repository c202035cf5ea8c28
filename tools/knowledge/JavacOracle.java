// The Java reference oracle for tests/knowledge: javac's own resolution.
// Compiles the project with the compiler API (JavacTask), asks
// Trees.getElement for every identifier, member select, method reference,
// `new` and this(...)/super(...), and prints, for each query, the path:line
// sites whose element is the queried declaration or a method it overrides
// (the JDT rule: a call through a supertype that declares the method
// counts; here a supertype in the project). Calls that javac inserts
// (implicit super()) are not sites. Run by tools/knowledge/capture.py; needs a JDK (17).
//
//   java --add-exports jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED \
//       tools/knowledge/JavacOracle.java PROJECT QUERIES.json
import com.sun.source.tree.*;
import com.sun.source.util.*;
import com.sun.tools.javac.tree.JCTree;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class JavacOracle {
  record Site(String path, long line) {}

  public static void main(String[] args) throws Exception {
    Path root = Paths.get(args[0]).toAbsolutePath();
    String queriesJson = Files.readString(Paths.get(args[1]));
    List<Path> sources;
    try (Stream<Path> walk = Files.walk(root)) {
      sources = walk.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java")).sorted().collect(Collectors.toList());
    }
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, null);
    JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics,
        List.of("-proc:none", "-XDshould-stop.ifError=FLOW", "-d", Files.createTempDirectory("oracle").toString()), null,
        files.getJavaFileObjectsFromPaths(sources));
    Iterable<? extends CompilationUnitTree> units = task.parse();
    task.analyze();
    // A fixture must compile; a real repository without its dependencies
    // may not (ORACLE_ALLOW_ERRORS=1): what javac cannot resolve is then
    // missing from the oracle too.
    boolean allowErrors = System.getenv("ORACLE_ALLOW_ERRORS") != null;
    for (Diagnostic<?> d : diagnostics.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR && !allowErrors) {
        System.err.println("javac: " + d);
        System.exit(2);
      }
    }
    Trees trees = Trees.instance(task);
    javax.lang.model.util.Elements elements = task.getElements();
    Map<Element, List<Site>> uses = new HashMap<>();
    // Declarations by path:line:name ("<init>" for constructors).
    Map<String, Element> declarations = new HashMap<>();
    for (CompilationUnitTree unit : units) {
      String path = root.relativize(Paths.get(unit.getSourceFile().toUri())).toString();
      LineMap lines = unit.getLineMap();
      SourcePositions positions = trees.getSourcePositions();
      new TreePathScanner<Void, Void>() {
        void use(Element e, long pos) {
          if (e == null || pos < 0) return;
          uses.computeIfAbsent(e, k -> new ArrayList<>()).add(new Site(path, lines.getLineNumber(pos)));
        }

        boolean textAt(long pos, String word) {
          try {
            CharSequence text = unit.getSourceFile().getCharContent(true);
            return pos >= 0 && pos + word.length() <= text.length()
                && text.subSequence((int) pos, (int) pos + word.length()).toString().equals(word);
          } catch (IOException e) {
            return false;
          }
        }

        void declare(Tree tree, String name) {
          Element e = trees.getElement(getCurrentPath());
          long pos = ((JCTree) tree).pos;
          if (e != null && pos >= 0) declarations.put(path + ":" + lines.getLineNumber(pos) + ":" + name, e);
        }

        @Override public Void visitClass(ClassTree t, Void v) {
          declare(t, t.getSimpleName().toString());
          return super.visitClass(t, v);
        }

        @Override public Void visitMethod(MethodTree t, Void v) {
          declare(t, t.getName().toString());
          return super.visitMethod(t, v);
        }

        @Override public Void visitVariable(VariableTree t, Void v) {
          declare(t, t.getName().toString());
          return super.visitVariable(t, v);
        }

        @Override public Void visitIdentifier(IdentifierTree t, Void v) {
          long start = positions.getStartPosition(unit, t);
          String name = t.getName().toString();
          // javac inserts identifiers the source does not write: super() in
          // constructors that do not call this() or super(), and the type of
          // each enum constant's implicit `new`. A site is where the name is
          // written.
          if (!textAt(start, name)) {
            return super.visitIdentifier(t, v);
          }
          use(trees.getElement(getCurrentPath()), start);
          return super.visitIdentifier(t, v);
        }

        @Override public Void visitMemberSelect(MemberSelectTree t, Void v) {
          long end = positions.getEndPosition(unit, t);
          use(trees.getElement(getCurrentPath()), end - t.getIdentifier().length());
          return super.visitMemberSelect(t, v);
        }

        @Override public Void visitMemberReference(MemberReferenceTree t, Void v) {
          long end = positions.getEndPosition(unit, t);
          use(trees.getElement(getCurrentPath()), end - t.getName().length());
          return super.visitMemberReference(t, v);
        }

        @Override public Void visitNewClass(NewClassTree t, Void v) {
          Element constructor = ((JCTree.JCNewClass) t).constructor;
          long pos = ((JCTree) t).pos;
          Tree identifier = t.getIdentifier();
          if (identifier != null && positions.getStartPosition(unit, identifier) >= 0) {
            pos = positions.getStartPosition(unit, identifier);
          }
          use(constructor, pos);
          return super.visitNewClass(t, v);
        }
      }.scan(unit, null);
    }
    // The query list: {"id","path","line","column","name"} objects.
    Matcher m = Pattern.compile("\"id\": \"([^\"]+)\",\\s*\"path\": \"([^\"]+)\",\\s*\"line\": (\\d+),\\s*\"column\": (\\d+),\\s*\"name\": \"([^\"]+)\"").matcher(queriesJson);
    StringBuilder out = new StringBuilder("{\n");
    boolean first = true;
    while (m.find()) {
      String id = m.group(1), path = m.group(2), name = m.group(5);
      long line = Long.parseLong(m.group(3));
      Element target = declarations.get(path + ":" + line + ":" + name);
      if (target == null) target = declarations.get(path + ":" + line + ":<init>");
      if (target == null) {
        System.err.println("no declaration for query " + id + " at " + path + ":" + line + " " + name);
        if (allowErrors) continue;
        System.exit(3);
      }
      TreeSet<String> sites = new TreeSet<>();
      for (Map.Entry<Element, List<Site>> entry : uses.entrySet()) {
        Element e = entry.getKey();
        boolean match = e.equals(target);
        if (!match && target instanceof ExecutableElement t && e instanceof ExecutableElement x
            && target.getKind() == ElementKind.METHOD && t.getEnclosingElement() instanceof TypeElement owner) {
          // Only a supertype in the project counts: a call to a library
          // method (Object.hashCode, List.get) is not a reference to every
          // project override of it.
          match = elements.overrides(t, x, owner) && trees.getPath(x) != null;
        }
        if (!match) continue;
        for (Site s : entry.getValue()) {
          if (s.path().equals(path) && s.line() == line) continue;  // the declaration
          sites.add(s.path() + ":" + s.line());
        }
      }
      out.append(first ? "" : ",\n").append("  \"").append(id).append("\": [");
      out.append(sites.stream().map(s -> "\"" + s + "\"").collect(Collectors.joining(", "))).append("]");
      first = false;
    }
    out.append("\n}\n");
    System.out.print(out);
  }
}
