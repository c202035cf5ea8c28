#include "lib/audit/tree_verify.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_store.h"
#include "lib/audit/verify.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
// Logs kept open at once while the leaves are walked (sessions that wrote
// at the same time interleave their lines; more than this is rare, and
// only costs reopening).
constexpr size_t kOpenLogs = 16;

RegularFileOptions NoteFileOptions() {
  RegularFileOptions options;
  options.max_bytes = kMaxNoteBytes;
  return options;
}

// A file read front to back in chunks, handing out `n` bytes at a time.
class SequentialReader {
 public:
  SequentialReader(int fd, uint64_t total) : fd_(fd), left_(total) {}
  absl::StatusOr<const char*> Take(size_t n) {
    if (buffer_.size() - pos_ < n) {
      buffer_.erase(0, pos_);
      pos_ = 0;
      size_t want = static_cast<size_t>(std::min<uint64_t>(left_, kChunkBytes));
      if (buffer_.size() + want < n) {
        return absl::DataLossError("tree/entries ends inside an entry");
      }
      size_t old = buffer_.size();
      buffer_.resize(old + want);
      size_t done = 0;
      while (done < want) {
        ssize_t got = ::pread(fd_, buffer_.data() + old + done, want - done,
                              static_cast<off_t>(offset_ + done));
        if (got <= 0) {
          return absl::DataLossError("tree/entries shrank while it was read");
        }
        done += static_cast<size_t>(got);
      }
      offset_ += want;
      left_ -= want;
    }
    const char* at = buffer_.data() + pos_;
    pos_ += n;
    return at;
  }

 private:
  int fd_;
  uint64_t left_;
  uint64_t offset_ = 0;
  std::string buffer_;
  size_t pos_ = 0;
};

uint64_t BigEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value = value << 8 | static_cast<uint8_t>(data[i]);
  return value;
}

struct SignedCheckpoint {
  std::string source;  // for messages
  Checkpoint checkpoint;
  std::string witness;  // the cosigner's name, for a witness's checkpoint
};

audit::LogReport Report(const TreeVerifyOptions& options, const char* status,
                        std::string message, uint64_t lines) {
  audit::LogReport report;
  report.set_dir(options.dir);
  report.set_log(kTreeReportName);
  report.set_status(status);
  report.set_message(std::move(message));
  report.set_lines(lines);
  report.set_checkpoint(true);
  return report;
}

std::string RootText(const MerkleHash& root) {
  return Base64Encode(HashBytes(root));
}

}  // namespace

std::optional<audit::LogReport> VerifyTree(const TreeVerifyOptions& options) {
  const std::string tree_folder = TreeFolderOf(options.project_folder);
  absl::StatusOr<TreeReader> tree = TreeReader::Open(tree_folder);
  if (absl::IsNotFound(tree.status())) {
    if (!options.log_key) return std::nullopt;
    // A key given means a tree is expected: one removed whole is a finding.
    return Report(options, "deleted",
                  "the project has no tree/ although --log-key was given: "
                  "the tree was removed",
                  0);
  }
  if (!tree.ok()) {
    return Report(options, "unreadable", std::string(tree.status().message()),
                  0);
  }
  const uint64_t size = tree->size();

  // 1. The log's key and its signed checkpoint.
  std::optional<NoteVerifier> key = options.log_key;
  std::string key_source = "the key given";
  if (!key) {
    key_source =
        "the key in tree/key (beside the logs: give --log-key for "
        "a copy you keep elsewhere)";
    absl::StatusOr<std::string> text =
        ReadRegularFile(JoinPath(tree_folder, "key"), NoteFileOptions());
    absl::StatusOr<NoteVerifier> parsed =
        text.ok() ? ParseNoteVerifier(absl::StripTrailingAsciiWhitespace(*text))
                  : absl::StatusOr<NoteVerifier>(text.status());
    if (!parsed.ok()) {
      return Report(
          options, kStatusBadSignature,
          absl::StrCat("no usable verifier key in tree/key (",
                       parsed.status().message(), "); give one with --log-key"),
          size);
    }
    key = *parsed;
  }
  const std::string origin = absl::StrCat(key->name, "/", options.dir);
  const auto open_checkpoint = [&](const std::string& path)
      -> absl::StatusOr<std::pair<Note, Checkpoint>> {
    ASSIGN_OR_RETURN(std::string text,
                     ReadRegularFile(path, NoteFileOptions()));
    ASSIGN_OR_RETURN(Note note, ParseNote(text));
    ASSIGN_OR_RETURN(Checkpoint checkpoint, ParseCheckpoint(note.text));
    absl::Status signature = VerifyNoteSignature(note, *key);
    if (!signature.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          signature.message(), " (checked with ", key_source, ")"));
    }
    if (checkpoint.origin != origin) {
      return absl::PermissionDeniedError(
          absl::StrCat("its origin is \"", checkpoint.origin,
                       "\", not this project's \"", origin, "\""));
    }
    return std::make_pair(std::move(note), std::move(checkpoint));
  };
  std::vector<SignedCheckpoint> checkpoints;
  {
    const std::string path = JoinPath(tree_folder, "checkpoint");
    absl::StatusOr<std::pair<Note, Checkpoint>> opened = open_checkpoint(path);
    if (absl::IsNotFound(opened.status())) {
      return Report(options, "deleted",
                    "the signed checkpoint tree/checkpoint is missing", size);
    }
    if (!opened.ok()) {
      return Report(
          options, kStatusBadSignature,
          absl::StrCat("tree/checkpoint: ", opened.status().message()), size);
    }
    checkpoints.push_back({"the signed checkpoint", opened->second, ""});
  }

  // 2. The checkpoints witnesses cosigned (tree/witness/*).
  std::set<std::string> witnessed_by;
  {
    const std::string folder = JoinPath(tree_folder, "witness");
    std::vector<std::string> files;
    if (DIR* dir = ::opendir(folder.c_str())) {
      while (struct dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] != '.') files.emplace_back(entry->d_name);
      }
      ::closedir(dir);
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      absl::StatusOr<std::pair<Note, Checkpoint>> opened =
          open_checkpoint(JoinPath(folder, file));
      if (!opened.ok()) {
        return Report(options, kStatusBadSignature,
                      absl::StrCat("tree/witness/", file, ": ",
                                   opened.status().message()),
                      size);
      }
      for (const NoteVerifier& witness : options.witness_keys) {
        absl::StatusOr<uint64_t> time =
            VerifyCosignature(opened->first, witness);
        if (absl::IsNotFound(time.status())) continue;
        if (!time.ok()) {
          return Report(options, kStatusBadSignature,
                        absl::StrCat("tree/witness/", file, ": ",
                                     time.status().message()),
                        size);
        }
        witnessed_by.insert(witness.name);
        checkpoints.push_back(
            {absl::StrCat("the checkpoint witness ", witness.name, " cosigned"),
             opened->second, witness.name});
      }
    }
  }
  for (const SignedCheckpoint& signed_checkpoint : checkpoints) {
    if (signed_checkpoint.checkpoint.size > size) {
      return Report(
          options, "cut",
          absl::StrCat(signed_checkpoint.source, " covers ",
                       signed_checkpoint.checkpoint.size,
                       " lines, the tree holds only ", size,
                       ": lines were cut or the tree was rolled back"),
          size);
    }
  }

  // 3. The tree against the lines, leaf by leaf, and the roots at the
  //    checkpoints' sizes.
  //    Entries past both tree/durable and every checkpoint were written
  //    without a sync (docs/audit.md, "Durability of the tree"): a mismatch
  //    there is what a power failure leaves, which the next auditor
  //    rebuilds from the logs, not a finding.
  std::map<uint64_t, MerkleHash> roots;
  for (const SignedCheckpoint& c : checkpoints) roots[c.checkpoint.size] = {};
  std::optional<TreeDurableMark> durable;
  {
    RegularFileOptions mark_options;
    mark_options.max_bytes = 128;
    absl::StatusOr<std::string> text =
        ReadRegularFile(JoinPath(tree_folder, "durable"), mark_options);
    if (text.ok()) durable = ParseTreeDurableMark(*text);
    if (durable && durable->size > size) durable.reset();
    if (durable) roots[durable->size] = {};
  }
  uint64_t signed_size = 0;
  for (const SignedCheckpoint& c : checkpoints) {
    signed_size = std::max(signed_size, c.checkpoint.size);
  }
  if (roots.count(0)) roots[0] = MerkleEmptyTreeHash();
  std::optional<audit::LogReport> mismatch;
  uint64_t mismatch_at = 0;
  const auto found = [&](uint64_t i, const char* status, std::string message) {
    mismatch = Report(options, status, std::move(message), size);
    mismatch_at = i;
  };
  SequentialReader entries(tree->entries_fd(), TreeEntryOffset(size));
  std::map<uint32_t, LogLineReader> open_logs;
  std::vector<uint64_t> next_offset(tree->logs().size(), 0);
  MerkleEdge edge;
  std::vector<MerkleHash> stored;
  for (uint64_t i = 0; i < size; ++i) {
    absl::StatusOr<const char*> record = entries.Take(kTreeLeafRecordBytes);
    if (!record.ok()) {
      return Report(options, "unreadable",
                    std::string(record.status().message()), size);
    }
    const uint32_t log = static_cast<uint32_t>(BigEndian(*record, 4));
    const uint32_t length = static_cast<uint32_t>(BigEndian(*record + 4, 4));
    const uint64_t offset = BigEndian(*record + 8, 8);
    if (log >= tree->logs().size()) {
      found(i, kStatusTreeMismatch,
            absl::StrCat("leaf ", i, " names log number ", log,
                         ", which tree/logs does not list"));
      break;
    }
    const std::string& log_name = tree->logs()[log];
    if (offset != next_offset[log]) {
      found(i, kStatusTreeMismatch,
            absl::StrCat("leaf ", i, " is the line at byte ", offset, " of ",
                         log_name,
                         ", but the tree's previous "
                         "line of that log ends at byte ",
                         next_offset[log]));
      break;
    }
    next_offset[log] = offset + length + 1;
    auto reader = open_logs.find(log);
    if (reader == open_logs.end()) {
      if (open_logs.size() >= kOpenLogs) open_logs.erase(open_logs.begin());
      const std::string path =
          JoinPath(options.project_folder, absl::StrCat(log_name, kLogSuffix));
      absl::StatusOr<LogLineReader> opened = LogLineReader::Open(path);
      if (!opened.ok()) {
        return Report(
            options,
            absl::IsNotFound(opened.status()) ? "deleted" : "unreadable",
            absl::StrCat("leaf ", i, ": ", opened.status().message()), size);
      }
      reader = open_logs.emplace(log, std::move(opened).value()).first;
    }
    absl::StatusOr<absl::string_view> line =
        reader->second.LineAt(offset, length);
    if (!line.ok()) {
      found(i,
            offset + length + 1 > reader->second.file_size()
                ? "cut"
                : kStatusTreeMismatch,
            absl::StrCat("leaf ", i, ": ", line.status().message()));
      break;
    }
    stored.clear();
    edge.Append(MerkleLeafHash(*line), &stored);
    for (size_t k = 0; k < stored.size(); ++k) {
      absl::StatusOr<const char*> hash = entries.Take(32);
      if (!hash.ok()) {
        return Report(options, "unreadable",
                      std::string(hash.status().message()), size);
      }
      if (std::memcmp(*hash, stored[k].data(), 32) != 0) {
        found(i, kStatusTreeMismatch,
              k == 0
                  ? absl::StrCat("leaf ", i, " (", log_name, " byte ", offset,
                                 ") is not the line the tree took in: the "
                                 "line was changed after it was written")
                  : absl::StrCat("the stored hashes of tree/entries are "
                                 "not those of the lines, after leaf ",
                                 i));
        break;
      }
    }
    if (mismatch) break;
    auto wanted = roots.find(edge.size());
    if (wanted != roots.end()) wanted->second = edge.Root();
  }

  // A torn tail needs a tree/durable whose root the walk confirmed.
  const bool torn_tail = mismatch && durable && mismatch_at >= durable->size &&
                         mismatch_at >= signed_size &&
                         roots[durable->size] == durable->root;
  if (mismatch && !torn_tail) return *mismatch;

  // 4. Every signed or cosigned checkpoint against the lines.
  for (const SignedCheckpoint& c : checkpoints) {
    const MerkleHash& root = roots[c.checkpoint.size];
    if (root != c.checkpoint.root) {
      return Report(
          options, kStatusRewritten,
          absl::StrCat(c.source, " says the first ", c.checkpoint.size,
                       " lines have the root ", RootText(c.checkpoint.root),
                       "; the lines now give ", RootText(root),
                       ": the history was rewritten"),
          size);
    }
  }
  for (const NoteVerifier& witness : options.witness_keys) {
    if (witnessed_by.count(witness.name) == 0) {
      return Report(options, kStatusNotWitnessed,
                    absl::StrCat("no checkpoint cosigned by ", witness.name,
                                 " in tree/witness (run garuda-audit witness "
                                 "submit)"),
                    size);
    }
  }
  std::string message =
      absl::StrCat(size, " lines in the tree; checkpoint of ",
                   checkpoints[0].checkpoint.size, " lines signed by ",
                   key->name, options.log_key ? "" : " (key from tree/key)");
  if (checkpoints.size() > 1) {
    absl::StrAppend(&message, "; ", checkpoints.size() - 1,
                    " cosigned checkpoint(s) agree");
  }
  if (torn_tail) {
    absl::StrAppend(&message, "; from leaf ", mismatch_at,
                    " on (past tree/durable and every checkpoint) the entries "
                    "were torn by a crash (",
                    mismatch->message(),
                    "): the next auditor of the project rebuilds them from "
                    "the logs");
    return Report(options, kStatusTornTail, std::move(message), size);
  }
  return Report(options, "ok", std::move(message), size);
}

}  // namespace garuda
