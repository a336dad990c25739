#include "net/shm/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace minimpi::net::shm {
namespace {

long Membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

}  // namespace

std::atomic<bool> AsymmetricFence::enabled_{false};

bool AsymmetricFence::Enable() {
  if (enabled()) return true;
  const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0 ||
      Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) {
    return false;
  }
  enabled_.store(true, std::memory_order_relaxed);
  return true;
}

void AsymmetricFence::Heavy() {
  // Our own store first: the kernel's barrier on our CPU does not order
  // what we did before the call from what we do after it on every kernel.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Needs no registration of the caller: it reaches the ranks that did
  // register (and fence lightly); those that could not fence fully. Where
  // the kernel lacks the command, nobody registered.
  Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

}  // namespace minimpi::net::shm
