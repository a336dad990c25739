// One-sided operations (MPI_Put, MPI_Get, the accumulates,
// compare-and-swap, their request-based and large-count forms): the checks
// the standard asks for (epochs, ranks, ranges, datatypes, ops), then
// mpi/rma does the work. Synchronization is in one_sided_synchronization.cc.
//
// An operation outside every epoch that covers its target is
// MPI_ERR_RMA_SYNC; request-based operations need a passive target epoch
// (MPI-4.1 12.3.5).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/bindings/window_object.h"
#include "mpi/datatype/predefined.h"

using minimpi::Datatype;
using minimpi::Engine;
using minimpi::InPassiveEpoch;
using minimpi::Instance;
using minimpi::RaiseOnWindow;
using minimpi::WindowObject;

namespace {

// A call after a fence opens the fence's access epoch: a lock or start is
// then refused until the next fence closes it. The store is skipped when
// the state already says so, so threads issuing operations concurrently
// do not bounce the line.
bool InFenceEpoch(WindowObject* w) {
  const minimpi::FenceState state =
      w->fence_state.load(std::memory_order_acquire);
  if (state == minimpi::FenceState::kNone) return false;
  if (state == minimpi::FenceState::kReady) {
    w->fence_state.store(minimpi::FenceState::kAccessed,
                         std::memory_order_relaxed);
  }
  return true;
}

bool InEpoch(WindowObject* w, int rank) {
  return InFenceEpoch(w) || InPassiveEpoch(w, rank) ||
         (w->access_epoch.load(std::memory_order_acquire) &&
          w->in_access_group[rank] != 0);
}

int CheckData(const char* call, WindowObject* w, int64_t count,
              MPI_Datatype handle, const char* what, const Datatype** type) {
  if (count < 0) {
    return RaiseOnWindow(w, call, MPI_ERR_COUNT,
                         absl::StrFormat("invalid %s count %d", what, count));
  }
  *type = minimpi::LookupDatatype(handle);
  if (*type == nullptr) {
    return RaiseOnWindow(w, call, MPI_ERR_TYPE,
                         absl::StrFormat("invalid %s datatype", what));
  }
  if (!(*type)->committed()) {
    return RaiseOnWindow(w, call, MPI_ERR_TYPE,
                         absl::StrFormat("%s datatype is not committed", what));
  }
  return MPI_SUCCESS;
}

// The target rank, the epoch and the range (count items of `type` at
// displacement `disp` must lie inside the target's window). *skip is set
// for MPI_PROC_NULL: the call then does nothing.
int CheckTarget(const char* call, WindowObject* w, int rank, MPI_Aint disp,
                int64_t count, const Datatype* type, bool passive_only,
                bool* skip) {
  *skip = false;
  const int members = w->window->group_size;
  if (rank == MPI_PROC_NULL) {
    *skip = true;
    return MPI_SUCCESS;
  }
  if (rank < 0 || rank >= members) {
    return RaiseOnWindow(w, call, MPI_ERR_RANK,
                         absl::StrFormat("invalid target rank %d (window "
                                         "group size %d)",
                                         rank, members));
  }
  if (passive_only ? !InPassiveEpoch(w, rank) : !InEpoch(w, rank)) {
    return RaiseOnWindow(
        w, call, MPI_ERR_RMA_SYNC,
        absl::StrFormat("no %sepoch is open for target rank %d",
                        passive_only ? "passive target " : "access ", rank));
  }
  // A dynamic window's target alone knows what it has attached.
  if (count == 0 || type->size() == 0 ||
      w->create_flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    return MPI_SUCCESS;
  }
  const minimpi::rma::TargetInfo& target = w->window->targets[rank];
  const minimpi::datatype::Layout& layout = type->layout();
  const int64_t start = static_cast<int64_t>(disp) * target.disp_unit;
  const auto [low, high] = layout.TouchedBytes(count);
  const int64_t first = start + low;
  const int64_t end = start + high;
  if (first < 0 || end > static_cast<int64_t>(target.size)) {
    return RaiseOnWindow(
        w, call, MPI_ERR_RMA_RANGE,
        absl::StrFormat("bytes [%d, %d) of target rank %d's window, which "
                        "holds %d",
                        first, end, rank, static_cast<int64_t>(target.size)));
  }
  return MPI_SUCCESS;
}

int CheckSameSize(const char* call, WindowObject* w, int64_t origin_count,
                  const Datatype* origin, int64_t target_count,
                  const Datatype* target) {
  if (origin_count * origin->size() == target_count * target->size()) {
    return MPI_SUCCESS;
  }
  return RaiseOnWindow(
      w, call, MPI_ERR_TYPE,
      absl::StrFormat("origin data (%d bytes) and target data (%d bytes) "
                      "differ in size",
                      origin_count * origin->size(),
                      target_count * target->size()));
}

// An accumulate's op and element type: a predefined op (or MPI_REPLACE,
// MPI_NO_OP) on the one predefined type every side is made of.
int CheckAccumulate(const char* call, WindowObject* w, MPI_Op op,
                    const Datatype* origin, MPI_Datatype origin_handle,
                    MPI_Datatype target_handle, MPI_Datatype* basic) {
  *basic = minimpi::ReductionType(target_handle);
  if (*basic == MPI_DATATYPE_NULL) {
    return RaiseOnWindow(w, call, MPI_ERR_TYPE,
                         "the target datatype mixes predefined types");
  }
  if (op != MPI_NO_OP && origin != nullptr &&
      minimpi::ReductionType(origin_handle) != *basic) {
    return RaiseOnWindow(w, call, MPI_ERR_TYPE,
                         "origin and target are made of different types");
  }
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
  const minimpi::Op* reduction = minimpi::LookupOp(op);
  if (reduction == nullptr || !reduction->predefined()) {
    return RaiseOnWindow(w, call, MPI_ERR_OP,
                         "accumulates take predefined operations only");
  }
  if (!reduction->Supports(*basic)) {
    return RaiseOnWindow(w, call, MPI_ERR_OP,
                         absl::StrFormat("%s is not defined on the target's "
                                         "type",
                                         reduction->name()));
  }
  return MPI_SUCCESS;
}

uint32_t HandleWord(const void* handle) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(handle));
}

minimpi::rma::Buffer BufferOf(const void* address, int64_t count,
                              const Datatype* type) {
  return {address, count, &type->layout()};
}

minimpi::rma::TargetSpan SpanOf(int rank, MPI_Aint disp, int64_t count,
                                const Datatype* type) {
  return {rank, static_cast<int64_t>(disp), count, &type->layout()};
}

MPI_Request CompletedRequest(WindowObject* w) {
  return minimpi::ToHandle(Instance::Get().p2p().NewCompletedRequest(
      minimpi::ProcNullStatus(), w->window->vci));
}

// What every operation checks first: the library is initialized, and an
// r-form (MPI_Rput...: `returns_request`) has somewhere to put its request.
int BeginOperation(const char* call, bool returns_request,
                   MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  if (returns_request && request == nullptr) {
    return minimpi::NullArgument(call, nullptr, "request");
  }
  return MPI_SUCCESS;
}

int PutOrGet(const char* call, bool read, void* origin_addr,
             int64_t origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int64_t target_count,
             MPI_Datatype target_datatype, MPI_Win win, bool returns_request,
             MPI_Request* request) {
  if (int error = BeginOperation(call, returns_request, request)) return error;
  WindowObject* w;
  if (int error = minimpi::CheckWindow(call, win, &w)) return error;
  const Datatype* origin;
  const Datatype* target;
  if (int error = CheckData(call, w, origin_count, origin_datatype, "origin",
                            &origin)) {
    return error;
  }
  if (int error = CheckData(call, w, target_count, target_datatype, "target",
                            &target)) {
    return error;
  }
  bool skip;
  if (int error = CheckTarget(call, w, target_rank, target_disp, target_count,
                              target, request != nullptr, &skip)) {
    return error;
  }
  if (int error =
          CheckSameSize(call, w, origin_count, origin, target_count, target)) {
    return error;
  }
  if (skip) {
    if (request != nullptr) *request = CompletedRequest(w);
    return MPI_SUCCESS;
  }
  w->window->CountOperation(read ? minimpi::rma::OperationKind::kGet
                                 : minimpi::rma::OperationKind::kPut);
  minimpi::vci::Request* r =
      request != nullptr ? Engine().NewRequest(*w->window) : nullptr;
  const minimpi::rma::Buffer local =
      BufferOf(origin_addr, origin_count, origin);
  const minimpi::rma::TargetSpan span =
      SpanOf(target_rank, target_disp, target_count, target);
  if (read) {
    Engine().Get(*w->window, local, span, r);
  } else {
    Engine().Put(*w->window, local, span, r);
  }
  if (request != nullptr) *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int AccumulateCall(const char* call, const void* origin_addr,
                   int64_t origin_count, MPI_Datatype origin_datatype,
                   void* result_addr, int64_t result_count,
                   MPI_Datatype result_datatype,
                   minimpi::rma::OperationKind kind, int target_rank,
                   MPI_Aint target_disp, int64_t target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                   bool returns_request, MPI_Request* request) {
  if (int error = BeginOperation(call, returns_request, request)) return error;
  const bool fetch = kind != minimpi::rma::OperationKind::kAccumulate;
  WindowObject* w;
  if (int error = minimpi::CheckWindow(call, win, &w)) return error;
  const Datatype* origin = nullptr;
  const Datatype* result = nullptr;
  const Datatype* target;
  const bool sends_data = !(fetch && op == MPI_NO_OP);
  if (sends_data) {
    if (int error = CheckData(call, w, origin_count, origin_datatype, "origin",
                              &origin)) {
      return error;
    }
  }
  if (fetch) {
    if (int error = CheckData(call, w, result_count, result_datatype, "result",
                              &result)) {
      return error;
    }
  }
  if (int error = CheckData(call, w, target_count, target_datatype, "target",
                            &target)) {
    return error;
  }
  MPI_Datatype basic;
  if (int error = CheckAccumulate(call, w, op, origin, origin_datatype,
                                  target_datatype, &basic)) {
    return error;
  }
  bool skip;
  if (int error = CheckTarget(call, w, target_rank, target_disp, target_count,
                              target, request != nullptr, &skip)) {
    return error;
  }
  if (sends_data) {
    if (int error = CheckSameSize(call, w, origin_count, origin, target_count,
                                  target)) {
      return error;
    }
  }
  if (fetch) {
    if (int error = CheckSameSize(call, w, result_count, result, target_count,
                                  target)) {
      return error;
    }
  }
  if (skip) {
    if (request != nullptr) *request = CompletedRequest(w);
    return MPI_SUCCESS;
  }
  w->window->CountOperation(kind);
  minimpi::vci::Request* r =
      request != nullptr ? Engine().NewRequest(*w->window) : nullptr;
  const minimpi::rma::Buffer source =
      sends_data ? BufferOf(origin_addr, origin_count, origin)
                 : minimpi::rma::Buffer{nullptr, 0, &target->layout()};
  minimpi::rma::Buffer into;
  if (fetch) into = BufferOf(result_addr, result_count, result);
  Engine().Accumulate(*w->window, source, fetch ? &into : nullptr,
                      SpanOf(target_rank, target_disp, target_count, target),
                      HandleWord(op), HandleWord(basic), r);
  if (request != nullptr) *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Put(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win) {
  return PutOrGet("MPI_Put", false, const_cast<void*>(origin_addr),
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, /*returns_request=*/false,
                  nullptr);
}

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win) {
  return PutOrGet("MPI_Get", true, origin_addr, origin_count, origin_datatype,
                  target_rank, target_disp, target_count, target_datatype, win,
                  /*returns_request=*/false, nullptr);
}

int PMPI_Rput(const void* origin_addr, int origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PutOrGet("MPI_Rput", false, const_cast<void*>(origin_addr),
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, /*returns_request=*/true,
                  request);
}

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PutOrGet("MPI_Rget", true, origin_addr, origin_count, origin_datatype,
                  target_rank, target_disp, target_count, target_datatype, win,
                  /*returns_request=*/true, request);
}

int PMPI_Accumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Accumulate");
  if (op == MPI_NO_OP) {
    // Nothing to add (MPI-4.1 lists MPI_NO_OP for the fetching calls only).
    WindowObject* w;
    if (int error = minimpi::CheckWindow("MPI_Accumulate", win, &w)) {
      return error;
    }
    return RaiseOnWindow(w, "MPI_Accumulate", MPI_ERR_OP,
                         "MPI_NO_OP is for MPI_Get_accumulate and "
                         "MPI_Fetch_and_op");
  }
  return AccumulateCall("MPI_Accumulate", origin_addr, origin_count,
                        origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                        minimpi::rma::OperationKind::kAccumulate, target_rank,
                        target_disp, target_count, target_datatype, op, win,
                        /*returns_request=*/false, nullptr);
}

int PMPI_Raccumulate(const void* origin_addr, int origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
  return AccumulateCall("MPI_Raccumulate", origin_addr, origin_count,
                        origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                        minimpi::rma::OperationKind::kAccumulate, target_rank,
                        target_disp, target_count, target_datatype, op, win,
                        /*returns_request=*/true, request);
}

int PMPI_Get_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return AccumulateCall("MPI_Get_accumulate", origin_addr, origin_count,
                        origin_datatype, result_addr, result_count,
                        result_datatype,
                        minimpi::rma::OperationKind::kGetAccumulate,
                        target_rank, target_disp, target_count, target_datatype,
                        op, win, /*returns_request=*/false, nullptr);
}

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype,
                         MPI_Op op, MPI_Win win, MPI_Request* request) {
  return AccumulateCall("MPI_Rget_accumulate", origin_addr, origin_count,
                        origin_datatype, result_addr, result_count,
                        result_datatype,
                        minimpi::rma::OperationKind::kGetAccumulate,
                        target_rank, target_disp, target_count, target_datatype,
                        op, win, /*returns_request=*/true, request);
}

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                      MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Fetch_and_op");
  if (minimpi::datatype::FindPredefined(datatype) == nullptr) {
    WindowObject* w;
    if (int error = minimpi::CheckWindow("MPI_Fetch_and_op", win, &w)) {
      return error;
    }
    return RaiseOnWindow(w, "MPI_Fetch_and_op", MPI_ERR_TYPE,
                         "MPI_Fetch_and_op takes a predefined datatype");
  }
  return AccumulateCall(
      "MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
      minimpi::rma::OperationKind::kFetchAndOp, target_rank, target_disp, 1,
      datatype, op, win, /*returns_request=*/false, nullptr);
}

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                          void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win) {
  constexpr const char* kCall = "MPI_Compare_and_swap";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  const minimpi::datatype::PredefinedType* type =
      minimpi::datatype::FindPredefined(datatype);
  if (type == nullptr || type->is_pair ||
      !minimpi::LookupOp(MPI_BAND)->Supports(datatype)) {
    // The standard allows C and Fortran integers, logicals and bytes.
    if (type == nullptr || type->is_pair ||
        (datatype != MPI_BYTE && datatype != MPI_C_BOOL)) {
      return RaiseOnWindow(w, kCall, MPI_ERR_TYPE,
                           "MPI_Compare_and_swap takes a predefined integer, "
                           "logical or byte type");
    }
  }
  const Datatype* described = minimpi::LookupDatatype(datatype);
  bool skip;
  if (int error = CheckTarget(kCall, w, target_rank, target_disp, 1, described,
                              false, &skip)) {
    return error;
  }
  if (origin_addr == nullptr || compare_addr == nullptr ||
      result_addr == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_BUFFER, "null buffer");
  }
  if (skip) return MPI_SUCCESS;
  w->window->CountOperation(minimpi::rma::OperationKind::kCompareAndSwap);
  Engine().CompareAndSwap(*w->window, origin_addr, compare_addr, result_addr,
                          type->size, HandleWord(datatype),
                          SpanOf(target_rank, target_disp, 1, described));
  return MPI_SUCCESS;
}

// The large-count forms (MPI-4): the same calls with MPI_Count counts.

int PMPI_Put_c(const void* origin_addr, MPI_Count origin_count,
               MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
  return PutOrGet("MPI_Put_c", false, const_cast<void*>(origin_addr),
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, /*returns_request=*/false,
                  nullptr);
}

int PMPI_Get_c(void* origin_addr, MPI_Count origin_count,
               MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
  return PutOrGet("MPI_Get_c", true, origin_addr, origin_count, origin_datatype,
                  target_rank, target_disp, target_count, target_datatype, win,
                  /*returns_request=*/false, nullptr);
}

int PMPI_Rput_c(const void* origin_addr, MPI_Count origin_count,
                MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request* request) {
  return PutOrGet("MPI_Rput_c", false, const_cast<void*>(origin_addr),
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, /*returns_request=*/true,
                  request);
}

int PMPI_Rget_c(void* origin_addr, MPI_Count origin_count,
                MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request* request) {
  return PutOrGet("MPI_Rget_c", true, origin_addr, origin_count,
                  origin_datatype, target_rank, target_disp, target_count,
                  target_datatype, win, /*returns_request=*/true, request);
}

int PMPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  MINIMPI_REQUIRE_INIT("MPI_Accumulate_c");
  if (op == MPI_NO_OP) {
    return PMPI_Accumulate(origin_addr, 0, origin_datatype, target_rank,
                           target_disp, 0, target_datatype, op, win);
  }
  return AccumulateCall("MPI_Accumulate_c", origin_addr, origin_count,
                        origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                        minimpi::rma::OperationKind::kAccumulate, target_rank,
                        target_disp, target_count, target_datatype, op, win,
                        /*returns_request=*/false, nullptr);
}

int PMPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request* request) {
  return AccumulateCall("MPI_Raccumulate_c", origin_addr, origin_count,
                        origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                        minimpi::rma::OperationKind::kAccumulate, target_rank,
                        target_disp, target_count, target_datatype, op, win,
                        /*returns_request=*/true, request);
}

int PMPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr,
                          MPI_Count result_count, MPI_Datatype result_datatype,
                          int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype,
                          MPI_Op op, MPI_Win win) {
  return AccumulateCall("MPI_Get_accumulate_c", origin_addr, origin_count,
                        origin_datatype, result_addr, result_count,
                        result_datatype,
                        minimpi::rma::OperationKind::kGetAccumulate,
                        target_rank, target_disp, target_count, target_datatype,
                        op, win, /*returns_request=*/false, nullptr);
}

int PMPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void* result_addr,
                           MPI_Count result_count, MPI_Datatype result_datatype,
                           int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype,
                           MPI_Op op, MPI_Win win, MPI_Request* request) {
  return AccumulateCall("MPI_Rget_accumulate_c", origin_addr, origin_count,
                        origin_datatype, result_addr, result_count,
                        result_datatype,
                        minimpi::rma::OperationKind::kGetAccumulate,
                        target_rank, target_disp, target_count, target_datatype,
                        op, win, /*returns_request=*/true, request);
}

}  // extern "C"

MINIMPI_EXPORT(Put_c)
MINIMPI_EXPORT(Get_c)
MINIMPI_EXPORT(Rput_c)
MINIMPI_EXPORT(Rget_c)
MINIMPI_EXPORT(Accumulate_c)
MINIMPI_EXPORT(Raccumulate_c)
MINIMPI_EXPORT(Get_accumulate_c)
MINIMPI_EXPORT(Rget_accumulate_c)
MINIMPI_EXPORT(Put)
MINIMPI_EXPORT(Get)
MINIMPI_EXPORT(Rput)
MINIMPI_EXPORT(Rget)
MINIMPI_EXPORT(Accumulate)
MINIMPI_EXPORT(Raccumulate)
MINIMPI_EXPORT(Get_accumulate)
MINIMPI_EXPORT(Rget_accumulate)
MINIMPI_EXPORT(Fetch_and_op)
MINIMPI_EXPORT(Compare_and_swap)
