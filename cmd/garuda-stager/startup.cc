// The first thing garuda-stager runs, before any static constructor: it
// makes the memory that the start-up is going to write present in a few
// system calls instead of one page fault per page.
//
// garuda-stager starts once per command. In the VMs that Garuda runs in, a
// page fault costs 15 to 40 us (the fault's round trip through the
// hypervisor), while MADV_POPULATE_WRITE makes a page present for about
// 1.5 us; the start-up wrote some 60 pages of heap, stack and .bss one fault
// at a time (docs/sandbox.md, "Start-up of garuda-stager"). Nothing here
// changes what the program does: the pages would have been written anyway,
// and on a kernel older than 5.14 (no MADV_POPULATE_WRITE) madvise fails
// and the pages fault in as before.
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "absl/synchronization/mutex.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

extern "C" char __bss_start[];
extern "C" char _end[];

namespace {

// The heap that `garuda-stager run` grows to (about 170 KiB written, of a
// 260 KiB heap), with room to spare.
constexpr size_t kHeapBytes = 256 * 1024;
// The stack below main()'s frame that the run writes (about 32 KiB).
constexpr size_t kStackBytes = 48 * 1024;
constexpr uintptr_t kPage = 4096;

uintptr_t PageDown(uintptr_t address) { return address & ~(kPage - 1); }
uintptr_t PageUp(uintptr_t address) { return PageDown(address + kPage - 1); }

void Populate(uintptr_t start, uintptr_t end) {
  start = PageDown(start);
  end = PageUp(end);
  if (end > start) {
    (void)::madvise(reinterpret_cast<void*>(start), end - start,
                    MADV_POPULATE_WRITE);
  }
}

void PrepareStart(int, char**, char**) {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex records its
  // lock order in a graph to detect deadlocks (three 64 KiB arenas and
  // their faults at every start); a release build does not.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // The heap's first extension (sbrk) takes kHeapBytes at once ...
  ::mallopt(M_TOP_PAD, kHeapBytes);
  void* first = ::malloc(1);
  // ... and all of it is made present in one call.
  Populate(reinterpret_cast<uintptr_t>(first),
           reinterpret_cast<uintptr_t>(::sbrk(0)));
  ::free(first);
  // The stack: its mapping already spans 132 KiB below the program's
  // arguments, so the pages just below this frame are inside it.
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  Populate(here - kStackBytes, here - kPage);
  // Zero-initialised globals (.bss), written by the static constructors.
  Populate(reinterpret_cast<uintptr_t>(__bss_start),
           reinterpret_cast<uintptr_t>(_end));
}

// .preinit_array: run by the dynamic loader before every .init_array
// constructor (protobuf's registrations, Abseil's flags), once the C
// library is ready. Only an executable has one.
__attribute__((section(".preinit_array"),
               used)) void (*const kPrepareStart)(int, char**,
                                                  char**) = PrepareStart;

}  // namespace
