// MPI_Barrier, MPI_Bcast and their nonblocking forms.
#include "mpi/bindings/collective_util.h"

using minimpi::Communicator;
namespace coll = minimpi::coll;

namespace {

int Barrier(const char* call, MPI_Comm comm, MPI_Info info,
            MPI_Request* request, minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error = minimpi::BeginCollective(call, comm, info, form, &c)) {
    return error;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  return minimpi::RunCollective(call, c, coll::Collective::kBarrier,
                                coll::Arguments{}, request, form);
}

int Bcast(const char* call, void* buffer, MPI_Count count,
          MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
          MPI_Request* request, minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error = minimpi::BeginCollective(call, comm, info, form, &c)) {
    return error;
  }
  coll::Arguments arguments;
  if (int error = minimpi::CheckTypedCount(call, c, buffer, count, datatype,
                                           &arguments.extent)) {
    return error;
  }
  if (buffer == MPI_IN_PLACE) {
    return minimpi::InPlaceNotAllowed(call, c);
  }
  if (int error = minimpi::CheckRoot(call, c, root)) return error;
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  arguments.receive_buffer = buffer;
  arguments.count = count;
  arguments.type = datatype;
  arguments.root = root;
  return minimpi::RunCollective(call, c, coll::Collective::kBcast, arguments,
                                request, form);
}

}  // namespace

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  return Barrier("MPI_Barrier", comm, MPI_INFO_NULL, nullptr,
                 minimpi::CallForm::kBlocking);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return Barrier("MPI_Ibarrier", comm, MPI_INFO_NULL, request,
                 minimpi::CallForm::kNonblocking);
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm) {
  return Bcast("MPI_Bcast", buffer, count, datatype, root, comm, MPI_INFO_NULL,
               nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm comm, MPI_Request* request) {
  return Bcast("MPI_Ibcast", buffer, count, datatype, root, comm, MPI_INFO_NULL,
               request, minimpi::CallForm::kNonblocking);
}

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Barrier("MPI_Barrier_init", comm, info, request,
                 minimpi::CallForm::kPersistent);
}

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Bcast("MPI_Bcast_init", buffer, count, datatype, root, comm, info,
               request, minimpi::CallForm::kPersistent);
}

// The large-count forms: the same bodies, with MPI_Count counts and
// MPI_Aint displacements.

int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 MPI_Comm comm) {
  return Bcast("MPI_Bcast_c", buffer, count, datatype, root, comm,
               MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  return Bcast("MPI_Ibcast_c", buffer, count, datatype, root, comm,
               MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype,
                      int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  return Bcast("MPI_Bcast_init_c", buffer, count, datatype, root, comm, info,
               request, minimpi::CallForm::kPersistent);
}

}  // extern "C"

MINIMPI_EXPORT(Barrier)
MINIMPI_EXPORT(Ibarrier)
MINIMPI_EXPORT(Bcast)
MINIMPI_EXPORT(Ibcast)
MINIMPI_EXPORT(Barrier_init)
MINIMPI_EXPORT(Bcast_init)
MINIMPI_EXPORT(Bcast_c)
MINIMPI_EXPORT(Ibcast_c)
MINIMPI_EXPORT(Bcast_init_c)
