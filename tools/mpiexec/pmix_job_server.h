// The PMIx server side of mpiexec: starts the PMIx server library, describes
// the job to it (size, which ranks share the node, each rank's local rank),
// hands each child the environment it needs to connect, and records what the
// ranks report back (connected, finalized, aborted) for the supervisor.
//
// Everything runs on one node, so a fence is complete as soon as the server
// library has collected every local contribution: fence_nb hands the data
// straight back.
//
// Dynamic processes (MPI_Comm_spawn): the spawn upcall only queues the
// request and wakes the supervisor (a SIGCHLD to this process, which it
// waits for); the supervisor takes it (TakeSpawnRequests) on its own thread,
// registers the new namespace (RegisterJob), starts its processes and then
// answers the parent (AnswerSpawn), so that every child is forked, watched
// and reaped by the one thread that supervises the job. Names published with
// PMIx_Publish (MPI_Publish_name) live in a table here, for the life of the
// launcher.
//
// Owned by: tools/mpiexec. Called by: mpiexec.cc. The PMIx server library is
// process-wide, so at most one PmixJobServer may exist at a time.
#ifndef MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_
#define MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace minimpi::mpiexec {

// What one rank has told the server so far.
struct RankReport {
  bool connected = false;  // called PMIx_Init
  bool finalized = false;  // called PMIx_Finalize
};

// A rank called PMIx_Abort (MPI_Abort).
struct AbortRequest {
  std::string nspace;
  int rank = 0;
  int error_code = 0;
  std::string message;
};

// One application of a PMIx_Spawn request (MPI_Comm_spawn_multiple has
// several): what to run, how many copies, and where.
struct SpawnApp {
  std::string command;
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value", added to the job's
  std::string cwd;                // empty: the launcher's
  int maxprocs = 1;
};

// A PMIx_Spawn that waits for the supervisor. `reply` answers the caller
// (the library's callback); call it exactly once, through AnswerSpawn.
struct SpawnRequest {
  std::string parent_nspace;
  std::vector<SpawnApp> apps;
  void* reply_function = nullptr;  // pmix_spawn_cbfunc_t
  void* reply_data = nullptr;
};

class PmixJobServer {
 public:
  // Starts the server library; its sockets and shared-memory files go under
  // `private_dir`, which the caller creates and removes.
  static absl::StatusOr<std::unique_ptr<PmixJobServer>> Start(
      const std::string& private_dir);

  // Shuts the server library down, unless Abandon was called.
  ~PmixJobServer();
  PmixJobServer(const PmixJobServer&) = delete;
  PmixJobServer& operator=(const PmixJobServer&) = delete;

  // Skips the library's shutdown: for a job that failed, whose ranks may
  // have died in the middle of a PMIx operation. The caller must then end
  // the process with _exit, as the library's threads keep running.
  void Abandon();

  // Describes a job of `num_ranks` ranks, all on this node, under the
  // namespace `nspace`, and registers each rank as an expected client.
  // `appnum_of_rank` (empty: all 0) numbers the applications of a spawn.
  // The first job registered is the launcher's own; spawned jobs follow.
  absl::Status RegisterJob(const std::string& nspace, int num_ranks,
                           const std::vector<int>& appnum_of_rank = {});

  // Appends to `env` ("NAME=value" entries) what rank `rank` of the job
  // `nspace` needs to connect to this server.
  absl::Status AddClientEnvironment(const std::string& nspace, int rank,
                                    std::vector<std::string>* env);
  absl::Status AddClientEnvironment(int rank, std::vector<std::string>* env) {
    return AddClientEnvironment(first_nspace_, rank, env);
  }

  // Thread-safe snapshots of what the ranks reported; the PMIx library calls
  // back on its own thread.
  RankReport Report(const std::string& nspace, int rank) const;
  RankReport Report(int rank) const { return Report(first_nspace_, rank); }
  std::optional<AbortRequest> FirstAbort() const;

  // Spawn requests not yet served, oldest first; the caller answers each.
  std::vector<SpawnRequest> TakeSpawnRequests();
  // Answers a spawn: `nspace` is the new job's (ignored on failure).
  static void AnswerSpawn(const SpawnRequest& request, bool ok,
                          const std::string& nspace);

 private:
  PmixJobServer() = default;

  // Callbacks of the PMIx server module; they find the server through
  // `instance_` since the library passes no context to some of them.
  friend struct ServerCallbacks;
  static PmixJobServer* instance_;

  RankReport* FindReport(const std::string& nspace, int rank);
  void RecordConnected(const std::string& nspace, int rank);
  void RecordFinalized(const std::string& nspace, int rank);
  void RecordAbort(const std::string& nspace, int rank, int error_code,
                   const std::string& message);

  std::string first_nspace_;  // set by the first RegisterJob
  bool abandoned_ = false;
  mutable std::mutex mutex_;
  // Guarded by mutex_: what each job's ranks reported, by namespace.
  std::map<std::string, std::vector<RankReport>> reports_;
  std::optional<AbortRequest> first_abort_;   // guarded by mutex_
  std::vector<SpawnRequest> spawn_requests_;  // guarded by mutex_
  // Published names (MPI_Publish_name): service name -> port. Guarded by
  // mutex_.
  std::map<std::string, std::string> published_;
};

}  // namespace minimpi::mpiexec

#endif  // MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_
