// Completion: Wait/Test in all their forms, Request_get_status. Cancel,
// Request_free and Start/Startall are in request_lifecycle.cc.
//
// Standard rules kept here: a null or inactive request completes at once
// with an empty status; Wait/Test free a finished nonblocking request (the
// handle becomes MPI_REQUEST_NULL) and turn a persistent one inactive;
// Waitany/Testany report MPI_UNDEFINED when no request is active;
// Waitsome/Testsome report outcount MPI_UNDEFINED then.
//
// Generalized requests (generalized_requests.h) complete when the program
// says so; collecting one runs its query and free callbacks.
//
// Every handle is translated once, up front: a handle that names no request
// (freed, already completed and collected, or garbage) is MPI_ERR_REQUEST
// before anything waits.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/generalized_requests.h"
#include "mpi/bindings/request_util.h"
#include "mpi/tool/events.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::OwnerOf;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

namespace {

// The requests an array of handles names; nullptr for MPI_REQUEST_NULL.
// Room for a typical window of nonblocking calls (64, as OSU's message-rate
// benchmarks use) without a heap allocation per call.
using RequestList = absl::InlinedVector<vci::Request*, 64>;

using minimpi::InvalidRequest;
using minimpi::kStaleRequest;
using vci::IsActive;

bool IsDone(const vci::Request* r) { return p2p::PointToPoint::IsComplete(r); }

// A null output argument (flag, index, outcount, array_of_indices).
[[gnu::cold]] int NullOutput(const char* call, const char* what) {
  return RaiseError(nullptr, call, MPI_ERR_ARG, absl::StrCat("null ", what));
}

// Translates one handle; MPI_REQUEST_NULL gives nullptr and success.
int Translate(const char* call, MPI_Request handle, vci::Request** r) {
  if (handle == MPI_REQUEST_NULL) {
    *r = nullptr;
    return MPI_SUCCESS;
  }
  *r = minimpi::ToRequest(handle);
  if (*r != nullptr) [[likely]]
    return MPI_SUCCESS;
  return InvalidRequest(call, kStaleRequest);
}

int TranslateArray(const char* call, int count, const MPI_Request* array,
                   RequestList* requests) {
  if (count < 0) {
    return RaiseError(nullptr, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  if (count > 0 && array == nullptr) {
    return InvalidRequest(call, "null array of requests");
  }
  requests->resize(count);
  // Through a plain pointer: each access to the vector would test again
  // whether it lives inline or on the heap.
  vci::Request** translated = requests->data();
  for (int i = 0; i < count; ++i) {
    if (array[i] == MPI_REQUEST_NULL) {
      translated[i] = nullptr;
      continue;
    }
    translated[i] = minimpi::ToRequest(array[i]);
    if (translated[i] == nullptr) [[unlikely]] {
      return InvalidRequest(
          call, absl::StrFormat("invalid request handle at index %d (already "
                                "completed, freed, or never a request)",
                                i)
                    .c_str());
    }
  }
  return MPI_SUCCESS;
}

// Whether any request is active: the "nothing to wait for" rule of
// Waitany/Waitsome.
bool AnyActive(const RequestList& requests) {
  for (const vci::Request* r : requests) {
    if (IsActive(r)) return true;
  }
  return false;
}

// Collect for a generalized request, out of the loops' way.
[[gnu::noinline]] bool CollectGeneralizedOne(vci::Request* r,
                                             MPI_Request* handle,
                                             MPI_Status* status,
                                             Communicator** owner) {
  *owner = nullptr;
  const int error = minimpi::CollectGeneralized(r, status);
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = error;
  *handle = MPI_REQUEST_NULL;
  return error != MPI_SUCCESS;
}

// For the calls that return several statuses (Waitall, Testall, Waitsome,
// Testsome): hands a finished request's status to the user, MPI_ERROR
// included, and retires the request (the handle becomes MPI_REQUEST_NULL
// unless it is persistent; a released request goes back to its pool through
// `batch`). Returns true when it carried an error (truncation), and then
// sets *owner, the communicator to raise it on. Inline into its two
// loops: it runs once per request of a Waitall.
[[gnu::always_inline]] inline bool Collect(vci::Request* r, MPI_Request* handle,
                                           MPI_Status* status,
                                           Communicator** owner,
                                           p2p::PointToPoint& engine,
                                           vci::ReleaseBatch& batch) {
  if (minimpi::IsGeneralized(r)) [[unlikely]] {
    return CollectGeneralizedOne(r, handle, status, owner);
  }
  const bool failed = r->status.error != vci::Error::kNone;
  if (status != MPI_STATUS_IGNORE) {
    minimpi::ToMpiStatus(r->status, status);
    status->MPI_ERROR = failed ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  }
  // Looked up only when needed: the communicator lookup costs more than
  // the rest of collecting a request.
  if (failed) [[unlikely]]
    *owner = OwnerOf(r);
  const bool persistent = r->persistent;
  engine.Retire(r, batch);
  if (!persistent) *handle = MPI_REQUEST_NULL;
  return failed;
}

// For the calls that return one status (Wait, Test, Waitany, Testany):
// like Collect, but MPI_ERROR is left alone and the error is raised on the
// request's communicator.
int CollectOne(const char* call, vci::Request* r, MPI_Request* handle,
               MPI_Status* status) {
  if (minimpi::IsGeneralized(r)) {
    const int error = minimpi::CollectGeneralized(r, status);
    *handle = MPI_REQUEST_NULL;
    if (error == MPI_SUCCESS) return MPI_SUCCESS;
    return minimpi::RaiseErrorCode(nullptr, call, error,
                                   "a generalized request's query or free "
                                   "function failed");
  }
  Communicator* owner = OwnerOf(r);
  minimpi::ToMpiStatus(r->status, status);
  const int error = minimpi::RaiseRequestError(call, r, owner);
  const bool persistent = r->persistent;
  Instance::Get().p2p().Retire(r);
  if (!persistent) *handle = MPI_REQUEST_NULL;
  return error;
}

MPI_Status* StatusAt(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// One round of progress for a test on `requests` (VciSet::TestRound on the
// VCI they share, or on every VCI).
void ProgressFor(const RequestList& requests) {
  Instance::Get().vcis().TestRound(vci::CommonVci(requests), [&requests] {
    for (const vci::Request* r : requests) {
      if (IsActive(r) && !IsDone(r)) return false;
    }
    return true;
  });
}

// The end of Waitall/Testall/Waitsome/Testsome when some request failed:
// every reported status gets its MPI_ERROR and the call raises
// MPI_ERR_IN_STATUS.
int RaiseInStatus(const char* call, Communicator* owner, int failed_index) {
  return RaiseError(
      owner, call, MPI_ERR_IN_STATUS,
      absl::StrFormat("request %d failed (see its status)", failed_index));
}

// The end of Waitall/Testall: statuses for all, empty ones for null or
// inactive requests, in array order. Waitall collects the requests a wait
// has passed while it still waits for later ones (CollectUpTo), so that a
// window of receives completing one by one costs the last arrival only the
// collection of the last requests, not the whole window's (measured: about
// 18 ns a request on the 2-core machine, 1.1 us for a window of 64).
class AllCollector {
 public:
  AllCollector(const char* call, const RequestList& requests,
               MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
      : call_(call),
        requests_(requests),
        handles_(array_of_requests),
        statuses_(array_of_statuses),
        engine_(Instance::Get().p2p()) {}

  // Collects the requests before `end` (every one of them done, null or
  // inactive) not collected yet. With `before_generalized`, stops at a
  // generalized request: its callbacks run only once the wait is over.
  void CollectUpTo(size_t end, bool before_generalized) {
    for (; next_ < end; ++next_) {
      vci::Request* r = requests_[next_];
      MPI_Status* status = StatusAt(statuses_, static_cast<int>(next_));
      if (!IsActive(r)) {
        minimpi::SetEmptyStatus(status);
        continue;
      }
      if (before_generalized && minimpi::IsGeneralized(r)) [[unlikely]]
        return;
      Communicator* owner;
      if (Collect(r, &handles_[next_], status, &owner, engine_, batch_) &&
          failed_index_ < 0) {
        failed_index_ = static_cast<int>(next_);
        failed_owner_ = owner;
      }
    }
  }

  // Collects the rest and returns the call's result.
  int Finish() {
    CollectUpTo(requests_.size(), /*before_generalized=*/false);
    batch_.Flush();
    if (failed_index_ >= 0) {
      return RaiseInStatus(call_, failed_owner_, failed_index_);
    }
    return MPI_SUCCESS;
  }

 private:
  const char* const call_;
  const RequestList& requests_;
  MPI_Request* const handles_;
  MPI_Status* const statuses_;
  p2p::PointToPoint& engine_;
  vci::ReleaseBatch batch_;
  size_t next_ = 0;  // the first request not collected yet
  int failed_index_ = -1;
  Communicator* failed_owner_ = nullptr;
};

int CollectAll(const char* call, const RequestList& requests,
               MPI_Request array_of_requests[],
               MPI_Status array_of_statuses[]) {
  return AllCollector(call, requests, array_of_requests, array_of_statuses)
      .Finish();
}

// Shared by Waitsome and Testsome: collects every finished request.
int CollectSome(const char* call, const RequestList& requests,
                MPI_Request array_of_requests[], int* outcount,
                int array_of_indices[], MPI_Status array_of_statuses[]) {
  int failed_index = -1;
  Communicator* failed_owner = nullptr;
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::ReleaseBatch batch;
  *outcount = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!IsActive(requests[i]) || !IsDone(requests[i])) continue;
    MPI_Status* status = StatusAt(array_of_statuses, *outcount);
    array_of_indices[*outcount] = static_cast<int>(i);
    ++*outcount;
    Communicator* owner;
    if (Collect(requests[i], &array_of_requests[i], status, &owner, engine,
                batch) &&
        failed_index < 0) {
      failed_index = static_cast<int>(i);
      failed_owner = owner;
    }
  }
  if (failed_index >= 0) return RaiseInStatus(call, failed_owner, failed_index);
  return MPI_SUCCESS;
}

// MPI_Waitsome and MPI_Testsome: one body. Inline, so each keeps only
// its own path.
[[gnu::always_inline]] inline int Some(const char* call, bool blocking,
                                       int incount,
                                       MPI_Request array_of_requests[],
                                       int* outcount, int array_of_indices[],
                                       MPI_Status array_of_statuses[]) {
  MINIMPI_REQUIRE_INIT(call);
  if (outcount == nullptr) [[unlikely]]
    return NullOutput(call, "outcount");
  if (incount > 0 && array_of_indices == nullptr) [[unlikely]]
    return NullOutput(call, "array_of_indices");
  RequestList requests;
  if (int error = TranslateArray(call, incount, array_of_requests, &requests)) {
    return error;
  }
  if (!AnyActive(requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (blocking) {
    Instance::Get().vcis().WaitUntil(vci::CommonVci(requests), [&] {
      for (const vci::Request* r : requests) {
        if (IsActive(r) && IsDone(r)) return true;
      }
      return false;
    });
  } else {
    ProgressFor(requests);
  }
  return CollectSome(call, requests, array_of_requests, outcount,
                     array_of_indices, array_of_statuses);
}

// MPI-4.1's MPI_Request_get_status_{any,all,some}: the status of a finished
// active request, which stays as it is (never freed, never made inactive).
// MPI_ERROR is set when `with_error` (the calls with arrays of statuses);
// returns the error class the request carries, MPI_SUCCESS if none.
int PeekStatus(vci::Request* r, MPI_Status* status, bool with_error) {
  int error = MPI_SUCCESS;
  if (minimpi::IsGeneralized(r)) {
    error = minimpi::QueryGeneralized(r, status);
  } else {
    minimpi::ToMpiStatus(r->status, status);
    if (r->status.error != vci::Error::kNone) error = MPI_ERR_TRUNCATE;
  }
  if (with_error && status != MPI_STATUS_IGNORE) status->MPI_ERROR = error;
  return error;
}

}  // namespace

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Wait";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr) return InvalidRequest(kCall, "null request pointer");
  vci::Request* r;
  if (int error = Translate(kCall, *request, &r)) return error;
  if (!IsActive(r)) {
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().Wait(r);
  const int error = CollectOne(kCall, r, request, status);
  // MPI_T callbacks that asked for a context free of locks run here.
  minimpi::tool::DeliverEventsIfPending();
  return error;
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Test";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr) return InvalidRequest(kCall, "null request pointer");
  if (flag == nullptr) [[unlikely]]
    return NullOutput(kCall, "flag");
  vci::Request* r;
  if (int error = Translate(kCall, *request, &r)) return error;
  if (!IsActive(r)) {
    *flag = 1;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  if (!IsDone(r)) {
    Instance::Get().vcis().TestRound(r->vci, [r] { return IsDone(r); });
  }
  *flag = IsDone(r);
  if (!*flag) return MPI_SUCCESS;
  return CollectOne(kCall, r, request, status);
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                 MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Waitall";
  MINIMPI_REQUIRE_INIT(kCall);
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  // Requests complete and never un-complete while we wait, so each look
  // resumes at the first one the previous look found pending: a window of
  // n requests completing in order costs n checks in all, not n per round.
  // The requests before it are collected meanwhile (never one at or after
  // it: a collected request is back in its pool).
  AllCollector collector(kCall, requests, array_of_requests, array_of_statuses);
  size_t pending = 0;
  Instance::Get().vcis().WaitUntil(vci::CommonVci(requests), [&] {
    for (; pending < requests.size(); ++pending) {
      const vci::Request* r = requests[pending];
      if (IsActive(r) && !IsDone(r)) {
        collector.CollectUpTo(pending, /*before_generalized=*/true);
        return false;
      }
    }
    return true;
  });
  const int error = collector.Finish();
  minimpi::tool::DeliverEventsIfPending();
  return error;
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Testall";
  MINIMPI_REQUIRE_INIT(kCall);
  if (flag == nullptr) [[unlikely]]
    return NullOutput(kCall, "flag");
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  ProgressFor(requests);
  for (const vci::Request* r : requests) {
    if (IsActive(r) && !IsDone(r)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return CollectAll(kCall, requests, array_of_requests, array_of_statuses);
}

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index,
                 int* flag, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Testany";
  MINIMPI_REQUIRE_INIT(kCall);
  if (index == nullptr || flag == nullptr) [[unlikely]]
    return NullOutput(kCall, index == nullptr ? "index" : "flag");
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  ProgressFor(requests);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!IsActive(requests[i])) continue;
    any_active = true;
    if (IsDone(requests[i])) {
      *flag = 1;
      *index = i;
      return CollectOne(kCall, requests[i], &array_of_requests[i], status);
    }
  }
  *index = MPI_UNDEFINED;
  *flag = any_active ? 0 : 1;
  if (!any_active) minimpi::SetEmptyStatus(status);
  return MPI_SUCCESS;
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index,
                 MPI_Status* status) {
  constexpr const char* kCall = "MPI_Waitany";
  MINIMPI_REQUIRE_INIT(kCall);
  if (index == nullptr) [[unlikely]]
    return NullOutput(kCall, "index");
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  if (!AnyActive(requests)) {
    *index = MPI_UNDEFINED;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  int done = -1;
  Instance::Get().vcis().WaitUntil(vci::CommonVci(requests), [&] {
    for (int i = 0; i < count; ++i) {
      if (IsActive(requests[i]) && IsDone(requests[i])) {
        done = i;
        return true;
      }
    }
    return false;
  });
  *index = done;
  return CollectOne(kCall, requests[done], &array_of_requests[done], status);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  return Some("MPI_Waitsome", /*blocking=*/true, incount, array_of_requests,
              outcount, array_of_indices, array_of_statuses);
}

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  return Some("MPI_Testsome", /*blocking=*/false, incount, array_of_requests,
              outcount, array_of_indices, array_of_statuses);
}

int PMPI_Request_get_status(MPI_Request request, int* flag,
                            MPI_Status* status) {
  constexpr const char* kCall = "MPI_Request_get_status";
  MINIMPI_REQUIRE_INIT(kCall);
  if (flag == nullptr) return NullOutput(kCall, "flag");
  vci::Request* r;
  if (int error = Translate(kCall, request, &r)) return error;
  if (!IsActive(r)) {
    *flag = 1;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  if (!IsDone(r)) {
    Instance::Get().vcis().TestRound(r->vci, [r] { return IsDone(r); });
  }
  *flag = IsDone(r);
  if (!*flag) return MPI_SUCCESS;
  if (minimpi::IsGeneralized(r)) {  // the request stays
    if (int error = minimpi::QueryGeneralized(r, status)) {
      return minimpi::RaiseErrorCode(nullptr, kCall, error,
                                     "a generalized request's query function "
                                     "failed");
    }
    return MPI_SUCCESS;
  }
  minimpi::ToMpiStatus(r->status, status);  // the request stays
  return MPI_SUCCESS;
}

// The three calls below test like Testany/Testall/Testsome but leave every
// request as it is: a finished nonblocking request stays allocated and a
// persistent one active, so a later Wait or Test still completes it.
// Null and inactive requests count as Testany and friends count them.
int PMPI_Request_get_status_any(int count, MPI_Request array_of_requests[],
                                int* index, int* flag, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Request_get_status_any";
  MINIMPI_REQUIRE_INIT(kCall);
  if (index == nullptr) return NullOutput(kCall, "index");
  if (flag == nullptr) return NullOutput(kCall, "flag");
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  ProgressFor(requests);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!IsActive(requests[i])) continue;
    any_active = true;
    if (IsDone(requests[i])) {
      *flag = 1;
      *index = i;
      const int error = PeekStatus(requests[i], status, /*with_error=*/false);
      if (error == MPI_SUCCESS) return MPI_SUCCESS;
      return minimpi::RaiseErrorCode(OwnerOf(requests[i]), kCall, error,
                                     "the finished request carries an error");
    }
  }
  *index = MPI_UNDEFINED;
  *flag = any_active ? 0 : 1;
  if (!any_active) minimpi::SetEmptyStatus(status);
  return MPI_SUCCESS;
}

int PMPI_Request_get_status_all(int count, MPI_Request array_of_requests[],
                                int* flag, MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Request_get_status_all";
  MINIMPI_REQUIRE_INIT(kCall);
  if (flag == nullptr) return NullOutput(kCall, "flag");
  RequestList requests;
  if (int error = TranslateArray(kCall, count, array_of_requests, &requests)) {
    return error;
  }
  ProgressFor(requests);
  for (const vci::Request* r : requests) {
    if (IsActive(r) && !IsDone(r)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  int failed_index = -1;
  for (int i = 0; i < count; ++i) {
    MPI_Status* status = StatusAt(array_of_statuses, i);
    if (!IsActive(requests[i])) {
      minimpi::SetEmptyStatus(status);
      continue;
    }
    if (PeekStatus(requests[i], status, /*with_error=*/true) != MPI_SUCCESS &&
        failed_index < 0) {
      failed_index = i;
    }
  }
  if (failed_index < 0) return MPI_SUCCESS;
  return RaiseInStatus(kCall, OwnerOf(requests[failed_index]), failed_index);
}

int PMPI_Request_get_status_some(int incount, MPI_Request array_of_requests[],
                                 int* outcount, int array_of_indices[],
                                 MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Request_get_status_some";
  MINIMPI_REQUIRE_INIT(kCall);
  if (outcount == nullptr) return NullOutput(kCall, "outcount");
  if (incount > 0 && array_of_indices == nullptr) {
    return NullOutput(kCall, "array_of_indices");
  }
  RequestList requests;
  if (int error =
          TranslateArray(kCall, incount, array_of_requests, &requests)) {
    return error;
  }
  if (!AnyActive(requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  ProgressFor(requests);
  int failed_index = -1;
  *outcount = 0;
  for (int i = 0; i < incount; ++i) {
    if (!IsActive(requests[i]) || !IsDone(requests[i])) continue;
    MPI_Status* status = StatusAt(array_of_statuses, *outcount);
    array_of_indices[(*outcount)++] = i;
    if (PeekStatus(requests[i], status, /*with_error=*/true) != MPI_SUCCESS &&
        failed_index < 0) {
      failed_index = i;
    }
  }
  if (failed_index < 0) return MPI_SUCCESS;
  return RaiseInStatus(kCall, OwnerOf(requests[failed_index]), failed_index);
}

}  // extern "C"

MINIMPI_EXPORT(Wait)
MINIMPI_EXPORT(Test)
MINIMPI_EXPORT(Waitall)
MINIMPI_EXPORT(Testall)
MINIMPI_EXPORT(Testany)
MINIMPI_EXPORT(Waitany)
MINIMPI_EXPORT(Waitsome)
MINIMPI_EXPORT(Testsome)
MINIMPI_EXPORT(Request_get_status_any)
MINIMPI_EXPORT(Request_get_status_all)
MINIMPI_EXPORT(Request_get_status_some)
MINIMPI_EXPORT(Request_get_status)
