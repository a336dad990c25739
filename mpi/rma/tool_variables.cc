#include "mpi/rma/tool_variables.h"

#include <cstdint>
#include <utility>

#include "mpi/rma/one_sided.h"
#include "mpi/tool/registry.h"

namespace minimpi::rma {
namespace {

const Window& WindowOf(const void* object) {
  return *static_cast<const Window*>(object);
}

tool::PerformanceVariable OnWindow(const char* name, const char* description,
                                   int var_class) {
  tool::PerformanceVariable variable;
  variable.name = name;
  variable.description = description;
  variable.category = "one_sided";
  variable.var_class = var_class;
  variable.binding = tool::Binding::kWin;
  return variable;
}

}  // namespace

void RegisterOneSidedToolVariables() {
  tool::PerformanceVariable operations = OnWindow(
      "rma_operations",
      "One-sided operations this process issued on the window, by kind: "
      "put, get, accumulate, get_accumulate, fetch_and_op, "
      "compare_and_swap (request-based forms count as their kind).",
      MPI_T_PVAR_CLASS_COUNTER);
  operations.count = kOperationKinds;
  operations.read = [](const void* object, void* values) {
    const Window& window = WindowOf(object);
    for (int kind = 0; kind < kOperationKinds; ++kind) {
      static_cast<uint64_t*>(values)[kind] = window.operations[kind].Read();
    }
  };
  tool::RegisterPerformanceVariable(std::move(operations));

  tool::PerformanceVariable waits = OnWindow(
      "rma_lock_waits",
      "Passive-target lock requests of this process on the window that the "
      "target queued behind another holder.",
      MPI_T_PVAR_CLASS_COUNTER);
  waits.read = [](const void* object, void* values) {
    *static_cast<uint64_t*>(values) = WindowOf(object).lock_waits.Read();
  };
  tool::RegisterPerformanceVariable(std::move(waits));

  tool::PerformanceVariable wait_time =
      OnWindow("rma_lock_wait_time",
               "Seconds this process waited in MPI_Win_lock and "
               "MPI_Win_lock_all for the targets' grants on the window.",
               MPI_T_PVAR_CLASS_TIMER);
  wait_time.type = tool::ValueType::kDouble;
  wait_time.read = [](const void* object, void* values) {
    *static_cast<double*>(values) =
        static_cast<double>(WindowOf(object).lock_wait_ns.Read()) * 1e-9;
  };
  tool::RegisterPerformanceVariable(std::move(wait_time));
}

}  // namespace minimpi::rma
