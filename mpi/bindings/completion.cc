// Completion: Wait/Test in all their forms, Request_get_status, Cancel,
// Request_free, Start/Startall.
//
// Standard rules kept here: a null or inactive request completes at once
// with an empty status; Wait/Test free a finished nonblocking request (the
// handle becomes MPI_REQUEST_NULL) and turn a persistent one inactive;
// Waitany/Testany report MPI_UNDEFINED when no request is active;
// Waitsome/Testsome report outcount MPI_UNDEFINED then.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;

namespace {

bool IsActive(MPI_Request handle) {
  p2p::Request* r = minimpi::ToRequest(handle);
  return r != nullptr && r->state.load(std::memory_order_acquire) !=
                             p2p::RequestState::kInactive;
}

// Whether any of `count` requests is active (not null, not an inactive
// persistent one): the "nothing to wait for" rule of Waitany/Waitsome.
bool AnyActive(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    if (IsActive(requests[i])) return true;
  }
  return false;
}

bool IsDone(MPI_Request handle) {
  return p2p::PointToPoint::IsComplete(minimpi::ToRequest(handle));
}

Communicator* OwnerOf(p2p::Request* r) {
  return static_cast<Communicator*>(r->owner);
}

// Hands a finished request's status to the user and retires the request.
// Returns true when it carried an error (truncation).
bool Collect(MPI_Request* handle, MPI_Status* status, Communicator** owner) {
  p2p::Request* r = minimpi::ToRequest(*handle);
  minimpi::ToMpiStatus(r->status, status);
  bool failed = r->status.error != p2p::Error::kNone;
  *owner = OwnerOf(r);
  bool persistent = r->persistent;
  Instance::Get().p2p().Retire(r);
  if (!persistent) *handle = MPI_REQUEST_NULL;
  return failed;
}

// Like Collect, and raises the error on the request's communicator.
int CollectOne(const char* call, MPI_Request* handle, MPI_Status* status) {
  p2p::Request* r = minimpi::ToRequest(*handle);
  Communicator* owner = OwnerOf(r);
  minimpi::ToMpiStatus(r->status, status);
  int error = minimpi::RaiseRequestError(call, r, owner);
  bool persistent = r->persistent;
  Instance::Get().p2p().Retire(r);
  if (!persistent) *handle = MPI_REQUEST_NULL;
  return error;
}

int CheckRequestArray(const char* call, int count, const MPI_Request* array) {
  if (count < 0) {
    return RaiseError(nullptr, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  if (count > 0 && array == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_REQUEST, "null array of requests");
  }
  for (int i = 0; i < count; ++i) {
    if (array[i] != MPI_REQUEST_NULL && minimpi::IsPredefinedHandle(array[i])) {
      return RaiseError(nullptr, call, MPI_ERR_REQUEST,
                        absl::StrFormat("invalid request at index %d", i));
    }
  }
  return MPI_SUCCESS;
}

MPI_Status* StatusAt(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// The end of Waitall/Testall/Waitsome/Testsome when some request failed:
// every reported status gets its MPI_ERROR and the call raises
// MPI_ERR_IN_STATUS.
int RaiseInStatus(const char* call, Communicator* owner, int failed_index) {
  return RaiseError(
      owner, call, MPI_ERR_IN_STATUS,
      absl::StrFormat("message truncated in request %d (see its status)",
                      failed_index));
}

// The end of Waitall/Testall once every request is done: statuses for all,
// empty ones for null or inactive requests.
int CollectAll(const char* call, int count, MPI_Request array_of_requests[],
               MPI_Status array_of_statuses[]) {
  int failed_index = -1;
  Communicator* failed_owner = nullptr;
  for (int i = 0; i < count; ++i) {
    MPI_Status* status = StatusAt(array_of_statuses, i);
    if (!IsActive(array_of_requests[i])) {
      minimpi::SetEmptyStatus(status);
      continue;
    }
    Communicator* owner;
    if (Collect(&array_of_requests[i], status, &owner) && failed_index < 0) {
      failed_index = i;
      failed_owner = owner;
    }
  }
  if (failed_index >= 0) return RaiseInStatus(call, failed_owner, failed_index);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Wait";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr ||
      (*request != MPI_REQUEST_NULL && minimpi::IsPredefinedHandle(*request))) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST, "invalid request");
  }
  if (!IsActive(*request)) {
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().Wait(minimpi::ToRequest(*request));
  return CollectOne(kCall, request, status);
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Test";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr ||
      (*request != MPI_REQUEST_NULL && minimpi::IsPredefinedHandle(*request))) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST, "invalid request");
  }
  if (!IsActive(*request)) {
    *flag = 1;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  p2p::PointToPoint& engine = Instance::Get().p2p();
  p2p::Request* r = minimpi::ToRequest(*request);
  if (!p2p::PointToPoint::IsComplete(r)) {
    engine.TryProgress(r->vci);
    if (!p2p::PointToPoint::IsComplete(r)) engine.ProgressAll();
  }
  *flag = p2p::PointToPoint::IsComplete(r);
  if (!*flag) return MPI_SUCCESS;
  return CollectOne(kCall, request, status);
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                 MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Waitall";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, count, array_of_requests)) {
    return error;
  }
  p2p::PointToPoint& engine = Instance::Get().p2p();
  // One VCI for all of them lets the wait progress just that VCI.
  int vci = -2;
  for (int i = 0; i < count; ++i) {
    if (!IsActive(array_of_requests[i])) continue;
    int v = minimpi::ToRequest(array_of_requests[i])->vci;
    vci = (vci == -2 || vci == v) ? v : -1;
  }
  engine.WaitUntil(vci < 0 ? -1 : vci, [&] {
    for (int i = 0; i < count; ++i) {
      if (IsActive(array_of_requests[i]) && !IsDone(array_of_requests[i])) {
        return false;
      }
    }
    return true;
  });
  return CollectAll(kCall, count, array_of_requests, array_of_statuses);
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Testall";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, count, array_of_requests)) {
    return error;
  }
  Instance::Get().p2p().ProgressAll();
  for (int i = 0; i < count; ++i) {
    if (IsActive(array_of_requests[i]) && !IsDone(array_of_requests[i])) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return CollectAll(kCall, count, array_of_requests, array_of_statuses);
}

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index,
                 int* flag, MPI_Status* status) {
  constexpr const char* kCall = "MPI_Testany";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, count, array_of_requests)) {
    return error;
  }
  Instance::Get().p2p().ProgressAll();
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!IsActive(array_of_requests[i])) continue;
    any_active = true;
    if (IsDone(array_of_requests[i])) {
      *flag = 1;
      *index = i;
      return CollectOne(kCall, &array_of_requests[i], status);
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
  if (int error = CheckRequestArray(kCall, count, array_of_requests)) {
    return error;
  }
  if (!AnyActive(count, array_of_requests)) {
    *index = MPI_UNDEFINED;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  int done = -1;
  Instance::Get().p2p().WaitUntil(-1, [&] {
    for (int i = 0; i < count; ++i) {
      if (IsActive(array_of_requests[i]) && IsDone(array_of_requests[i])) {
        done = i;
        return true;
      }
    }
    return false;
  });
  *index = done;
  return CollectOne(kCall, &array_of_requests[done], status);
}

namespace {

// Shared by Waitsome and Testsome: collects every finished request.
int CollectSome(const char* call, int incount, MPI_Request array_of_requests[],
                int* outcount, int array_of_indices[],
                MPI_Status array_of_statuses[]) {
  int failed_index = -1;
  Communicator* failed_owner = nullptr;
  *outcount = 0;
  for (int i = 0; i < incount; ++i) {
    if (!IsActive(array_of_requests[i]) || !IsDone(array_of_requests[i])) {
      continue;
    }
    MPI_Status* status = StatusAt(array_of_statuses, *outcount);
    array_of_indices[*outcount] = i;
    ++*outcount;
    Communicator* owner;
    if (Collect(&array_of_requests[i], status, &owner) && failed_index < 0) {
      failed_index = i;
      failed_owner = owner;
    }
  }
  if (failed_index >= 0) return RaiseInStatus(call, failed_owner, failed_index);
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Waitsome";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, incount, array_of_requests)) {
    return error;
  }
  if (!AnyActive(incount, array_of_requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().WaitUntil(-1, [&] {
    for (int i = 0; i < incount; ++i) {
      if (IsActive(array_of_requests[i]) && IsDone(array_of_requests[i])) {
        return true;
      }
    }
    return false;
  });
  return CollectSome(kCall, incount, array_of_requests, outcount,
                     array_of_indices, array_of_statuses);
}

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  constexpr const char* kCall = "MPI_Testsome";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, incount, array_of_requests)) {
    return error;
  }
  if (!AnyActive(incount, array_of_requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().ProgressAll();
  return CollectSome(kCall, incount, array_of_requests, outcount,
                     array_of_indices, array_of_statuses);
}

int PMPI_Request_get_status(MPI_Request request, int* flag,
                            MPI_Status* status) {
  constexpr const char* kCall = "MPI_Request_get_status";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request != MPI_REQUEST_NULL && minimpi::IsPredefinedHandle(request)) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST, "invalid request");
  }
  if (!IsActive(request)) {
    *flag = 1;
    minimpi::SetEmptyStatus(status);
    return MPI_SUCCESS;
  }
  p2p::Request* r = minimpi::ToRequest(request);
  if (!p2p::PointToPoint::IsComplete(r)) Instance::Get().p2p().ProgressAll();
  *flag = p2p::PointToPoint::IsComplete(r);
  if (*flag) minimpi::ToMpiStatus(r->status, status);  // the request stays
  return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Request_free";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr || minimpi::IsPredefinedHandle(*request)) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST,
                      "invalid request (MPI_REQUEST_NULL or not a request)");
  }
  Instance::Get().p2p().Free(minimpi::ToRequest(*request));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Cancel";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr || minimpi::IsPredefinedHandle(*request)) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST, "invalid request");
  }
  p2p::Request* r = minimpi::ToRequest(*request);
  if (!IsActive(*request)) {
    return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "cannot cancel an inactive persistent request");
  }
  // Receives that have not matched are cancelled; a send (or a receive that
  // already matched) completes normally, which the standard allows.
  if (r->kind == p2p::RequestKind::kReceive) {
    Instance::Get().p2p().CancelReceive(r);
  }
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Start";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr || minimpi::IsPredefinedHandle(*request)) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST,
                      "invalid request (MPI_REQUEST_NULL or not a request)");
  }
  p2p::Request* r = minimpi::ToRequest(*request);
  if (!r->persistent) {
    return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "request is not persistent");
  }
  if (IsActive(*request)) {
    return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "request is already active");
  }
  Instance::Get().p2p().Start(r);
  return MPI_SUCCESS;
}

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  constexpr const char* kCall = "MPI_Startall";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckRequestArray(kCall, count, array_of_requests)) {
    return error;
  }
  for (int i = 0; i < count; ++i) {
    if (int error = PMPI_Start(&array_of_requests[i])) return error;
  }
  return MPI_SUCCESS;
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
MINIMPI_EXPORT(Request_get_status)
MINIMPI_EXPORT(Request_free)
MINIMPI_EXPORT(Cancel)
MINIMPI_EXPORT(Start)
MINIMPI_EXPORT(Startall)
