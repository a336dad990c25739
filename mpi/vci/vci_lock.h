// The lock of one VCI. Every message takes it at least twice (the call that
// posts, the progress that completes), so its uncontended cost is part of
// the message rate: taking it is one atomic exchange, inline, and releasing
// it one plain store. A std::mutex costs two calls into the C library and a
// second atomic instruction on release (it must look for sleepers), about
// 110 instructions per 8-byte message in all (callgrind).
//
// That is possible because of how the VCI lock is held: only for short,
// bounded work, and never while waiting for a peer (a waiting thread
// progresses with try_lock and waits outside the lock: mpi/vci/waiting.cc).
// So a thread that finds it taken spins for a while and then yields its
// core to whoever holds it; it never sleeps in the kernel, and nobody has
// to wake it.
//
// Meets the standard's Lockable requirements, so std::lock_guard and
// std::unique_lock work with it. ThreadSanitizer sees its acquire and
// release like any other atomic's.
#ifndef MINIMPI_MPI_VCI_VCI_LOCK_H_
#define MINIMPI_MPI_VCI_VCI_LOCK_H_

#include <atomic>

namespace minimpi::vci {

class VciLock {
 public:
  VciLock() = default;
  VciLock(const VciLock&) = delete;
  VciLock& operator=(const VciLock&) = delete;

  void lock() {
    if (!held_.exchange(true, std::memory_order_acquire)) [[likely]] {
      return;
    }
    LockContended();
  }
  // Looks before it writes: a waiter polling a busy VCI does not pull the
  // holder's line away from it.
  bool try_lock() {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  // Spins on loads until the lock looks free, yielding the core after a
  // while (its holder may be waiting for it), then tries again.
  void LockContended();

  std::atomic<bool> held_{false};
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_VCI_LOCK_H_
