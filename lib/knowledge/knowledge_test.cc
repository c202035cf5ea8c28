#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/knowledge/index.h"
#include "lib/knowledge/query.h"
#include "lib/knowledge/render.h"
#include "lib/knowledge/tool_command.h"

namespace garuda::knowledge {
namespace {

// "path:line" of each result.
std::set<std::string> Sites(const QueryResult& result) {
  std::set<std::string> sites;
  for (const Hit& hit : result.results) {
    sites.insert(absl::StrCat(hit.path, ":", hit.line));
  }
  return sites;
}

const char kShapes[] = R"src(package geo;

public abstract class Shape {
  protected int size;

  public abstract double area();

  public int size() {
    return size;
  }
}
)src";

const char kSquare[] = R"src(package geo;

public class Square extends Shape {
  public Square(int side) {
    this(side, "square");
  }

  public Square(int side, String name) {
    super();
    size = side;
  }

  @Override
  public double area() {
    return size * size;
  }

  public static Square unit() {
    return new Square(1);
  }
}
)src";

const char kCircle[] = R"src(package geo;

public class Circle {
  private final int size;

  public Circle(int size) {
    this.size = size;
  }

  public double area() {
    return 3.14 * size * size;
  }
}
)src";

const char kUse[] = R"src(package app;

import geo.Circle;
import geo.Shape;
import geo.Square;

public class Use {
  enum Kind {
    SMALL(1),
    LARGE(2, 3);

    Kind(int a) {}

    Kind(int a, int b) {}
  }

  static double total(Shape shape, Circle circle) {
    // shape.area() in a comment is not a reference
    String text = "shape.area()";
    Square square = Square.unit();
    double area = square.area();
    return shape.area() + circle.area() + area + text.length();
  }

  static int size(int size) {
    return size;
  }
}
)src";

std::unique_ptr<Index> JavaIndex() {
  return BuildIndexFromSources({{"geo/Shape.java", kShapes},
                                {"geo/Square.java", kSquare},
                                {"geo/Circle.java", kCircle},
                                {"app/Use.java", kUse}});
}

TEST(JavaTest, OverridesCountCallsThroughTheSupertypeButNotUnrelatedClasses) {
  auto index = JavaIndex();
  // Square.area (line 14): square.area() and shape.area(), not
  // circle.area(), not the comment or the string.
  QueryResult result = FindReferences(*index, {"geo/Square.java", 14, 17});
  EXPECT_EQ(Sites(result),
            (std::set<std::string>{"app/Use.java:21", "app/Use.java:22"}));
  for (const Hit& hit : result.results) {
    EXPECT_EQ(hit.provenance, Provenance::kSyntactic);
  }
  // Circle.area: only circle.area() on line 22.
  EXPECT_EQ(Sites(FindReferences(*index, {"geo/Circle.java", 10, 17})),
            (std::set<std::string>{"app/Use.java:22"}));
}

TEST(JavaTest, ConstructorsThroughThisSuperNewAndEnumConstants) {
  auto index = JavaIndex();
  // Square(int, String) is called by this(side, "square").
  EXPECT_EQ(Sites(FindReferences(*index, {"geo/Square.java", 8, 10})),
            (std::set<std::string>{"geo/Square.java:5"}));
  // Square(int) by new Square(1) only (arity).
  EXPECT_EQ(Sites(FindReferences(*index, {"geo/Square.java", 4, 10})),
            (std::set<std::string>{"geo/Square.java:19"}));
  // Enum constructors by the constants' argument counts.
  EXPECT_EQ(Sites(FindReferences(*index, {"app/Use.java", 12, 5})),
            (std::set<std::string>{"app/Use.java:9"}));
  EXPECT_EQ(Sites(FindReferences(*index, {"app/Use.java", 14, 5})),
            (std::set<std::string>{"app/Use.java:10"}));
}

TEST(JavaTest, ParametersShadowFieldsAndStaticsResolveThroughTheClass) {
  auto index = JavaIndex();
  // Shape.size (the field, line 4): Square's `size = side` and
  // `size * size`, Shape's own `return size`; not Use.size's parameter.
  EXPECT_EQ(Sites(FindReferences(*index, {"geo/Shape.java", 4, 17})),
            (std::set<std::string>{"geo/Shape.java:9", "geo/Square.java:10",
                                   "geo/Square.java:15"}));
  // Square.unit() through the class name.
  EXPECT_EQ(Sites(FindReferences(*index, {"geo/Square.java", 18, 24})),
            (std::set<std::string>{"app/Use.java:20"}));
}

const char kPyMoney[] = R"src(class Money:
    def __init__(self, cents):
        self.cents = cents

    def plus(self, other):
        return Money(self.cents + other.cents)


def plus(a, b):
    return a + b
)src";

const char kPyUse[] = R"src(from money import Money as M, plus
import money


def run(total):
    m = M(1)
    # m.plus(m) in a comment
    text = "m.plus(m)"
    both = m.plus(m)
    free = plus(1, 2)
    again = money.plus(3, 4)
    return total.plus(both)


def shadow(plus):
    return plus
)src";

std::unique_ptr<Index> PythonIndex() {
  return BuildIndexFromSources({{"money.py", kPyMoney}, {"use.py", kPyUse}});
}

TEST(PythonTest, MethodAndFunctionOfTheSameNameStayApart) {
  auto index = PythonIndex();
  QueryOptions options;
  options.unknown_receivers = UnknownReceivers::kNone;
  // Money.plus: m.plus(m) (m = M(1) through the alias); not plus(1, 2),
  // not the comment, string or the parameter `plus`.
  EXPECT_EQ(Sites(FindReferences(*index, {"money.py", 5, 9}, options)),
            (std::set<std::string>{"use.py:9"}));
  // The module function: the import, plus(1, 2) and money.plus(3, 4).
  EXPECT_EQ(Sites(FindReferences(*index, {"money.py", 9, 5}, options)),
            (std::set<std::string>{"use.py:1", "use.py:10", "use.py:11"}));
}

TEST(PythonTest, UnknownReceiversAreSearchBasedWhenKept) {
  auto index = PythonIndex();
  QueryOptions options;
  options.unknown_receivers = UnknownReceivers::kAll;
  QueryResult result = FindReferences(*index, {"money.py", 5, 9}, options);
  EXPECT_EQ(Sites(result), (std::set<std::string>{"use.py:9", "use.py:12"}));
  ASSERT_EQ(result.results.size(), 2u);
  // search_based after the others.
  EXPECT_EQ(result.results[0].provenance, Provenance::kSyntactic);
  EXPECT_EQ(result.results[1].provenance, Provenance::kSearchBased);
  EXPECT_EQ(result.results[1].line, 12);
  EXPECT_TRUE(result.approximate);
}

TEST(EnvelopeTest, ApproximateOnEmptyAndUnresolvedResults) {
  auto index = PythonIndex();
  // An unused name: empty, still approximate.
  QueryResult empty = FindReferences(*index, {"use.py", 8, 5});
  EXPECT_TRUE(empty.results.empty());
  EXPECT_TRUE(empty.approximate);
  // No identifier there.
  QueryResult nothing = FindReferences(*index, {"use.py", 3, 1});
  EXPECT_TRUE(nothing.approximate);
  EXPECT_FALSE(nothing.notes.empty());
  // A name that resolves to nothing in the project (a builtin).
  auto builtin = BuildIndexFromSources({{"b.py", "print(len([]))\n"}});
  QueryResult unresolved = FindReferences(*builtin, {"b.py", 1, 1});
  EXPECT_TRUE(unresolved.approximate);
  EXPECT_NE(unresolved.notes[0].find("does not resolve"), std::string::npos);
}

TEST(EnvelopeTest, TruncationKeepsTheFlagAndCallersAndImpactPropagateIt) {
  auto index = JavaIndex();
  QueryOptions options;
  options.max_results = 1;
  QueryResult result =
      FindReferences(*index, {"geo/Square.java", 14, 17}, options);
  EXPECT_EQ(result.results.size(), 1u);
  EXPECT_TRUE(result.truncated);
  EXPECT_TRUE(result.approximate);
  EXPECT_NE(ModelText(result).find("truncated"), std::string::npos);

  QueryResult callers = Callers(*index, {"geo/Square.java", 14, 17});
  EXPECT_TRUE(callers.approximate);
  ASSERT_EQ(callers.results.size(), 1u);  // both calls are in Use.total
  EXPECT_EQ(callers.results[0].function, "app/Use.java:Use.total");

  QueryResult impact = Impact(*index, {"geo/Square.java", 18, 24});
  EXPECT_TRUE(impact.approximate);
  EXPECT_NE(impact.risk.find("heuristic"), std::string::npos);
  ASSERT_FALSE(impact.results.empty());
  EXPECT_EQ(impact.results[0].function, "app/Use.java:Use.total");
  EXPECT_EQ(impact.results[0].depth, 1);
}

TEST(RenderTest, ModelTextWarnsAndChatMarksApproximateResults) {
  QueryResult result;
  result.operation = "find_references";
  result.symbol = "method a.B.c";
  result.results.push_back({"b.py", 3, 1, Provenance::kSearchBased});
  result.results.push_back({"a.py", 9, 5, Provenance::kSyntactic});
  Finish(result, 10);
  EXPECT_TRUE(result.approximate);
  std::string model = ModelText(result);
  EXPECT_EQ(model.rfind(kApproximateWarning, 0), 0u) << model;
  std::string chat = ChatText(result);
  EXPECT_EQ(chat.rfind("≈ ", 0), 0u) << chat;
  // search_based last.
  EXPECT_LT(chat.find("a.py:9:5 [syntactic]"),
            chat.find("b.py:3:1 [search_based]"));

  QueryResult precise;
  precise.operation = "find_references";
  precise.approximate = false;
  precise.results.push_back({"a.py", 1, 1, Provenance::kPrecise});
  Finish(precise, 10);
  EXPECT_FALSE(precise.approximate);
  EXPECT_EQ(ModelText(precise).find("WARNING"), std::string::npos);
  EXPECT_EQ(ChatText(precise).find("≈"), std::string::npos);
}

TEST(ToolCommandTest, BatchAnswersEachLineFromOneIndex) {
  std::string project = JoinPath(std::getenv("TEST_TMPDIR"), "batch");
  ASSERT_TRUE(MakeDirectories(project, 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(project, "money.py"), kPyMoney, 0644).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(project, "use.py"), kPyUse, 0644).ok());
  ToolCommandOptions options;
  options.operation = "find_references";
  options.project = project;
  options.batch = true;
  options.use_lsp = false;
  std::istringstream in(R"({"id":"a","path":"money.py","line":9,"column":5})"
                        "\n"
                        R"({"id":7,"path":"use.py","line":3,"column":1})"
                        "\n");
  std::ostringstream out;
  ASSERT_TRUE(RunToolCommand(options, in, out).ok());
  EXPECT_EQ(
      out.str(),
      R"({"id":"a","approximate":true,"results":[)"
      R"({"path":"use.py","line":1,"column":31,"provenance":"syntactic"},)"
      R"({"path":"use.py","line":10,"column":12,"provenance":"syntactic"},)"
      R"({"path":"use.py","line":11,"column":19,"provenance":"syntactic"}]})"
      "\n"
      R"({"id":7,"approximate":true,"results":[]})"
      "\n");
  std::istringstream bad(R"({"id":1,"path":"use.py","line":"x","column":1})");
  std::ostringstream ignored;
  absl::Status status = RunToolCommand(options, bad, ignored);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("batch line 1"), std::string::npos) << status;
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

TEST(PositionOfSymbolTest, NamesQualifiedAsFarAsNeeded) {
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"geo/Shape.java", kShapes},
                             {"geo/Square.java", kSquare},
                             {"pkg/a.py", "def size():\n    pass\n"},
                             {"pkg/b.py", "from pkg.a import size\nsize()\n"}});
  // `size` is a Java field, a Java method and a Python function (the
  // import in b.py is not a declaration).
  absl::StatusOr<QueryPosition> ambiguous = PositionOfSymbol(*index, "size");
  EXPECT_TRUE(absl::IsInvalidArgument(ambiguous.status()));
  EXPECT_NE(ambiguous.status().message().find("geo/Shape.java:4"),
            std::string::npos)
      << ambiguous.status();
  absl::StatusOr<QueryPosition> function = PositionOfSymbol(*index, "a.size");
  ASSERT_TRUE(function.ok()) << function.status();
  EXPECT_EQ(function->path, "pkg/a.py");
  EXPECT_EQ(function->line, 1);
  EXPECT_EQ(PositionOfSymbol(*index, "pkg.a.size")->path, "pkg/a.py");
  // A class and its constructors are one candidate: the class.
  absl::StatusOr<QueryPosition> square = PositionOfSymbol(*index, "Square");
  ASSERT_TRUE(square.ok()) << square.status();
  EXPECT_EQ(square->line, 3);
  EXPECT_EQ(PositionOfSymbol(*index, "geo.Square.unit")->line, 18);
  // A suffix must end at a dot: "ize" names nothing.
  EXPECT_TRUE(absl::IsNotFound(PositionOfSymbol(*index, "ize").status()));
  EXPECT_TRUE(absl::IsNotFound(PositionOfSymbol(*index, "Nothing").status()));
}

TEST(AddContextTest, TheTrimmedLineOfEachHit) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"pkg/a.py", "def f():\n    pass\n"},
       {"pkg/b.py", "from pkg.a import f\n\n   f()   \n"}});
  QueryResult result = FindReferences(*index, *PositionOfSymbol(*index, "f"));
  AddContext(*index, result);
  ASSERT_EQ(result.results.size(), 2u);
  EXPECT_EQ(result.results[0].context, "from pkg.a import f");
  EXPECT_EQ(result.results[1].context, "f()");
  EXPECT_NE(ModelText(result).find("pkg/b.py:3:4 [syntactic]: f()"),
            std::string::npos)
      << ModelText(result);
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

std::set<std::string> SitesOf(const Index& index, const std::string& symbol) {
  absl::StatusOr<QueryPosition> position = PositionOfSymbol(index, symbol);
  EXPECT_TRUE(position.ok()) << position.status();
  if (!position.ok()) return {};
  return Sites(FindReferences(index, *position));
}

TEST(PythonRulesTest, AnnotationStringsAreForwardReferences) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"pkg/env.py",
        "class Environment:\n"
        "    def render(self):\n"
        "        pass\n"},
       {"pkg/use.py",
        "import typing as t\n"
        "if t.TYPE_CHECKING:\n"
        "    from pkg.env import Environment\n"
        "\n"
        "def make(env: \"Environment\") -> \"t.Optional[Environment]\":\n"
        "    print(\"Environment\")\n"
        "    return env\n"
        "\n"
        "def draw(env: \"Environment\"):\n"
        "    env.render()\n"}});
  std::set<std::string> sites = SitesOf(*index, "Environment");
  // The import, both annotations of make, draw's annotation; the string
  // printed on line 6 is not an annotation (the control).
  EXPECT_EQ(sites, (std::set<std::string>{"pkg/use.py:3", "pkg/use.py:5",
                                          "pkg/use.py:9"}));
  // A parameter typed by a string annotation has the type it names.
  EXPECT_EQ(SitesOf(*index, "Environment.render"),
            std::set<std::string>{"pkg/use.py:10"});
}

TEST(PythonRulesTest, DunderAllNamesAreUsesAndOtherListsAreNot) {
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"pkg/__init__.py",
                              "from pkg.cart import Cart\n"
                              "__all__ = [\"Cart\"]\n"
                              "names = [\"Cart\"]\n"},
                             {"pkg/cart.py", "class Cart:\n    pass\n"}});
  EXPECT_EQ(SitesOf(*index, "pkg.cart.Cart"),
            (std::set<std::string>{"pkg/__init__.py:1", "pkg/__init__.py:2"}));
}

TEST(PythonRulesTest, AwaitHasTheReturnAnnotationsType) {
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"net.py",
                              "class Response:\n"
                              "    async def aclose(self):\n"
                              "        pass\n"
                              "\n"
                              "async def fetch() -> Response:\n"
                              "    return Response()\n"
                              "\n"
                              "async def main():\n"
                              "    response = await fetch()\n"
                              "    await response.aclose()\n"}});
  QueryResult result =
      FindReferences(*index, *PositionOfSymbol(*index, "aclose"));
  ASSERT_EQ(result.results.size(), 1u);
  EXPECT_EQ(result.results[0].line, 10);
  EXPECT_EQ(result.results[0].provenance, Provenance::kSyntactic);
}

TEST(JavaRulesTest, AnAnonymousClassIsNoUseOfTheSuperConstructor) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"p/Base.java",
        "package p;\n"
        "public class Base {\n"
        "  public Base() {}\n"
        "  static Base plain() { return new Base(); }\n"
        "  static Base anonymous() { return new Base() {}; }\n"
        "}\n"}});
  QueryResult constructor =
      FindReferences(*index, QueryPosition{"p/Base.java", 3, 10});
  EXPECT_EQ(Sites(constructor), std::set<std::string>{"p/Base.java:4"});
  QueryResult cls = FindReferences(*index, QueryPosition{"p/Base.java", 2, 14});
  EXPECT_EQ(Sites(cls),
            (std::set<std::string>{"p/Base.java:4", "p/Base.java:5"}));
}

TEST(JavaRulesTest, QualifiedThisAndFinalLibraryTypes) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"p/Outer.java",
        "package p;\n"
        "public class Outer {\n"
        "  void write() {}\n"
        "  class Inner {\n"
        "    void go() { Outer.this.write(); }\n"
        "  }\n"
        "}\n"},
       {"p/Num.java", "package p;\npublic class Num extends Number {}\n"},
       {"p/Box.java",
        "package p;\n"
        "public class Box {\n"
        "  Box(String s) {}\n"
        "  Box(Number n) {}\n"
        "  static Box of() { return new Box(new Num()); }\n"
        "}\n"},
       {"p/Text.java",
        "package p;\n"
        "public class Text {\n"
        "  Text append(String s) { return this; }\n"
        "  String show(StringBuilder sb, Object unknown) {\n"
        "    sb.append(\"a\").append(\"b\");\n"
        "    String.valueOf(1).trim().append(\"c\");\n"
        "    return unknown.toString().append(\"d\");\n"
        "  }\n"
        "}\n"}});
  EXPECT_EQ(SitesOf(*index, "Outer.write"),
            std::set<std::string>{"p/Outer.java:5"});
  // No project class is a String: only the Number overload is called.
  EXPECT_TRUE(
      Sites(FindReferences(*index, QueryPosition{"p/Box.java", 3, 3})).empty());
  EXPECT_EQ(Sites(FindReferences(*index, QueryPosition{"p/Box.java", 4, 3})),
            std::set<std::string>{"p/Box.java:5"});
  // Calls on StringBuilder and String results are the library's.
  EXPECT_TRUE(SitesOf(*index, "Text.append").empty());
}

TEST(JavaRulesTest, AnUnknownReceiverStillMatchesAUniqueName) {
  // The control of the test above: the same call on a receiver of unknown
  // type is kept as a name match.
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"p/Text.java",
                              "package p;\n"
                              "public class Text {\n"
                              "  Text append(String s) { return this; }\n"
                              "  void show(java.util.List<Text> texts) {\n"
                              "    texts.get(0).append(\"a\");\n"
                              "  }\n"
                              "}\n"}});
  QueryResult result =
      FindReferences(*index, *PositionOfSymbol(*index, "append"));
  ASSERT_EQ(result.results.size(), 1u);
  EXPECT_EQ(result.results[0].provenance, Provenance::kSearchBased);
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

TEST(PythonRulesTest, AStubBesideItsModuleIsWhatImportsSee) {
  const char kErrors[] = "class Frozen(Exception):\n    pass\n";
  std::unique_ptr<Index> with_stub = BuildIndexFromSources(
      {{"pkg/errors.py", kErrors},
       {"pkg/errors.pyi", kErrors},
       {"pkg/use.py", "from pkg.errors import Frozen\nraise Frozen()\n"}});
  // The import resolves to the stub's class, not the module's.
  EXPECT_TRUE(
      Sites(FindReferences(*with_stub, QueryPosition{"pkg/errors.py", 1, 7}))
          .empty());
  EXPECT_EQ(
      Sites(FindReferences(*with_stub, QueryPosition{"pkg/errors.pyi", 1, 7})),
      (std::set<std::string>{"pkg/use.py:1", "pkg/use.py:2"}));
  // The control: without the stub the module's class is used.
  std::unique_ptr<Index> without = BuildIndexFromSources(
      {{"pkg/errors.py", kErrors},
       {"pkg/use.py", "from pkg.errors import Frozen\nraise Frozen()\n"}});
  EXPECT_EQ(
      Sites(FindReferences(*without, QueryPosition{"pkg/errors.py", 1, 7})),
      (std::set<std::string>{"pkg/use.py:1", "pkg/use.py:2"}));
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

TEST(JavaRulesTest, AValueOfATypeParameterHasItsBoundsMembers) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"p/Text.java",
        "package p;\n"
        "public class Text {\n"
        "  Text append(String s) { return this; }\n"
        "  <A extends Appendable> A render(A out) { out.append(\"a\"); return "
        "out; }\n"
        "  <T> void any(T value) { value.append(\"b\"); }\n"
        "  <B extends Text> void mine(B text) { text.append(\"c\"); }\n"
        "}\n"}});
  // Appendable's and Object's append are the library's; a bound in the
  // project is that class (the control: the one site).
  QueryResult result =
      FindReferences(*index, *PositionOfSymbol(*index, "append"));
  EXPECT_EQ(Sites(result), std::set<std::string>{"p/Text.java:6"});
  ASSERT_EQ(result.results.size(), 1u);
  EXPECT_EQ(result.results[0].provenance, Provenance::kSyntactic);
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

TEST(PythonRulesTest, AModuleInsideAPackageIsNoTopLevelModule) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"src/pkg/__init__.py", ""},
       {"src/pkg/json.py", "def dumps(value):\n    return value\n"},
       {"src/pkg/app.py",
        "import json\n"
        "from pkg import json as ours\n"
        "json.dumps(1)\n"
        "ours.dumps(2)\n"}});
  // `import json` is the standard library's, even beside pkg/json.py; the
  // control is the import of pkg's own module (src/ is no package, so
  // "pkg.json" still names it).
  EXPECT_EQ(SitesOf(*index, "pkg.json.dumps"),
            std::set<std::string>{"src/pkg/app.py:4"});
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

TEST(PythonRulesTest, TypingCastIsItsFirstArgument) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"m.py",
        "import typing as t\n"
        "from typing import cast\n"
        "\n"
        "class Group:\n"
        "    def list_commands(self):\n"
        "        return []\n"
        "\n"
        "def use(value, other):\n"
        "    t.cast(Group, value).list_commands()\n"
        "    cast(\"Group\", value).list_commands()\n"
        "    other.cast(Group, value).list_commands()\n"}});
  // The control: `other.cast` is not typing's, so its result is unknown
  // (and Python's default keeps no unknown-receiver matches).
  QueryOptions python;
  python.unknown_receivers = DefaultUnknownReceivers("m.py");
  EXPECT_EQ(
      Sites(FindReferences(
          *index, *PositionOfSymbol(*index, "Group.list_commands"), python)),
      (std::set<std::string>{"m.py:10", "m.py:9"}));
}

}  // namespace
}  // namespace garuda::knowledge

namespace garuda::knowledge {
namespace {

// What `with x as y` binds y to: __enter__'s return (-> Self is the
// subclass), __aenter__'s for `async with`, what a @contextmanager
// generator yields. The control: a class whose __enter__ returns another
// type gives y that type, not the class.
TEST(PythonRulesTest, WithBindsWhatEnterReturns) {
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"m.py",
                              "from contextlib import contextmanager\n"
                              "from typing import Iterator, Self\n"
                              "\n"
                              "class Base:\n"
                              "    def __enter__(self) -> Self:\n"
                              "        return self\n"
                              "    async def __aenter__(self) -> Self:\n"
                              "        return self\n"
                              "\n"
                              "class Portal(Base):\n"
                              "    def call(self):\n"
                              "        pass\n"
                              "\n"
                              "class Opener:\n"
                              "    def __enter__(self) -> Base:\n"
                              "        return Base()\n"
                              "    def call(self):\n"
                              "        pass\n"
                              "\n"
                              "@contextmanager\n"
                              "def portal() -> Iterator[Portal]:\n"
                              "    yield Portal()\n"
                              "\n"
                              "async def use():\n"
                              "    with Portal() as a:\n"
                              "        a.call()\n"
                              "    async with Portal() as b:\n"
                              "        b.call()\n"
                              "    with portal() as c:\n"
                              "        c.call()\n"
                              "    with Opener() as d:\n"
                              "        d.call()\n"}});
  QueryOptions python;
  python.unknown_receivers = DefaultUnknownReceivers("m.py");
  EXPECT_EQ(Sites(FindReferences(
                *index, *PositionOfSymbol(*index, "Portal.call"), python)),
            (std::set<std::string>{"m.py:26", "m.py:28", "m.py:30"}));
  EXPECT_TRUE(
      Sites(FindReferences(*index, *PositionOfSymbol(*index, "Opener.call"),
                           python))
          .empty());
}

// A bare Final says nothing of the type (the value's is kept); a class's
// __getattr__ types every attribute it does not declare. Controls: a
// Final[...] naming another class, and a class without __getattr__.
TEST(PythonRulesTest, FinalAndGetattrTypes) {
  std::unique_ptr<Index> index = BuildIndexFromSources(
      {{"m.py",
        "from typing import Final\n"
        "\n"
        "class Caller:\n"
        "    def call_historic(self):\n"
        "        pass\n"
        "\n"
        "class Relay:\n"
        "    def __getattr__(self, name: str) -> Caller: ...\n"
        "\n"
        "class Plain:\n"
        "    pass\n"
        "\n"
        "class Manager:\n"
        "    def __init__(self):\n"
        "        self.hook: Final = Relay()\n"
        "        self.other: Final[Plain] = Plain()\n"
        "\n"
        "def use(pm: Manager):\n"
        "    pm.hook.x.call_historic()\n"
        "    pm.other.x.call_historic()\n"}});
  QueryOptions python;
  python.unknown_receivers = DefaultUnknownReceivers("m.py");
  EXPECT_EQ(
      Sites(FindReferences(
          *index, *PositionOfSymbol(*index, "Caller.call_historic"), python)),
      (std::set<std::string>{"m.py:19"}));
}

// `a / b` has the type a's class's __truediv__ returns. The control: an
// operator the class does not define gives no type.
TEST(PythonRulesTest, OperatorsHaveTheirDunderMethodsType) {
  std::unique_ptr<Index> index =
      BuildIndexFromSources({{"m.py",
                              "class Path:\n"
                              "    def __truediv__(self, other) -> \"Path\":\n"
                              "        return Path()\n"
                              "    def write_text(self, text):\n"
                              "        pass\n"
                              "\n"
                              "def use(root: Path):\n"
                              "    (root / \"a\").write_text(\"x\")\n"
                              "    (root - \"a\").write_text(\"y\")\n"}});
  QueryOptions python;
  python.unknown_receivers = DefaultUnknownReceivers("m.py");
  EXPECT_EQ(Sites(FindReferences(
                *index, *PositionOfSymbol(*index, "Path.write_text"), python)),
            (std::set<std::string>{"m.py:8"}));
}

}  // namespace
}  // namespace garuda::knowledge
