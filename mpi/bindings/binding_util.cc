#include "mpi/bindings/binding_util.h"

#include "absl/strings/str_format.h"

namespace minimpi {

void ToMpiStatus(const p2p::Status& from, MPI_Status* to) {
  if (to == MPI_STATUS_IGNORE) return;
  to->MPI_SOURCE = from.source;
  to->MPI_TAG = from.tag == match::kAnyTag ? MPI_ANY_TAG : from.tag;
  to->MPI_ERROR =
      from.error == p2p::Error::kTruncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  SetStatusBytes(to, from.bytes);
  to->internal[2] = from.cancelled ? 1 : 0;
}

void SetEmptyStatus(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  SetStatusBytes(status, 0);
  status->internal[2] = 0;
}

p2p::Status ProcNullStatus() {
  p2p::Status status;
  status.source = MPI_PROC_NULL;
  status.tag = match::kAnyTag;
  return status;
}

int CheckCommunicator(const char* call, MPI_Comm handle, Communicator** comm) {
  *comm = ToCommunicator(handle);
  if (*comm == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_COMM,
                      handle == MPI_COMM_NULL
                          ? "invalid communicator (MPI_COMM_NULL)"
                          : "invalid communicator");
  }
  return MPI_SUCCESS;
}

int CheckBuffer(const char* call, Communicator* comm, const void* buffer,
                int count, MPI_Datatype handle, const Datatype** type) {
  *type = LookupDatatype(handle);
  if (*type == nullptr) {
    return RaiseError(comm, call, MPI_ERR_TYPE,
                      handle == MPI_DATATYPE_NULL
                          ? "invalid datatype (MPI_DATATYPE_NULL)"
                          : "invalid datatype");
  }
  if (count < 0) {
    return RaiseError(comm, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  if (buffer == nullptr && count > 0 && (*type)->size > 0) {
    return RaiseError(comm, call, MPI_ERR_BUFFER,
                      absl::StrFormat("null buffer with count %d", count));
  }
  return MPI_SUCCESS;
}

int CheckSend(const char* call, const void* buffer, int count,
              MPI_Datatype datatype, int destination, int tag, MPI_Comm handle,
              Communicator** comm, const Datatype** type) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  if (int error = CheckBuffer(call, *comm, buffer, count, datatype, type)) {
    return error;
  }
  if (destination != MPI_PROC_NULL &&
      (destination < 0 || destination >= (*comm)->size)) {
    return RaiseError(*comm, call, MPI_ERR_RANK,
                      absl::StrFormat(
                          "invalid destination %d (communicator size %d)",
                          destination, (*comm)->size));
  }
  if (tag < 0 || tag > MINIMPI_TAG_UB) {
    return RaiseError(*comm, call, MPI_ERR_TAG,
                      absl::StrFormat("invalid tag %d (must be 0..%d)", tag,
                                      MINIMPI_TAG_UB));
  }
  return MPI_SUCCESS;
}

int CheckProbe(const char* call, int source, int tag, MPI_Comm handle,
               Communicator** comm) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
      (source < 0 || source >= (*comm)->size)) {
    return RaiseError(*comm, call, MPI_ERR_RANK,
                      absl::StrFormat("invalid source %d (communicator size %d)",
                                      source, (*comm)->size));
  }
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > MINIMPI_TAG_UB)) {
    return RaiseError(
        *comm, call, MPI_ERR_TAG,
        absl::StrFormat("invalid tag %d (must be MPI_ANY_TAG or 0..%d)", tag,
                        MINIMPI_TAG_UB));
  }
  return MPI_SUCCESS;
}

int CheckReceive(const char* call, const void* buffer, int count,
                 MPI_Datatype datatype, int source, int tag, MPI_Comm handle,
                 Communicator** comm, const Datatype** type) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  if (int error = CheckBuffer(call, *comm, buffer, count, datatype, type)) {
    return error;
  }
  return CheckProbe(call, source, tag, handle, comm);
}

p2p::SendArguments MakeSend(Communicator* comm, const void* buffer,
                            size_t bytes, int destination, int tag,
                            p2p::SendMode mode) {
  p2p::SendArguments send;
  send.buffer = buffer;
  send.bytes = bytes;
  send.destination_world_rank = comm->world_ranks[destination];
  send.remote_context = comm->remote_point_to_point_context(destination);
  send.source_rank = comm->rank;
  send.tag = tag;
  send.vci = comm->vci;
  send.mode = mode;
  return send;
}

p2p::ReceiveArguments MakeReceive(Communicator* comm, void* buffer,
                                  size_t capacity, int source, int tag) {
  p2p::ReceiveArguments receive;
  receive.buffer = buffer;
  receive.capacity = capacity;
  receive.context = comm->point_to_point_context();
  receive.source = source == MPI_ANY_SOURCE ? match::kAnySource : source;
  receive.tag = tag == MPI_ANY_TAG ? match::kAnyTag : tag;
  receive.vci = comm->vci;
  return receive;
}

match::Envelope MakeEnvelope(Communicator* comm, int source, int tag) {
  return {comm->point_to_point_context(),
          source == MPI_ANY_SOURCE ? match::kAnySource : source,
          tag == MPI_ANY_TAG ? match::kAnyTag : tag};
}

int RaiseRequestError(const char* call, const p2p::Request* request,
                      Communicator* comm) {
  if (request->status.error != p2p::Error::kTruncated) return MPI_SUCCESS;
  return RaiseError(
      comm, call, MPI_ERR_TRUNCATE,
      absl::StrFormat("message truncated: %u bytes arrived from rank %d (tag "
                      "%d) for a buffer of %u bytes",
                      request->status.arrived_bytes, request->status.source,
                      request->status.tag, request->capacity));
}

}  // namespace minimpi
