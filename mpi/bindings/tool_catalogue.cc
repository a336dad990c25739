// The one place that knows every module exposing variables or events to
// MPI_T: it sits above them all (in //mpi:mpi), so mpi/tool stays below
// every module and each module registers its own variables, next to the
// counters they read.
//
// To expose a module's variables: declare Register<Module>ToolVariables()
// in the module's header, define it beside its counters (calling
// tool::RegisterPerformanceVariable / RegisterEventType), and add one call
// below.
#include <mutex>

#include "mpi/coll/tool_variables.h"
#include "mpi/matching_tool_variables.h"
#include "mpi/part/tool_variables.h"
#include "mpi/rma/tool_variables.h"
#include "mpi/tool/registry.h"
#include "mpi/vci/tool_variables.h"

namespace minimpi::tool {

void RegisterAllToolVariables() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Each module's Register<Module>ToolVariables() goes here, one line
    // each.
    vci::RegisterVciToolVariables();
    coll::RegisterCollectiveToolVariables();
    rma::RegisterOneSidedToolVariables();
    RegisterMatchingToolVariables();
    part::RegisterPartitionedToolVariables();
  });
}

}  // namespace minimpi::tool
