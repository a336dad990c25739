// hwloc-backed implementation of topology.h. Each call loads the topology
// afresh: both are called once per process, and a load takes about a
// millisecond, so caching would only add shared state.

#include "runtime/topology.h"

#include <hwloc.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace minimpi::runtime {
namespace {

// Owns a loaded hwloc topology restricted to what this process may use.
class LoadedTopology {
 public:
  LoadedTopology() {
    if (hwloc_topology_init(&topology_) != 0) {
      topology_ = nullptr;
      return;
    }
    if (hwloc_topology_load(topology_) != 0) {
      hwloc_topology_destroy(topology_);
      topology_ = nullptr;
    }
  }
  ~LoadedTopology() {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
  }
  LoadedTopology(const LoadedTopology&) = delete;
  LoadedTopology& operator=(const LoadedTopology&) = delete;

  bool ok() const { return topology_ != nullptr; }
  hwloc_topology_t get() const { return topology_; }

  // The unit we bind to: cores, or hardware threads where cores are unknown.
  hwloc_obj_type_t BindingUnit() const {
    return hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_CORE) > 0
               ? HWLOC_OBJ_CORE
               : HWLOC_OBJ_PU;
  }

 private:
  hwloc_topology_t topology_ = nullptr;
};

}  // namespace

int NumCores() {
  LoadedTopology topology;
  if (!topology.ok()) return 1;
  // Without HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED hwloc already drops cores
  // outside our allowed cpuset, so the count is what we may use.
  int count = hwloc_get_nbobjs_by_type(topology.get(), topology.BindingUnit());
  return count > 0 ? count : 1;
}

absl::Status BindToCore(int local_rank) {
  if (local_rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BindToCore: negative local rank ", local_rank));
  }
  LoadedTopology topology;
  if (!topology.ok()) {
    return absl::InternalError("BindToCore: hwloc could not load the topology");
  }
  hwloc_obj_type_t unit = topology.BindingUnit();
  int count = hwloc_get_nbobjs_by_type(topology.get(), unit);
  if (count <= 0) {
    return absl::InternalError("BindToCore: hwloc found no cores");
  }
  hwloc_obj_t core = hwloc_get_obj_by_type(
      topology.get(), unit, static_cast<unsigned>(local_rank % count));
  if (core == nullptr || core->cpuset == nullptr) {
    return absl::InternalError(
        absl::StrCat("BindToCore: no core for local rank ", local_rank));
  }
  if (hwloc_set_cpubind(topology.get(), core->cpuset, HWLOC_CPUBIND_PROCESS) !=
      0) {
    return absl::InternalError(
        absl::StrCat("BindToCore: binding local rank ", local_rank, " to core ",
                     local_rank % count, " failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

bool MoveOffCurrentCpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  const int cpu = sched_getcpu();
  if (cpu < 0 || !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2) {
    return false;
  }
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  // The kernel migrates a running thread before this returns.
  if (sched_setaffinity(0, sizeof(others), &others) != 0) return false;
  sched_setaffinity(0, sizeof(allowed), &allowed);
  return true;
}

std::vector<std::pair<std::string, int>> HardwareResources() {
  std::vector<std::pair<std::string, int>> resources;
  LoadedTopology topology;
  if (!topology.ok()) return resources;
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topology.get(), bound, HWLOC_CPUBIND_PROCESS) != 0 ||
      hwloc_bitmap_iszero(bound)) {
    hwloc_bitmap_copy(bound, hwloc_topology_get_allowed_cpuset(topology.get()));
  }
  // NUMA nodes sit beside the CPU tree in hwloc 2 (memory children), so
  // types are walked by name rather than by depth.
  constexpr hwloc_obj_type_t kTypes[] = {
      HWLOC_OBJ_MACHINE,  HWLOC_OBJ_PACKAGE, HWLOC_OBJ_DIE,
      HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
      HWLOC_OBJ_L1CACHE,  HWLOC_OBJ_CORE,    HWLOC_OBJ_PU};
  for (hwloc_obj_type_t type : kTypes) {
    int count = 0;
    for (hwloc_obj_t object =
             hwloc_get_next_obj_by_type(topology.get(), type, nullptr);
         object != nullptr;
         object = hwloc_get_next_obj_by_type(topology.get(), type, object)) {
      if (object->cpuset != nullptr &&
          hwloc_bitmap_intersects(object->cpuset, bound)) {
        ++count;
      }
    }
    if (count > 0) resources.emplace_back(hwloc_obj_type_string(type), count);
  }
  hwloc_bitmap_free(bound);
  return resources;
}

}  // namespace minimpi::runtime
