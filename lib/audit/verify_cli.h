// The two modes of garuda-audit: verify (read-only) and the reference
// witness.
#ifndef GARUDA_LIB_AUDIT_VERIFY_CLI_H_
#define GARUDA_LIB_AUDIT_VERIFY_CLI_H_

#include <cstdio>
#include <string>

namespace garuda {

struct VerifyCliOptions {
  std::string project;  // empty with !all: the current folder
  bool all = false;
  bool json = false;
  std::string witness_file;
};

// Prints one line per log (or one JSON object per line) to `out` and
// returns the exit status: 0 all ok (a torn tail is ok), 1 a failure found,
// 2 a usage error or input that cannot be read.
int RunVerify(const VerifyCliOptions& options, FILE* out, FILE* err);

// Serves heads on standard input against the store file; exit status 0 at
// end of input, 1 when the store cannot be written, 2 on a usage error.
int RunWitness(const std::string& store, FILE* err);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_VERIFY_CLI_H_
