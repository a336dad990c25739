#include "mpi/bindings/collective_util.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/coll/basic.h"
#include "mpi/coll/node_collectives.h"
#include "mpi/coll/persistent.h"

namespace minimpi {

int CheckIntracommunicator(const char* call, MPI_Comm handle,
                           Communicator** comm) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  if (!(*comm)->inter) [[likely]]
    return MPI_SUCCESS;
  return RaiseError(*comm, call, MPI_ERR_COMM,
                    "not defined on an intercommunicator");
}

int CheckRootSlowly(const char* call, Communicator* comm, int root) {
  if (!comm->inter) {
    if (root >= 0 && root < comm->size) return MPI_SUCCESS;
    return RaiseError(comm, call, MPI_ERR_ROOT,
                      absl::StrFormat("invalid root %d (communicator size %d)",
                                      root, comm->size));
  }
  if (root == MPI_ROOT || root == MPI_PROC_NULL ||
      (root >= 0 && root < comm->peer_count())) {
    return MPI_SUCCESS;
  }
  return RaiseError(
      comm, call, MPI_ERR_ROOT,
      absl::StrFormat("invalid root %d on an intercommunicator (MPI_ROOT, "
                      "MPI_PROC_NULL or a rank of the remote group of %d)",
                      root, comm->peer_count()));
}

int InPlaceNotAllowed(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_BUFFER,
                    comm->inter
                        ? "MPI_IN_PLACE is not allowed on an intercommunicator"
                        : "MPI_IN_PLACE is not allowed here");
}

int BuffersAlias(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_BUFFER,
                    "send and receive buffers alias (use MPI_IN_PLACE)");
}

namespace {

// What every rank of a collective must agree on: the root (rooted
// collectives) and the bytes of one block as this rank sees them (-1: not
// compared, as for the v-variants, whose sizes legitimately differ).
struct CallSignature {
  int32_t root = -1;
  int32_t rooted = 0;
  int64_t block_bytes = -1;
};

CallSignature SignatureOf(coll::Collective collective, const Communicator& comm,
                          const coll::Arguments& a) {
  using coll::Collective;
  const int64_t bytes = static_cast<int64_t>(a.count) * a.extent;
  const int64_t sent = static_cast<int64_t>(a.send_count) * a.send_extent;
  const int64_t received =
      static_cast<int64_t>(a.receive_count) * a.receive_extent;
  const bool is_root = comm.rank == a.root;
  CallSignature signature;
  switch (collective) {
    case Collective::kBcast:
    case Collective::kReduce:
      signature.rooted = 1;
      signature.block_bytes = bytes;
      break;
    case Collective::kAllreduce:
    case Collective::kScan:
    case Collective::kExscan:
    case Collective::kReduceScatterBlock:
      signature.block_bytes = bytes;
      break;
    case Collective::kGather:  // the root's block must match every sender's
      signature.rooted = 1;
      signature.block_bytes = is_root ? received : sent;
      break;
    case Collective::kScatter:
      signature.rooted = 1;
      signature.block_bytes = is_root ? sent : received;
      break;
    case Collective::kAllgather:
    case Collective::kAlltoall:
      signature.block_bytes = a.in_place ? received : sent;
      break;
    case Collective::kGatherv:
    case Collective::kScatterv:
      signature.rooted = 1;
      break;
    default:
      break;
  }
  if (signature.rooted) signature.root = a.root;
  return signature;
}

// MINIMPI_COLL_CHECK: every rank learns every rank's signature, so all of
// them find the same mismatch and raise it; nobody is left waiting.
int CheckSignatures(const char* call, Communicator* comm,
                    coll::Collective collective,
                    const coll::Arguments& arguments) {
  const CallSignature mine = SignatureOf(collective, *comm, arguments);
  std::vector<CallSignature> all(comm->size);
  coll::AllgatherBytes(Instance::Get().p2p(), *comm, &mine, sizeof(mine),
                       all.data());
  for (int rank = 0; rank < comm->size; ++rank) {
    if (mine.rooted && all[rank].root != all[0].root) {
      return RaiseError(
          comm, call, MPI_ERR_ROOT,
          absl::StrFormat("ranks disagree on the root: rank 0 passed %d, "
                          "rank %d passed %d",
                          all[0].root, rank, all[rank].root));
    }
  }
  for (int rank = 0; rank < comm->size; ++rank) {
    if (mine.block_bytes >= 0 && all[rank].block_bytes != all[0].block_bytes) {
      return RaiseError(
          comm, call, MPI_ERR_TRUNCATE,
          absl::StrFormat("ranks disagree on the data size: rank 0 passed "
                          "%d bytes per block, rank %d passed %d",
                          all[0].block_bytes, rank, all[rank].block_bytes));
    }
  }
  return MPI_SUCCESS;
}

// Mismatched counts or types between the ranks of a call: MPI_ERR_TRUNCATE
// on `comm`.
int CountsDisagree(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_TRUNCATE,
                    "message truncated: the ranks passed counts or types "
                    "that do not match");
}

// The general path: stages non-contiguous data, checks the call's
// signature across ranks when asked (MINIMPI_COLL_CHECK), tries the node
// path unless `tried_node`, and runs or starts a point-to-point schedule.
// Out of line, so that RunCollective's common path stays short.
[[gnu::noinline]] int RunThroughSchedule(
    const char* call, Communicator* comm, coll::Collective collective,
    const coll::Arguments& call_arguments, MPI_Request* request,
    std::shared_ptr<coll::CollectiveStaging> staging, bool tried_node) {
  // Non-contiguous datatypes reach the algorithms as contiguous copies. A
  // blocking call keeps its staging on the stack (a blocking small
  // collective allocates nothing); a nonblocking one shares it with its
  // schedule, which may outlive this call.
  coll::Arguments arguments = call_arguments;
  std::optional<coll::CollectiveStaging> local_staging;
  coll::CollectiveStaging* stage = staging.get();
  if (stage == nullptr) {
    if (request == nullptr) {
      stage = &local_staging.emplace(&LookupDatatype);
    } else {
      staging = std::make_shared<coll::CollectiveStaging>(&LookupDatatype);
      stage = staging.get();
    }
  }
  if (int error = stage->Stage(*comm, collective, &arguments)) {
    return RaiseError(comm, call, error, stage->error_message());
  }
  // Checking a nonblocking call would make it wait for the other ranks to
  // start theirs, which can deadlock a correct program: blocking calls only.
  // (Intercommunicators are not checked: their groups see different
  // arguments by design.)
  if (request == nullptr && comm->size > 1 && !comm->inter &&
      Instance::Get().settings().collective_check) {
    if (int error = CheckSignatures(call, comm, collective, arguments)) {
      return error;
    }
  }
  if (request == nullptr && !tried_node) {
    switch (coll::RunOnNode(collective, *comm, arguments)) {
      case coll::NodeOutcome::kNotRun:
        break;
      case coll::NodeOutcome::kDone:
        if (stage->needs_finish()) stage->Finish();
        return MPI_SUCCESS;
      case coll::NodeOutcome::kTruncated:
        if (stage->needs_finish()) stage->Finish();
        return CountsDisagree(call, comm);
    }
  }
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  std::unique_ptr<coll::Schedule> schedule =
      coll::Build(collective, *comm, arguments);
  if (stage->needs_finish()) {
    if (request == nullptr) {
      // Run below finishes before this call returns: the stack staging
      // outlives the schedule.
      schedule->AtCompletion([stage] { stage->Finish(); });
    } else {
      schedule->AtCompletion([staging] { staging->Finish(); });
    }
  }
  if (request != nullptr) {
    vci::Request* started = schedule.release()->Start(p2p);
    started->owner = OwnerValue(comm);
    *request = ToHandle(started);
    return MPI_SUCCESS;
  }
  if (coll::Schedule::Run(std::move(schedule), p2p)) return MPI_SUCCESS;
  return CountsDisagree(call, comm);
}

}  // namespace

int RunCollective(const char* call, Communicator* comm,
                  coll::Collective collective,
                  const coll::Arguments& call_arguments, MPI_Request* request,
                  std::shared_ptr<coll::CollectiveStaging> staging) {
  // The common blocking call on dense predefined data has nothing to stage
  // and nothing to check across ranks: straight to the node path, without
  // the staging's copy of the arguments and its datatype look-ups (about
  // 170 instructions of an 8-byte scatter's 1,000 on its root).
  if (request == nullptr && staging == nullptr &&
      coll::CollectiveStaging::NothingToStage(call_arguments) &&
      !Instance::Get().settings().collective_check) [[likely]] {
    switch (coll::RunOnNode(collective, *comm, call_arguments)) {
      case coll::NodeOutcome::kNotRun:
        return RunThroughSchedule(call, comm, collective, call_arguments,
                                  nullptr, nullptr, /*tried_node=*/true);
      case coll::NodeOutcome::kDone:
        return MPI_SUCCESS;
      case coll::NodeOutcome::kTruncated:
        return CountsDisagree(call, comm);
    }
  }
  return RunThroughSchedule(call, comm, collective, call_arguments, request,
                            std::move(staging), /*tried_node=*/false);
}

int CheckCollectiveInfo(const char* call, MPI_Comm comm, MPI_Info info) {
  if (info == MPI_INFO_NULL) [[likely]]
    return MPI_SUCCESS;
  Communicator* c = nullptr;
  if (int error = CheckCommunicator(call, comm, &c)) return error;
  Info* unused;
  return CheckInfo(call, c, info, /*null_allowed=*/true, &unused);
}

namespace {

// One run's schedule of a persistent collective: staged (prestage, then
// the usual staging) and built as a nonblocking call's would be. The
// staging lives as long as the schedule.
int BuildStaged(Communicator* comm, coll::Collective collective,
                const coll::Arguments& call_arguments, const Prestage& prestage,
                std::unique_ptr<coll::Schedule>* schedule,
                std::string* error_message) {
  auto staging = std::make_shared<coll::CollectiveStaging>(&LookupDatatype);
  coll::Arguments arguments = call_arguments;
  if (prestage) prestage(*staging, arguments);
  if (int error = staging->Stage(*comm, collective, &arguments)) {
    *error_message = staging->error_message();
    return error;
  }
  *schedule = coll::Build(collective, *comm, arguments);
  (*schedule)->AtCompletion([staging] {
    if (staging->needs_finish()) staging->Finish();
  });
  return MPI_SUCCESS;
}

int Persist(const char* call, Communicator* comm,
            coll::PersistentCollective::Builder build, bool rebuild_each_start,
            MPI_Request* request) {
  vci::Request* made;
  std::string error_message;
  if (int error = coll::PersistentCollective::Create(
          Instance::Get().p2p(), *comm, std::move(build), rebuild_each_start,
          &made, &error_message)) {
    return RaiseError(comm, call, error, error_message);
  }
  made->owner = OwnerValue(comm);
  *request = ToHandle(made);
  return MPI_SUCCESS;
}

}  // namespace

int RunCollective(const char* call, Communicator* comm,
                  coll::Collective collective, const coll::Arguments& arguments,
                  MPI_Request* request, CallForm form,
                  const Prestage& prestage) {
  if (form != CallForm::kPersistent) {
    std::shared_ptr<coll::CollectiveStaging> staging;
    if (prestage) {
      staging = std::make_shared<coll::CollectiveStaging>(&LookupDatatype);
      coll::Arguments staged = arguments;
      prestage(*staging, staged);
      return RunCollective(call, comm, collective, staged, request,
                           std::move(staging));
    }
    return RunCollective(call, comm, collective, arguments, request);
  }
  // Small barriers, bcasts and reductions on a communicator inside one
  // node run through the node's region at each start, as their blocking
  // forms do (dense data only: the region reads the program's buffers).
  if (!prestage && coll::CollectiveStaging::NothingToStage(arguments)) {
    if (std::unique_ptr<coll::NodeStartedCall> on_node =
            coll::NodeStartedCall::For(collective, *comm, arguments)) {
      vci::Request* made = coll::PersistentCollective::CreateOnNode(
          Instance::Get().p2p(), *comm, std::move(on_node));
      made->owner = OwnerValue(comm);
      *request = ToHandle(made);
      return MPI_SUCCESS;
    }
  }
  // Dense predefined data needs no staging: the schedule built now serves
  // every start. Otherwise find out whether staging copies any data (which
  // would be stale at the next start).
  bool rebuild_each_start = false;
  if (prestage || !coll::CollectiveStaging::NothingToStage(arguments)) {
    coll::CollectiveStaging probe(&LookupDatatype);
    coll::Arguments staged = arguments;
    if (prestage) prestage(probe, staged);
    if (int error = probe.Stage(*comm, collective, &staged)) {
      return RaiseError(comm, call, error, probe.error_message());
    }
    rebuild_each_start = probe.made_copies();
  }
  return Persist(
      call, comm,
      [comm, collective, arguments, prestage](
          std::unique_ptr<coll::Schedule>* schedule,
          std::string* error_message) {
        return BuildStaged(comm, collective, arguments, prestage, schedule,
                           error_message);
      },
      rebuild_each_start, request);
}

int InitPersistentCollective(
    const char* call, Communicator* comm,
    std::function<std::unique_ptr<coll::Schedule>()> build,
    bool rebuild_each_start, MPI_Request* request) {
  return Persist(
      call, comm,
      [build = std::move(build)](std::unique_ptr<coll::Schedule>* schedule,
                                 std::string*) {
        *schedule = build();
        return MPI_SUCCESS;
      },
      rebuild_each_start, request);
}

}  // namespace minimpi
