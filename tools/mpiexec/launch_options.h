// Command line of mpiexec/mpirun: what to start and how. Parsing is kept
// apart from launching so every accepted and rejected spelling is unit-tested.
//
// Owned by: tools/mpiexec. Called by: mpiexec.cc.
#ifndef MINIMPI_TOOLS_MPIEXEC_LAUNCH_OPTIONS_H_
#define MINIMPI_TOOLS_MPIEXEC_LAUNCH_OPTIONS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace minimpi::mpiexec {

struct LaunchOptions {
  int num_ranks = 0;
  // "none" or "core" from --bind-to, empty when not given (the library's
  // MINIMPI_BIND_TO decides, auto by default); handed to the ranks as
  // MINIMPI_BIND_TO so the library binds itself (the same mechanism then
  // works under srun).
  std::string bind_to;
  // Variables to set in every rank's environment, in command-line order.
  std::vector<std::pair<std::string, std::string>> exported_variables;
  // Seconds the job may run before mpiexec ends it (0: no limit). From
  // --timeout, else from MPIEXEC_TIMEOUT, the variable MPICH's and Open
  // MPI's launchers read (test harnesses set it).
  int timeout_seconds = 0;
  // Hosts asked for by -host/-hosts/--host (MPICH's and Open MPI's
  // spellings), in order, each without its ":slots" suffix; and the file
  // -f/-hostfile/-machinefile named (read later: see ParseHostfile).
  // `host_option` is what the user typed first ("-host node2"), for errors.
  std::vector<std::string> hosts;
  std::string hostfile;
  std::string host_option;
  // Ranks per node: MPICH's -ppn, Open MPI's --npernode (0: not given).
  int ranks_per_node = 0;
  // -v/--verbose: say how the job is started (the srun line, when handed
  // to Slurm).
  bool verbose = false;
  // Program and its arguments.
  std::vector<std::string> command;
  // --help was given: print usage and start nothing.
  bool show_help = false;
};

// The Slurm job mpiexec runs in, from its environment.
struct SlurmAllocation {
  bool in_job = false;   // SLURM_JOB_ID is set
  bool in_step = false;  // SLURM_STEP_ID is set: already a task of a step
  int num_nodes = 0;     // SLURM_JOB_NUM_NODES, else SLURM_NNODES
  // A job of several nodes, and mpiexec runs in its allocation (salloc,
  // sbatch), not inside one of its steps: the ranks are Slurm's to start.
  bool MultiNode() const { return in_job && !in_step && num_nodes > 1; }
};

// Reads SLURM_JOB_ID, SLURM_STEP_ID, SLURM_JOB_NUM_NODES/SLURM_NNODES.
SlurmAllocation SlurmAllocationFrom(
    const std::function<const char*(const char*)>& lookup);

// The host names in a hostfile's text, in MPICH's ("host", "host:4") or Open
// MPI's ("host slots=4") format; '#' starts a comment, blank lines are
// skipped.
std::vector<std::string> ParseHostfile(const std::string& contents);

// How to start the job.
struct LaunchPlan {
  // false: start the ranks on this node with minimpi's own PMIx server.
  // true: exec `srun_command` (Slurm starts the ranks on every node, as
  // MPICH's Hydra does inside an allocation), after setting `srun_variables`
  // in mpiexec's environment (srun passes its environment to every task).
  bool use_srun = false;
  std::vector<std::string> srun_command;
  std::vector<std::pair<std::string, std::string>> srun_variables;
};

// Decides between this node and srun. `hostfile_hosts` are the names
// ParseHostfile found in options.hostfile; `local_names` the names of this
// node (its hostname, short and long, and localhost). Outside a multi-node
// allocation, hosts other than this node are an error that names srun.
absl::StatusOr<LaunchPlan> PlanLaunch(
    const LaunchOptions& options, const SlurmAllocation& allocation,
    const std::vector<std::string>& hostfile_hosts,
    const std::vector<std::string>& local_names);

// Looks up a variable of the launcher's environment; nullptr when unset.
using EnvironmentLookup = std::function<const char*(const char*)>;

// Parses the arguments after argv[0]. `-x VAR` (no value) forwards VAR's value
// from `lookup`, and is dropped when VAR is unset there. Errors are one line
// suitable for "mpiexec: <message>".
absl::StatusOr<LaunchOptions> ParseLaunchOptions(
    const std::vector<std::string>& args, const EnvironmentLookup& lookup);

// Usage text; `program` is the name mpiexec was invoked under (mpiexec or
// mpirun).
std::string UsageText(const std::string& program);

}  // namespace minimpi::mpiexec

#endif  // MINIMPI_TOOLS_MPIEXEC_LAUNCH_OPTIONS_H_
