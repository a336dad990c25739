// The PMIx server side of mpiexec: starts the PMIx server library, describes
// the job to it (size, which ranks share the node, each rank's local rank),
// hands each child the environment it needs to connect, and records what the
// ranks report back (connected, finalized, aborted) for the supervisor.
//
// Everything runs on one node, so a fence is complete as soon as the server
// library has collected every local contribution: fence_nb hands the data
// straight back.
//
// Owned by: tools/mpiexec. Called by: mpiexec.cc. The PMIx server library is
// process-wide, so at most one PmixJobServer may exist at a time.
#ifndef MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_
#define MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_

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
  int rank = 0;
  int error_code = 0;
  std::string message;
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
  absl::Status RegisterJob(const std::string& nspace, int num_ranks);

  // Appends to `env` ("NAME=value" entries) what rank `rank` of the
  // registered job needs to connect to this server.
  absl::Status AddClientEnvironment(int rank, std::vector<std::string>* env);

  // Thread-safe snapshots of what the ranks reported; the PMIx library calls
  // back on its own thread.
  RankReport Report(int rank) const;
  std::optional<AbortRequest> FirstAbort() const;

 private:
  PmixJobServer() = default;

  // Callbacks of the PMIx server module; they find the server through
  // `instance_` since the library passes no context to some of them.
  friend struct ServerCallbacks;
  static PmixJobServer* instance_;

  void RecordConnected(int rank);
  void RecordFinalized(int rank);
  void RecordAbort(int rank, int error_code, const std::string& message);

  std::string nspace_;
  bool abandoned_ = false;
  mutable std::mutex mutex_;
  std::vector<RankReport> reports_;          // guarded by mutex_
  std::optional<AbortRequest> first_abort_;  // guarded by mutex_
};

}  // namespace minimpi::mpiexec

#endif  // MINIMPI_TOOLS_MPIEXEC_PMIX_JOB_SERVER_H_
