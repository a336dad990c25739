// Store-then-load ordering between the ranks of a node, paid by the rare
// side. A sender publishes a message and then looks whether the receiver
// sleeps; a sleeper arms its doorbell and then looks for messages. Each
// side's store must be visible before its load (x86 may let a load pass an
// earlier store), or both miss each other and the sleeper sleeps on a
// message. A full fence on both sides costs every message 15-30 ns. Here
// the frequent side (a send, a consumer freeing ring space) only keeps the
// compiler from reordering (Light), and the rare side (a thread about to
// sleep, a producer that found its ring full) asks the kernel to run a
// fence on every CPU running a thread of the node's ranks
// (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), Heavy): after it returns,
// every store the light side made before its load is visible, so the rare
// side's next look sees it, or the light side's load comes later and sees
// the rare side's store.
//
// Every rank registers at MPI_Init (Enable); where the kernel refuses, that
// rank fences fully on both sides. The rare side's barrier reaches every
// rank that did register, registered itself or not.
//
// Owned by: net/shm.
#ifndef MINIMPI_NET_SHM_ASYMMETRIC_FENCE_H_
#define MINIMPI_NET_SHM_ASYMMETRIC_FENCE_H_

#include <atomic>

namespace minimpi::net::shm {

class AsymmetricFence {
 public:
  // Registers this process for expedited global barriers. Idempotent;
  // call before any traffic. Returns whether Light is now only a compiler
  // barrier.
  static bool Enable();
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }

  // The frequent side: between a store and a later load of another rank's
  // line.
  static void Light() {
    if (enabled()) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  // The rare side: a system call, microseconds.
  static void Heavy();

 private:
  static std::atomic<bool> enabled_;
};

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_ASYMMETRIC_FENCE_H_
