// Dynamic processes through the launcher's PMIx server: starting a new job
// (PMIx_Spawn, for MPI_Comm_spawn) and publishing names (PMIx_Publish,
// PMIx_Lookup, PMIx_Unpublish, for MPI_Publish_name and friends).
// minimpi's mpiexec serves all of them; Slurm's PMIx plugin serves none, so
// every call first asks whether the launcher does (a job-level key mpiexec
// sets) and fails at once with a clear message instead of waiting on a
// server that will never answer.
//
// Owned by: runtime/. Called by: mpi/dynamic_processes.cc and, for the
// question alone, net/transport.cc (whether to listen for other jobs).
#ifndef MINIMPI_RUNTIME_DYNAMIC_PROCESSES_H_
#define MINIMPI_RUNTIME_DYNAMIC_PROCESSES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/bootstrap.h"

namespace minimpi::runtime {

// Whether the launcher serves spawn and name publishing. False for a
// singleton and under srun; `why` (may be null) then says so in a phrase.
bool LauncherServesDynamicProcesses(const Bootstrap& bootstrap,
                                    std::string* why = nullptr);

// One command of a spawn (MPI_Comm_spawn_multiple has several).
struct SpawnCommand {
  std::string command;
  std::vector<std::string> argv;  // without the command itself
  int maxprocs = 1;
  std::string working_directory;  // empty: the launcher's
  std::vector<std::string> env;   // "NAME=value", added to the children's
};

// Starts the commands as one new job and returns its namespace. Unavailable
// when the launcher cannot spawn; other errors name PMIx's reason.
absl::StatusOr<std::string> Spawn(const Bootstrap& bootstrap,
                                  const std::vector<SpawnCommand>& commands);

// Name publishing. Lookup and Unpublish return NotFound for a name nobody
// published; Publish returns AlreadyExists for a name already published.
absl::Status PublishName(const Bootstrap& bootstrap, absl::string_view service,
                         absl::string_view port);
absl::StatusOr<std::string> LookupName(const Bootstrap& bootstrap,
                                       absl::string_view service);
absl::Status UnpublishName(const Bootstrap& bootstrap,
                           absl::string_view service);

// This process's application number within its job (PMIX_APPNUM: the
// command of MPI_Comm_spawn_multiple that started it; 0 otherwise) and the
// universe size the launcher reports (PMIX_UNIV_SIZE; the job size when it
// says none).
int AppNumber(const Bootstrap& bootstrap);
int UniverseSize(const Bootstrap& bootstrap);

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_DYNAMIC_PROCESSES_H_
