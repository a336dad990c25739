// One-sided synchronization: fences, passive-target locks and flushes,
// general active target. Epochs are tracked per window as the program
// opens them (window_object.h): fences (a fence not asserting
// MPI_MODE_NOSUCCEED makes an access epoch possible, and the first RMA call
// after it opens one), locks per target and lock_all, and general active
// target's start..complete and post..wait; the operations
// (one_sided_operations.cc) check them. The transitions allowed are the
// standard's (MPI-4.1 12.5), as the table in docs/architecture.md lists
// them: no stricter.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/window_object.h"
#include "mpi/objects/group.h"

using minimpi::AnyPassiveEpoch;
using minimpi::Engine;
using minimpi::FenceState;
using minimpi::InPassiveEpoch;
using minimpi::kLockedExclusive;
using minimpi::kLockedShared;
using minimpi::kNoCheck;
using minimpi::RaiseOnWindow;
using minimpi::WindowObject;

namespace {

// The window ranks of a group's members; MPI_ERR_GROUP when one is not in
// the window's group.
int GroupRanks(const char* call, WindowObject* w, MPI_Group handle,
               std::vector<int>* ranks) {
  minimpi::Group* group = minimpi::ToGroup(handle);
  if (group == nullptr) {
    return RaiseOnWindow(w, call, MPI_ERR_GROUP, "invalid group");
  }
  const std::vector<int>& window_ranks = w->comm->world_ranks;
  ranks->clear();
  for (int world_rank : group->members()) {
    auto found =
        std::find(window_ranks.begin(), window_ranks.end(), world_rank);
    if (found == window_ranks.end()) {
      return RaiseOnWindow(w, call, MPI_ERR_GROUP,
                           "the group holds a process outside the window's "
                           "group");
    }
    ranks->push_back(static_cast<int>(found - window_ranks.begin()));
  }
  return MPI_SUCCESS;
}

// Whether RMA calls followed the last fence: its access epoch is open, and
// no epoch of another kind may start before the next fence closes it.
bool FenceEpochOpen(const WindowObject* w) {
  return w->fence_state.load(std::memory_order_acquire) ==
         FenceState::kAccessed;
}

// After a synchronization: accesses a dynamic window's targets refused
// (outside what they had attached) are the program's error.
int CheckRefusals(const char* call, WindowObject* w) {
  const int refused = Engine().TakeRefusals(*w->window);
  if (refused == 0) return MPI_SUCCESS;
  return RaiseOnWindow(
      w, call, MPI_ERR_RMA_RANGE,
      absl::StrFormat("%d access%s fell outside the memory the target had "
                      "attached",
                      refused, refused == 1 ? "" : "es"));
}

int FlushCall(const char* call, int rank, MPI_Win win) {
  WindowObject* w;
  if (int error = minimpi::CheckWindow(call, win, &w)) return error;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->window->group_size) {
    return RaiseOnWindow(w, call, MPI_ERR_RANK,
                         absl::StrFormat("invalid rank %d", rank));
  }
  if (!InPassiveEpoch(w, rank)) {
    return RaiseOnWindow(w, call, MPI_ERR_RMA_SYNC,
                         absl::StrFormat("rank %d is not locked", rank));
  }
  Engine().WaitForOperations(*w->window, rank);
  return CheckRefusals(call, w);
}

int FlushAllCall(const char* call, MPI_Win win) {
  WindowObject* w;
  if (int error = minimpi::CheckWindow(call, win, &w)) return error;
  if (!AnyPassiveEpoch(w)) {
    return RaiseOnWindow(w, call, MPI_ERR_RMA_SYNC,
                         "no passive target epoch is open");
  }
  Engine().WaitForOperations(*w->window, -1);
  return CheckRefusals(call, w);
}

}  // namespace

extern "C" {

int PMPI_Win_fence(int assert, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_fence";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (AnyPassiveEpoch(w) || w->access_epoch.load() ||
      w->exposure_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "a lock or general active target epoch is open");
  }
  Engine().WaitForOperations(*w->window, -1);
  // Every member's operations are complete once all have passed here.
  PMPI_Barrier(w->comm->handle);
  w->fence_state.store((assert & MPI_MODE_NOSUCCEED) != 0 ? FenceState::kNone
                                                          : FenceState::kReady,
                       std::memory_order_release);
  return CheckRefusals(kCall, w);
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_lock";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) {
    return RaiseOnWindow(w, kCall, MPI_ERR_LOCKTYPE,
                         absl::StrFormat("invalid lock type %d", lock_type));
  }
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->window->group_size) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RANK,
                         absl::StrFormat("invalid rank %d (window group size "
                                         "%d)",
                                         rank, w->window->group_size));
  }
  if (w->lock_all.load() || w->locked[rank].load() != 0) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         absl::StrFormat("rank %d is already locked in this "
                                         "window",
                                         rank));
  }
  if (FenceEpochOpen(w) || w->access_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         FenceEpochOpen(w)
                             ? "RMA calls since the last fence opened its "
                               "access epoch (fence first)"
                             : "an MPI_Win_start access epoch is open");
  }
  const bool exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
  const bool no_check = (assert & MPI_MODE_NOCHECK) != 0;
  if (!no_check) Engine().Lock(*w->window, rank, exclusive);
  w->locked[rank].store(
      (exclusive ? kLockedExclusive : kLockedShared) | (no_check ? kNoCheck : 0),
      std::memory_order_release);
  w->locks_held.fetch_add(1);
  w->fence_state.store(FenceState::kNone, std::memory_order_release);
  return MPI_SUCCESS;
}

int PMPI_Win_unlock(int rank, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_unlock";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->window->group_size) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RANK,
                         absl::StrFormat("invalid rank %d", rank));
  }
  const uint8_t state = w->locked[rank].load();
  if (state == 0) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         absl::StrFormat("rank %d is not locked", rank));
  }
  if (state & kNoCheck) {
    Engine().WaitForOperations(*w->window, rank);
  } else {
    Engine().Unlock(*w->window, rank, (state & kLockedExclusive) != 0);
  }
  w->locked[rank].store(0, std::memory_order_release);
  w->locks_held.fetch_sub(1);
  return CheckRefusals(kCall, w);
}

int PMPI_Win_lock_all(int assert, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_lock_all";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (AnyPassiveEpoch(w) || FenceEpochOpen(w) || w->access_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "an access epoch of this window is already open");
  }
  const bool no_check = (assert & MPI_MODE_NOCHECK) != 0;
  if (!no_check) {
    for (int r = 0; r < w->window->group_size; ++r) {
      Engine().Lock(*w->window, r, /*exclusive=*/false);
    }
  }
  w->lock_all_no_check = no_check;
  w->lock_all.store(true, std::memory_order_release);
  w->fence_state.store(FenceState::kNone, std::memory_order_release);
  return MPI_SUCCESS;
}

int PMPI_Win_unlock_all(MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_unlock_all";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (!w->lock_all.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "MPI_Win_lock_all was not called");
  }
  Engine().WaitForOperations(*w->window, -1);
  if (!w->lock_all_no_check) {
    for (int r = 0; r < w->window->group_size; ++r) {
      Engine().Unlock(*w->window, r, /*exclusive=*/false);
    }
  }
  w->lock_all.store(false, std::memory_order_release);
  return CheckRefusals(kCall, w);
}

int PMPI_Win_flush(int rank, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush");
  return FlushCall("MPI_Win_flush", rank, win);
}

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush_local");
  return FlushCall("MPI_Win_flush_local", rank, win);
}

int PMPI_Win_flush_all(MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush_all");
  return FlushAllCall("MPI_Win_flush_all", win);
}

int PMPI_Win_flush_local_all(MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush_local_all");
  return FlushAllCall("MPI_Win_flush_local_all", win);
}

int PMPI_Win_sync(MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_sync");
  WindowObject* w;
  if (int error = minimpi::CheckWindow("MPI_Win_sync", win, &w)) return error;
  // One copy of memory (the unified model): ordering loads and stores
  // against the other members' is all there is to do.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int /*assert*/, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_post";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (w->exposure_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "an exposure epoch is already open");
  }
  if (FenceEpochOpen(w)) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "RMA calls since the last fence opened its epoch "
                         "(fence first)");
  }
  std::vector<int> origins;
  if (int error = GroupRanks(kCall, w, group, &origins)) return error;
  w->exposure_group = origins;
  w->exposure_epoch.store(true, std::memory_order_release);
  w->fence_state.store(FenceState::kNone, std::memory_order_release);
  Engine().Post(*w->window, origins);
  return MPI_SUCCESS;
}

int PMPI_Win_start(MPI_Group group, int /*assert*/, MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_start";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (w->access_epoch.load() || AnyPassiveEpoch(w) || FenceEpochOpen(w)) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "an access epoch is already open");
  }
  std::vector<int> targets;
  if (int error = GroupRanks(kCall, w, group, &targets)) return error;
  Engine().Start(*w->window, targets);
  std::fill(w->in_access_group.begin(), w->in_access_group.end(), 0);
  for (int target : targets) w->in_access_group[target] = 1;
  w->access_group = std::move(targets);
  w->access_epoch.store(true, std::memory_order_release);
  w->fence_state.store(FenceState::kNone, std::memory_order_release);
  return MPI_SUCCESS;
}

int PMPI_Win_complete(MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_complete";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (!w->access_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "MPI_Win_start was not called");
  }
  Engine().Complete(*w->window, w->access_group);
  w->access_epoch.store(false, std::memory_order_release);
  std::fill(w->in_access_group.begin(), w->in_access_group.end(), 0);
  return CheckRefusals(kCall, w);
}

int PMPI_Win_wait(MPI_Win win) {
  constexpr const char* kCall = "MPI_Win_wait";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (!w->exposure_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "MPI_Win_post was not called");
  }
  Engine().WaitPosted(*w->window, w->exposure_group, /*test=*/false);
  w->exposure_epoch.store(false, std::memory_order_release);
  return MPI_SUCCESS;
}

int PMPI_Win_test(MPI_Win win, int* flag) {
  constexpr const char* kCall = "MPI_Win_test";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (flag == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null flag");
  }
  if (!w->exposure_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "MPI_Win_post was not called");
  }
  *flag = Engine().WaitPosted(*w->window, w->exposure_group, /*test=*/true);
  if (*flag) w->exposure_epoch.store(false, std::memory_order_release);
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Win_fence)
MINIMPI_EXPORT(Win_lock)
MINIMPI_EXPORT(Win_unlock)
MINIMPI_EXPORT(Win_lock_all)
MINIMPI_EXPORT(Win_unlock_all)
MINIMPI_EXPORT(Win_flush)
MINIMPI_EXPORT(Win_flush_local)
MINIMPI_EXPORT(Win_flush_all)
MINIMPI_EXPORT(Win_flush_local_all)
MINIMPI_EXPORT(Win_sync)
MINIMPI_EXPORT(Win_post)
MINIMPI_EXPORT(Win_start)
MINIMPI_EXPORT(Win_complete)
MINIMPI_EXPORT(Win_wait)
MINIMPI_EXPORT(Win_test)
