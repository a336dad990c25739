#include "mpi/bindings/binding_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/object_handles.h"

namespace minimpi {

void ToMpiStatus(const vci::Status& from, MPI_Status* to) {
  if (to == MPI_STATUS_IGNORE) return;
  to->MPI_SOURCE = from.source;
  to->MPI_TAG = from.tag == match::kAnyTag ? MPI_ANY_TAG : from.tag;
  // MPI_ERROR is left alone: only calls that return several statuses set
  // it (MPI-4.1 section 3.2.5); they do so themselves.
  SetStatusBytes(to, from.bytes);
  to->MPI_internal[2] = from.cancelled ? 1 : 0;
}

void SetEmptyStatus(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  SetStatusBytes(status, 0);
  status->MPI_internal[2] = 0;
}

vci::Status ProcNullStatus() {
  vci::Status status;
  status.source = MPI_PROC_NULL;
  status.tag = match::kAnyTag;
  return status;
}

int CommunicatorError(const char* call, MPI_Comm handle) {
  if (Communicator* comm = ToCommunicator(handle); comm != nullptr) {
    // Its own handler, which the program may already have set on it.
    return RaiseError(comm, call, MPI_ERR_COMM,
                      "communicator from MPI_Comm_idup used to communicate "
                      "before its request completed");
  }
  if ((handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF) &&
      !Instance::world_active()) {
    return RaiseError(
        nullptr, call, MPI_ERR_COMM,
        absl::StrCat(
            handle == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF",
            Instance::world_state() == LibraryState::kFinalized
                ? " is gone after MPI_Finalize"
                : " needs MPI_Init (only sessions are initialized)",
            ": use a communicator made from a session's group "
            "(MPI_Comm_create_from_group)"));
  }
  return RaiseError(nullptr, call, MPI_ERR_COMM,
                    handle == MPI_COMM_NULL
                        ? "invalid communicator (MPI_COMM_NULL)"
                        : "invalid communicator");
}

int BufferError(const char* call, Communicator* comm, const void* buffer,
                int64_t count, MPI_Datatype handle) {
  const Datatype* type = LookupDatatype(handle);
  if (type == nullptr) {
    return RaiseError(comm, call, MPI_ERR_TYPE,
                      handle == MPI_DATATYPE_NULL
                          ? "invalid datatype (MPI_DATATYPE_NULL)"
                          : "invalid datatype (freed, or never a datatype)");
  }
  if (!type->committed()) {
    return RaiseError(
        comm, call, MPI_ERR_TYPE,
        absl::StrFormat("datatype %s is not committed (call MPI_Type_commit)",
                        type->name().empty() ? "(unnamed)" : type->name()));
  }
  if (count < 0) {
    return RaiseError(comm, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  (void)buffer;  // the only check left: a null buffer with data to move
  return RaiseError(comm, call, MPI_ERR_BUFFER,
                    absl::StrFormat("null buffer with count %d", count));
}

int NullRequestPointer(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_REQUEST, "null request pointer");
}

int PeerError(const char* call, Communicator* comm, bool is_source, int peer,
              int tag) {
  const bool valid_rank = (peer >= 0 && peer < comm->peer_count()) ||
                          peer == MPI_PROC_NULL ||
                          (is_source && peer == MPI_ANY_SOURCE);
  if (!valid_rank) {
    return RaiseError(
        comm, call, MPI_ERR_RANK,
        absl::StrFormat("invalid %s %d (%s size %d)",
                        is_source ? "source" : "destination", peer,
                        comm->inter ? "remote group" : "communicator",
                        comm->peer_count()));
  }
  return RaiseError(
      comm, call, MPI_ERR_TAG,
      absl::StrFormat(is_source ? "invalid tag %d (must be MPI_ANY_TAG or "
                                  "0..%d)"
                                : "invalid tag %d (must be 0..%d)",
                      tag, MINIMPI_TAG_UB));
}

int EndpointsGroupError(const char* call, Communicator* comm) {
  return RaiseError(comm, call, MPI_ERR_COMM,
                    "groups are not defined on an endpoints communicator "
                    "(its ranks are endpoints, not processes); use "
                    "MPI_Comm_split or MPI_Comm_dup on it instead");
}

match::Envelope MakeEnvelope(Communicator* comm, int source, int tag) {
  return {comm->point_to_point_context(),
          source == MPI_ANY_SOURCE ? match::kAnySource : source,
          tag == MPI_ANY_TAG ? match::kAnyTag : tag};
}

int RaiseRequestError(const char* call, const vci::Request* request,
                      Communicator* comm) {
  if (request->status.error != vci::Error::kTruncated) return MPI_SUCCESS;
  if (request->kind == vci::RequestKind::kCollective) {
    return RaiseError(comm, call, MPI_ERR_TRUNCATE,
                      "message truncated in a collective: the ranks passed "
                      "counts or types that do not match");
  }
  return RaiseError(
      comm, call, MPI_ERR_TRUNCATE,
      absl::StrFormat("message truncated: %u bytes arrived from rank %d (tag "
                      "%d) for a buffer of %u bytes",
                      request->status.arrived_bytes, request->status.source,
                      request->status.tag, request->capacity));
}

int OpError(const char* call, Communicator* comm, MPI_Op handle,
            MPI_Datatype type) {
  const Op* op = LookupOp(handle);
  if (op == nullptr) {
    return RaiseError(comm, call, MPI_ERR_OP,
                      handle == MPI_OP_NULL ? "invalid operation (MPI_OP_NULL)"
                                            : "invalid operation");
  }
  if (handle == MPI_REPLACE || handle == MPI_NO_OP) {
    return RaiseError(comm, call, MPI_ERR_OP,
                      absl::StrCat(op->name(),
                                   " is only valid in one-sided accumulate "
                                   "operations"));
  }
  const Datatype* datatype = LookupDatatype(type);
  if (datatype == nullptr) {
    return RaiseError(comm, call, MPI_ERR_TYPE,
                      type == MPI_DATATYPE_NULL
                          ? "invalid datatype (MPI_DATATYPE_NULL)"
                          : "invalid datatype");
  }
  if (!datatype->predefined()) {
    const MPI_Datatype base = datatype->layout().reduction_base();
    const Datatype* base_type = Datatype::FindPredefined(base);
    return RaiseError(
        comm, call, MPI_ERR_OP,
        base_type == nullptr
            ? absl::StrCat(op->name(),
                           " is not defined on a derived datatype that mixes "
                           "predefined types")
            : absl::StrCat(op->name(), " is not defined for ",
                           base_type->name(), ", the derived type's base"));
  }
  return RaiseError(
      comm, call, MPI_ERR_OP,
      absl::StrCat(op->name(), " is not defined for ", datatype->name()));
}

}  // namespace minimpi
