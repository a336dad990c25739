// The state a kind of traffic keeps for each VCI (point-to-point's matching
// engine, partitioned communication's deferred writes, one-sided's refused
// operations): one State per VCI, each on cache lines of its own, indexed
// by the VCI's number. Every kind names its state `VciState` and holds it
// in a member `vci_states_`.
//
// The states live in one array made with the kind (capacity() slots), so
// reaching a VCI's state is an index, no pointer to follow: the Pready and
// small-message paths pay nothing for it. A state is made either with the
// rest (MakeAll, for state that needs nothing from the VCI) or when its VCI
// is (Make, from TrafficHandler::AttachVci: endpoints' VCIs come and their
// states with them).
//
// Threads: a state is guarded by its VCI's lock, as everything named by
// the VCI is. Making one is published with a release, and the VciSet
// publishes a VCI only after every kind has made its state for it (or,
// for the VCIs made before a kind registers, before any traffic flows), so
// whoever reaches the VCI through the VciSet (a communicator, a request,
// a completion) sees its states whole: operator[] needs no load of its
// own. Find, for an index nobody vouches for (a handle's bits, an MPI_T
// index), checks with one acquire load.
//
// Owned by: mpi/vci. Used by: the kinds of traffic (mpi/p2p, mpi/part,
// mpi/rma).
#ifndef MINIMPI_MPI_VCI_PER_VCI_H_
#define MINIMPI_MPI_VCI_PER_VCI_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace minimpi::vci {

// A cache line: states of different VCIs, locked by different threads,
// never share one.
inline constexpr size_t kVciStateAlignment = 64;

template <typename State>
class PerVci {
 public:
  // Room for `capacity` states (VciSet::capacity()); none made yet.
  explicit PerVci(int capacity)
      : capacity_(capacity), slots_(new Slot[capacity]) {}
  PerVci(const PerVci&) = delete;
  PerVci& operator=(const PerVci&) = delete;
  // Destroys the states made.
  ~PerVci() {
    for (int v = 0; v < capacity_; ++v) {
      if (slots_[v].made.load(std::memory_order_acquire)) {
        slots_[v].state.~State();
      }
    }
  }

  // Makes `vci`'s state from `arguments`, once, before the VCI is
  // published (TrafficHandler::AttachVci). Different VCIs' states may be
  // made by different threads at once.
  template <typename... Arguments>
  State& Make(int vci, Arguments&&... arguments) {
    Slot& slot = slots_[vci];
    new (&slot.state) State(std::forward<Arguments>(arguments)...);
    slot.made.store(true, std::memory_order_release);
    return slot.state;
  }
  // Makes every VCI's state, default-constructed (at the kind's setup).
  void MakeAll() {
    for (int v = 0; v < capacity_; ++v) Make(v);
  }

  // The state of a VCI that exists (every VCI a request, communicator or
  // completion names does). The states are not part of the PerVci's
  // constness, as an array's elements are not part of a unique_ptr's.
  State& operator[](int vci) const { return slots_[vci].state; }
  // The state at an index from an untrusted source, or nullptr when it is
  // out of range or not made (yet). Any thread, lock-free.
  State* Find(uint32_t vci) const {
    if (vci >= static_cast<uint32_t>(capacity_)) return nullptr;
    Slot& slot = slots_[vci];
    return slot.made.load(std::memory_order_acquire) ? &slot.state : nullptr;
  }
  int capacity() const { return capacity_; }

 private:
  // The state first, so operator[] is the array's address plus an index;
  // the flag behind it is read only by Find and the destructor.
  struct alignas(kVciStateAlignment) Slot {
    Slot() {}   // the state is made by Make
    ~Slot() {}  // and destroyed by ~PerVci
    union {
      State state;
    };
    std::atomic<bool> made{false};
  };

  const int capacity_;
  const std::unique_ptr<Slot[]> slots_;
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_PER_VCI_H_
