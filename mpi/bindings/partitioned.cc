// Partitioned communication (MPI-4.1 section 4): MPI_Psend_init,
// MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived. Start, Wait,
// Test and Request_free of partitioned requests go through completion.cc.
//
// Info keys of MPI_Psend_init (minimpi's own, ignored by other MPIs):
//   minimpi_part_aggr                  none|size|table|ploggp|timer|adaptive
//   minimpi_part_backend               native|persist|rma|auto
//   minimpi_part_transport_partitions  a fixed number of transport partitions
//   minimpi_part_channels              VCIs the writes are spread over
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/objects/info.h"
#include "mpi/part/aggregator.h"

using minimpi::Communicator;
using minimpi::Datatype;
using minimpi::Instance;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;
namespace part = minimpi::part;

namespace {

constexpr char kNotPartitioned[] = "not a partitioned request";

// Checks shared by both inits; on success the arguments are filled in but
// for the peer's side.
int PrepareInit(const char* call, bool send, const void* buf, int partitions,
                MPI_Count count, MPI_Datatype datatype, int peer, int tag,
                MPI_Comm comm, MPI_Info info, MPI_Request* request,
                Communicator** c, part::PartitionedArguments* arguments) {
  if (int error = minimpi::CheckCommunicator(call, comm, c)) return error;
  // MPI-4.1 section 4.2.1: fewer than one partition is erroneous.
  if (partitions < 1) {
    return RaiseError(
        *c, call, MPI_ERR_ARG,
        absl::StrFormat("invalid partition count %d (must be at least 1)",
                        partitions));
  }
  if (count < 0) {
    return RaiseError(*c, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  const Datatype* type;
  const int64_t items = int64_t(partitions) * count;
  if (count > (int64_t{1} << 40) || items > (int64_t{1} << 46)) {
    return RaiseError(*c, call, MPI_ERR_COUNT,
                      absl::StrFormat("%d partitions of %d items is too much "
                                      "data",
                                      partitions, count));
  }
  if (int error = minimpi::CheckBuffer(call, *c, buf, items, datatype, &type)) {
    return error;
  }
  if (send) {
    const bool valid_rank =
        (peer >= 0 && peer < (*c)->peer_count()) || peer == MPI_PROC_NULL;
    if (!valid_rank || !minimpi::ValidTag(tag)) {
      return minimpi::PeerError(call, *c, /*is_source=*/false, peer, tag);
    }
  } else {
    // Partitioned receives name their sender and tag: no wildcards.
    if (peer == MPI_ANY_SOURCE) {
      return RaiseError(*c, call, MPI_ERR_RANK,
                        "MPI_ANY_SOURCE is not allowed in MPI_Precv_init");
    }
    if (tag == MPI_ANY_TAG) {
      return RaiseError(*c, call, MPI_ERR_TAG,
                        "MPI_ANY_TAG is not allowed in MPI_Precv_init");
    }
    const bool valid_rank =
        (peer >= 0 && peer < (*c)->peer_count()) || peer == MPI_PROC_NULL;
    if (!valid_rank || !minimpi::ValidTag(tag)) {
      return minimpi::PeerError(call, *c, /*is_source=*/true, peer, tag);
    }
  }
  if (request == nullptr) return minimpi::NullRequestPointer(call, *c);
  if (info != MPI_INFO_NULL) {
    const minimpi::Info* hints = minimpi::LookupInfo(info);
    if (hints == nullptr) {
      return RaiseError(*c, call, MPI_ERR_INFO, "invalid info handle");
    }
    if (auto name = hints->Get("minimpi_part_aggr")) {
      bool known = false;
      for (const std::string& candidate : part::AggregatorNames()) {
        known |= *name == candidate;
      }
      if (!known) {
        return RaiseError(
            *c, call, MPI_ERR_INFO_VALUE,
            absl::StrFormat("info minimpi_part_aggr=%s is not one of: %s",
                            *name,
                            absl::StrJoin(part::AggregatorNames(), ", ")));
      }
      arguments->aggregator = *name;
    }
    if (auto name = hints->Get("minimpi_part_backend")) {
      bool known = false;
      for (const std::string& candidate : part::BackendNames()) {
        known |= *name == candidate;
      }
      if (!known) {
        return RaiseError(
            *c, call, MPI_ERR_INFO_VALUE,
            absl::StrFormat("info minimpi_part_backend=%s is not one of: %s",
                            *name, absl::StrJoin(part::BackendNames(), ", ")));
      }
      arguments->backend = *name;
    }
    if (auto value = hints->Get("minimpi_part_transport_partitions")) {
      if (!absl::SimpleAtoi(*value, &arguments->forced_transport_partitions) ||
          arguments->forced_transport_partitions < 0) {
        return RaiseError(*c, call, MPI_ERR_INFO_VALUE,
                          "info minimpi_part_transport_partitions must be a "
                          "non-negative integer");
      }
    }
    if (auto value = hints->Get("minimpi_part_channels")) {
      if (!absl::SimpleAtoi(*value, &arguments->forced_channels) ||
          arguments->forced_channels < 0) {
        return RaiseError(*c, call, MPI_ERR_INFO_VALUE,
                          "info minimpi_part_channels must be a "
                          "non-negative integer");
      }
    }
  }
  const minimpi::DataDescription data = minimpi::Describe(buf, items, type);
  arguments->data = const_cast<void*>(data.data);
  arguments->total_bytes = data.bytes;
  arguments->layout = data.layout;
  arguments->item_count = data.count;
  if (data.layout != nullptr) {
    arguments->layout_hold = minimpi::datatype::LayoutRef::Share(data.layout);
  }
  arguments->partitions = partitions;
  arguments->tag = tag;
  arguments->vci = (*c)->vci;
  arguments->owner = minimpi::OwnerValue(*c);
  return MPI_SUCCESS;
}

int FinishInit(const char* call, Communicator* c,
               absl::StatusOr<vci::Request*> made, MPI_Request* request) {
  if (!made.ok()) {
    return RaiseError(
        c, call,
        absl::IsResourceExhausted(made.status()) ? MPI_ERR_NO_MEM : MPI_ERR_ARG,
        std::string(made.status().message()));
  }
  *request = minimpi::ToHandle(*made);
  return MPI_SUCCESS;
}

// The active partitioned send a handle names, or an error.
int SendRequest(const char* call, MPI_Request handle, vci::Request** r) {
  if (handle == MPI_REQUEST_NULL) {
    return RaiseError(nullptr, call, MPI_ERR_REQUEST,
                      "invalid request (MPI_REQUEST_NULL)");
  }
  *r = minimpi::ToRequest(handle);
  if (*r == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_REQUEST,
                      "invalid request handle (freed, or never a request)");
  }
  if (!part::Partitioned::IsPartitioned(*r)) {
    return RaiseError(minimpi::OwnerOf(*r), call, MPI_ERR_REQUEST,
                      kNotPartitioned);
  }
  if (!part::Partitioned::IsSend(*r)) {
    return RaiseError(minimpi::OwnerOf(*r), call, MPI_ERR_REQUEST,
                      "a partitioned receive request (MPI_Pready marks "
                      "partitions of sends)");
  }
  if ((*r)->state.load(std::memory_order_acquire) ==
      vci::RequestState::kInactive) {
    return RaiseError(minimpi::OwnerOf(*r), call, MPI_ERR_REQUEST,
                      "the request is not active (MPI_Start it first)");
  }
  return MPI_SUCCESS;
}

int PartitionError(const char* call, vci::Request* r, int64_t partition) {
  return RaiseError(
      minimpi::OwnerOf(r), call, MPI_ERR_ARG,
      absl::StrFormat("partition %d out of range (the request has %d)",
                      partition, part::Partitioned::Partitions(r)));
}

int MarkReady(const char* call, vci::Request* r, int partition) {
  if (Instance::Get().partitioned().Ready(r, partition) ==
      part::Partitioned::ReadyResult::kTwice) [[unlikely]] {
    return RaiseError(
        minimpi::OwnerOf(r), call, MPI_ERR_ARG,
        absl::StrFormat("partition %d was already marked ready in this round",
                        partition));
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Psend_init_c(const void* buf, int partitions, MPI_Count count,
                      MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Psend_init";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  part::PartitionedArguments arguments;
  if (int error =
          PrepareInit(kCall, /*send=*/true, buf, partitions, count, datatype,
                      dest, tag, comm, info, request, &c, &arguments)) {
    return error;
  }
  if (dest != MPI_PROC_NULL) {
    arguments.peer_world_rank = c->world_ranks[dest];
    const minimpi::runtime::Bootstrap& bootstrap = Instance::Get().bootstrap();
    arguments.peer_on_node = bootstrap.node_of(arguments.peer_world_rank) ==
                             bootstrap.node_of(Instance::Get().world_rank());
    arguments.peer_vci = c->remote_vci(dest);
    arguments.context = c->remote_point_to_point_context(dest);
  }
  arguments.source_rank = c->rank;
  return FinishInit(kCall, c,
                    Instance::Get().partitioned().NewSend(std::move(arguments)),
                    request);
}

int PMPI_Precv_init_c(void* buf, int partitions, MPI_Count count,
                      MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Precv_init";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  part::PartitionedArguments arguments;
  if (int error =
          PrepareInit(kCall, /*send=*/false, buf, partitions, count, datatype,
                      source, tag, comm, info, request, &c, &arguments)) {
    return error;
  }
  if (source != MPI_PROC_NULL) {
    arguments.peer_world_rank = c->world_ranks[source];
    arguments.peer_vci = c->remote_vci(source);
  }
  arguments.context = c->point_to_point_context();
  arguments.source_rank = source;
  return FinishInit(
      kCall, c, Instance::Get().partitioned().NewReceive(std::move(arguments)),
      request);
}

// MPI-4.1 gave the count of a partition an int, and its large-count form
// the _c name; the standard ABI passes an int here, so the int forms are
// their own functions.
int PMPI_Psend_init(const void* buf, int partitions, int count,
                    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request) {
  return PMPI_Psend_init_c(buf, partitions, count, datatype, dest, tag, comm,
                           info, request);
}

int PMPI_Precv_init(void* buf, int partitions, int count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info,
                    MPI_Request* request) {
  return PMPI_Precv_init_c(buf, partitions, count, datatype, source, tag, comm,
                           info, request);
}

int PMPI_Pready(int partition, MPI_Request request) {
  constexpr const char* kCall = "MPI_Pready";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r;
  if (int error = SendRequest(kCall, request, &r)) return error;
  if (partition < 0 || partition >= part::Partitioned::Partitions(r))
      [[unlikely]] {
    return PartitionError(kCall, r, partition);
  }
  return MarkReady(kCall, r, partition);
}

int PMPI_Pready_range(int partition_low, int partition_high,
                      MPI_Request request) {
  constexpr const char* kCall = "MPI_Pready_range";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r;
  if (int error = SendRequest(kCall, request, &r)) return error;
  const int64_t partitions = part::Partitioned::Partitions(r);
  if (partition_low < 0 || partition_low >= partitions) {
    return PartitionError(kCall, r, partition_low);
  }
  if (partition_high < partition_low || partition_high >= partitions) {
    return RaiseError(
        minimpi::OwnerOf(r), kCall, MPI_ERR_ARG,
        absl::StrFormat("invalid range [%d, %d] (the request has %d "
                        "partitions)",
                        partition_low, partition_high, partitions));
  }
  for (int p = partition_low; p <= partition_high; ++p) {
    if (int error = MarkReady(kCall, r, p)) return error;
  }
  return MPI_SUCCESS;
}

int PMPI_Pready_list(int length, const int array_of_partitions[],
                     MPI_Request request) {
  constexpr const char* kCall = "MPI_Pready_list";
  MINIMPI_REQUIRE_INIT(kCall);
  vci::Request* r;
  if (int error = SendRequest(kCall, request, &r)) return error;
  if (length < 0 || (length > 0 && array_of_partitions == nullptr)) {
    return RaiseError(
        minimpi::OwnerOf(r), kCall, MPI_ERR_ARG,
        absl::StrFormat("invalid list (length %d%s)", length,
                        array_of_partitions == nullptr ? ", null array" : ""));
  }
  // Every entry is checked before any is marked, so a bad list marks none.
  const int64_t partitions = part::Partitioned::Partitions(r);
  for (int i = 0; i < length; ++i) {
    if (array_of_partitions[i] < 0 || array_of_partitions[i] >= partitions) {
      return PartitionError(kCall, r, array_of_partitions[i]);
    }
  }
  for (int i = 0; i < length; ++i) {
    if (int error = MarkReady(kCall, r, array_of_partitions[i])) return error;
  }
  return MPI_SUCCESS;
}

int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
  constexpr const char* kCall = "MPI_Parrived";
  MINIMPI_REQUIRE_INIT(kCall);
  if (flag == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null flag pointer");
  }
  // MPI-4.1: a null or inactive request has nothing to wait for.
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  vci::Request* r = minimpi::ToRequest(request);
  if (r == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_REQUEST,
                      "invalid request handle (freed, or never a request)");
  }
  if (!part::Partitioned::IsPartitioned(r)) {
    return RaiseError(minimpi::OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      kNotPartitioned);
  }
  if (part::Partitioned::IsSend(r)) {
    return RaiseError(minimpi::OwnerOf(r), kCall, MPI_ERR_REQUEST,
                      "a partitioned send request (MPI_Parrived asks about "
                      "receives)");
  }
  if (partition < 0 || partition >= part::Partitioned::Partitions(r)) {
    return PartitionError(kCall, r, partition);
  }
  if (r->state.load(std::memory_order_acquire) ==
      vci::RequestState::kInactive) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  *flag = Instance::Get().partitioned().Arrived(r, partition) ? 1 : 0;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Psend_init)
MINIMPI_EXPORT(Precv_init)
MINIMPI_EXPORT(Psend_init_c)
MINIMPI_EXPORT(Precv_init_c)
MINIMPI_EXPORT(Pready)
MINIMPI_EXPORT(Pready_range)
MINIMPI_EXPORT(Pready_list)
MINIMPI_EXPORT(Parrived)
