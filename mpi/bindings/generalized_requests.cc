#include "mpi/bindings/generalized_requests.h"

#include <mutex>

#include "mpi/bindings/binding_util.h"

using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

namespace minimpi {
namespace {

struct Generalized {
  MPI_Grequest_query_function* query_fn;
  MPI_Grequest_free_function* free_fn;
  MPI_Grequest_cancel_function* cancel_fn;
  void* extra_state;
  // MPI_Grequest_complete and MPI_Request_free may race (any thread may
  // call either); whichever comes second runs free_fn.
  std::mutex mutex;
  bool completed = false;  // guarded by mutex
  bool freed = false;      // guarded by mutex
};

Generalized* Of(vci::Request* r) {
  return static_cast<Generalized*>(r->extension);
}

// Runs free_fn and releases everything; returns free_fn's code.
int Release(vci::Request* r) {
  Generalized* g = Of(r);
  const int error = g->free_fn(g->extra_state);
  // MPI_Grequest_complete publishes completion while it holds the mutex:
  // let it go before the memory does.
  { std::lock_guard<std::mutex> wait_for_completer(g->mutex); }
  delete g;
  r->extension = nullptr;
  Instance::Get().p2p().Retire(r);
  return error;
}

// query_fn into `status` (or a scratch status), MPI_ERROR kept.
int Query(Generalized* g, MPI_Status* status) {
  MPI_Status filled{};
  filled.MPI_SOURCE = MPI_UNDEFINED;
  filled.MPI_TAG = MPI_UNDEFINED;
  const int error = g->query_fn(g->extra_state, &filled);
  if (status != MPI_STATUS_IGNORE) {
    const int kept = status->MPI_ERROR;
    *status = filled;
    status->MPI_ERROR = kept;
  }
  return error;
}

}  // namespace

int CollectGeneralized(vci::Request* r, MPI_Status* status) {
  const int query_error = Query(Of(r), status);
  const int free_error = Release(r);
  return query_error != MPI_SUCCESS ? query_error : free_error;
}

int QueryGeneralized(vci::Request* r, MPI_Status* status) {
  return Query(Of(r), status);
}

int CancelGeneralized(vci::Request* r) {
  Generalized* g = Of(r);
  return g->cancel_fn(g->extra_state, p2p::PointToPoint::IsComplete(r) ? 1 : 0);
}

int FreeGeneralized(vci::Request* r) {
  Generalized* g = Of(r);
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    g->freed = true;
    if (!g->completed) return MPI_SUCCESS;  // MPI_Grequest_complete frees
  }
  return Release(r);
}

}  // namespace minimpi

extern "C" {

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn,
                        MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn,
                        void* extra_state, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Grequest_start";
  MINIMPI_REQUIRE_INIT(kCall);
  if (query_fn == nullptr || free_fn == nullptr || cancel_fn == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      "null query, free or cancel function");
  }
  if (request == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null request pointer");
  }
  auto* g = new minimpi::Generalized{query_fn, free_fn, cancel_fn, extra_state};
  *request =
      minimpi::ToHandle(minimpi::Instance::Get().p2p().NewGeneralized(g));
  return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request) {
  constexpr const char* kCall = "MPI_Grequest_complete";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r =
      request == MPI_REQUEST_NULL ? nullptr : minimpi::ToRequest(request);
  if (!minimpi::IsGeneralized(r)) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST,
                      "not an active generalized request");
  }
  auto* g = minimpi::Of(r);
  bool twice = false;
  bool freed = false;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    twice = g->completed;
    freed = g->freed;
    g->completed = true;
    // Published under the mutex, so MPI_Request_free decides who releases
    // with the state settled; a waiter may collect it from here on.
    if (!twice && !freed) minimpi::Instance::Get().p2p().CompleteGeneralized(r);
  }
  if (twice) {  // raised without the mutex: a user handler may run
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST,
                      "generalized request completed twice");
  }
  if (!freed) return MPI_SUCCESS;
  // Freed by the program before: nobody waits for it any more.
  minimpi::Instance::Get().p2p().CompleteGeneralized(r);
  if (minimpi::Release(r) != MPI_SUCCESS) {
    return RaiseError(
        nullptr, kCall, MPI_ERR_OTHER,
        "the free function of a freed generalized request failed");
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Grequest_start)
MINIMPI_EXPORT(Grequest_complete)
