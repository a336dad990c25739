// MPI_Get_hw_resource_info (MPI-4.1): an info object describing the
// hardware the calling process runs on at the moment of the call. Keys are
// the standard's resource-type names: "hwloc://<type>" for each hwloc
// object type the process's hardware threads belong to, valued with how
// many objects of that type they span (runtime::HardwareResources), and
// "mpi_hw_resource_type", the types MPI_Comm_split_type's HW_GUIDED and
// RESOURCE_GUIDED splits accept here ("mpi_shared_memory": the runtime
// knows locality down to the node).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/objects/info.h"
#include "runtime/topology.h"

using minimpi::Info;
using minimpi::RaiseError;

extern "C" {

int PMPI_Get_hw_resource_info(MPI_Info* hw_info) {
  constexpr const char* kCall = "MPI_Get_hw_resource_info";
  MINIMPI_REQUIRE_INIT(kCall);
  if (hw_info == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null hw_info pointer");
  }
  std::vector<Info::Entry> entries;
  entries.emplace_back("mpi_hw_resource_type", "mpi_shared_memory");
  for (const auto& [type, count] : minimpi::runtime::HardwareResources()) {
    entries.emplace_back(absl::StrCat("hwloc://", type), absl::StrCat(count));
  }
  *hw_info = minimpi::NewInfoHandle(std::make_unique<Info>(std::move(entries)));
  if (*hw_info == MPI_INFO_NULL) {
    return RaiseError(nullptr, kCall, MPI_ERR_NO_MEM,
                      "no room for another info object");
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Get_hw_resource_info)
