// A request's life outside completion: MPI_Start and MPI_Startall
// (persistent requests of every kind), MPI_Request_free, MPI_Cancel.
// Completion (Wait/Test, Request_get_status) is in completion.cc.
#include <algorithm>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/buffered_send.h"  // compat
#include "mpi/bindings/generalized_requests.h"
#include "mpi/bindings/request_util.h"
#include "mpi/coll/persistent.h"

using minimpi::Instance;
using minimpi::InvalidRequest;
using minimpi::kStaleRequest;
using minimpi::OwnerOf;
using minimpi::RaiseError;
namespace vci = minimpi::vci;

namespace {

// Room for a typical Startall without a heap allocation (as completion.cc's
// request lists).
using RequestList = absl::InlinedVector<vci::Request*, 64>;

using vci::IsActive;

// The request MPI_Request_free or MPI_Cancel (`action`: "free",
// "cancel") is given: a live one, never MPI_REQUEST_NULL.
int CheckRequest(const char* call, MPI_Request* request, const char* action,
                 vci::Request** r) {
  if (request == nullptr) return InvalidRequest(call, "null request pointer");
  if (*request == MPI_REQUEST_NULL) {
    return InvalidRequest(
        call, absl::StrCat("cannot ", action, " MPI_REQUEST_NULL").c_str());
  }
  *r = minimpi::ToRequest(*request);
  if (*r == nullptr) return InvalidRequest(call, kStaleRequest);
  return MPI_SUCCESS;
}

// The request behind a handle given to MPI_Start or MPI_Startall (at
// `index`, or -1 for MPI_Start): a persistent request that is not active.
int CheckStartable(const char* call, MPI_Request handle, int index,
                   vci::Request** r) {
  const std::string where =
      index < 0 ? std::string() : absl::StrFormat(" at index %d", index);
  if (handle == MPI_REQUEST_NULL) {
    return InvalidRequest(
        call,
        absl::StrCat("invalid request", where, " (MPI_REQUEST_NULL)").c_str());
  }
  *r = minimpi::ToRequest(handle);
  if (*r == nullptr) {
    return InvalidRequest(
        call, absl::StrCat("invalid request handle", where,
                           " (already completed, freed, or never a request)")
                  .c_str());
  }
  if (!(*r)->persistent) {
    return RaiseError(OwnerOf(*r), call, MPI_ERR_REQUEST,
                      absl::StrCat("request", where, " is not persistent"));
  }
  if (IsActive(*r)) {
    return RaiseError(OwnerOf(*r), call, MPI_ERR_REQUEST,
                      absl::StrCat("request", where, " is already active"));
  }
  return MPI_SUCCESS;
}

// Starts a request CheckStartable accepted.
int StartChecked(const char* call, vci::Request* r) {
  // compat: a persistent buffered send (MPI_Bsend_init) copies its data into
  // the attached buffer at each start; p2p then just completes it.
  if (r->kind == vci::RequestKind::kSend &&
      r->send.mode == vci::SendMode::kBuffered) {
    if (int error = minimpi::BufferedSend(call, OwnerOf(r), r->send)) {
      return error;
    }
  }
  if (minimpi::part::Partitioned::IsPartitioned(r)) {
    Instance::Get().partitioned().Start(r);
    return MPI_SUCCESS;
  }
  if (minimpi::coll::PersistentCollective::Is(r)) {
    minimpi::coll::PersistentCollective::Start(r);
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().Start(r);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Request_free(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Request_free";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r;
  if (int error = CheckRequest(kCall, request, "free", &r)) return error;
  if (minimpi::IsGeneralized(r)) {
    *request = MPI_REQUEST_NULL;
    if (int error = minimpi::FreeGeneralized(r)) {
      return minimpi::RaiseErrorCode(nullptr, kCall, error,
                                     "a generalized request's free function "
                                     "failed");
    }
    return MPI_SUCCESS;
  }
  if (minimpi::part::Partitioned::IsPartitioned(r)) {
    // MPI-4.1 section 4.2: freeing an active partitioned request is
    // erroneous (its buffer and its peer are still in use).
    if (r->state.load(std::memory_order_acquire) ==
        vci::RequestState::kActive) {
      return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                        "cannot free an active partitioned request (wait "
                        "for it first)");
    }
    Instance::Get().partitioned().Free(r);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  }
  Instance::Get().p2p().Free(r);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Cancel";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r;
  if (int error = CheckRequest(kCall, request, "cancel", &r)) return error;
  if (minimpi::part::Partitioned::IsPartitioned(r)) {
    // MPI-4.1 gives partitioned operations no cancellation (they match
    // once, at initialization, and a round ends only when every partition
    // has moved), and MPICH reports it as an error. Ignoring it would leave
    // the MPI_Wait that follows waiting for partitions nobody marks ready.
    return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "cannot cancel a partitioned request (mark every "
                      "partition ready and wait for it instead)");
  }
  if (!IsActive(r)) {
    return RaiseError(OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "cannot cancel an inactive persistent request");
  }
  // Receives that have not matched are cancelled, and so are sends whose
  // message has not matched (p2p asks the receiver); an operation that has
  // matched completes normally, which the standard allows.
  if (r->kind == vci::RequestKind::kReceive) {
    Instance::Get().p2p().CancelReceive(r);
  } else if (r->kind == vci::RequestKind::kSend) {
    Instance::Get().p2p().CancelSend(r);
  } else if (minimpi::IsGeneralized(r)) {
    if (int error = minimpi::CancelGeneralized(r)) {
      return minimpi::RaiseErrorCode(nullptr, kCall, error,
                                     "a generalized request's cancel function "
                                     "failed");
    }
  }
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Start";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr) return InvalidRequest(kCall, "null request pointer");
  vci::Request* r;
  if (int error = CheckStartable(kCall, *request, -1, &r)) return error;
  return StartChecked(kCall, r);
}

// Every request is checked before any starts: a bad one at index k must not
// leave the ones before it active behind an error the program sees as
// "nothing started".
int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  constexpr const char* kCall = "MPI_Startall";
  MINIMPI_REQUIRE_INIT(kCall);
  if (count < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  if (count > 0 && array_of_requests == nullptr) {
    return InvalidRequest(kCall, "null array of requests");
  }
  RequestList requests(count);
  for (int i = 0; i < count; ++i) {
    if (int error =
            CheckStartable(kCall, array_of_requests[i], i, &requests[i])) {
      return error;
    }
  }
  // The same request twice would start it twice, two runs of one
  // operation sharing its buffers and its schedule.
  if (count > 1) {
    RequestList sorted = requests;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return InvalidRequest(kCall,
                            "the same request appears twice in the array");
    }
  }
  for (int i = 0; i < count; ++i) {
    if (int error = StartChecked(kCall, requests[i])) return error;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Request_free)
MINIMPI_EXPORT(Cancel)
MINIMPI_EXPORT(Start)
MINIMPI_EXPORT(Startall)
