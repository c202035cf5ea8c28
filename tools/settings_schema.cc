// settings_schema: a build tool. Reads the descriptor set of
// proto/settings.proto (made by protoc with --include_source_info, so the
// comments come along) and prints a JSON Schema (draft-07) of the settings
// files: the same names, types and ranges that lib/base/json_message.cc
// checks, each field described by its comment in the .proto.
//
//   settings_schema settings.desc > settings.schema.json
//
// Editors that know JSON Schema validate and complete a settings file that
// names it in "$schema"; docs/settings.schema.json is this output, kept in
// sync by //tools:settings_schema_test.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "lib/base/json_syntax.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

constexpr char kUsage[] =
    "usage: settings_schema DESCRIPTOR_SET\n"
    "  prints the JSON Schema of the first message of proto/settings.proto,\n"
    "  read from a descriptor set made with protoc --include_source_info\n";

std::string Quoted(const std::string& text) { return garuda::JsonQuoted(text); }

// A comment of the .proto as one paragraph: the lines joined, the comment
// markers' spaces trimmed.
template <typename D>
std::string Comment(const D& descriptor) {
  google::protobuf::SourceLocation location;
  if (!descriptor.GetSourceLocation(&location)) return "";
  std::vector<std::string> words;
  for (absl::string_view line :
       absl::StrSplit(location.leading_comments, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) words.emplace_back(line);
  }
  return absl::StrJoin(words, " ");
}

// JSON written with two spaces of indent per level, keys in the order of
// the .proto, so that the output is the same on every build.
class SchemaWriter {
 public:
  std::string Object(const Descriptor& message, int indent,
                     const std::string& description, bool top) {
    std::vector<std::string> members;
    if (top) {
      members.push_back(
          Member("$schema", Quoted("http://json-schema.org/draft-07/schema#"),
                 indent + 1));
      members.push_back(Member("title", Quoted("Garuda settings"), indent + 1));
    }
    if (!description.empty()) {
      members.push_back(Member("description", Quoted(description), indent + 1));
    }
    members.push_back(Member("type", Quoted("object"), indent + 1));
    std::vector<std::string> properties;
    if (top) {
      properties.push_back(Member(
          "$schema",
          Block({Member("description",
                        Quoted("The JSON Schema of this file, for editors."),
                        indent + 3),
                 Member("type", Quoted("string"), indent + 3)},
                indent + 2),
          indent + 2));
    }
    for (int i = 0; i < message.field_count(); ++i) {
      const FieldDescriptor& field = *message.field(i);
      properties.push_back(
          Member(field.json_name(), Field(field, indent + 2), indent + 2));
    }
    members.push_back(Member("properties", Block(properties, indent + 1),
                             indent + 1));
    members.push_back(Member("additionalProperties", "false", indent + 1));
    return Block(members, indent);
  }

 private:
  static std::string Pad(int indent) { return std::string(2 * indent, ' '); }

  static std::string Member(const std::string& key, const std::string& value,
                            int indent) {
    return absl::StrCat(Pad(indent), Quoted(key), ": ", value);
  }

  static std::string Block(const std::vector<std::string>& members,
                           int indent) {
    if (members.empty()) return "{}";
    return absl::StrCat("{\n", absl::StrJoin(members, ",\n"), "\n", Pad(indent),
                        "}");
  }

  // The schema of one value of `field` (an element, for a repeated field).
  std::string Value(const FieldDescriptor& field, int indent,
                    const std::string& description) {
    std::vector<std::string> members;
    if (!description.empty()) {
      members.push_back(Member("description", Quoted(description), indent + 1));
    }
    auto integer = [&](double min, uint64_t max, bool may_be_string) {
      if (may_be_string) {
        // Proto3 JSON writes 64-bit integers as strings of digits.
        members.push_back(
            Member("type", "[\"integer\", \"string\"]", indent + 1));
        members.push_back(Member(
            "pattern", Quoted(min < 0 ? "^-?[0-9]+$" : "^[0-9]+$"), indent + 1));
      } else {
        members.push_back(Member("type", Quoted("integer"), indent + 1));
      }
      members.push_back(Member(
          "minimum", absl::StrCat(static_cast<int64_t>(min)), indent + 1));
      members.push_back(Member("maximum", absl::StrCat(max), indent + 1));
    };
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_BOOL:
        members.push_back(Member("type", Quoted("boolean"), indent + 1));
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        members.push_back(Member("type", Quoted("string"), indent + 1));
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        std::vector<std::string> names;
        for (int i = 0; i < field.enum_type()->value_count(); ++i) {
          names.push_back(Quoted(field.enum_type()->value(i)->name()));
        }
        members.push_back(Member("type", Quoted("string"), indent + 1));
        members.push_back(Member(
            "enum", absl::StrCat("[", absl::StrJoin(names, ", "), "]"),
            indent + 1));
        break;
      }
      case FieldDescriptor::CPPTYPE_INT32:
        integer(std::numeric_limits<int32_t>::min(),
                std::numeric_limits<int32_t>::max(), false);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        integer(0, std::numeric_limits<uint32_t>::max(), false);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        integer(static_cast<double>(std::numeric_limits<int64_t>::min()),
                std::numeric_limits<int64_t>::max(), true);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        integer(0, std::numeric_limits<uint64_t>::max(), true);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
      case FieldDescriptor::CPPTYPE_DOUBLE:
        members.push_back(Member("type", Quoted("number"), indent + 1));
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        const std::string& type = field.message_type()->full_name();
        if (type == "google.protobuf.Value") break;  // any JSON value
        if (type == "google.protobuf.Struct") {
          members.push_back(Member("type", Quoted("object"), indent + 1));
          break;
        }
        return Object(*field.message_type(), indent,
                      description.empty() ? Comment(*field.message_type())
                                          : description,
                      false);
      }
    }
    return Block(members, indent);
  }

  std::string Field(const FieldDescriptor& field, int indent) {
    const std::string description = Comment(field);
    if (field.is_map()) {
      const FieldDescriptor& value = *field.message_type()->map_value();
      std::vector<std::string> members;
      if (!description.empty()) {
        members.push_back(
            Member("description", Quoted(description), indent + 1));
      }
      members.push_back(Member("type", Quoted("object"), indent + 1));
      members.push_back(Member("additionalProperties",
                               Value(value, indent + 1, ""), indent + 1));
      return Block(members, indent);
    }
    if (field.is_repeated()) {
      std::vector<std::string> members;
      if (!description.empty()) {
        members.push_back(
            Member("description", Quoted(description), indent + 1));
      }
      members.push_back(Member("type", Quoted("array"), indent + 1));
      members.push_back(
          Member("items", Value(field, indent + 1, ""), indent + 1));
      return Block(members, indent);
    }
    return Value(field, indent, description);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fputs(kUsage, argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  google::protobuf::FileDescriptorSet set;
  if (!in || !set.ParseFromString(bytes.str())) {
    std::fprintf(stderr, "settings_schema: %s: not a descriptor set\n",
                 argv[1]);
    return 1;
  }
  google::protobuf::DescriptorPool pool;
  const google::protobuf::FileDescriptor* settings_file = nullptr;
  for (const google::protobuf::FileDescriptorProto& file : set.file()) {
    const google::protobuf::FileDescriptor* built = pool.BuildFile(file);
    if (built == nullptr) {
      std::fprintf(stderr, "settings_schema: %s: cannot build %s\n", argv[1],
                   file.name().c_str());
      return 1;
    }
    if (absl::EndsWith(file.name(), "settings.proto")) settings_file = built;
  }
  if (settings_file == nullptr || settings_file->message_type_count() == 0) {
    std::fprintf(stderr, "settings_schema: %s holds no settings.proto\n",
                 argv[1]);
    return 1;
  }
  const Descriptor& settings = *settings_file->message_type(0);
  std::string schema = SchemaWriter().Object(
      settings, 0,
      absl::StrCat(Comment(settings),
                   " Generated from proto/settings.proto by "
                   "//tools:settings_schema; do not edit."),
      true);
  std::printf("%s\n", schema.c_str());
  return 0;
}
