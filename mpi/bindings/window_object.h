// What a window handle names in the bindings: the engine's window
// (mpi/rma), the private communicator its collectives run on, and what the
// program attaches to it (name, error handler, attributes, info), plus the
// epochs it has opened, which the operations' checks read.
//
// Owned by: mpi/bindings (windows.cc, one_sided.cc).
#ifndef MINIMPI_MPI_BINDINGS_WINDOW_OBJECT_H_
#define MINIMPI_MPI_BINDINGS_WINDOW_OBJECT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/objects/attributes.h"
#include "mpi/objects/comm.h"
#include "mpi/objects/errhandler.h"
#include "mpi/objects/handle_table.h"
#include "mpi/instance/instance.h"
#include "mpi/mpi.h"
#include "mpi/rma/one_sided.h"

namespace minimpi {

// Where a window stands after its fences, at this member.
enum class FenceState : uint8_t {
  kNone,      // no fence yet, the last asserted MPI_MODE_NOSUCCEED, or
              // another kind of epoch has been opened since
  kReady,     // fenced: an RMA call would open an access epoch
  kAccessed,  // fenced, and RMA calls followed: an access epoch is open
};

struct WindowObject {
  rma::Window* window = nullptr;
  Communicator* comm = nullptr;  // private duplicate, published
  MPI_Win handle = MPI_WIN_NULL;
  int create_flavor = MPI_WIN_FLAVOR_CREATE;
  // MPI_Win_allocate's and _allocate_shared's memory (freed with the window).
  void* allocated = nullptr;
  size_t allocated_length = 0;
  bool shared_mapping = false;  // `allocated` is a mapping of a segment
  // Shared windows: every member's base and size, for MPI_Win_shared_query.
  std::vector<uint64_t> shared_bases;
  std::vector<uint64_t> shared_sizes;
  std::vector<int> disp_units;
  // The world ranks of the members sharing this process's segment (all of
  // a shared window's; a node's for MPI_Win_allocate), in the order of
  // shared_bases.
  std::vector<int> shared_world_ranks;
  // The segment's atomicity locks, one per cache line in the order of
  // shared_bases (rma::Window::atomicity), or 0 with no segment.
  uint64_t shared_locks = 0;
  // Attributes the program sets; the predefined ones are answered directly.
  AttributeStore attributes{&ProcessKeyvals()};
  // Guarded by `mutex`.
  std::mutex mutex;
  std::string name;
  Errhandler* errhandler = Errhandler::Fatal();
  std::vector<std::pair<std::string, std::string>> info;

  // Epochs, as the program opened them (checked by the operations; a
  // program that races its own synchronization calls is erroneous). The
  // allowed transitions are the table in docs/architecture.md.
  //
  // A fence only *may* start an epoch: one begins if RMA calls follow it
  // before the next fence (MPI-4.1 12.5.1). Until then a lock, lock_all,
  // post or start may follow the fence instead, so the fence's state has
  // three values, not two.
  std::atomic<FenceState> fence_state{FenceState::kNone};
  std::atomic<bool> lock_all{false};
  bool lock_all_no_check = false;
  std::unique_ptr<std::atomic<uint8_t>[]> locked;  // 0, or 1 + exclusive
  std::atomic<int> locks_held{0};
  // General active target: the access group (start .. complete) and the
  // exposure group (post .. wait), as ranks of the window's group.
  std::vector<int> access_group;
  std::atomic<bool> access_epoch{false};
  std::vector<uint8_t> in_access_group;
  std::vector<int> exposure_group;
  std::atomic<bool> exposure_epoch{false};
  // Base address for MPI_WIN_BASE: what the program passed or got.
  void* base = nullptr;
  int64_t size = 0;
  int disp_unit = 1;
};

HandleTable<WindowObject>& WindowTable();

inline WindowObject* LookupWindow(MPI_Win handle) {
  return WindowTable().Lookup(reinterpret_cast<uintptr_t>(handle));
}

// What `locked` holds for a target: the lock's kind, and whether
// MPI_MODE_NOCHECK spared the lock manager.
inline constexpr uint8_t kLockedShared = 1;
inline constexpr uint8_t kLockedExclusive = 2;
inline constexpr uint8_t kNoCheck = 4;

inline rma::OneSided& Engine() { return Instance::Get().one_sided(); }

inline bool InPassiveEpoch(const WindowObject* w, int rank) {
  return w->lock_all.load(std::memory_order_acquire) ||
         w->locked[rank].load(std::memory_order_acquire) != 0;
}

inline bool AnyPassiveEpoch(const WindowObject* w) {
  return w->lock_all.load() || w->locks_held.load() > 0;
}

// Raises on the window's handler (or, with none, as RaiseError does for an
// error tied to no object).
int RaiseOnWindow(WindowObject* window, const char* call, int error_class,
                  const std::string& problem);

// The window `handle` names; MPI_ERR_WIN otherwise.
int CheckWindow(const char* call, MPI_Win handle, WindowObject** window);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_WINDOW_OBJECT_H_
