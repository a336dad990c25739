#include "mpi/bindings/collective_util.h"

#include "absl/strings/str_format.h"

namespace minimpi {

int CheckRoot(const char* call, Communicator* comm, int root) {
  if (root >= 0 && root < comm->size) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_ROOT,
                    absl::StrFormat("invalid root %d (communicator size %d)",
                                    root, comm->size));
}

int CheckRequestPointer(const char* call, Communicator* comm,
                        MPI_Request* request, bool nonblocking) {
  if (!nonblocking || request != nullptr) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_REQUEST, "null request pointer");
}

int InPlaceNotAllowed(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_BUFFER,
                    "MPI_IN_PLACE is not allowed here");
}

int CheckNoAlias(const char* call, Communicator* comm, const void* send,
                 bool send_has_data, const void* receive,
                 bool receive_has_data) {
  if (send == nullptr || send != receive || !send_has_data ||
      !receive_has_data) {
    return MPI_SUCCESS;
  }
  return RaiseError(comm, call, MPI_ERR_BUFFER,
                    "send and receive buffers alias (use MPI_IN_PLACE)");
}

int CheckTypedCount(const char* call, Communicator* comm, const void* buffer,
                    int count, MPI_Datatype type, size_t* extent) {
  // MPI_IN_PLACE is a non-null pointer, so it passes the null-buffer check
  // as the real buffer it stands for would.
  const Datatype* datatype;
  if (int error = CheckBuffer(call, comm, buffer, count, type, &datatype)) {
    return error;
  }
  *extent = static_cast<size_t>(datatype->extent);
  return MPI_SUCCESS;
}

int RunCollective(const char* call, Communicator* comm,
                  coll::Collective collective, const coll::Arguments& arguments,
                  MPI_Request* request) {
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  std::unique_ptr<coll::Schedule> schedule =
      coll::Build(collective, *comm, arguments);
  if (request != nullptr) {
    p2p::Request* started = schedule.release()->Start(p2p);
    started->owner = comm;
    *request = ToHandle(started);
    return MPI_SUCCESS;
  }
  if (coll::Schedule::Run(std::move(schedule), p2p)) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_TRUNCATE,
                    "message truncated: the ranks passed counts or types "
                    "that do not match");
}

}  // namespace minimpi
