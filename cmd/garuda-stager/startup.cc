// The first things garuda-stager runs: they make the memory that the
// start-up is going to write present in a few system calls instead of one
// page fault per page.
//
// garuda-stager starts once per command. In the VMs that Garuda runs in, a
// page fault costs 15 to 40 us (the fault's round trip through the
// hypervisor), while MADV_POPULATE_WRITE makes a page present for 1 to 3 us;
// the start-up wrote some 100 pages of its writable segment, heap and stack
// one fault at a time (docs/sandbox.md, "Start-up of garuda-stager").
// Nothing here changes what the program does: the pages would have been
// written anyway, and on a kernel older than 5.14 (no MADV_POPULATE_WRITE)
// madvise fails and the pages fault in as before.
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "absl/synchronization/mutex.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// The program's own ELF header, where its first segment is loaded (GNU ld
// defines it; hidden, so it is reached relative to the code, without a
// relocation).
extern "C" const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

namespace {

// The heap that `garuda-stager run` writes: about 170 KiB.
constexpr size_t kHeapBytes = 256 * 1024;
// The stack below main()'s frame that the run writes (about 32 KiB).
constexpr size_t kStackBytes = 48 * 1024;
constexpr uintptr_t kPage = 4096;

inline uintptr_t PageDown(uintptr_t address) { return address & ~(kPage - 1); }
inline uintptr_t PageUp(uintptr_t address) {
  return PageDown(address + kPage - 1);
}

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
  // The heap: the C library has made it before this runs (the thread
  // block of a static program comes from it), so it is made as large as
  // the run needs by one allocation (the mmap threshold raised for that
  // one, and the trim threshold so that it stays after the free) ...
  ::mallopt(M_TRIM_THRESHOLD, 4 * kHeapBytes);
  ::mallopt(M_MMAP_THRESHOLD, 4 * kHeapBytes);
  void* block = ::malloc(kHeapBytes);
  asm volatile("" : : "r"(block) : "memory");  // not optimised away
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);     // the default
  // ... and its first kHeapBytes are made present in one call.
  uintptr_t end = reinterpret_cast<uintptr_t>(::sbrk(0));
  uintptr_t start = end - ::mallinfo2().arena;
  Populate(start, std::min(end, start + kHeapBytes));
  ::free(block);
  // The stack: its mapping already spans 132 KiB below the program's
  // arguments, so the pages just below this frame are inside it.
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  Populate(here - kStackBytes, here - kPage);
}

// .preinit_array: run before every .init_array constructor (protobuf's
// registrations, Abseil's flags), once the C library is ready.
__attribute__((section(".preinit_array"),
               used)) void (*const kPrepareStart)(int, char**,
                                                  char**) = PrepareStart;

}  // namespace

#if defined(__x86_64__)

// Called from the entry point below, before the C library starts and before
// the program relocates itself (a static PIE applies its own relative
// relocations): makes the writable segment (the relocated data, .data,
// .bss) present in one call. Those relocations write into 24 pages of
// read-only-after-relocation data, and each first write was a
// copy-on-write fault of the file's page. Nothing here may use a
// relocated address, the thread pointer (errno, the stack protector) or
// the C library: the ELF header is reached relative to the code, and
// madvise is a bare system call whose result is ignored.
extern "C" __attribute__((used, visibility("hidden"), no_stack_protector,
                          noinline)) void
GarudaPrefaultImage() {
  const ElfW(Ehdr)* header = &__ehdr_start;
  // A PIE's first segment (the one holding the ELF header) is linked at 0.
  uintptr_t base = reinterpret_cast<uintptr_t>(header);
  const ElfW(Phdr)* segments =
      reinterpret_cast<const ElfW(Phdr)*>(base + header->e_phoff);
  for (int i = 0; i < header->e_phnum; ++i) {
    const ElfW(Phdr)& segment = segments[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_W)) continue;
    uintptr_t start = PageDown(base + segment.p_vaddr);
    uintptr_t end = PageUp(base + segment.p_vaddr + segment.p_memsz);
    long result;
    asm volatile("syscall"
                 : "=a"(result)
                 : "a"(SYS_madvise), "D"(start), "S"(end - start),
                   "d"(MADV_POPULATE_WRITE)
                 : "rcx", "r11", "memory");
    (void)result;
  }
}

// The program's entry point (-Wl,-e,garuda_start in BUILD.bazel): calls
// GarudaPrefaultImage on an aligned stack, then hands the untouched
// process state (the stack pointer at argc, %rdx) to the C library's
// _start. %r12 and %r13 survive the call (callee-saved).
asm(R"(
  .text
  .globl garuda_start
  .type garuda_start, @function
garuda_start:
  endbr64
  mov %rsp, %r12
  mov %rdx, %r13
  and $-16, %rsp
  call GarudaPrefaultImage
  mov %r12, %rsp
  mov %r13, %rdx
  jmp _start
  .size garuda_start, .-garuda_start
)");

#else

// Elsewhere the entry point is the C library's own.
asm(R"(
  .text
  .globl garuda_start
  .type garuda_start, %function
garuda_start:
  b _start
  .size garuda_start, .-garuda_start
)");

#endif
