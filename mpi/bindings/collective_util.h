// What the collective bindings share: checks every collective makes, and
// running a call's schedule to the end (blocking) or handing back its
// request (nonblocking). Each binding validates its own arguments, fills a
// coll::Arguments and calls RunCollective.
#ifndef MINIMPI_MPI_BINDINGS_COLLECTIVE_UTIL_H_
#define MINIMPI_MPI_BINDINGS_COLLECTIVE_UTIL_H_

#include <functional>
#include <memory>

#include "mpi/bindings/binding_util.h"
#include "mpi/coll/algorithms.h"
#include "mpi/coll/staging.h"

namespace minimpi {

// The checks every collective makes. Inline, as the point-to-point checks
// are (a small collective's cost is mostly its call levels); what was
// wrong is found and raised out of line.
[[gnu::cold, gnu::noinline]] int CheckRootSlowly(const char* call,
                                                 Communicator* comm, int root);
[[gnu::cold, gnu::noinline]] int BuffersAlias(const char* call,
                                              Communicator* comm);

// The communicator of a collective call (intra- or intercommunicator).
[[gnu::always_inline]] inline int CheckCollectiveCommunicator(
    const char* call, MPI_Comm handle, Communicator** comm) {
  return CheckCommunicator(call, handle, comm);
}

// The same for calls MPI defines on intracommunicators only (scans,
// topologies, neighbourhood collectives): MPI_ERR_COMM for an
// intercommunicator.
int CheckIntracommunicator(const char* call, MPI_Comm handle,
                           Communicator** comm);

// MPI_ERR_ROOT unless 0 <= root < size; on an intercommunicator the root
// may also be MPI_ROOT (the root itself) or MPI_PROC_NULL (the rest of its
// group), and a rank names a process of the remote group.
[[gnu::always_inline]] inline int CheckRoot(const char* call,
                                            Communicator* comm, int root) {
  if (!comm->inter && root >= 0 && root < comm->size) [[likely]] {
    return MPI_SUCCESS;
  }
  return CheckRootSlowly(call, comm, root);
}

// Whether this process is the root of a rooted collective: the rank equal
// to `root`, or on an intercommunicator the one that passed MPI_ROOT.
inline bool IsRoot(const Communicator* comm, int root) {
  return comm->inter ? root == MPI_ROOT : comm->rank == root;
}

// On an intercommunicator, the root's group members other than the root
// (root == MPI_PROC_NULL) take no part: none of their arguments is
// significant.
inline bool TakesNoPart(const Communicator* comm, int root) {
  return comm->inter && root == MPI_PROC_NULL;
}

// How a collective binding was called: MPI_Bcast, MPI_Ibcast or
// MPI_Bcast_init share one body.
enum class CallForm : uint8_t { kBlocking, kNonblocking, kPersistent };

// MPI_ERR_REQUEST for a null request pointer of a nonblocking call (a
// blocking call passes nonblocking = false and no request).
[[gnu::always_inline]] inline int CheckRequestPointer(const char* call,
                                                      Communicator* comm,
                                                      MPI_Request* request,
                                                      bool nonblocking) {
  if (!nonblocking || request != nullptr) [[likely]]
    return MPI_SUCCESS;
  return NullRequestPointer(call, comm);
}
[[gnu::always_inline]] inline int CheckRequestPointer(const char* call,
                                                      Communicator* comm,
                                                      MPI_Request* request,
                                                      CallForm form) {
  return CheckRequestPointer(call, comm, request, form != CallForm::kBlocking);
}

// MPI_ERR_INFO for an info argument of an _init call that names no info
// (raised on `comm`; MPI_ERR_COMM first if that names no communicator).
// The info's hints are not used.
int CheckCollectiveInfo(const char* call, MPI_Comm comm, MPI_Info info);

// What every collective body checks first: the library is initialized,
// the info of a persistent form (MPI_*_init; the other forms pass
// MPI_INFO_NULL), the communicator (`intracommunicator_only`: see
// CheckIntracommunicator). So an _init form and the blocking form share
// one body.
[[gnu::always_inline]] inline int BeginCollective(
    const char* call, MPI_Comm comm, MPI_Info info, CallForm form,
    Communicator** c, bool intracommunicator_only = false) {
  MINIMPI_REQUIRE_INIT(call);
  if (form == CallForm::kPersistent) {
    if (int error = CheckCollectiveInfo(call, comm, info)) return error;
  }
  return intracommunicator_only ? CheckIntracommunicator(call, comm, c)
                                : CheckCollectiveCommunicator(call, comm, c);
}

// MPI_ERR_BUFFER for MPI_IN_PLACE where the standard does not allow it
// (anywhere on an intercommunicator).
int InPlaceNotAllowed(const char* call, Communicator* comm);

// MPI_ERR_BUFFER when one buffer is passed as both sides of a call that moves
// data both ways (MPI_IN_PLACE is how to say that).
[[gnu::always_inline]] inline int CheckNoAlias(
    const char* call, Communicator* comm, const void* send, bool send_has_data,
    const void* receive, bool receive_has_data) {
  if (send == nullptr || send != receive || !send_has_data || !receive_has_data)
      [[likely]] {
    return MPI_SUCCESS;
  }
  return BuffersAlias(call, comm);
}

// CheckBuffer's checks for one side of a collective (the buffer may be
// MPI_IN_PLACE); on success *extent is the type's extent in bytes. Inline,
// as the point-to-point checks are: a small collective's cost is mostly its
// call levels.
[[gnu::always_inline]] inline int CheckTypedCount(
    const char* call, Communicator* comm, const void* buffer, int64_t count,
    MPI_Datatype type, size_t* extent) {
  // MPI_IN_PLACE is a non-null pointer, so it passes the null-buffer check
  // as the real buffer it stands for would.
  const Datatype* datatype;
  if (int error = CheckBuffer(call, comm, buffer, count, type, &datatype)) {
    return error;
  }
  *extent = static_cast<size_t>(datatype->extent());
  return MPI_SUCCESS;
}

// Builds the schedule of `collective` and runs it to the end (request ==
// nullptr) or starts it and returns its request. Mismatched counts between
// ranks surface as MPI_ERR_TRUNCATE on `comm`.
// Non-contiguous datatypes are staged first (mpi/coll/staging.h).
int RunCollective(const char* call, Communicator* comm,
                  coll::Collective collective, const coll::Arguments& arguments,
                  MPI_Request* request,
                  std::shared_ptr<coll::CollectiveStaging> staging = nullptr);

// RunCollective for the blocking and nonblocking forms; for the persistent
// one (MPI_*_init) builds the schedule once (coll::PersistentCollective)
// and returns the inactive request. `prestage` (MPI_Alltoallw) rewrites the
// arguments into a staging before the usual staging runs; a persistent
// collective whose staging copies data runs it again at each start.
using Prestage =
    std::function<void(coll::CollectiveStaging& staging, coll::Arguments& a)>;
int RunCollective(const char* call, Communicator* comm,
                  coll::Collective collective, const coll::Arguments& arguments,
                  MPI_Request* request, CallForm form,
                  const Prestage& prestage = nullptr);

// A persistent collective built by `build` (neighbourhood collectives,
// which build their own schedules): the inactive request in *request.
int InitPersistentCollective(
    const char* call, Communicator* comm,
    std::function<std::unique_ptr<coll::Schedule>()> build,
    bool rebuild_each_start, MPI_Request* request);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_COLLECTIVE_UTIL_H_
