#include "tests/agent/json_schema.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"

namespace garuda {
namespace agent {
namespace {

using google::protobuf::Value;

std::string TypeOf(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return "null";
    case Value::kBoolValue:
      return "boolean";
    case Value::kNumberValue:
      return "number";
    case Value::kStringValue:
      return "string";
    case Value::kStructValue:
      return "object";
    case Value::kListValue:
      return "array";
    default:
      return "nothing";
  }
}

bool IsType(const Value& value, const std::string& type) {
  if (type == "integer") {
    return value.kind_case() == Value::kNumberValue &&
           std::floor(value.number_value()) == value.number_value();
  }
  return TypeOf(value) == type;
}

bool Equal(const Value& a, const Value& b) {
  std::string ja, jb;
  (void)google::protobuf::util::MessageToJsonString(a, &ja);
  (void)google::protobuf::util::MessageToJsonString(b, &jb);
  return ja == jb;
}

std::string Json(const Value& value) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(value, &out);
  return out;
}

class Validator {
 public:
  explicit Validator(const Value& root) : root_(root) {}

  absl::Status Check(const Value& value, const Value& schema,
                     const std::string& at) {
    if (schema.kind_case() == Value::kBoolValue) {
      if (schema.bool_value()) return absl::OkStatus();
      return Invalid(at, "no value is allowed here");
    }
    if (schema.kind_case() != Value::kStructValue) {
      return Invalid(at, "the schema here is not an object");
    }
    const auto& s = schema.struct_value().fields();
    static const char* const kIgnored[] = {"$schema", "$id", "title",
                                           "description", "examples",
                                           "$defs", "$comment"};
    static const char* const kChecked[] = {
        "$ref",  "type",  "properties", "required", "additionalProperties",
        "items", "const", "enum",       "oneOf",    "minimum"};
    for (const auto& [keyword, unused] : s) {
      bool known = false;
      for (const char* k : kIgnored) known = known || keyword == k;
      for (const char* k : kChecked) known = known || keyword == k;
      if (!known) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the schema uses \"", keyword,
            "\", which this validator does not check (lib/agent/"
            "json_schema.h)"));
      }
    }
    if (auto ref = s.find("$ref"); ref != s.end()) {
      const Value* target = Resolve(ref->second.string_value());
      if (target == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the schema's $ref \"", ref->second.string_value(),
            "\" is not a \"#/$defs/NAME\" of the schema"));
      }
      if (absl::Status status = Check(value, *target, at); !status.ok()) {
        return status;
      }
    }
    if (auto type = s.find("type"); type != s.end()) {
      std::vector<std::string> types;
      if (type->second.kind_case() == Value::kListValue) {
        for (const Value& t : type->second.list_value().values()) {
          types.push_back(t.string_value());
        }
      } else {
        types.push_back(type->second.string_value());
      }
      bool matched = false;
      for (const std::string& t : types) matched = matched || IsType(value, t);
      if (!matched) {
        return Invalid(at, absl::StrCat("is ", TypeOf(value), " ", Json(value),
                                        ", not ", absl::StrJoin(types, " or ")));
      }
    }
    if (auto c = s.find("const"); c != s.end() && !Equal(value, c->second)) {
      return Invalid(at, absl::StrCat("is ", Json(value), ", not ",
                                      Json(c->second)));
    }
    if (auto e = s.find("enum"); e != s.end()) {
      bool found = false;
      for (const Value& option : e->second.list_value().values()) {
        found = found || Equal(value, option);
      }
      if (!found) {
        return Invalid(at, absl::StrCat("is ", Json(value), ", not one of ",
                                        Json(e->second)));
      }
    }
    if (auto m = s.find("minimum"); m != s.end() &&
                                    value.kind_case() == Value::kNumberValue &&
                                    value.number_value() <
                                        m->second.number_value()) {
      return Invalid(at, absl::StrCat("is ", value.number_value(),
                                      ", below the minimum ",
                                      m->second.number_value()));
    }
    if (value.kind_case() == Value::kStructValue) {
      const auto& fields = value.struct_value().fields();
      if (auto r = s.find("required"); r != s.end()) {
        for (const Value& name : r->second.list_value().values()) {
          if (fields.find(name.string_value()) == fields.end()) {
            return Invalid(at, absl::StrCat("has no \"", name.string_value(),
                                            "\", which is required"));
          }
        }
      }
      auto properties = s.find("properties");
      auto additional = s.find("additionalProperties");
      for (const auto& [name, field] : fields) {
        const std::string place = absl::StrCat(at, ".", name);
        const Value* sub = nullptr;
        if (properties != s.end()) {
          const auto& p = properties->second.struct_value().fields();
          if (auto it = p.find(name); it != p.end()) sub = &it->second;
        }
        if (sub == nullptr && additional != s.end()) sub = &additional->second;
        if (sub == nullptr) continue;
        if (absl::Status status = Check(field, *sub, place); !status.ok()) {
          return status;
        }
      }
    }
    if (value.kind_case() == Value::kListValue) {
      if (auto items = s.find("items"); items != s.end()) {
        int i = 0;
        for (const Value& item : value.list_value().values()) {
          absl::Status status =
              Check(item, items->second, absl::StrCat(at, "[", i++, "]"));
          if (!status.ok()) return status;
        }
      }
    }
    if (auto one = s.find("oneOf"); one != s.end()) {
      int matches = 0;
      std::vector<std::string> why;
      for (const Value& option : one->second.list_value().values()) {
        absl::Status status = Check(value, option, at);
        if (status.ok()) {
          ++matches;
        } else {
          why.push_back(std::string(status.message()));
        }
      }
      if (matches != 1) {
        return Invalid(
            at, matches == 0
                    ? absl::StrCat("matches none of the choices: ",
                                   absl::StrJoin(why, "; "))
                    : absl::StrCat("matches ", matches,
                                   " of the choices, not exactly one"));
      }
    }
    return absl::OkStatus();
  }

  const Value* Resolve(const std::string& ref) const {
    constexpr absl::string_view kPrefix = "#/$defs/";
    if (!absl::StartsWith(ref, kPrefix)) return nullptr;
    if (root_.kind_case() != Value::kStructValue) return nullptr;
    const auto& fields = root_.struct_value().fields();
    auto defs = fields.find("$defs");
    if (defs == fields.end()) return nullptr;
    const auto& names = defs->second.struct_value().fields();
    auto it = names.find(ref.substr(kPrefix.size()));
    return it == names.end() ? nullptr : &it->second;
  }

 private:
  static absl::Status Invalid(const std::string& at, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(at, " ", what));
  }
  const Value& root_;
};

}  // namespace

absl::Status ValidateJson(const Value& value, const Value& schema) {
  return Validator(schema).Check(value, schema, "$");
}

absl::Status ValidateJsonAgainst(const Value& value, const Value& schema,
                                 const std::string& def_name) {
  Validator validator(schema);
  const Value* def = validator.Resolve(absl::StrCat("#/$defs/", def_name));
  if (def == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the schema has no $defs/", def_name));
  }
  return validator.Check(value, *def, "$");
}

}  // namespace agent
}  // namespace garuda
