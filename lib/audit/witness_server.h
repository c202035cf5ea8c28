// A C2SP tlog-witness (c2sp.org/tlog-witness): `garuda-audit witness
// serve`. It cosigns a log's checkpoint (cosignature/v1) only when it is
// consistent with the last one it cosigned for that origin, keeps that
// state in files saved atomically before it answers, and serializes the
// requests of one origin across threads and processes.
#ifndef GARUDA_LIB_AUDIT_WITNESS_SERVER_H_
#define GARUDA_LIB_AUDIT_WITNESS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/audit/http_request.h"
#include "lib/base/unique_fd.h"
#include "lib/crypto/note.h"

namespace garuda {

struct WitnessAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class Witness {
 public:
  // `state_folder` must exist; the witness writes only there.
  Witness(std::shared_ptr<const NoteSigner> key, std::vector<NoteVerifier> logs,
          std::string state_folder, std::function<uint64_t()> clock);

  // The body of POST /add-checkpoint, answered as the spec says: 200 with
  // the cosignature line, 409 (with the size held, text/x.tlog.size), 422,
  // 403, 404, 400; 500 when the state cannot be saved.
  WitnessAnswer AddCheckpoint(absl::string_view body) const;

  // The cosigner's verifier key (type 0x04), for the logs' verify.
  std::string CosignerKey() const;

 private:
  std::shared_ptr<const NoteSigner> key_;
  std::vector<NoteVerifier> logs_;
  std::string state_folder_;
  std::function<uint64_t()> clock_;
};

// A listening TCP socket on HOST:PORT (a numeric address; port 0 picks
// one). The port it got is in *port.
absl::StatusOr<UniqueFd> ListenOn(const std::string& host_port, int* port);

// `witness serve` opened: the key read, the state folder made, the socket
// bound, the port written to `port_file` (when given). All before the
// lockdown.
struct WitnessServeOptions {
  std::string listen, port_file, key_file, state_folder;
  std::vector<std::string> log_keys;
};
struct OpenedWitness {
  UniqueFd listener;
  int port = 0;
  std::unique_ptr<Witness> witness;
};
absl::StatusOr<OpenedWitness> OpenWitness(const WitnessServeOptions& options);

// Accepts connections on `listener` until `stop` (tests) and answers each
// request: POST /add-checkpoint to `witness`, anything else 404 or 405.
// One thread per connection, at most `max_connections` at once (more are
// answered 503 and closed). Bad input ends that connection, never the
// server.
void ServeWitnessHttp(int listener, const Witness& witness,
                      const HttpLimits& limits, int max_connections,
                      const std::atomic<bool>* stop = nullptr);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_WITNESS_SERVER_H_
