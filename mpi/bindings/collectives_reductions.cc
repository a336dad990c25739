// MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter, MPI_Reduce_scatter_block,
// MPI_Scan, MPI_Exscan and their nonblocking forms. Each blocking call and
// its nonblocking twin share one function: validate, fill coll::Arguments,
// RunCollective.
#include <climits>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "mpi/bindings/collective_util.h"

using minimpi::Communicator;
namespace coll = minimpi::coll;

namespace {

// What the reductions check alike. `items` is the number of items in the
// send buffer (the whole vector), unless `sends` is false (an
// intercommunicator's root sends nothing); `receive_items` those in the
// receive buffer where it is significant (-1: not significant on this rank).
int CheckReduction(const char* call, Communicator* comm, const void* sendbuf,
                   void* recvbuf, bool sends, MPI_Count items,
                   MPI_Count receive_items, MPI_Datatype datatype, MPI_Op op,
                   bool in_place_allowed, coll::Arguments* arguments) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !in_place_allowed) {
    return minimpi::InPlaceNotAllowed(call, comm);
  }
  if (sends) {
    if (int error = minimpi::CheckTypedCount(call, comm, sendbuf, items,
                                             datatype, &arguments->extent)) {
      return error;
    }
  }
  if (receive_items >= 0) {
    if (recvbuf == MPI_IN_PLACE) {
      return minimpi::InPlaceNotAllowed(call, comm);
    }
    if (int error = minimpi::CheckTypedCount(call, comm, recvbuf, receive_items,
                                             datatype, &arguments->extent)) {
      return error;
    }
    if (!in_place && sends) {
      if (int error = minimpi::CheckNoAlias(call, comm, sendbuf, items > 0,
                                            recvbuf, receive_items > 0)) {
        return error;
      }
    }
  }
  if (int error = minimpi::CheckOp(call, comm, op, datatype, &arguments->op)) {
    return error;
  }
  arguments->in_place = in_place;
  arguments->send_buffer = in_place || !sends ? nullptr : sendbuf;
  arguments->receive_buffer = recvbuf;
  arguments->type = datatype;
  return MPI_SUCCESS;
}

int Reduce(const char* call, const void* sendbuf, void* recvbuf,
           MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
           MPI_Comm comm, MPI_Info info, MPI_Request* request,
           minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error = minimpi::BeginCollective(call, comm, info, form, &c)) {
    return error;
  }
  if (int error = minimpi::CheckRoot(call, c, root)) return error;
  const bool at_root = minimpi::IsRoot(c, root);
  coll::Arguments arguments;
  // The receive buffer matters at the root only; MPI_IN_PLACE too. On an
  // intercommunicator the root only receives, and the rest of its group
  // takes no part.
  if (!minimpi::TakesNoPart(c, root)) {
    if (int error = CheckReduction(
            call, c, sendbuf, recvbuf, /*sends=*/!(c->inter && at_root), count,
            at_root ? count : -1, datatype, op,
            /*in_place_allowed=*/at_root && !c->inter, &arguments)) {
      return error;
    }
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  arguments.count = count;
  arguments.root = root;
  return minimpi::RunCollective(call, c, coll::Collective::kReduce, arguments,
                                request, form);
}

// Allreduce, Scan and Exscan: one count, in place allowed, the receive
// buffer significant everywhere.
int Everywhere(const char* call, coll::Collective collective,
               const void* sendbuf, void* recvbuf, MPI_Count count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
               MPI_Request* request, minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error =
          minimpi::BeginCollective(call, comm, info, form, &c,
                                   /*intracommunicator_only=*/collective !=
                                       coll::Collective::kAllreduce)) {
    return error;
  }
  coll::Arguments arguments;
  if (int error = CheckReduction(call, c, sendbuf, recvbuf, /*sends=*/true,
                                 count, count, datatype, op,
                                 /*in_place_allowed=*/!c->inter, &arguments)) {
    return error;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  arguments.count = count;
  return minimpi::RunCollective(call, c, collective, arguments, request, form);
}

int ReduceScatter(const char* call, const void* sendbuf, void* recvbuf,
                  coll::CountArray recvcounts, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request* request,
                  minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error = minimpi::BeginCollective(call, comm, info, form, &c)) {
    return error;
  }
  if (recvcounts == nullptr) {
    return minimpi::RaiseError(c, call, MPI_ERR_COUNT, "recvcounts is NULL");
  }
  int64_t total = 0;
  for (int r = 0; r < c->size; ++r) {
    if (recvcounts[r] < 0) {
      return minimpi::RaiseError(
          c, call, MPI_ERR_COUNT,
          absl::StrFormat("negative count recvcounts[%d] = %d", r,
                          recvcounts[r]));
    }
    total += recvcounts[r];
  }
  const MPI_Count items = total;
  // In place, the receive buffer holds the whole vector on input.
  const MPI_Count receive_items =
      sendbuf == MPI_IN_PLACE ? items : recvcounts[c->rank];
  coll::Arguments arguments;
  if (int error = CheckReduction(call, c, sendbuf, recvbuf, /*sends=*/true,
                                 items, receive_items, datatype, op,
                                 /*in_place_allowed=*/!c->inter, &arguments)) {
    return error;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  arguments.receive_counts = recvcounts;
  return minimpi::RunCollective(call, c, coll::Collective::kReduceScatter,
                                arguments, request, form);
}

int ReduceScatterBlock(const char* call, const void* sendbuf, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request,
                       minimpi::CallForm form) {
  Communicator* c = nullptr;
  if (int error = minimpi::BeginCollective(call, comm, info, form, &c)) {
    return error;
  }
  if (recvcount < 0) {
    return minimpi::RaiseError(c, call, MPI_ERR_COUNT,
                               absl::StrFormat("negative count %d", recvcount));
  }
  const MPI_Count items = recvcount * c->size;
  const MPI_Count receive_items = sendbuf == MPI_IN_PLACE ? items : recvcount;
  coll::Arguments arguments;
  if (int error = CheckReduction(call, c, sendbuf, recvbuf, /*sends=*/true,
                                 items, receive_items, datatype, op,
                                 /*in_place_allowed=*/!c->inter, &arguments)) {
    return error;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  arguments.count = recvcount;  // per rank; receive_counts stays null
  return minimpi::RunCollective(call, c, coll::Collective::kReduceScatterBlock,
                                arguments, request, form);
}

}  // namespace

extern "C" {

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return Reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm,
                MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return Reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root,
                comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Allreduce", coll::Collective::kAllreduce, sendbuf,
                    recvbuf, count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request) {
  return Everywhere("MPI_Iallreduce", coll::Collective::kAllreduce, sendbuf,
                    recvbuf, count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm) {
  return ReduceScatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts,
                       datatype, op, comm, MPI_INFO_NULL, nullptr,
                       minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                         const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return ReduceScatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts,
                       datatype, op, comm, MPI_INFO_NULL, request,
                       minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return ReduceScatterBlock("MPI_Reduce_scatter_block", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, MPI_INFO_NULL,
                            nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf,
                               int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  return ReduceScatterBlock("MPI_Ireduce_scatter_block", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, MPI_INFO_NULL,
                            request, minimpi::CallForm::kNonblocking);
}

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Scan", coll::Collective::kScan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request) {
  return Everywhere("MPI_Iscan", coll::Collective::kScan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Exscan", coll::Collective::kExscan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  return Everywhere("MPI_Iexscan", coll::Collective::kExscan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  return Reduce("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root,
                comm, info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Allreduce_init", coll::Collective::kAllreduce, sendbuf,
                    recvbuf, count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                             const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request* request) {
  return ReduceScatter("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts,
                       datatype, op, comm, info, request,
                       minimpi::CallForm::kPersistent);
}

int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf,
                                   int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return ReduceScatterBlock("MPI_Reduce_scatter_block_init", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, info, request,
                            minimpi::CallForm::kPersistent);
}

int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Scan_init", coll::Collective::kScan, sendbuf, recvbuf,
                    count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Exscan_init", coll::Collective::kExscan, sendbuf,
                    recvbuf, count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

int PMPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return Reduce("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root,
                comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                   MPI_Request* request) {
  return Reduce("MPI_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root,
                comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Allreduce_c", coll::Collective::kAllreduce, sendbuf,
                    recvbuf, count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request* request) {
  return Everywhere("MPI_Iallreduce_c", coll::Collective::kAllreduce, sendbuf,
                    recvbuf, count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf,
                          const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  return ReduceScatter("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts,
                       datatype, op, comm, MPI_INFO_NULL, nullptr,
                       minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf,
                           const MPI_Count recvcounts[], MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return ReduceScatter("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts,
                       datatype, op, comm, MPI_INFO_NULL, request,
                       minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf,
                                MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm) {
  return ReduceScatterBlock("MPI_Reduce_scatter_block_c", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, MPI_INFO_NULL,
                            nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf,
                                 MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm,
                                 MPI_Request* request) {
  return ReduceScatterBlock("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, MPI_INFO_NULL,
                            request, minimpi::CallForm::kNonblocking);
}

int PMPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Scan_c", coll::Collective::kScan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  return Everywhere("MPI_Iscan_c", coll::Collective::kScan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Everywhere("MPI_Exscan_c", coll::Collective::kExscan, sendbuf, recvbuf,
                    count, datatype, op, comm, MPI_INFO_NULL, nullptr,
                    minimpi::CallForm::kBlocking);
}

int PMPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return Everywhere("MPI_Iexscan_c", coll::Collective::kExscan, sendbuf,
                    recvbuf, count, datatype, op, comm, MPI_INFO_NULL, request,
                    minimpi::CallForm::kNonblocking);
}

int PMPI_Reduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Reduce("MPI_Reduce_init_c", sendbuf, recvbuf, count, datatype, op,
                root, comm, info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Allreduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Allreduce_init_c", coll::Collective::kAllreduce,
                    sendbuf, recvbuf, count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

int PMPI_Reduce_scatter_init_c(const void* sendbuf, void* recvbuf,
                               const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request) {
  return ReduceScatter("MPI_Reduce_scatter_init_c", sendbuf, recvbuf,
                       recvcounts, datatype, op, comm, info, request,
                       minimpi::CallForm::kPersistent);
}

int PMPI_Reduce_scatter_block_init_c(const void* sendbuf, void* recvbuf,
                                     MPI_Count recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request* request) {
  return ReduceScatterBlock("MPI_Reduce_scatter_block_init_c", sendbuf, recvbuf,
                            recvcount, datatype, op, comm, info, request,
                            minimpi::CallForm::kPersistent);
}

int PMPI_Scan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Scan_init_c", coll::Collective::kScan, sendbuf,
                    recvbuf, count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

int PMPI_Exscan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request* request) {
  return Everywhere("MPI_Exscan_init_c", coll::Collective::kExscan, sendbuf,
                    recvbuf, count, datatype, op, comm, info, request,
                    minimpi::CallForm::kPersistent);
}

}  // extern "C"

MINIMPI_EXPORT(Reduce)
MINIMPI_EXPORT(Ireduce)
MINIMPI_EXPORT(Allreduce)
MINIMPI_EXPORT(Iallreduce)
MINIMPI_EXPORT(Reduce_scatter)
MINIMPI_EXPORT(Ireduce_scatter)
MINIMPI_EXPORT(Reduce_scatter_block)
MINIMPI_EXPORT(Ireduce_scatter_block)
MINIMPI_EXPORT(Scan)
MINIMPI_EXPORT(Iscan)
MINIMPI_EXPORT(Exscan)
MINIMPI_EXPORT(Iexscan)
MINIMPI_EXPORT(Reduce_init)
MINIMPI_EXPORT(Allreduce_init)
MINIMPI_EXPORT(Reduce_scatter_init)
MINIMPI_EXPORT(Reduce_scatter_block_init)
MINIMPI_EXPORT(Scan_init)
MINIMPI_EXPORT(Exscan_init)
MINIMPI_EXPORT(Reduce_c)
MINIMPI_EXPORT(Ireduce_c)
MINIMPI_EXPORT(Allreduce_c)
MINIMPI_EXPORT(Iallreduce_c)
MINIMPI_EXPORT(Reduce_scatter_c)
MINIMPI_EXPORT(Ireduce_scatter_c)
MINIMPI_EXPORT(Reduce_scatter_block_c)
MINIMPI_EXPORT(Ireduce_scatter_block_c)
MINIMPI_EXPORT(Scan_c)
MINIMPI_EXPORT(Iscan_c)
MINIMPI_EXPORT(Exscan_c)
MINIMPI_EXPORT(Iexscan_c)
MINIMPI_EXPORT(Reduce_init_c)
MINIMPI_EXPORT(Allreduce_init_c)
MINIMPI_EXPORT(Reduce_scatter_init_c)
MINIMPI_EXPORT(Reduce_scatter_block_init_c)
MINIMPI_EXPORT(Scan_init_c)
MINIMPI_EXPORT(Exscan_init_c)
