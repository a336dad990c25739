// The forms of MPI_Gather(v) and MPI_Scatter(v): blocking, nonblocking,
// persistent, each with int and MPI_Count counts. Each is one statement:
// its name and its arguments, as DataSides, handed to the one body of its
// call (collectives_data_movement.h).
#include "mpi/bindings/collectives_data_movement.h"

using minimpi::Block;
using minimpi::Blocks;
using minimpi::RootedDataMovement;
using minimpi::RootedKind;

extern "C" {

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Gather", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, nullptr,
      minimpi::CallForm::kBlocking);
}

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return RootedDataMovement(
      "MPI_Igather", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, request,
      minimpi::CallForm::kNonblocking);
}

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request) {
  return RootedDataMovement("MPI_Gather_init", RootedKind::kGather,
                            Block(sendbuf, sendcount, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Gatherv", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Blocks(recvbuf, recvcounts, displs, recvtype), root, comm, MPI_INFO_NULL,
      nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int displs[],
                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  return RootedDataMovement(
      "MPI_Igatherv", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Blocks(recvbuf, recvcounts, displs, recvtype), root, comm, MPI_INFO_NULL,
      request, minimpi::CallForm::kNonblocking);
}

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Gatherv_init", RootedKind::kGather,
                            Block(sendbuf, sendcount, sendtype),
                            Blocks(recvbuf, recvcounts, displs, recvtype), root,
                            comm, info, request,
                            minimpi::CallForm::kPersistent);
}

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Scatter", RootedKind::kScatter, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, nullptr,
      minimpi::CallForm::kBlocking);
}

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return RootedDataMovement(
      "MPI_Iscatter", RootedKind::kScatter, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, request,
      minimpi::CallForm::kNonblocking);
}

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  return RootedDataMovement("MPI_Scatter_init", RootedKind::kScatter,
                            Block(sendbuf, sendcount, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm) {
  return RootedDataMovement("MPI_Scatterv", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            MPI_INFO_NULL, nullptr,
                            minimpi::CallForm::kBlocking);
}

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                   const int displs[], MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request* request) {
  return RootedDataMovement("MPI_Iscatterv", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            MPI_INFO_NULL, request,
                            minimpi::CallForm::kNonblocking);
}

int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Scatterv_init", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Gather_c(const void* sendbuf, MPI_Count sendcount,
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Gather_c", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, nullptr,
      minimpi::CallForm::kBlocking);
}

int PMPI_Igather_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  return RootedDataMovement(
      "MPI_Igather_c", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Block(recvbuf, recvcount, recvtype), root, comm, MPI_INFO_NULL, request,
      minimpi::CallForm::kNonblocking);
}

int PMPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Gather_init_c", RootedKind::kGather,
                            Block(sendbuf, sendcount, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[],
                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Gatherv_c", RootedKind::kGather, Block(sendbuf, sendcount, sendtype),
      Blocks(recvbuf, recvcounts, displs, recvtype), root, comm, MPI_INFO_NULL,
      nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[],
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request* request) {
  return RootedDataMovement("MPI_Igatherv_c", RootedKind::kGather,
                            Block(sendbuf, sendcount, sendtype),
                            Blocks(recvbuf, recvcounts, displs, recvtype), root,
                            comm, MPI_INFO_NULL, request,
                            minimpi::CallForm::kNonblocking);
}

int PMPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Gatherv_init_c", RootedKind::kGather,
                            Block(sendbuf, sendcount, sendtype),
                            Blocks(recvbuf, recvcounts, displs, recvtype), root,
                            comm, info, request,
                            minimpi::CallForm::kPersistent);
}

int PMPI_Scatter_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return RootedDataMovement(
      "MPI_Scatter_c", RootedKind::kScatter,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      root, comm, MPI_INFO_NULL, nullptr, minimpi::CallForm::kBlocking);
}

int PMPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request* request) {
  return RootedDataMovement(
      "MPI_Iscatter_c", RootedKind::kScatter,
      Block(sendbuf, sendcount, sendtype), Block(recvbuf, recvcount, recvtype),
      root, comm, MPI_INFO_NULL, request, minimpi::CallForm::kNonblocking);
}

int PMPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Scatter_init_c", RootedKind::kScatter,
                            Block(sendbuf, sendcount, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint displs[], MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm) {
  return RootedDataMovement("MPI_Scatterv_c", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            MPI_INFO_NULL, nullptr,
                            minimpi::CallForm::kBlocking);
}

int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint displs[], MPI_Datatype sendtype,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request* request) {
  return RootedDataMovement("MPI_Iscatterv_c", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            MPI_INFO_NULL, request,
                            minimpi::CallForm::kNonblocking);
}

int PMPI_Scatterv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint displs[], MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  return RootedDataMovement("MPI_Scatterv_init_c", RootedKind::kScatter,
                            Blocks(sendbuf, sendcounts, displs, sendtype),
                            Block(recvbuf, recvcount, recvtype), root, comm,
                            info, request, minimpi::CallForm::kPersistent);
}

}  // extern "C"

MINIMPI_EXPORT(Gather)
MINIMPI_EXPORT(Igather)
MINIMPI_EXPORT(Gather_init)
MINIMPI_EXPORT(Gatherv)
MINIMPI_EXPORT(Igatherv)
MINIMPI_EXPORT(Gatherv_init)
MINIMPI_EXPORT(Scatter)
MINIMPI_EXPORT(Iscatter)
MINIMPI_EXPORT(Scatter_init)
MINIMPI_EXPORT(Scatterv)
MINIMPI_EXPORT(Iscatterv)
MINIMPI_EXPORT(Scatterv_init)
MINIMPI_EXPORT(Gather_c)
MINIMPI_EXPORT(Igather_c)
MINIMPI_EXPORT(Gather_init_c)
MINIMPI_EXPORT(Gatherv_c)
MINIMPI_EXPORT(Igatherv_c)
MINIMPI_EXPORT(Gatherv_init_c)
MINIMPI_EXPORT(Scatter_c)
MINIMPI_EXPORT(Iscatter_c)
MINIMPI_EXPORT(Scatter_init_c)
MINIMPI_EXPORT(Scatterv_c)
MINIMPI_EXPORT(Iscatterv_c)
MINIMPI_EXPORT(Scatterv_init_c)
