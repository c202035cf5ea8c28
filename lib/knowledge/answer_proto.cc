#include "lib/knowledge/answer_proto.h"

namespace garuda::knowledge {

code_tools::Answer AnswerToProto(const QueryResult& result) {
  code_tools::Answer answer;
  answer.set_operation(result.operation);
  answer.set_symbol(result.symbol);
  answer.set_approximate(result.approximate);
  answer.set_truncated(result.truncated);
  for (const std::string& note : result.notes) answer.add_notes(note);
  for (const Hit& hit : result.results) {
    code_tools::Hit* out = answer.add_results();
    out->set_path(hit.path);
    out->set_line(hit.line);
    out->set_column(hit.column);
    out->set_provenance(std::string(ProvenanceName(hit.provenance)));
    out->set_function(hit.function);
    out->set_function_path(hit.function_path);
    out->set_function_line(hit.function_line);
    out->set_depth(hit.depth);
    out->set_context(hit.context);
  }
  answer.set_risk(result.risk);
  return answer;
}

QueryResult AnswerFromProto(const code_tools::Answer& answer) {
  QueryResult result;
  result.operation = answer.operation();
  result.symbol = answer.symbol();
  result.approximate = answer.approximate();
  result.truncated = answer.truncated();
  result.notes.assign(answer.notes().begin(), answer.notes().end());
  for (const code_tools::Hit& in : answer.results()) {
    Hit hit;
    hit.path = in.path();
    hit.line = in.line();
    hit.column = in.column();
    hit.provenance = in.provenance() == "precise" ? Provenance::kPrecise
                     : in.provenance() == "syntactic"
                         ? Provenance::kSyntactic
                         : Provenance::kSearchBased;
    hit.function = in.function();
    hit.function_path = in.function_path();
    hit.function_line = in.function_line();
    hit.depth = in.depth();
    hit.context = in.context();
    result.results.push_back(std::move(hit));
  }
  result.risk = answer.risk();
  // The flag can only be raised here, never lowered: an answer with any
  // result that is not precise, or with none, is approximate.
  bool approximate = result.results.empty();
  for (const Hit& hit : result.results) {
    if (hit.provenance != Provenance::kPrecise) approximate = true;
  }
  result.approximate = result.approximate || approximate;
  return result;
}

}  // namespace garuda::knowledge
