#include "lib/audit/witness_submit.h"

#include <curl/curl.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_store.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"

namespace garuda {
namespace {

constexpr size_t kMaxAnswerBytes = 64 << 10;

size_t Collect(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * count > kMaxAnswerBytes) return 0;
  body->append(data, size * count);
  return size * count;
}

RegularFileOptions NoteOptions() {
  RegularFileOptions options;
  options.max_bytes = kMaxNoteBytes;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WitnessSubmit>> WitnessSubmit::Prepare(
    const std::string& url, const std::string& tree_folder) {
  std::unique_ptr<WitnessSubmit> submit(new WitnessSubmit());
  submit->url_ = url;
  while (!submit->url_.empty() && submit->url_.back() == '/') {
    submit->url_.pop_back();
  }
  submit->tree_folder_ = tree_folder;
  CURLU* parsed = curl_url();
  if (parsed == nullptr || curl_url_set(parsed, CURLUPART_URL,
                                        submit->url_.c_str(), 0) != CURLUE_OK) {
    if (parsed) curl_url_cleanup(parsed);
    return absl::InvalidArgumentError(
        absl::StrCat("--url \"", url, "\" is not a URL"));
  }
  char* scheme = nullptr;
  char* port = nullptr;
  curl_url_get(parsed, CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(parsed, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  std::string scheme_text = scheme ? scheme : "";
  int port_number = 0;
  if (port == nullptr || !absl::SimpleAtoi(port, &port_number)) port_number = 0;
  curl_free(scheme);
  curl_free(port);
  curl_url_cleanup(parsed);
  if (scheme_text != "http" && scheme_text != "https") {
    return absl::InvalidArgumentError(
        absl::StrCat("--url \"", url, "\": http or https only"));
  }
  submit->port_ = port_number;
  // Before the lockdown: curl reads its certificate store and the resolver's
  // configuration here, not after.
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return absl::InternalError("curl_global_init failed");
  }
  submit->curl_ = curl_easy_init();
  if (submit->curl_ == nullptr) return absl::InternalError("curl_easy_init");
  RETURN_IF_ERROR(MakePrivateFolder(submit->witness_folder()));
  return submit;
}

WitnessSubmit::~WitnessSubmit() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string WitnessSubmit::witness_folder() const {
  return JoinPath(tree_folder_, "witness");
}

absl::StatusOr<std::pair<long, std::string>> WitnessSubmit::Post(
    const std::string& body) {
  CURL* curl = static_cast<CURL*>(curl_);
  std::string answer;
  std::string target = absl::StrCat(url_, "/add-checkpoint");
  struct curl_slist* headers = nullptr;
  headers =
      curl_slist_append(headers, "Content-Type: text/plain; charset=utf-8");
  // The witness answers at once; no round trip for 100-continue.
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, target.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat(target, ": ", curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return std::make_pair(status, std::move(answer));
}

int WitnessSubmit::Run(FILE* out, FILE* err) {
  const auto fail = [&](int code, absl::string_view message) {
    std::fprintf(err, "garuda-audit witness submit: %s\n",
                 MakeMessageVisible(message).c_str());
    return code;
  };
  absl::StatusOr<std::string> note_text =
      ReadRegularFile(JoinPath(tree_folder_, "checkpoint"), NoteOptions());
  if (!note_text.ok()) return fail(2, note_text.status().message());
  absl::StatusOr<Note> note = ParseNote(*note_text);
  absl::StatusOr<Checkpoint> checkpoint =
      note.ok() ? ParseCheckpoint(note->text)
                : absl::StatusOr<Checkpoint>(note.status());
  if (!checkpoint.ok()) return fail(2, checkpoint.status().message());
  absl::StatusOr<TreeReader> tree = TreeReader::Open(tree_folder_);
  if (!tree.ok()) return fail(2, tree.status().message());
  if (tree->size() < checkpoint->size) {
    return fail(1, absl::StrCat("the checkpoint covers ", checkpoint->size,
                                " lines, the tree only ", tree->size()));
  }
  // The size this witness cosigned last, as we stored it.
  const std::string stored_path = WitnessCheckpointPath(tree_folder_, url_);
  uint64_t old_size = 0;
  {
    absl::StatusOr<std::string> stored =
        ReadRegularFile(stored_path, NoteOptions());
    if (stored.ok()) {
      absl::StatusOr<Note> stored_note = ParseNote(*stored);
      absl::StatusOr<Checkpoint> stored_checkpoint =
          stored_note.ok() ? ParseCheckpoint(stored_note->text)
                           : absl::StatusOr<Checkpoint>(stored_note.status());
      if (stored_checkpoint.ok()) old_size = stored_checkpoint->size;
    }
  }
  // Twice at most: a 409 tells the size the witness holds (a first
  // submit, or cosignatures lost here), and the proof is made from it.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (old_size > checkpoint->size) {
      return fail(1, absl::StrCat("the witness cosigned ", old_size,
                                  " lines of this log, more than the ",
                                  checkpoint->size,
                                  " of its checkpoint now: the log was rolled "
                                  "back or rewritten"));
    }
    absl::StatusOr<std::vector<MerkleHash>> proof =
        ConsistencyProof(old_size, checkpoint->size, tree->Hashes());
    if (!proof.ok()) return fail(2, proof.status().message());
    std::string body = absl::StrCat("old ", old_size, "\n");
    for (const MerkleHash& hash : *proof) {
      absl::StrAppend(&body, Base64Encode(HashBytes(hash)), "\n");
    }
    absl::StrAppend(&body, "\n", *note_text);
    absl::StatusOr<std::pair<long, std::string>> answer = Post(body);
    if (!answer.ok()) return fail(2, answer.status().message());
    const long status = answer->first;
    const std::string& text = answer->second;
    if (status == 200) {
      // Only signature lines are kept, checked for their syntax by parsing
      // the note they make with the checkpoint.
      absl::StatusOr<Note> cosigned = ParseNote(absl::StrCat(*note_text, text));
      if (text.empty() || !cosigned.ok()) {
        return fail(2, "the witness answered 200 without signature lines");
      }
      absl::Status saved = WriteFileAtomically(
          stored_path, absl::StrCat(*note_text, text), 0600);
      if (!saved.ok()) return fail(2, saved.message());
      // Printed as is: ParseNote above allowed no control character but
      // the newlines.
      std::fprintf(out, "cosigned at size %llu by:\n%s",
                   static_cast<unsigned long long>(checkpoint->size),
                   text.c_str());
      return 0;
    }
    if (status == 409 && attempt == 0) {
      uint64_t held = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &held)) {
        return fail(2, "the witness answered 409 without a size");
      }
      if (held == old_size) {
        return fail(
            1, absl::StrCat("the witness holds another checkpoint of ", held,
                            " lines (409): the log forked or was rewritten"));
      }
      old_size = held;
      continue;
    }
    std::string why = absl::StrCat("the witness answered ", status, ": ",
                                   absl::StripAsciiWhitespace(text));
    if (status == 422 || status == 409) {
      return fail(
          1,
          absl::StrCat(why, " (the tree is not consistent with the ", old_size,
                       " lines it cosigned: the history was rewritten)"));
    }
    return fail(status == 403 || status == 404 ? 1 : 2, why);
  }
  return fail(2, "the witness keeps answering 409");
}

}  // namespace garuda
