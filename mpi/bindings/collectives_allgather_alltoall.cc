// The forms of MPI_Allgather(v) and MPI_Alltoall(v,w): blocking,
// nonblocking, persistent, each with int and MPI_Count counts. Each is one
// statement: its name and its arguments, as DataSides, handed to the one
// body of its call (collectives_data_movement.h).
#include "mpi/bindings/collectives_data_movement.h"

using minimpi::Block;
using minimpi::Blocks;
using minimpi::EveryoneDataMovement;
using minimpi::EveryoneKind;

extern "C" {

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return EveryoneDataMovement(
      "MPI_Allgather", EveryoneKind::kAllgather,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return EveryoneDataMovement(
      "MPI_Iallgather", EveryoneKind::kAllgather,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Allgather_init(const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  return EveryoneDataMovement("MPI_Allgather_init", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Block(recvbuf, recvcount, recvtype), comm, info,
                              request, minimpi::CallForm::kPersistent);
}

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return EveryoneDataMovement("MPI_Allgatherv", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, MPI_INFO_NULL, nullptr,
                              minimpi::CallForm::kBlocking);
}

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return EveryoneDataMovement("MPI_Iallgatherv", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, MPI_INFO_NULL, request,
                              minimpi::CallForm::kNonblocking);
}

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  return EveryoneDataMovement("MPI_Allgatherv_init", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, info, request,
                              minimpi::CallForm::kPersistent);
}

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return EveryoneDataMovement(
      "MPI_Alltoall", EveryoneKind::kAlltoall,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  return EveryoneDataMovement(
      "MPI_Ialltoall", EveryoneKind::kAlltoall,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoall_init(const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  return EveryoneDataMovement("MPI_Alltoall_init", EveryoneKind::kAlltoall,
                              Block(sendbuf, sendcount, sendtype),
                              Block(recvbuf, recvcount, recvtype), comm, info,
                              request, minimpi::CallForm::kPersistent);
}

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return EveryoneDataMovement("MPI_Alltoallv", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, MPI_INFO_NULL, nullptr,
                              minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return EveryoneDataMovement("MPI_Ialltoallv", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, MPI_INFO_NULL, request,
                              minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Alltoallv_init", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, info, request,
                              minimpi::CallForm::kPersistent);
}

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return minimpi::Alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls,
                            sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                            comm, MPI_INFO_NULL, nullptr,
                            minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[],
                    const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  return minimpi::Alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls,
                            sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                            comm, MPI_INFO_NULL, request,
                            minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return minimpi::Alltoallw("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls,
                            sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                            comm, info, request,
                            minimpi::CallForm::kPersistent);
}

int PMPI_Allgather_c(const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm) {
  return EveryoneDataMovement(
      "MPI_Allgather_c", EveryoneKind::kAllgather,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request) {
  return EveryoneDataMovement(
      "MPI_Iallgather_c", EveryoneKind::kAllgather,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Allgather_init_c(const void* sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void* recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Allgather_init_c", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Block(recvbuf, recvcount, recvtype), comm, info,
                              request, minimpi::CallForm::kPersistent);
}

int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm) {
  return EveryoneDataMovement("MPI_Allgatherv_c", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, MPI_INFO_NULL, nullptr,
                              minimpi::CallForm::kBlocking);
}

int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request* request) {
  return EveryoneDataMovement("MPI_Iallgatherv_c", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, MPI_INFO_NULL, request,
                              minimpi::CallForm::kNonblocking);
}

int PMPI_Allgatherv_init_c(const void* sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           const MPI_Count recvcounts[],
                           const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Allgatherv_init_c", EveryoneKind::kAllgather,
                              Block(sendbuf, sendcount, sendtype),
                              Blocks(recvbuf, recvcounts, displs, recvtype),
                              comm, info, request,
                              minimpi::CallForm::kPersistent);
}

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return EveryoneDataMovement(
      "MPI_Alltoall_c", EveryoneKind::kAlltoall,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return EveryoneDataMovement(
      "MPI_Ialltoall_c", EveryoneKind::kAlltoall,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Alltoall_init_c", EveryoneKind::kAlltoall,
                              Block(sendbuf, sendcount, sendtype),
                              Block(recvbuf, recvcount, recvtype), comm, info,
                              request, minimpi::CallForm::kPersistent);
}

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  return EveryoneDataMovement("MPI_Alltoallv_c", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, MPI_INFO_NULL, nullptr,
                              minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                      void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Ialltoallv_c", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, MPI_INFO_NULL, request,
                              minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                          void* recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return EveryoneDataMovement("MPI_Alltoallv_init_c", EveryoneKind::kAlltoall,
                              Blocks(sendbuf, sendcounts, sdispls, sendtype),
                              Blocks(recvbuf, recvcounts, rdispls, recvtype),
                              comm, info, request,
                              minimpi::CallForm::kPersistent);
}

int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                     void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                     MPI_Comm comm) {
  return minimpi::Alltoallw("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls,
                            sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                            comm, MPI_INFO_NULL, nullptr,
                            minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                      void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                      MPI_Comm comm, MPI_Request* request) {
  return minimpi::Alltoallw("MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls,
                            sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                            comm, MPI_INFO_NULL, request,
                            minimpi::CallForm::kNonblocking);
}

int PMPI_Alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf,
                          const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Info info, MPI_Request* request) {
  return minimpi::Alltoallw("MPI_Alltoallw_init_c", sendbuf, sendcounts,
                            sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm, info, request,
                            minimpi::CallForm::kPersistent);
}

}  // extern "C"

MINIMPI_EXPORT(Allgather)
MINIMPI_EXPORT(Iallgather)
MINIMPI_EXPORT(Allgather_init)
MINIMPI_EXPORT(Allgatherv)
MINIMPI_EXPORT(Iallgatherv)
MINIMPI_EXPORT(Allgatherv_init)
MINIMPI_EXPORT(Alltoall)
MINIMPI_EXPORT(Ialltoall)
MINIMPI_EXPORT(Alltoall_init)
MINIMPI_EXPORT(Alltoallv)
MINIMPI_EXPORT(Ialltoallv)
MINIMPI_EXPORT(Alltoallv_init)
MINIMPI_EXPORT(Alltoallw)
MINIMPI_EXPORT(Ialltoallw)
MINIMPI_EXPORT(Alltoallw_init)
MINIMPI_EXPORT(Allgather_c)
MINIMPI_EXPORT(Iallgather_c)
MINIMPI_EXPORT(Allgather_init_c)
MINIMPI_EXPORT(Allgatherv_c)
MINIMPI_EXPORT(Iallgatherv_c)
MINIMPI_EXPORT(Allgatherv_init_c)
MINIMPI_EXPORT(Alltoall_c)
MINIMPI_EXPORT(Ialltoall_c)
MINIMPI_EXPORT(Alltoall_init_c)
MINIMPI_EXPORT(Alltoallv_c)
MINIMPI_EXPORT(Ialltoallv_c)
MINIMPI_EXPORT(Alltoallv_init_c)
MINIMPI_EXPORT(Alltoallw_c)
MINIMPI_EXPORT(Ialltoallw_c)
MINIMPI_EXPORT(Alltoallw_init_c)
