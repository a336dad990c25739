#include "mpi/vci/vci_lock.h"

#include <sched.h>

#include <atomic>

namespace minimpi::vci {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

void VciLock::LockContended() {
  // About a microsecond of spinning covers any hold by a running thread
  // (the work under the lock is short). Longer means the holder lost its
  // core, and yielding is what gives it back.
  constexpr int kSpinsBeforeYield = 256;
  int spins = 0;
  for (;;) {
    while (held_.load(std::memory_order_relaxed)) {
      if (++spins < kSpinsBeforeYield) {
        CpuRelax();
      } else {
        sched_yield();
      }
    }
    if (!held_.exchange(true, std::memory_order_acquire)) return;
  }
}

}  // namespace minimpi::vci
