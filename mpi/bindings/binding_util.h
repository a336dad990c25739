// Helpers shared by the C bindings: handle translation, argument checks that
// many calls share, status conversion, and the PMPI alias macro. The
// bindings stay thin: validate, translate, call C++.
#ifndef MINIMPI_MPI_BINDINGS_BINDING_UTIL_H_
#define MINIMPI_MPI_BINDINGS_BINDING_UTIL_H_

#include <cstdint>

#include "mpi/bindings/error_dispatch.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/comm.h"
#include "mpi/objects/datatype.h"
#include "mpi/objects/handle_table.h"
#include "mpi/instance/instance.h"
#include "mpi/mpi.h"
#include "mpi/objects/op.h"
#include "mpi/p2p/point_to_point.h"

// Every function is defined as PMPI_<name>; MPI_<name> is a weak alias, so a
// profiling library that defines MPI_<name> itself wins and can call PMPI_.
#define MINIMPI_EXPORT(name)                    \
  extern "C" __typeof__(PMPI_##name) MPI_##name \
      __attribute__((weak, alias("PMPI_" #name)));

// Large-count forms (MPI_<name>_c) and their int forms share one body,
// written for the wider types (MPI_Count counts, MPI_Aint displacements;
// coll::CountArray holds int or MPI_Count arrays alike) and given the
// call's name for its messages. Each exported form is then one statement:
//   int PMPI_Send(const void* buf, int count, ...) {
//     return BlockingSend("MPI_Send", buf, count, ...);
//   }
//   int PMPI_Send_c(const void* buf, MPI_Count count, ...) {
//     return BlockingSend("MPI_Send_c", buf, count, ...);
//   }
// so both forms check the same things in the same order, each under its
// own name. The same goes for the blocking, nonblocking and persistent
// forms of a collective (collective_util.h's CallForm, BeginCollective).
#define MINIMPIX_EXPORT(name)                     \
  extern "C" __typeof__(PMPIX_##name) MPIX_##name \
      __attribute__((weak, alias("PMPIX_" #name)));

#define MINIMPI_REQUIRE_INIT(call)                 \
  do {                                             \
    if (::minimpi::Instance::state() !=            \
        ::minimpi::LibraryState::kInitialized) {   \
      return ::minimpi::RaiseNotInitialized(call); \
    }                                              \
  } while (0)

namespace minimpi {

// Handles below this value are predefined constants, never object handles
// (mpi/objects/handle_table.h).
inline constexpr uintptr_t kLargestPredefinedHandle = 0xfff;

inline bool IsPredefinedHandle(const void* handle) {
  return reinterpret_cast<uintptr_t>(handle) <= kLargestPredefinedHandle;
}

inline uintptr_t HandleValue(const void* handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

// The communicator a handle names, or nullptr (MPI_COMM_NULL, freed,
// garbage).
inline Communicator* ToCommunicator(MPI_Comm handle) {
  Instance& instance = Instance::Get();
  // The predefined communicators exist only in the world model: with only
  // sessions live (or after MPI_Finalize) they name nothing.
  if (handle == MPI_COMM_WORLD) {
    return Instance::world_active() ? instance.world() : nullptr;
  }
  if (handle == MPI_COMM_SELF) {
    return Instance::world_active() ? instance.self() : nullptr;
  }
  return instance.communicators().Lookup(HandleValue(handle));
}

inline MPI_Comm ToHandle(Communicator* comm) { return comm->handle; }

// A request handle holds the request's VCI and index in that VCI's pool
// (RequestPool::kMaxRequests fits below bit 22) and the pool slot's
// generation, so a handle to a request that completed or was freed no longer
// resolves.
inline constexpr int kRequestVciShift = 22;
static_assert(vci::RequestPool::kMaxRequests <= (1u << kRequestVciShift));

// The request a handle names, or nullptr (MPI_REQUEST_NULL, completed and
// collected, freed, garbage).
inline vci::Request* ToRequest(MPI_Request handle) {
  const uintptr_t value = HandleValue(handle);
  if (!HandleIsKind(value, HandleKind::kRequest)) return nullptr;
  const uint32_t index = HandleIndex(value);
  return Instance::Get().p2p().LookupRequest(
      index >> kRequestVciShift, index & ((1u << kRequestVciShift) - 1),
      HandleGeneration(value));
}

inline MPI_Request ToHandle(vci::Request* request) {
  return reinterpret_cast<MPI_Request>(EncodeHandle(
      HandleKind::kRequest, request->generation.load(std::memory_order_relaxed),
      (static_cast<uint32_t>(request->vci) << kRequestVciShift) |
          request->index));
}

// The communicator a request's owner field names; nullptr once freed.
inline Communicator* OwnerOf(const vci::Request* request) {
  return request->owner == 0
             ? nullptr
             : ToCommunicator(reinterpret_cast<MPI_Comm>(request->owner));
}
inline uintptr_t OwnerValue(Communicator* comm) {
  return HandleValue(comm->handle);
}

// Status helpers. MPI_internal[0..1] hold the byte count, MPI_internal[2] the
// cancelled flag.
inline void SetStatusBytes(MPI_Status* status, uint64_t bytes) {
  status->MPI_internal[0] = static_cast<int>(bytes & 0xffffffffu);
  status->MPI_internal[1] = static_cast<int>(bytes >> 32);
}
inline uint64_t StatusBytes(const MPI_Status* status) {
  return static_cast<uint64_t>(static_cast<uint32_t>(status->MPI_internal[0])) |
         (static_cast<uint64_t>(static_cast<uint32_t>(status->MPI_internal[1]))
          << 32);
}
// Source, tag, count and cancellation of a finished operation; MPI_ERROR is
// not touched (single-status calls must leave it, MPI-4.1 section 3.2.5).
void ToMpiStatus(const vci::Status& from, MPI_Status* to);
// The standard's empty status (MPI_ERROR = MPI_SUCCESS included).
void SetEmptyStatus(MPI_Status* status);
vci::Status ProcNullStatus();

// Argument checks. Each returns MPI_SUCCESS, or the error class after
// raising it on the right error handler. The checks are inline (always: a
// call level costs the message rate its pushes and pops) and branch once
// on the common path; finding out what exactly was wrong, formatting
// the message and raising it happen out of line, in the *Error functions.
[[gnu::cold, gnu::noinline]] int CommunicatorError(const char* call,
                                                   MPI_Comm handle);
[[gnu::cold, gnu::noinline]] int BufferError(const char* call,
                                             Communicator* comm,
                                             const void* buffer, int64_t count,
                                             MPI_Datatype handle);
// Groups name processes, and an endpoints communicator's ranks are
// (process, endpoint) pairs: its group, and the constructors that take a
// group, are not defined for it (the endpoints proposal leaves them out).
[[gnu::cold, gnu::noinline]] int EndpointsGroupError(const char* call,
                                                     Communicator* comm);
[[gnu::cold, gnu::noinline]] int PeerError(const char* call, Communicator* comm,
                                           bool is_source, int peer, int tag);
// MPI_ERR_REQUEST for a nonblocking call given no place for its request.
[[gnu::cold, gnu::noinline]] int NullRequestPointer(const char* call,
                                                    Communicator* comm);

inline bool ValidTag(int tag) { return tag >= 0 && tag <= MINIMPI_TAG_UB; }

// A communicator to communicate on (or to make another from).
[[gnu::always_inline]] inline int CheckCommunicator(const char* call,
                                                    MPI_Comm handle,
                                                    Communicator** comm) {
  *comm = ToCommunicator(handle);
  // A communicator MPI_Comm_idup has not finished yet cannot communicate:
  // its peers' ids arrive with the request's completion.
  if (*comm != nullptr &&
      !(*comm)->awaiting_idup.load(std::memory_order_acquire)) [[likely]]
    return MPI_SUCCESS;
  return CommunicatorError(call, handle);
}

// A communicator for a call that only reads or sets this process's view of
// it (rank, size, group, name, attributes, error handler, info, topology):
// everything but the peers' ids is in place as soon as MPI_Comm_idup
// returns, and MPICH and Open MPI accept these calls before its request
// completes (mpi4py relies on it).
inline int CheckLocalCommunicator(const char* call, MPI_Comm handle,
                                  Communicator** comm) {
  *comm = ToCommunicator(handle);
  if (*comm != nullptr) [[likely]]
    return MPI_SUCCESS;
  return CommunicatorError(call, handle);
}

// A buffer argument: a committed datatype, a count that is not negative,
// and a buffer that is not null when there is data to move (a derived
// datatype may address absolute memory from MPI_BOTTOM, which is null).
[[gnu::always_inline]] inline int CheckBuffer(const char* call,
                                              Communicator* comm,
                                              const void* buffer, int64_t count,
                                              MPI_Datatype handle,
                                              const Datatype** type) {
  *type = LookupDatatype(handle);
  if (*type != nullptr && count >= 0 && (*type)->committed() &&
      (buffer != nullptr || count == 0 || (*type)->size() == 0 ||
       !(*type)->predefined())) [[likely]] {
    return MPI_SUCCESS;
  }
  return BufferError(call, comm, buffer, count, handle);
}

// The address of a block `displacement` bytes past `buffer`
// (MPI_Neighbor_alltoallw places each block by its own MPI_Aint byte
// displacement). With MPI_BOTTOM, which is null, the displacements are
// absolute addresses (MPI_Get_address), so a block's own address is what
// must not be null.
inline const void* BlockAddress(const void* buffer, int64_t displacement) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(buffer) +
                                       static_cast<uintptr_t>(displacement));
}

// A point-to-point message's buffer: as CheckBuffer, but an empty message
// may name MPI_DATATYPE_NULL, as MPICH and Open MPI accept (nothing is read
// or written, so no type is needed); it then moves as zero bytes. Any other
// count with MPI_DATATYPE_NULL stays MPI_ERR_TYPE.
[[gnu::always_inline]] inline int CheckMessageBuffer(
    const char* call, Communicator* comm, const void* buffer, int64_t count,
    MPI_Datatype handle, const Datatype** type) {
  if (handle == MPI_DATATYPE_NULL && count == 0) [[unlikely]] {
    *type = Datatype::FindPredefined(MPI_BYTE);
    return MPI_SUCCESS;
  }
  return CheckBuffer(call, comm, buffer, count, handle, type);
}

[[gnu::always_inline]] inline int CheckSend(
    const char* call, const void* buffer, int64_t count, MPI_Datatype datatype,
    int destination, int tag, MPI_Comm handle, Communicator** comm,
    const Datatype** type) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  if (int error =
          CheckMessageBuffer(call, *comm, buffer, count, datatype, type)) {
    return error;
  }
  const bool valid_rank =
      (destination >= 0 && destination < (*comm)->peer_count()) ||
      destination == MPI_PROC_NULL;
  if (valid_rank && ValidTag(tag)) [[likely]]
    return MPI_SUCCESS;
  return PeerError(call, *comm, /*is_source=*/false, destination, tag);
}

// Probes: a source and tag (wildcards allowed) on a communicator.
[[gnu::always_inline]] inline int CheckProbe(const char* call, int source,
                                             int tag, MPI_Comm handle,
                                             Communicator** comm) {
  if (int error = CheckCommunicator(call, handle, comm)) return error;
  const bool valid_rank = (source >= 0 && source < (*comm)->peer_count()) ||
                          source == MPI_ANY_SOURCE || source == MPI_PROC_NULL;
  if (valid_rank && (ValidTag(tag) || tag == MPI_ANY_TAG)) [[likely]] {
    return MPI_SUCCESS;
  }
  return PeerError(call, *comm, /*is_source=*/true, source, tag);
}

[[gnu::always_inline]] inline int CheckReceive(
    const char* call, const void* buffer, int64_t count, MPI_Datatype datatype,
    int source, int tag, MPI_Comm handle, Communicator** comm,
    const Datatype** type) {
  if (int error = CheckProbe(call, source, tag, handle, comm)) return error;
  return CheckMessageBuffer(call, *comm, buffer, count, datatype, type);
}

// How p2p sees `count` items of `type` at `buffer`: contiguous bytes when
// the items are contiguous (a derived type too: from buffer + true lb),
// else the datatype's layout, which p2p packs, unpacks or gathers.
struct DataDescription {
  const void* data = nullptr;
  size_t bytes = 0;
  const datatype::Layout* layout = nullptr;
  int64_t count = 0;
};
inline DataDescription Describe(const void* buffer, int64_t count,
                                const Datatype* type) {
  const size_t bytes =
      static_cast<size_t>(count) * static_cast<size_t>(type->size());
  if (type->dense()) [[likely]]
    return {buffer, bytes, nullptr, 0};
  const datatype::Layout& layout = type->layout();
  if (layout.IsContiguous(count)) {
    return {static_cast<const char*>(buffer) + layout.true_lb(), bytes, nullptr,
            0};
  }
  return {buffer, bytes, &layout, count};
}

// What p2p is asked to send or receive. Inline: every post builds one.
inline vci::SendArguments MakeSend(Communicator* comm, const void* buffer,
                                   int64_t count, const Datatype* type,
                                   int destination, int tag,
                                   vci::SendMode mode) {
  const DataDescription data = Describe(buffer, count, type);
  vci::SendArguments send;
  send.buffer = data.data;
  send.bytes = data.bytes;
  send.layout = data.layout;
  send.count = data.count;
  send.destination_world_rank = comm->world_ranks[destination];
  send.destination_vci = comm->remote_vci(destination);
  send.remote_context = comm->remote_point_to_point_context(destination);
  send.source_rank = comm->rank;
  send.tag = tag;
  send.vci = comm->vci;
  send.mode = mode;
  return send;
}

inline vci::ReceiveArguments MakeReceive(Communicator* comm, void* buffer,
                                         int64_t count, const Datatype* type,
                                         int source, int tag) {
  const DataDescription data = Describe(buffer, count, type);
  vci::ReceiveArguments receive;
  receive.buffer = const_cast<void*>(data.data);
  receive.capacity = data.bytes;
  receive.layout = data.layout;
  receive.count = data.count;
  receive.context = comm->point_to_point_context();
  receive.source = source == MPI_ANY_SOURCE ? match::kAnySource : source;
  receive.tag = tag == MPI_ANY_TAG ? match::kAnyTag : tag;
  receive.vci = comm->vci;
  return receive;
}
match::Envelope MakeEnvelope(Communicator* comm, int source, int tag);

// Raises the error a completed request carries (truncation), if any.
int RaiseRequestError(const char* call, const vci::Request* request,
                      Communicator* comm);

// Reductions (collectives and MPI_Reduce_local): the operation a handle
// names, defined on `type`. MPI_REPLACE and MPI_NO_OP belong to one-sided
// accumulates only and are refused here. Check the datatype first: an
// invalid one is reported as MPI_ERR_TYPE.
[[gnu::cold, gnu::noinline]] int OpError(const char* call, Communicator* comm,
                                         MPI_Op handle, MPI_Datatype type);

// The predefined type a predefined operation works on for `type`: the type
// itself, or a derived type's one predefined base type (MPI_DATATYPE_NULL
// when it mixes several: predefined operations are undefined on it).
inline MPI_Datatype ReductionType(MPI_Datatype type) {
  if (Datatype::FindPredefined(type) != nullptr) return type;
  const Datatype* derived = LookupDatatype(type);
  return derived == nullptr ? MPI_DATATYPE_NULL
                            : derived->layout().reduction_base();
}

inline int CheckOp(const char* call, Communicator* comm, MPI_Op handle,
                   MPI_Datatype type, const Op** op) {
  *op = LookupOp(handle);
  if (*op != nullptr && handle != MPI_REPLACE && handle != MPI_NO_OP &&
      ((*op)->Supports(type) || (*op)->Supports(ReductionType(type))))
      [[likely]] {
    return MPI_SUCCESS;
  }
  return OpError(call, comm, handle, type);
}

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_BINDING_UTIL_H_
