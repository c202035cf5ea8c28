// The two modes of garuda-audit: verify (read-only) and the reference
// witness.
#ifndef GARUDA_LIB_AUDIT_VERIFY_CLI_H_
#define GARUDA_LIB_AUDIT_VERIFY_CLI_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "lib/audit/witness.h"

namespace garuda {

struct VerifyCliOptions {
  std::string project;  // empty with !all: the current folder
  bool all = false;
  bool json = false;
  std::string witness_file;
  // The tree: the log's verifier key (empty: tree/key) and witnesses'
  // cosigner keys, as text (<name>+<key id>+<base64>).
  std::string log_key;
  std::vector<std::string> witness_keys;
  // Tests only (GARUDA_TEST_ONLY_VERIFY_PAUSE_FD): after the first read of
  // each log, its path and a newline are written here and one byte is read
  // before verify goes on, so a test can cut the log mid-read.
  int pause_fd = -1;
};

// Prints one line per log (or one JSON object per line) to `out` and
// returns the exit status: 0 all ok (a torn tail is ok), 1 a failure found,
// 2 a usage error or input that cannot be read.
int RunVerify(const VerifyCliOptions& options, FILE* out, FILE* err);

// The witness store at `path` (created when missing), or the reason on `err`.
std::optional<WitnessStore> OpenWitnessStoreOrSay(const std::string& path,
                                                  FILE* err);

// Serves heads on standard input against the store; exit status 0 at end of
// input, 1 when the store cannot be written.
int RunWitness(WitnessStore& store, FILE* err);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_VERIFY_CLI_H_
