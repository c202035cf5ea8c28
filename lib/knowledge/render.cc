#include "lib/knowledge/render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/json_syntax.h"

namespace garuda::knowledge {

const char kApproximateWarning[] =
    "WARNING: approximate result. Some locations are not compiler-verified "
    "(syntactic = scope or type checked from the source; search_based = a "
    "name match only) and some references may be missing. Verify before "
    "relying on this list being complete or exact.";

std::string JsonString(absl::string_view text) { return JsonQuoted(text); }

namespace {

std::string HitLine(const QueryResult& result, const Hit& hit) {
  std::string line = absl::StrCat(hit.path, ":", hit.line, ":", hit.column,
                                  " [", ProvenanceName(hit.provenance), "]");
  if (result.operation != "find_references") {
    absl::StrAppend(
        &line, " in ",
        hit.function.empty() ? "<module or class level>" : hit.function);
    if (!hit.function.empty()) {
      absl::StrAppend(&line, " (", hit.function_path, ":", hit.function_line,
                      ")");
    }
  }
  if (result.operation == "impact")
    absl::StrAppend(&line, " depth ", hit.depth);
  if (!hit.context.empty()) absl::StrAppend(&line, ": ", hit.context);
  return line;
}

std::string Header(const QueryResult& result) {
  std::string header = absl::StrCat(
      result.operation, result.symbol.empty() ? "" : " of ", result.symbol,
      ": ", result.results.size(), result.truncated ? "+ (truncated)" : "",
      " result", result.results.size() == 1 ? "" : "s");
  if (!result.risk.empty()) absl::StrAppend(&header, "; risk ", result.risk);
  return header;
}

}  // namespace

std::string ModelText(const QueryResult& result) {
  std::string text;
  if (result.approximate) absl::StrAppend(&text, kApproximateWarning, "\n");
  absl::StrAppend(&text, Header(result), "\n");
  for (const std::string& note : result.notes) {
    absl::StrAppend(&text, "note: ", note, "\n");
  }
  for (const Hit& hit : result.results) {
    absl::StrAppend(&text, HitLine(result, hit), "\n");
  }
  if (result.truncated) {
    absl::StrAppend(&text,
                    "(truncated: more results exist; the warning above still "
                    "applies)\n");
  }
  return text;
}

std::string ChatText(const QueryResult& result) {
  std::string text =
      absl::StrCat(result.approximate ? "≈ " : "", Header(result), "\n");
  for (const std::string& note : result.notes) {
    absl::StrAppend(&text, "  ", note, "\n");
  }
  // Results arrive ordered precise, syntactic, search_based (Finish); keep
  // that order so name matches come last.
  for (const Hit& hit : result.results) {
    absl::StrAppend(&text, hit.provenance == Provenance::kPrecise ? "  " : "≈ ",
                    HitLine(result, hit), "\n");
  }
  return text;
}

namespace {

std::string HitJson(const QueryResult& result, const Hit& hit, bool full) {
  std::string json =
      absl::StrCat("{\"path\":", JsonString(hit.path), ",\"line\":", hit.line,
                   ",\"column\":", hit.column, ",\"provenance\":\"",
                   ProvenanceName(hit.provenance), "\"");
  if (result.operation != "find_references") {
    absl::StrAppend(&json, ",\"function\":", JsonString(hit.function));
    if (full && !hit.function.empty()) {
      absl::StrAppend(&json,
                      ",\"functionPath\":", JsonString(hit.function_path),
                      ",\"functionLine\":", hit.function_line);
    }
  }
  if (result.operation == "impact")
    absl::StrAppend(&json, ",\"depth\":", hit.depth);
  if (full && !hit.context.empty())
    absl::StrAppend(&json, ",\"context\":", JsonString(hit.context));
  json += "}";
  return json;
}

std::string ResultsJson(const QueryResult& result, bool full) {
  std::string json = "[";
  for (size_t i = 0; i < result.results.size(); ++i) {
    if (i) json += ",";
    json += HitJson(result, result.results[i], full);
  }
  json += "]";
  return json;
}

}  // namespace

std::string ResultJson(const QueryResult& result) {
  std::string notes = "[";
  for (size_t i = 0; i < result.notes.size(); ++i) {
    if (i) notes += ",";
    notes += JsonString(result.notes[i]);
  }
  notes += "]";
  std::string json =
      absl::StrCat("{\"operation\":", JsonString(result.operation),
                   ",\"symbol\":", JsonString(result.symbol),
                   ",\"approximate\":", result.approximate ? "true" : "false",
                   ",\"truncated\":", result.truncated ? "true" : "false",
                   ",\"notes\":", notes);
  if (!result.risk.empty())
    absl::StrAppend(&json, ",\"risk\":", JsonString(result.risk));
  absl::StrAppend(&json, ",\"results\":", ResultsJson(result, true), "}");
  return json;
}

std::string BatchLineJson(absl::string_view id_json,
                          const QueryResult& result) {
  return absl::StrCat("{\"id\":", id_json, ",\"approximate\":",
                      result.approximate ? "true" : "false",
                      result.truncated ? ",\"truncated\":true" : "",
                      ",\"results\":", ResultsJson(result, false), "}");
}

}  // namespace garuda::knowledge
