// `garuda-audit witness submit`: sends the project's latest signed
// checkpoint to a C2SP witness with the consistency proof from the size
// that witness last cosigned, and keeps its cosignatures beside the tree
// (tree/witness/<hash of the URL>).
#ifndef GARUDA_LIB_AUDIT_WITNESS_SUBMIT_H_
#define GARUDA_LIB_AUDIT_WITNESS_SUBMIT_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace garuda {

// What the submit needs, prepared before the lockdown: the URL checked,
// curl ready, the folder for the cosignatures made.
class WitnessSubmit {
 public:
  static absl::StatusOr<std::unique_ptr<WitnessSubmit>> Prepare(
      const std::string& url, const std::string& tree_folder);
  ~WitnessSubmit();

  // The port to connect to, for the lockdown.
  int port() const { return port_; }
  // The folder the cosignatures go to, for the lockdown.
  std::string witness_folder() const;

  // Exit status: 0 cosigned and stored, 1 the witness refused (a rewritten
  // or rolled-back history shows here), 2 an error.
  int Run(FILE* out, FILE* err);

 private:
  WitnessSubmit() = default;
  absl::StatusOr<std::pair<long, std::string>> Post(const std::string& body);

  std::string url_, tree_folder_;
  int port_ = 0;
  void* curl_ = nullptr;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_WITNESS_SUBMIT_H_
