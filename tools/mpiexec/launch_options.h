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
  // "none" or "core"; handed to the ranks as MINIMPI_BIND_TO so the library
  // binds itself (the same mechanism then works under srun).
  std::string bind_to = "none";
  // Variables to set in every rank's environment, in command-line order.
  std::vector<std::pair<std::string, std::string>> exported_variables;
  // Seconds the job may run before mpiexec ends it (0: no limit). From
  // --timeout, else from MPIEXEC_TIMEOUT, the variable MPICH's and Open
  // MPI's launchers read (test harnesses set it).
  int timeout_seconds = 0;
  // Program and its arguments.
  std::vector<std::string> command;
  // --help was given: print usage and start nothing.
  bool show_help = false;
};

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
