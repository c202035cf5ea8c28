#include "lib/audit/tree_cli.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/audit/paths.h"
#include "lib/audit/signing_key.h"
#include "lib/audit/tree_store.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"

namespace garuda {
namespace {

int Say(FILE* err, absl::string_view command, const absl::Status& status,
        int code) {
  std::fprintf(err, "garuda-audit %s: %s\n", std::string(command).c_str(),
               MakeMessageVisible(status.message()).c_str());
  return code;
}

absl::StatusOr<TreeReader> OpenTree(const std::string& tree_folder) {
  absl::StatusOr<TreeReader> tree = TreeReader::Open(tree_folder);
  if (absl::IsNotFound(tree.status())) {
    return absl::NotFoundError(absl::StrCat(
        tree_folder,
        " does not exist: the project has no tree yet (it needs "
        "\"audit\": {\"checkpoint\": true, \"signingKey\": PATH} in a policy "
        "file, docs/audit.md)"));
  }
  return tree;
}

int PrintProof(const absl::StatusOr<std::vector<MerkleHash>>& proof,
               absl::string_view command, FILE* out, FILE* err) {
  if (!proof.ok()) return Say(err, command, proof.status(), 2);
  for (const MerkleHash& hash : *proof) {
    std::fprintf(out, "%s\n", Base64Encode(HashBytes(hash)).c_str());
  }
  return 0;
}

absl::Status CheckSize(uint64_t size, const TreeReader& tree) {
  if (size > tree.size()) {
    return absl::OutOfRangeError(absl::StrCat("--size ", size,
                                              " is larger than the tree (",
                                              tree.size(), " leaves)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ProjectTreeFolder(const std::string& project) {
  ASSIGN_OR_RETURN(std::string root, AuditRoot());
  ASSIGN_OR_RETURN(std::string dir, ProjectAuditFolderName(project));
  return TreeFolderOf(JoinPath(root, dir));
}

int RunKeyGenerate(int fd, const std::string& name, const std::string& path,
                   FILE* out, FILE* err) {
  absl::StatusOr<std::string> verifier = WriteNewSigningKey(fd, name, path);
  if (!verifier.ok()) {
    // The half-made file is the person's to remove: we never unlink a path
    // we did not see created whole.
    return Say(err, "key generate", verifier.status(), 2);
  }
  std::fprintf(out, "signing key written to %s (mode 0600)\n%s\n", path.c_str(),
               verifier->c_str());
  return 0;
}

int RunCheckpoint(const std::string& tree_folder, FILE* out, FILE* err) {
  RegularFileOptions options;
  options.max_bytes = kMaxNoteBytes;
  absl::StatusOr<std::string> note =
      ReadRegularFile(JoinPath(tree_folder, "checkpoint"), options);
  if (!note.ok()) return Say(err, "checkpoint", note.status(), 2);
  // Checked for the note's syntax, so that nothing but a note (no escape
  // sequence planted in the file) reaches the terminal.
  absl::StatusOr<Note> parsed = ParseNote(*note);
  if (!parsed.ok()) return Say(err, "checkpoint", parsed.status(), 1);
  std::fwrite(note->data(), 1, note->size(), out);
  return 0;
}

int RunLeaves(const std::string& tree_folder, std::optional<uint64_t> size,
              FILE* out, FILE* err) {
  absl::StatusOr<TreeReader> tree = OpenTree(tree_folder);
  if (!tree.ok()) return Say(err, "leaves", tree.status(), 2);
  const uint64_t count = size.value_or(tree->size());
  if (absl::Status fits = CheckSize(count, *tree); !fits.ok()) {
    return Say(err, "leaves", fits, 2);
  }
  const std::string project_folder = Dirname(tree_folder);
  std::map<uint32_t, LogLineReader> logs;
  for (uint64_t i = 0; i < count; ++i) {
    absl::StatusOr<TreeLeaf> leaf = tree->Leaf(i);
    if (!leaf.ok()) return Say(err, "leaves", leaf.status(), 2);
    auto reader = logs.find(leaf->log);
    if (reader == logs.end()) {
      if (logs.size() >= 16) logs.erase(logs.begin());
      absl::StatusOr<LogLineReader> opened = LogLineReader::Open(JoinPath(
          project_folder, absl::StrCat(tree->logs()[leaf->log], kLogSuffix)));
      if (!opened.ok()) return Say(err, "leaves", opened.status(), 2);
      reader = logs.emplace(leaf->log, std::move(opened).value()).first;
    }
    absl::StatusOr<absl::string_view> line =
        reader->second.LineAt(leaf->offset, leaf->length);
    if (!line.ok()) return Say(err, "leaves", line.status(), 1);
    std::fwrite(line->data(), 1, line->size(), out);
    std::fputc('\n', out);
  }
  return std::fflush(out) == 0 ? 0 : 2;
}

int RunProveInclusion(const std::string& tree_folder, uint64_t index,
                      uint64_t size, FILE* out, FILE* err) {
  absl::StatusOr<TreeReader> tree = OpenTree(tree_folder);
  if (!tree.ok()) return Say(err, "prove inclusion", tree.status(), 2);
  if (absl::Status fits = CheckSize(size, *tree); !fits.ok()) {
    return Say(err, "prove inclusion", fits, 2);
  }
  return PrintProof(InclusionProof(index, size, tree->Hashes()),
                    "prove inclusion", out, err);
}

int RunProveConsistency(const std::string& tree_folder, uint64_t old_size,
                        uint64_t size, FILE* out, FILE* err) {
  absl::StatusOr<TreeReader> tree = OpenTree(tree_folder);
  if (!tree.ok()) return Say(err, "prove consistency", tree.status(), 2);
  if (absl::Status fits = CheckSize(size, *tree); !fits.ok()) {
    return Say(err, "prove consistency", fits, 2);
  }
  return PrintProof(ConsistencyProof(old_size, size, tree->Hashes()),
                    "prove consistency", out, err);
}

std::vector<std::string> RepeatedFlagValues(int argc, char** argv,
                                            const std::string& flag) {
  // lib/base/flags.h takes dashes and underscores alike.
  const auto same = [](absl::string_view a, absl::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      char x = a[i] == '_' ? '-' : a[i], y = b[i] == '_' ? '-' : b[i];
      if (x != y) return false;
    }
    return true;
  };
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) {
      continue;
    }
    size_t equals = arg.find('=');
    if (equals != absl::string_view::npos) {
      if (same(arg.substr(0, equals), flag)) {
        values.emplace_back(arg.substr(equals + 1));
      }
    } else if (same(arg, flag) && i + 1 < argc) {
      values.emplace_back(argv[++i]);
    }
  }
  return values;
}

}  // namespace garuda
