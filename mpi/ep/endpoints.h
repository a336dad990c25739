// Endpoints communicators (MPIX_Comm_create_endpoints, from the MPI
// endpoints proposal of Dinan et al.): extra ranks inside one process, one
// per thread, each with a private communication context. EP-lib had to back
// each endpoint with a proxy process because it sat on an unmodified MPI;
// inside this library an endpoint *is* a VCI: its own lock, matching engine,
// request pool and transport connections to every other rank's VCIs (made
// on first use). Each endpoint handle is an ordinary Communicator object
// whose `vci` is the endpoint's and whose `remote_vcis` name every other
// rank's, so point-to-point, probes, persistent and partitioned requests,
// collectives, dup and split all work on it unchanged, and an operation on
// it progresses its own VCI only.
//
// Owned by: mpi/ep. Called by: the bindings (mpi/bindings/endpoints.cc).
#ifndef MINIMPI_MPI_EP_ENDPOINTS_H_
#define MINIMPI_MPI_EP_ENDPOINTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mpi/objects/comm.h"
#include "mpi/vci/vci_set.h"

namespace minimpi::ep {

// What the exchange needs from the library, handed in by the bindings:
// an allgather over the parent (coll::AllgatherBytes: every rank gives
// `bytes`, `gathered` receives size * bytes in rank order; mpi/coll sits
// beside mpi/ep, so the bindings bring it), the VCIs endpoints take, this
// process's world rank, and communicator ids.
struct EndpointServices {
  std::function<void(Communicator& comm, const void* contribution, size_t bytes,
                     void* gathered)>
      allgather_bytes;
  vci::VciSet& vcis;
  int world_rank;
  std::function<int32_t()> allocate_local_id;
  std::function<void(int32_t)> release_local_id;
};

// The exchange behind MPIX_Comm_create_endpoints, collective over `parent`
// (an intracommunicator, possibly itself on endpoints): this caller asks for
// `my_num_ep` endpoints (0 allowed). Returns them in handle order, not yet
// published; ranks are ordered by parent rank, then by handle index. When
// some caller could not get its VCIs every caller gets the same error, and
// nothing is left allocated.
absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateEndpoints(
    Communicator& parent, int my_num_ep, const EndpointServices& services);

}  // namespace minimpi::ep

#endif  // MINIMPI_MPI_EP_ENDPOINTS_H_
