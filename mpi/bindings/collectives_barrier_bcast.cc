// MPI_Barrier, MPI_Bcast and their nonblocking forms.
#include "mpi/bindings/collective_util.h"

using minimpi::Communicator;
namespace coll = minimpi::coll;

namespace {

int Barrier(const char* call, MPI_Comm comm, MPI_Request* request,
            bool nonblocking) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  if (int error = minimpi::CheckRequestPointer(call, c, request, nonblocking)) {
    return error;
  }
  return minimpi::RunCollective(call, c, coll::Collective::kBarrier,
                                coll::Arguments{}, request);
}

int Bcast(const char* call, void* buffer, int count, MPI_Datatype datatype,
          int root, MPI_Comm comm, MPI_Request* request, bool nonblocking) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  coll::Arguments arguments;
  if (int error = minimpi::CheckTypedCount(call, c, buffer, count, datatype,
                                           &arguments.extent)) {
    return error;
  }
  if (buffer == MPI_IN_PLACE) {
    return minimpi::InPlaceNotAllowed(call, c);
  }
  if (int error = minimpi::CheckRoot(call, c, root)) return error;
  if (int error = minimpi::CheckRequestPointer(call, c, request, nonblocking)) {
    return error;
  }
  arguments.receive_buffer = buffer;
  arguments.count = count;
  arguments.type = datatype;
  arguments.root = root;
  return minimpi::RunCollective(call, c, coll::Collective::kBcast, arguments,
                                request);
}

}  // namespace

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  return Barrier("MPI_Barrier", comm, nullptr, /*nonblocking=*/false);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return Barrier("MPI_Ibarrier", comm, request, /*nonblocking=*/true);
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm) {
  return Bcast("MPI_Bcast", buffer, count, datatype, root, comm, nullptr,
               /*nonblocking=*/false);
}

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm comm, MPI_Request* request) {
  return Bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request,
               /*nonblocking=*/true);
}

}  // extern "C"

MINIMPI_EXPORT(Barrier)
MINIMPI_EXPORT(Ibarrier)
MINIMPI_EXPORT(Bcast)
MINIMPI_EXPORT(Ibcast)
