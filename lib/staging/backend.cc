#include "lib/staging/backend.h"

#include <memory>
#include <string>

namespace garuda {

std::unique_ptr<StagingBackend> MakeStagingBackend(const std::string& kind,
                                                   const std::string& project,
                                                   const std::string& folder) {
  if (kind == "overlay") return MakeOverlayBackend(project, folder);
  if (kind == "copy") return MakeCopyBackend(project, folder);
  return nullptr;
}

}  // namespace garuda
