// What mpi/coll needs from the rest of the library that no call hands it:
// the point-to-point traffic its schedules and region setup run on, the
// VCIs its node path waits through, the transport's doorbell that wakes a
// sleeping peer, where each rank lives (nodes), and the settings in force.
// The instance (mpi/instance) fills one CollectiveServices when the library
// comes up and installs it; coll code reaches it through Services(), so
// nothing in mpi/coll depends on the instance above it (Bazel's visibility
// refuses that dependency).
//
// A struct of references, not an interface: a wait in the node path calls
// VciSet::WaitUntil as directly as before, with no virtual call.
//
// Owned by: mpi/coll. Installed by: mpi/instance (Instance::AddUser).
#ifndef MINIMPI_MPI_COLL_SERVICES_H_
#define MINIMPI_MPI_COLL_SERVICES_H_

#include <atomic>

#include "mpi/p2p/point_to_point.h"
#include "mpi/vci/vci_set.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::coll {

struct CollectiveServices {
  p2p::PointToPoint& p2p;
  vci::VciSet& vcis;
  net::Transport& transport;
  runtime::Bootstrap& bootstrap;
  const runtime::Settings& settings;
};

namespace internal {
extern std::atomic<const CollectiveServices*> installed_services;
}  // namespace internal

// Installs `services` (which must outlive its use) while the library is up;
// nullptr when it goes away.
inline void InstallServices(const CollectiveServices* services) {
  internal::installed_services.store(services, std::memory_order_release);
}

// The installed services. Valid while the library is up: every caller runs
// between MPI_Init (or a session's start) and the runtime's end. Inline:
// one load, as reaching the instance was.
inline const CollectiveServices& Services() {
  return *internal::installed_services.load(std::memory_order_acquire);
}

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_SERVICES_H_
