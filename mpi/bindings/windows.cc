// Windows, before one-sided communication exists (it is later work, in
// mpi/rma). Programs and test harnesses that merely mention windows must
// build and run, and every call must answer as the standard says it would
// for the windows that exist, namely none:
//
//   - MPI_Win_create, _allocate, _allocate_shared and _create_dynamic check
//     their arguments like any call, then fail with
//     MPI_ERR_UNSUPPORTED_OPERATION (raised on the communicator), leaving
//     MPI_WIN_NULL in *win;
//   - every call that names a window fails with MPI_ERR_WIN, since no
//     handle can name one;
//   - window keyvals (MPI_Win_create_keyval, MPI_Win_free_keyval) and
//     MPI_Win_create_errhandler are real: they need no window.
//
// Errors tied to no valid window go where RaiseError sends errors tied to
// no object (MPI_COMM_SELF's handler if the program set one, else
// MPI_COMM_WORLD's).
#include <string>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/keyval_util.h"
#include "mpi/errhandler.h"

using minimpi::AttributeObjectKind;
using minimpi::Communicator;
using minimpi::Errhandler;
using minimpi::Instance;
using minimpi::Keyval;
using minimpi::RaiseError;

namespace {

// Any window handle: there are no windows to name.
[[gnu::cold]] int InvalidWindow(const char* call, MPI_Win win) {
  return RaiseError(nullptr, call, MPI_ERR_WIN,
                    win == MPI_WIN_NULL
                        ? "invalid window (MPI_WIN_NULL)"
                        : "invalid window (no window exists: one-sided "
                          "communication is not implemented yet)");
}

// The checks every window constructor shares; on success the call fails
// anyway, because no window can be made yet.
int CheckConstructor(const char* call, MPI_Comm comm, MPI_Info info,
                     MPI_Win* win, Communicator** c) {
  if (int error = minimpi::CheckCommunicator(call, comm, c)) return error;
  minimpi::Info* unused;
  if (int error =
          minimpi::CheckInfo(call, *c, info, /*null_allowed=*/true, &unused)) {
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

[[gnu::cold]] int Unsupported(const char* call, Communicator* c, MPI_Win* win) {
  *win = MPI_WIN_NULL;
  return RaiseError(c, call, MPI_ERR_UNSUPPORTED_OPERATION,
                    "one-sided communication is not implemented yet (no "
                    "window was created)");
}

}  // namespace

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                    MPI_Comm comm, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_create";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = CheckConstructor(kCall, comm, info, win, &c)) return error;
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (base == nullptr && size > 0) {
    return RaiseError(
        c, kCall, MPI_ERR_BUFFER,
        absl::StrFormat("null base with size %d", static_cast<int64_t>(size)));
  }
  return Unsupported(kCall, c, win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_allocate";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = CheckConstructor(kCall, comm, info, win, &c)) return error;
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (baseptr == nullptr) return minimpi::NullArgument(kCall, c, "baseptr");
  return Unsupported(kCall, c, win);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                             MPI_Comm comm, void* baseptr, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_allocate_shared";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = CheckConstructor(kCall, comm, info, win, &c)) return error;
  if (int error = CheckSizeAndUnit(kCall, c, size, disp_unit)) return error;
  if (baseptr == nullptr) return minimpi::NullArgument(kCall, c, "baseptr");
  return Unsupported(kCall, c, win);
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_create_dynamic";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = CheckConstructor(kCall, comm, info, win, &c)) return error;
  return Unsupported(kCall, c, win);
}

int PMPI_Win_free(MPI_Win* win) {
  constexpr const char* kCall = "MPI_Win_free";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win == nullptr) return minimpi::NullArgument(kCall, nullptr, "win");
  return InvalidWindow(kCall, *win);
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn,
                           int* win_keyval, void* extra_state) {
  constexpr const char* kCall = "MPI_Win_create_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  return minimpi::CreateKeyval(
      kCall, Keyval::ForWindows(win_copy_attr_fn, win_delete_attr_fn),
      win_keyval, extra_state);
}

int PMPI_Win_free_keyval(int* win_keyval) {
  constexpr const char* kCall = "MPI_Win_free_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win_keyval != nullptr && *win_keyval >= MPI_WIN_BASE &&
      *win_keyval <= MPI_WIN_MODEL) {
    return RaiseError(nullptr, kCall, MPI_ERR_KEYVAL,
                      absl::StrFormat("keyval %d is predefined and cannot be "
                                      "freed",
                                      *win_keyval));
  }
  return minimpi::FreeKeyval(kCall, AttributeObjectKind::kWindow, win_keyval);
}

int PMPI_Win_set_attr(MPI_Win win, int, void*) {
  MINIMPI_REQUIRE_INIT("MPI_Win_set_attr");
  return InvalidWindow("MPI_Win_set_attr", win);
}

int PMPI_Win_get_attr(MPI_Win win, int, void*, int*) {
  MINIMPI_REQUIRE_INIT("MPI_Win_get_attr");
  return InvalidWindow("MPI_Win_get_attr", win);
}

int PMPI_Win_delete_attr(MPI_Win win, int) {
  MINIMPI_REQUIRE_INIT("MPI_Win_delete_attr");
  return InvalidWindow("MPI_Win_delete_attr", win);
}

int PMPI_Win_set_name(MPI_Win win, const char*) {
  MINIMPI_REQUIRE_INIT("MPI_Win_set_name");
  return InvalidWindow("MPI_Win_set_name", win);
}

int PMPI_Win_get_name(MPI_Win win, char*, int*) {
  MINIMPI_REQUIRE_INIT("MPI_Win_get_name");
  return InvalidWindow("MPI_Win_get_name", win);
}

// A real handler, which MPI_Errhandler_free frees; with no window to set it
// on, the program can do nothing else with it that MPI allows.
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Win_create_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win_errhandler_fn == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null handler function");
  }
  if (errhandler == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "errhandler");
  }
  // Both handler types take (handle*, int*, ...); the window one is stored
  // as is and never called, as no window can raise an error.
  Errhandler* handler = Errhandler::NewUser(
      reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn));
  const uintptr_t handle = Instance::Get().errhandlers().Insert(handler);
  if (handle == 0) {
    handler->Release();
    return RaiseError(nullptr, kCall, MPI_ERR_OTHER,
                      "too many error handlers exist");
  }
  handler->set_handle(reinterpret_cast<MPI_Errhandler>(handle));
  *errhandler = handler->handle();
  return MPI_SUCCESS;
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler) {
  MINIMPI_REQUIRE_INIT("MPI_Win_set_errhandler");
  return InvalidWindow("MPI_Win_set_errhandler", win);
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler*) {
  MINIMPI_REQUIRE_INIT("MPI_Win_get_errhandler");
  return InvalidWindow("MPI_Win_get_errhandler", win);
}

int PMPI_Win_call_errhandler(MPI_Win win, int) {
  MINIMPI_REQUIRE_INIT("MPI_Win_call_errhandler");
  return InvalidWindow("MPI_Win_call_errhandler", win);
}

int PMPI_Win_fence(int, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_fence");
  return InvalidWindow("MPI_Win_fence", win);
}

int PMPI_Win_lock(int, int, int, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_lock");
  return InvalidWindow("MPI_Win_lock", win);
}

int PMPI_Win_unlock(int, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_unlock");
  return InvalidWindow("MPI_Win_unlock", win);
}

int PMPI_Win_lock_all(int, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_lock_all");
  return InvalidWindow("MPI_Win_lock_all", win);
}

int PMPI_Win_unlock_all(MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_unlock_all");
  return InvalidWindow("MPI_Win_unlock_all", win);
}

int PMPI_Win_flush(int, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush");
  return InvalidWindow("MPI_Win_flush", win);
}

int PMPI_Win_flush_all(MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Win_flush_all");
  return InvalidWindow("MPI_Win_flush_all", win);
}

int PMPI_Put(const void*, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype,
             MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Put");
  return InvalidWindow("MPI_Put", win);
}

int PMPI_Get(void*, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype,
             MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Get");
  return InvalidWindow("MPI_Get", win);
}

int PMPI_Accumulate(const void*, int, MPI_Datatype, int, MPI_Aint, int,
                    MPI_Datatype, MPI_Op, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Accumulate");
  return InvalidWindow("MPI_Accumulate", win);
}

int PMPI_Get_accumulate(const void*, int, MPI_Datatype, void*, int,
                        MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Op,
                        MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Get_accumulate");
  return InvalidWindow("MPI_Get_accumulate", win);
}

}  // extern "C"

MINIMPI_EXPORT(Win_create)
MINIMPI_EXPORT(Win_allocate)
MINIMPI_EXPORT(Win_allocate_shared)
MINIMPI_EXPORT(Win_create_dynamic)
MINIMPI_EXPORT(Win_free)
MINIMPI_EXPORT(Win_create_keyval)
MINIMPI_EXPORT(Win_free_keyval)
MINIMPI_EXPORT(Win_set_attr)
MINIMPI_EXPORT(Win_get_attr)
MINIMPI_EXPORT(Win_delete_attr)
MINIMPI_EXPORT(Win_set_name)
MINIMPI_EXPORT(Win_get_name)
MINIMPI_EXPORT(Win_create_errhandler)
MINIMPI_EXPORT(Win_set_errhandler)
MINIMPI_EXPORT(Win_get_errhandler)
MINIMPI_EXPORT(Win_call_errhandler)
MINIMPI_EXPORT(Win_fence)
MINIMPI_EXPORT(Win_lock)
MINIMPI_EXPORT(Win_unlock)
MINIMPI_EXPORT(Win_lock_all)
MINIMPI_EXPORT(Win_unlock_all)
MINIMPI_EXPORT(Win_flush)
MINIMPI_EXPORT(Win_flush_all)
MINIMPI_EXPORT(Put)
MINIMPI_EXPORT(Get)
MINIMPI_EXPORT(Accumulate)
MINIMPI_EXPORT(Get_accumulate)
