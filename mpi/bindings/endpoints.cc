// MPIX_Comm_create_endpoints: argument checks and handles; the exchange is
// mpi/ep's.
#include "mpi/ep/endpoints.h"

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/coll/basic.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;

extern "C" {

int PMPIX_Comm_create_endpoints(MPI_Comm parent_comm, int my_num_ep,
                                MPI_Info info, MPI_Comm out_comms[]) {
  constexpr const char* kCall = "MPIX_Comm_create_endpoints";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* parent;
  if (int error = minimpi::CheckCommunicator(kCall, parent_comm, &parent)) {
    return error;
  }
  if (parent->inter) {
    return RaiseError(parent, kCall, MPI_ERR_COMM,
                      "the parent must be an intracommunicator");
  }
  if (my_num_ep < 0) {
    return RaiseError(
        parent, kCall, MPI_ERR_ARG,
        absl::StrFormat("my_num_ep is %d; it must be 0 or more", my_num_ep));
  }
  if (my_num_ep > 0 && out_comms == nullptr) {
    return minimpi::NullArgument(kCall, parent, "out_comms");
  }
  minimpi::Info* hints;  // no endpoint hints are defined: checked, unused
  if (int error = minimpi::CheckInfo(kCall, parent, info,
                                     /*null_allowed=*/true, &hints)) {
    return error;
  }
  Instance& instance = Instance::Get();
  const minimpi::ep::EndpointServices services{
      .allgather_bytes =
          [&](Communicator& comm, const void* contribution, size_t bytes,
              void* gathered) {
            minimpi::coll::AllgatherBytes(instance.p2p(), comm, contribution,
                                          bytes, gathered);
          },
      .vcis = instance.vcis(),
      .world_rank = instance.world_rank(),
      .allocate_local_id = [&] { return instance.AllocateLocalId(); },
      .release_local_id = [&](int32_t id) { instance.ReleaseLocalId(id); },
  };
  auto endpoints = minimpi::ep::CreateEndpoints(*parent, my_num_ep, services);
  if (!endpoints.ok()) {
    return RaiseError(parent, kCall, MPI_ERR_OTHER,
                      std::string(endpoints.status().message()));
  }
  for (int i = 0; i < my_num_ep; ++i) {
    out_comms[i] = minimpi::Publish(std::move((*endpoints)[i]))->handle;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPIX_EXPORT(Comm_create_endpoints)
