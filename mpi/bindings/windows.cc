// Windows made and freed: MPI_Win_create, _allocate, _allocate_shared,
// _create_dynamic (with MPI_Win_attach and _detach), their large-count
// forms, MPI_Win_shared_query and MPI_Win_free. What a program asks of a
// window is in window_properties.cc, the operations and synchronization in
// one_sided_operations.cc and one_sided_synchronization.cc; the engine
// under them all is mpi/rma.
//
// A window runs its collectives (the exchange of its members' bases and
// keys, fences' barriers, the closing barrier) on a private duplicate of
// the communicator it was made from, so they never meet the program's own.
//
// MPI_Win_allocate_shared maps one POSIX shared-memory segment in every
// member (all on one node), each member's part following the previous one
// (contiguous, as the standard's default asks); the members then load and
// store each other's parts directly. MPI_Win_allocate does the same for the
// members of each node (parts aligned to 64 bytes), though only the library
// uses the mapping: puts and gets between members of a node become plain
// copies (rma::OneSided::SetDirect).
//
// A dynamic window (MPI_Win_create_dynamic) exposes what each member
// attaches; its displacements are addresses (MPI_Get_address).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/window_object.h"
#include "mpi/objects/errhandler.h"
#include "mpi/objects/info.h"
#include "mpi/vci/vci_lock.h"

using minimpi::AttributeFailure;
using minimpi::Communicator;
using minimpi::Errhandler;
using minimpi::Instance;
using minimpi::RaiseError;
using minimpi::RaiseOnWindow;
using minimpi::WindowObject;

namespace minimpi {

HandleTable<WindowObject>& WindowTable() {
  static auto* table = new HandleTable<WindowObject>(HandleKind::kWindow);
  return *table;
}

int RaiseOnWindow(WindowObject* window, const char* call, int error_class,
                  const std::string& problem) {
  if (window == nullptr) return RaiseError(nullptr, call, error_class, problem);
  Errhandler* handler;
  {
    std::lock_guard<std::mutex> lock(window->mutex);
    handler = window->errhandler;
    handler->Retain();
  }
  const int code =
      RaiseWindowError(handler, window->handle, call, error_class, problem);
  handler->Release();
  return code;
}

int CheckWindow(const char* call, MPI_Win handle, WindowObject** window) {
  *window = LookupWindow(handle);
  if (*window != nullptr) [[likely]] {
    return MPI_SUCCESS;
  }
  return RaiseError(nullptr, call, MPI_ERR_WIN,
                    handle == MPI_WIN_NULL
                        ? "invalid window (MPI_WIN_NULL)"
                        : "invalid window (freed, or not a window)");
}

}  // namespace minimpi

namespace {

int CheckConstructor(const char* call, MPI_Comm comm, MPI_Info info,
                     MPI_Win* win, Communicator** c, minimpi::Info** hints) {
  if (int error = minimpi::CheckCommunicator(call, comm, c)) return error;
  if ((*c)->inter) {
    return RaiseError(*c, call, MPI_ERR_COMM,
                      "windows need an intracommunicator");
  }
  if (int error = minimpi::CheckInfo(call, *c, info, /*null_allowed=*/true,
                                     hints)) {
    return error;
  }
  if (win == nullptr) return minimpi::NullArgument(call, *c, "win");
  return MPI_SUCCESS;
}

int CheckSizeAndUnit(const char* call, Communicator* c, MPI_Aint size,
                     int disp_unit) {
  if (size < 0) {
    return RaiseError(c, call, MPI_ERR_SIZE,
                      absl::StrFormat("invalid size %d (must not be negative)",
                                      static_cast<int64_t>(size)));
  }
  if (disp_unit <= 0) {
    return RaiseError(
        c, call, MPI_ERR_DISP,
        absl::StrFormat("invalid disp_unit %d (must be positive)", disp_unit));
  }
  return MPI_SUCCESS;
}

// Each member's atomicity lock has a cache line of its own at the start of
// the segment, so members' accumulates to different members do not share
// lines.
constexpr uint64_t kAtomicityLockStride = 64;
static_assert(sizeof(minimpi::vci::VciLock) <= kAtomicityLockStride);

// Makes the window over `base` (collective over `c`): the private
// communicator, the engine's window, the exchange of every member's
// description. `object` comes filled with the memory and flavor.
int OpenWindow(const char* call, Communicator* c, minimpi::Info* hints,
               std::unique_ptr<WindowObject> object, MPI_Win* win) {
  std::unique_ptr<Communicator> duplicate = minimpi::DuplicateCommunicator(*c);
  Communicator* comm = minimpi::Publish(std::move(duplicate));
  object->comm = comm;
  std::vector<int> vcis(comm->size);
  for (int r = 0; r < comm->size; ++r) vcis[r] = comm->remote_vci(r);
  minimpi::rma::Flavor flavor = minimpi::rma::Flavor::kCreate;
  if (object->create_flavor == MPI_WIN_FLAVOR_ALLOCATE) {
    flavor = minimpi::rma::Flavor::kAllocate;
  } else if (object->create_flavor == MPI_WIN_FLAVOR_SHARED) {
    flavor = minimpi::rma::Flavor::kShared;
  } else if (object->create_flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    flavor = minimpi::rma::Flavor::kDynamic;
  }
  absl::StatusOr<minimpi::rma::Window*> window = Instance::Get().one_sided().Open(
      object->base, static_cast<uint64_t>(object->size), object->disp_unit,
      flavor, comm->rank, comm->world_ranks, std::move(vcis));
  // Every member takes part in the exchange, so that a failure here is
  // seen everywhere rather than leaving the others waiting.
  minimpi::rma::TargetInfo mine;
  if (window.ok()) mine = Instance::Get().one_sided().Describe(**window);
  std::vector<minimpi::rma::TargetInfo> all(comm->size);
  PMPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine),
                 MPI_BYTE, comm->handle);
  bool everyone = true;
  for (const minimpi::rma::TargetInfo& member : all) everyone &= member.window >= 0;
  if (!everyone) {
    if (window.ok()) Instance::Get().one_sided().Close(*window);
    minimpi::Unpublish(comm);
    return RaiseError(
        c, call, MPI_ERR_OTHER,
        window.ok() ? "another member could not make its part of the window"
                    : std::string(window.status().message()));
  }
  object->window = *window;
  Instance::Get().one_sided().Publish(**window, std::move(all));
  if (object->shared_mapping) {
    // The members that share this node's segment: their windows are
    // mapped here too, so puts and gets to them are plain copies.
    std::vector<std::byte*> direct(comm->size, nullptr);
    std::vector<minimpi::vci::VciLock*> atomicity(comm->size, nullptr);
    for (int r = 0; r < comm->size; ++r) {
      for (size_t j = 0; j < object->shared_world_ranks.size(); ++j) {
        if (object->shared_world_ranks[j] == comm->world_ranks[r] &&
            object->shared_sizes[j] > 0) {
          direct[r] = reinterpret_cast<std::byte*>(object->shared_bases[j]);
          atomicity[r] = reinterpret_cast<minimpi::vci::VciLock*>(
              object->shared_locks + j * kAtomicityLockStride);
        }
      }
    }
    Instance::Get().one_sided().SetDirect(**window, std::move(direct),
                                          std::move(atomicity));
  }
  // No member may reach this one's window before it knows the others'
  // (a lock request is answered to the sender's window).
  PMPI_Barrier(comm->handle);
  object->locked.reset(new std::atomic<uint8_t>[comm->size]);
  for (int r = 0; r < comm->size; ++r) {
    object->locked[r].store(0, std::memory_order_relaxed);
  }
  object->in_access_group.assign(comm->size, 0);
  if (hints != nullptr) object->info = hints->Entries();
  WindowObject* raw = object.release();
  const uintptr_t handle = minimpi::WindowTable().Insert(raw);
  raw->handle = reinterpret_cast<MPI_Win>(handle);
  *win = raw->handle;
  return MPI_SUCCESS;
}

std::atomic<uint64_t> shared_segments{0};

// MPI_Win_allocate_shared's segment (collective over `c`): every member's
// size, then rank 0 makes and sizes the segment, every member maps it.
int MapSharedSegment(const char* call, Communicator* c, MPI_Aint size,
                     int disp_unit, uint64_t align, WindowObject* object) {
  minimpi::Instance& instance = Instance::Get();
  const int node = instance.bootstrap().node_of(c->world_ranks[0]);
  for (int r = 1; r < c->size; ++r) {
    if (instance.bootstrap().node_of(c->world_ranks[r]) != node) {
      return RaiseError(c, call, MPI_ERR_RMA_SHARED,
                        absl::StrFormat("ranks 0 and %d are on different "
                                        "nodes: shared windows need one node",
                                        r));
    }
  }
  struct Part {
    uint64_t size;
    int64_t disp_unit;
  } part{static_cast<uint64_t>(size), disp_unit};
  std::vector<Part> parts(c->size);
  PMPI_Allgather(&part, sizeof(part), MPI_BYTE, parts.data(), sizeof(part),
                 MPI_BYTE, c->handle);
  uint64_t memory = 0;
  for (int r = 0; r < c->size; ++r) memory += parts[r].size;
  // The members' atomicity locks first, then their memory (none at all
  // when no member has any).
  const uint64_t locks =
      memory == 0 ? 0
                  : (c->size * kAtomicityLockStride + align - 1) / align * align;
  uint64_t total = locks;
  object->shared_bases.resize(c->size);
  object->shared_sizes.resize(c->size);
  object->disp_units.resize(c->size);
  for (int r = 0; r < c->size; ++r) {
    object->shared_bases[r] = total;
    object->shared_sizes[r] = parts[r].size;
    object->disp_units[r] = static_cast<int>(parts[r].disp_unit);
    total += (parts[r].size + align - 1) / align * align;
  }
  object->shared_world_ranks = c->world_ranks;
  char name[64] = {};
  int ok = 1;
  if (c->rank == 0 && total > 0) {
    std::snprintf(name, sizeof(name), "/minimpi-win-%d-%llu",
                  static_cast<int>(getpid()),
                  static_cast<unsigned long long>(shared_segments++));
    const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    ok = fd >= 0 && ftruncate(fd, static_cast<off_t>(total)) == 0;
    if (fd >= 0) close(fd);
  }
  PMPI_Bcast(name, sizeof(name), MPI_CHAR, 0, c->handle);
  PMPI_Bcast(&ok, 1, MPI_INT, 0, c->handle);
  if (!ok) {
    return RaiseError(c, call, MPI_ERR_NO_MEM,
                      absl::StrCat("cannot make a shared segment of ", total,
                                   " bytes: ", std::strerror(errno)));
  }
  void* mapping = nullptr;
  if (total > 0) {
    const int fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
      mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
    }
    int mapped = mapping != MAP_FAILED && mapping != nullptr ? 1 : 0;
    int everyone = 0;
    PMPI_Allreduce(&mapped, &everyone, 1, MPI_INT, MPI_MIN, c->handle);
    if (c->rank == 0) shm_unlink(name);
    if (!everyone) {
      if (mapped) munmap(mapping, total);
      return RaiseError(c, call, MPI_ERR_NO_MEM,
                        "a member cannot map the shared segment");
    }
  }
  for (int r = 0; r < c->size; ++r) {
    object->shared_bases[r] += reinterpret_cast<uint64_t>(mapping);
  }
  if (locks > 0) {
    // Each member makes its own lock; none is taken before the window's
    // last barrier (OpenWindow).
    object->shared_locks = reinterpret_cast<uint64_t>(mapping);
    new (reinterpret_cast<std::byte*>(mapping) +
         c->rank * kAtomicityLockStride) minimpi::vci::VciLock;
  }
  object->allocated = mapping;
  object->allocated_length = total;
  object->shared_mapping = true;
  object->base = parts[c->rank].size > 0
                     ? reinterpret_cast<void*>(object->shared_bases[c->rank])
                     : nullptr;
  return MPI_SUCCESS;
}

void FreeMemory(WindowObject* object) {
  if (object->allocated == nullptr) return;
  if (object->shared_mapping) {
    munmap(object->allocated, object->allocated_length);
  } else {
    std::free(object->allocated);
  }
  object->allocated = nullptr;
}

}  // namespace

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                    MPI_Comm comm, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_create";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  minimpi::Info* hints;
  if (int error = CheckConstructor(kCall, comm, info, win, &c, &hints)) {
    return error;
  }
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (base == nullptr && size > 0) {
    return RaiseError(
        c, kCall, MPI_ERR_BUFFER,
        absl::StrFormat("null base with size %d", static_cast<int64_t>(size)));
  }
  auto object = std::make_unique<WindowObject>();
  object->create_flavor = MPI_WIN_FLAVOR_CREATE;
  object->base = base;
  object->size = size;
  object->disp_unit = disp_unit;
  return OpenWindow(kCall, c, hints, std::move(object), win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_allocate";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  minimpi::Info* hints;
  if (int error = CheckConstructor(kCall, comm, info, win, &c, &hints)) {
    return error;
  }
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (baseptr == nullptr) return minimpi::NullArgument(kCall, c, "baseptr");
  auto object = std::make_unique<WindowObject>();
  object->create_flavor = MPI_WIN_FLAVOR_ALLOCATE;
  object->size = size;
  object->disp_unit = disp_unit;
  // The members of each node share one segment, so that their puts and
  // gets to each other are copies by the calling thread (no system call,
  // no message; the target's CPU takes no part).
  MPI_Comm node;
  PMPI_Comm_split_type(c->handle, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                       &node);
  const int mapped = MapSharedSegment(kCall, minimpi::ToCommunicator(node),
                                      size, disp_unit, 64, object.get());
  PMPI_Comm_free(&node);
  if (mapped != MPI_SUCCESS) return mapped;
  void* base = object->base;  // null for a member with no memory
  void* mapping = object->allocated;
  const size_t length = object->allocated_length;
  if (int error = OpenWindow(kCall, c, hints, std::move(object), win)) {
    if (mapping != nullptr) munmap(mapping, length);
    return error;
  }
  *static_cast<void**>(baseptr) = base;
  return MPI_SUCCESS;
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                             MPI_Comm comm, void* baseptr, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_allocate_shared";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  minimpi::Info* hints;
  if (int error = CheckConstructor(kCall, comm, info, win, &c, &hints)) {
    return error;
  }
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (baseptr == nullptr) return minimpi::NullArgument(kCall, c, "baseptr");
  auto object = std::make_unique<WindowObject>();
  object->create_flavor = MPI_WIN_FLAVOR_SHARED;
  object->size = size;
  object->disp_unit = disp_unit;
  if (int error =
          MapSharedSegment(kCall, c, size, disp_unit, 1, object.get())) {
    return error;
  }
  void* base = object->base;
  void* mapping = object->allocated;
  const size_t length = object->allocated_length;
  if (int error = OpenWindow(kCall, c, hints, std::move(object), win)) {
    if (mapping != nullptr) munmap(mapping, length);
    return error;
  }
  *static_cast<void**>(baseptr) = base;
  return MPI_SUCCESS;
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_create_dynamic";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  minimpi::Info* hints;
  if (int error = CheckConstructor(kCall, comm, info, win, &c, &hints)) {
    return error;
  }
  auto object = std::make_unique<WindowObject>();
  object->create_flavor = MPI_WIN_FLAVOR_DYNAMIC;
  object->base = nullptr;  // MPI_BOTTOM: displacements are addresses
  object->size = 0;
  object->disp_unit = 1;
  return OpenWindow(kCall, c, hints, std::move(object), win);
}

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  constexpr const char* kCall = "MPI_Win_attach";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (w->create_flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_FLAVOR,
                         "not a dynamic window (MPI_Win_create_dynamic)");
  }
  if (size < 0) {
    return RaiseOnWindow(w, kCall, MPI_ERR_SIZE,
                         absl::StrFormat("invalid size %d",
                                         static_cast<int64_t>(size)));
  }
  if (base == nullptr && size > 0) {
    return RaiseOnWindow(w, kCall, MPI_ERR_BUFFER, "null base");
  }
  if (!Instance::Get().one_sided().Attach(*w->window, base,
                                          static_cast<uint64_t>(size))) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_ATTACH,
                         "the memory overlaps memory already attached");
  }
  return MPI_SUCCESS;
}

int PMPI_Win_detach(MPI_Win win, const void* base) {
  constexpr const char* kCall = "MPI_Win_detach";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (w->create_flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_FLAVOR,
                         "not a dynamic window (MPI_Win_create_dynamic)");
  }
  if (!Instance::Get().one_sided().Detach(*w->window, base)) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_ATTACH,
                         "no memory is attached at that address");
  }
  return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size,
                          int* disp_unit, void* baseptr) {
  constexpr const char* kCall = "MPI_Win_shared_query";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (w->create_flavor != MPI_WIN_FLAVOR_SHARED) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_FLAVOR,
                         "not a window from MPI_Win_allocate_shared");
  }
  const int members = static_cast<int>(w->shared_sizes.size());
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= members)) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RANK,
                         absl::StrFormat("invalid rank %d (window group size "
                                         "%d)",
                                         rank, members));
  }
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  int of = rank;
  if (rank == MPI_PROC_NULL) {
    // The first member with memory (MPI-4.1 12.2.3).
    of = -1;
    for (int r = 0; r < members && of < 0; ++r) {
      if (w->shared_sizes[r] > 0) of = r;
    }
  }
  if (of < 0) {
    *size = 0;
    *disp_unit = w->disp_units.empty() ? 1 : w->disp_units[0];
    *static_cast<void**>(baseptr) = nullptr;
    return MPI_SUCCESS;
  }
  *size = static_cast<MPI_Aint>(w->shared_sizes[of]);
  *disp_unit = w->disp_units[of];
  *static_cast<void**>(baseptr) =
      w->shared_sizes[of] > 0 ? reinterpret_cast<void*>(w->shared_bases[of])
                              : nullptr;
  return MPI_SUCCESS;
}

int PMPI_Win_free(MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_free";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win == nullptr) return minimpi::NullArgument(kCall, nullptr, "win");
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, *win, &w)) return error;
  if (w->lock_all.load() || w->locks_held.load() > 0 ||
      w->access_epoch.load() || w->exposure_epoch.load()) {
    return RaiseOnWindow(w, kCall, MPI_ERR_RMA_SYNC,
                         "an access or exposure epoch is still open (unlock, "
                         "complete or wait first)");
  }
  // What this member started ends here; the barrier then says every
  // member's has, so nothing can reach the window after.
  Instance::Get().one_sided().WaitForOperations(*w->window, -1);
  PMPI_Barrier(w->comm->handle);
  const AttributeFailure failure =
      w->attributes.DeleteAll(minimpi::HandleValue(*win));
  minimpi::WindowTable().Remove(minimpi::HandleValue(*win));
  Instance::Get().one_sided().Close(w->window);
  minimpi::Unpublish(w->comm);
  FreeMemory(w);
  w->errhandler->Release();
  delete w;
  *win = MPI_WIN_NULL;
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(kCall, nullptr, failure, "delete");
  }
  return MPI_SUCCESS;
}

// The large-count forms (MPI-4): disp_unit is an MPI_Aint.

namespace {
int DispUnit(const char* call, MPI_Comm comm, MPI_Aint disp_unit, int* unit) {
  if (disp_unit > INT32_MAX) {
    return RaiseError(minimpi::ToCommunicator(comm), call, MPI_ERR_DISP,
                      absl::StrFormat("disp_unit %d is larger than this "
                                      "library supports (%d)",
                                      static_cast<int64_t>(disp_unit),
                                      INT32_MAX));
  }
  *unit = static_cast<int>(disp_unit);
  return MPI_SUCCESS;
}
}  // namespace

int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit,
                      MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_create_c");
  int unit;
  if (int error = DispUnit("MPI_Win_create_c", comm, disp_unit, &unit)) {
    return error;
  }
  return PMPI_Win_create(base, size, unit, info, comm, win);
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                        MPI_Comm comm, void* baseptr, MPI_Win* win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_allocate_c");
  int unit;
  if (int error = DispUnit("MPI_Win_allocate_c", comm, disp_unit, &unit)) {
    return error;
  }
  return PMPI_Win_allocate(size, unit, info, comm, baseptr, win);
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit,
                               MPI_Info info, MPI_Comm comm, void* baseptr,
                               MPI_Win* win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_allocate_shared_c");
  int unit;
  if (int error =
          DispUnit("MPI_Win_allocate_shared_c", comm, disp_unit, &unit)) {
    return error;
  }
  return PMPI_Win_allocate_shared(size, unit, info, comm, baseptr, win);
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size,
                            MPI_Aint* disp_unit, void* baseptr) {
  MINIMPI_REQUIRE_INIT("MPI_Win_shared_query_c");
  if (disp_unit == nullptr) {
    return PMPI_Win_shared_query(win, rank, size, nullptr, baseptr);
  }
  int unit = 0;
  const int code = PMPI_Win_shared_query(win, rank, size, &unit, baseptr);
  if (code == MPI_SUCCESS) *disp_unit = unit;
  return code;
}

}  // extern "C"

MINIMPI_EXPORT(Win_create_c)
MINIMPI_EXPORT(Win_allocate_c)
MINIMPI_EXPORT(Win_allocate_shared_c)
MINIMPI_EXPORT(Win_shared_query_c)
MINIMPI_EXPORT(Win_create)
MINIMPI_EXPORT(Win_allocate)
MINIMPI_EXPORT(Win_allocate_shared)
MINIMPI_EXPORT(Win_create_dynamic)
MINIMPI_EXPORT(Win_attach)
MINIMPI_EXPORT(Win_detach)
MINIMPI_EXPORT(Win_shared_query)
MINIMPI_EXPORT(Win_free)
