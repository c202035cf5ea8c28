// For the network tests: an HTTP origin server on every address of the
// host (INADDR_ANY, a free port) that answers each request with
// "hello from origin" and counts them.
#ifndef GARUDA_TESTS_NETPROXY_ORIGIN_H_
#define GARUDA_TESTS_NETPROXY_ORIGIN_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "lib/base/unique_fd.h"

namespace garuda {
namespace testing {

// Answers each connection with one line naming itself, then closes.
class Origin {
 public:
  Origin();
  ~Origin();
  uint16_t port() const { return port_; }
  int requests() const { return requests_; }

 private:
  UniqueFd fd_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
};

}  // namespace testing
}  // namespace garuda

#endif  // GARUDA_TESTS_NETPROXY_ORIGIN_H_
