// Process topologies: MPI_Dims_create, the Cartesian and graph
// constructors and inquiries, and MPI_Topo_test (distributed graphs are in
// dist_graph.cc). The arithmetic lives in mpi/topo; this file checks
// arguments, builds the communicators (reorder is allowed to be ignored,
// and is) and attaches their topology.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/collective_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/topology_util.h"
#include "mpi/coll/basic.h"
#include "mpi/topo/cartesian.h"
#include "mpi/topo/dims.h"
#include "mpi/topo/graph.h"

using minimpi::CheckRankIn;
using minimpi::CheckTopology;
using minimpi::Communicator;
using minimpi::CopyOut;
using minimpi::PublishWithTopology;
using minimpi::RaiseError;
namespace topo = minimpi::topo;

namespace {

int CheckCartesian(const char* call, MPI_Comm comm, Communicator** c,
                   const topo::CartesianTopology** grid) {
  return CheckTopology(call, comm, topo::TopologyKind::kCartesian, c, grid);
}

// ndims and dims of MPI_Cart_create/MPI_Cart_map; on success *size is the
// number of processes in the grid.
int CheckGridShape(const char* call, Communicator* c, int ndims,
                   const int* dims, const int* periods, bool need_periods,
                   int64_t* size) {
  if (ndims < 0) {
    return RaiseError(
        c, call, MPI_ERR_DIMS,
        absl::StrFormat("invalid number of dimensions %d", ndims));
  }
  if (ndims > 0 && dims == nullptr) {
    return minimpi::NullArgument(call, c, "dims");
  }
  if (ndims > 0 && need_periods && periods == nullptr) {
    return minimpi::NullArgument(call, c, "periods");
  }
  *size = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) {
      return RaiseError(c, call, MPI_ERR_DIMS,
                        absl::StrFormat("invalid dimension %d at index %d "
                                        "(ndims %d)",
                                        dims[i], i, ndims));
    }
    *size = std::min<int64_t>(*size * dims[i], int64_t{1} << 40);
  }
  if (*size > c->size) {
    return RaiseError(
        c, call, MPI_ERR_ARG,
        absl::StrFormat("a grid of %d processes does not fit in a "
                        "communicator of %d",
                        *size, c->size));
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  MINIMPI_REQUIRE_INIT("MPI_Dims_create");
  constexpr const char* kCall = "MPI_Dims_create";
  if (ndims < 0) {
    return RaiseError(
        nullptr, kCall, MPI_ERR_DIMS,
        absl::StrFormat("invalid number of dimensions %d", ndims));
  }
  if (ndims > 0 && dims == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "dims");
  }
  std::vector<int> shape(dims, dims + ndims);
  const topo::DimsResult result = topo::DimsCreate(nnodes, shape);
  switch (result.error) {
    case topo::DimsError::kNone:
      std::copy(shape.begin(), shape.end(), dims);
      return MPI_SUCCESS;
    case topo::DimsError::kBadNodeCount:
      return RaiseError(nullptr, kCall, MPI_ERR_ARG, result.message);
    case topo::DimsError::kBadDimension:
    case topo::DimsError::kNotDivisible:
      break;
  }
  return RaiseError(nullptr, kCall, MPI_ERR_DIMS, result.message);
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                     const int periods[], int reorder, MPI_Comm* comm_cart) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_create");
  constexpr const char* kCall = "MPI_Cart_create";
  (void)reorder;  // ranks keep their order
  Communicator* parent;
  if (int error = minimpi::CheckIntracommunicator(kCall, comm_old, &parent)) {
    return error;
  }
  if (comm_cart == nullptr) {
    return minimpi::NullArgument(kCall, parent, "comm_cart");
  }
  *comm_cart = MPI_COMM_NULL;  // what a failed call leaves
  int64_t size;
  if (int error = CheckGridShape(kCall, parent, ndims, dims, periods,
                                 /*need_periods=*/true, &size)) {
    return error;
  }
  std::vector<int> shape(dims, dims + ndims);
  std::vector<bool> wraps;
  for (int i = 0; i < ndims; ++i) wraps.push_back(periods[i] != 0);
  // The first `size` ranks form the grid; the others get MPI_COMM_NULL.
  auto comm = minimpi::SplitCommunicator(
      *parent, parent->rank < size ? 0 : MPI_UNDEFINED, parent->rank);
  *comm_cart = PublishWithTopology(
      std::move(comm), std::make_unique<topo::CartesianTopology>(shape, wraps));
  return MPI_SUCCESS;
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
                  const int periods[], int* newrank) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_map");
  constexpr const char* kCall = "MPI_Cart_map";
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c))
    return error;
  if (newrank == nullptr) return minimpi::NullArgument(kCall, c, "newrank");
  int64_t size;
  if (int error = CheckGridShape(kCall, c, ndims, dims, periods,
                                 /*need_periods=*/false, &size)) {
    return error;
  }
  *newrank =
      topo::CartesianMapRank(c->rank, std::vector<int>(dims, dims + ndims));
  return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  MINIMPI_REQUIRE_INIT("MPI_Cartdim_get");
  Communicator* c;
  const topo::CartesianTopology* grid;
  if (int error = CheckCartesian("MPI_Cartdim_get", comm, &c, &grid)) {
    return error;
  }
  if (ndims == nullptr) {
    return minimpi::NullArgument("MPI_Cartdim_get", c, "ndims");
  }
  *ndims = grid->ndims();
  return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                  int coords[]) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_get");
  constexpr const char* kCall = "MPI_Cart_get";
  Communicator* c;
  const topo::CartesianTopology* grid;
  if (int error = CheckCartesian(kCall, comm, &c, &grid)) return error;
  if (maxdims < grid->ndims()) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("maxdims %d is less than the %d "
                                      "dimensions of the grid",
                                      maxdims, grid->ndims()));
  }
  if (grid->ndims() == 0) return MPI_SUCCESS;
  if (dims == nullptr || periods == nullptr || coords == nullptr) {
    return minimpi::NullArgument(kCall, c, "dims, periods or coords");
  }
  const std::vector<int> mine = grid->CoordinatesOf(c->rank);
  for (int i = 0; i < grid->ndims(); ++i) {
    dims[i] = grid->dims()[i];
    periods[i] = grid->periods()[i] ? 1 : 0;
    coords[i] = mine[i];
  }
  return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_rank");
  constexpr const char* kCall = "MPI_Cart_rank";
  Communicator* c;
  const topo::CartesianTopology* grid;
  if (int error = CheckCartesian(kCall, comm, &c, &grid)) return error;
  if (rank == nullptr) return minimpi::NullArgument(kCall, c, "rank");
  if (grid->ndims() > 0 && coords == nullptr) {
    return minimpi::NullArgument(kCall, c, "coords");
  }
  const std::optional<int> found =
      grid->RankOf(std::vector<int>(coords, coords + grid->ndims()));
  if (!found) {
    for (int i = 0; i < grid->ndims(); ++i) {
      if (!grid->periods()[i] &&
          (coords[i] < 0 || coords[i] >= grid->dims()[i])) {
        return RaiseError(
            c, kCall, MPI_ERR_RANK,
            absl::StrFormat("coordinate %d in dimension %d is outside the "
                            "non-periodic range 0..%d",
                            coords[i], i, grid->dims()[i] - 1));
      }
    }
  }
  *rank = *found;
  return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_coords");
  constexpr const char* kCall = "MPI_Cart_coords";
  Communicator* c;
  const topo::CartesianTopology* grid;
  if (int error = CheckCartesian(kCall, comm, &c, &grid)) return error;
  if (int error = CheckRankIn(kCall, c, rank, c->size)) return error;
  if (maxdims < grid->ndims()) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("maxdims %d is less than the %d "
                                      "dimensions of the grid",
                                      maxdims, grid->ndims()));
  }
  if (grid->ndims() == 0) return MPI_SUCCESS;
  if (coords == nullptr) return minimpi::NullArgument(kCall, c, "coords");
  CopyOut(grid->CoordinatesOf(rank), grid->ndims(), coords);
  return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                    int* rank_dest) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_shift");
  constexpr const char* kCall = "MPI_Cart_shift";
  Communicator* c;
  const topo::CartesianTopology* grid;
  if (int error = CheckCartesian(kCall, comm, &c, &grid)) return error;
  if (rank_source == nullptr || rank_dest == nullptr) {
    return minimpi::NullArgument(kCall, c, "rank_source or rank_dest");
  }
  if (direction < 0 || direction >= grid->ndims()) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid direction %d (ndims %d)",
                                      direction, grid->ndims()));
  }
  const auto shift = grid->ShiftOf(c->rank, direction, disp);
  *rank_source = shift.source;
  *rank_dest = shift.destination;
  return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  MINIMPI_REQUIRE_INIT("MPI_Cart_sub");
  constexpr const char* kCall = "MPI_Cart_sub";
  Communicator* c;
  const topo::CartesianTopology* grid;
  // Collective: not on a communicator MPI_Comm_idup has not finished.
  if (int error = minimpi::CheckCommunicator(kCall, comm, &c)) return error;
  if (int error = CheckCartesian(kCall, comm, &c, &grid)) return error;
  if (newcomm == nullptr) return minimpi::NullArgument(kCall, c, "newcomm");
  *newcomm = MPI_COMM_NULL;  // what a failed call leaves
  if (grid->ndims() > 0 && remain_dims == nullptr) {
    return minimpi::NullArgument(kCall, c, "remain_dims");
  }
  std::vector<bool> remain;
  for (int i = 0; i < grid->ndims(); ++i) remain.push_back(remain_dims[i]);
  // With no dimension kept, each process is a zero-dimensional grid of
  // its own (MPI-4.1 8.5.7).
  auto sub = minimpi::SplitCommunicator(*c, grid->SubgridColor(c->rank, remain),
                                        grid->SubgridKey(c->rank, remain));
  *newcomm = PublishWithTopology(
      std::move(sub),
      std::make_unique<topo::CartesianTopology>(grid->Subgrid(remain)));
  return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  MINIMPI_REQUIRE_INIT("MPI_Topo_test");
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator("MPI_Topo_test", comm, &c)) {
    return error;
  }
  if (status == nullptr) {
    return minimpi::NullArgument("MPI_Topo_test", c, "status");
  }
  if (c->topology == nullptr) {
    *status = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  switch (c->topology->kind()) {
    case topo::TopologyKind::kCartesian:
      *status = MPI_CART;
      break;
    case topo::TopologyKind::kGraph:
      *status = MPI_GRAPH;
      break;
    case topo::TopologyKind::kDistGraph:
      *status = MPI_DIST_GRAPH;
      break;
  }
  return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                      const int edges[], int reorder, MPI_Comm* comm_graph) {
  MINIMPI_REQUIRE_INIT("MPI_Graph_create");
  constexpr const char* kCall = "MPI_Graph_create";
  (void)reorder;
  Communicator* parent;
  if (int error = minimpi::CheckIntracommunicator(kCall, comm_old, &parent)) {
    return error;
  }
  if (comm_graph == nullptr) {
    return minimpi::NullArgument(kCall, parent, "comm_graph");
  }
  *comm_graph = MPI_COMM_NULL;  // what a failed call leaves
  if (nnodes < 0 || nnodes > parent->size) {
    return RaiseError(parent, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid number of nodes %d "
                                      "(communicator size %d)",
                                      nnodes, parent->size));
  }
  if (nnodes > 0 && index == nullptr) {
    return minimpi::NullArgument(kCall, parent, "index");
  }
  if (nnodes > 0 && index[nnodes - 1] > 0 && edges == nullptr) {
    return minimpi::NullArgument(kCall, parent, "edges");
  }
  const std::string problem = topo::GraphArraysProblem(nnodes, index, edges);
  if (!problem.empty()) return RaiseError(parent, kCall, MPI_ERR_ARG, problem);
  const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  auto comm = minimpi::SplitCommunicator(
      *parent, parent->rank < nnodes ? 0 : MPI_UNDEFINED, parent->rank);
  *comm_graph = PublishWithTopology(
      std::move(comm), std::make_unique<topo::GraphTopology>(
                           std::vector<int>(index, index + nnodes),
                           std::vector<int>(edges, edges + nedges)));
  return MPI_SUCCESS;
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
                   const int edges[], int* newrank) {
  MINIMPI_REQUIRE_INIT("MPI_Graph_map");
  constexpr const char* kCall = "MPI_Graph_map";
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c))
    return error;
  if (newrank == nullptr) return minimpi::NullArgument(kCall, c, "newrank");
  if (nnodes < 0 || nnodes > c->size) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid number of nodes %d "
                                      "(communicator size %d)",
                                      nnodes, c->size));
  }
  if (nnodes > 0 && index == nullptr) {
    return minimpi::NullArgument(kCall, c, "index");
  }
  (void)edges;  // without reordering, the edges do not matter
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  MINIMPI_REQUIRE_INIT("MPI_Graphdims_get");
  Communicator* c;
  const topo::GraphTopology* graph;
  if (int error = CheckTopology("MPI_Graphdims_get", comm,
                                topo::TopologyKind::kGraph, &c, &graph)) {
    return error;
  }
  if (nnodes == nullptr || nedges == nullptr) {
    return minimpi::NullArgument("MPI_Graphdims_get", c, "nnodes or nedges");
  }
  *nnodes = graph->nnodes();
  *nedges = graph->nedges();
  return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                   int edges[]) {
  MINIMPI_REQUIRE_INIT("MPI_Graph_get");
  constexpr const char* kCall = "MPI_Graph_get";
  Communicator* c;
  const topo::GraphTopology* graph;
  if (int error =
          CheckTopology(kCall, comm, topo::TopologyKind::kGraph, &c, &graph)) {
    return error;
  }
  if (maxindex < 0 || maxedges < 0) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid maxindex %d or maxedges %d",
                                      maxindex, maxedges));
  }
  if ((maxindex > 0 && graph->nnodes() > 0 && index == nullptr) ||
      (maxedges > 0 && graph->nedges() > 0 && edges == nullptr)) {
    return minimpi::NullArgument(kCall, c, "index or edges");
  }
  CopyOut(graph->index(), maxindex, index);
  CopyOut(graph->edges(), maxedges, edges);
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  MINIMPI_REQUIRE_INIT("MPI_Graph_neighbors_count");
  constexpr const char* kCall = "MPI_Graph_neighbors_count";
  Communicator* c;
  const topo::GraphTopology* graph;
  if (int error =
          CheckTopology(kCall, comm, topo::TopologyKind::kGraph, &c, &graph)) {
    return error;
  }
  if (int error = CheckRankIn(kCall, c, rank, graph->nnodes())) return error;
  if (nneighbors == nullptr) {
    return minimpi::NullArgument(kCall, c, "nneighbors");
  }
  *nneighbors = static_cast<int>(graph->NeighborsOfNode(rank).size());
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                         int neighbors[]) {
  MINIMPI_REQUIRE_INIT("MPI_Graph_neighbors");
  constexpr const char* kCall = "MPI_Graph_neighbors";
  Communicator* c;
  const topo::GraphTopology* graph;
  if (int error =
          CheckTopology(kCall, comm, topo::TopologyKind::kGraph, &c, &graph)) {
    return error;
  }
  if (int error = CheckRankIn(kCall, c, rank, graph->nnodes())) return error;
  const std::vector<int> list = graph->NeighborsOfNode(rank);
  if (maxneighbors < 0) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid maxneighbors %d", maxneighbors));
  }
  if (maxneighbors > 0 && !list.empty() && neighbors == nullptr) {
    return minimpi::NullArgument(kCall, c, "neighbors");
  }
  CopyOut(list, maxneighbors, neighbors);
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Dims_create)
MINIMPI_EXPORT(Cart_create)
MINIMPI_EXPORT(Cart_map)
MINIMPI_EXPORT(Cartdim_get)
MINIMPI_EXPORT(Cart_get)
MINIMPI_EXPORT(Cart_rank)
MINIMPI_EXPORT(Cart_coords)
MINIMPI_EXPORT(Cart_shift)
MINIMPI_EXPORT(Cart_sub)
MINIMPI_EXPORT(Topo_test)
MINIMPI_EXPORT(Graph_create)
MINIMPI_EXPORT(Graph_map)
MINIMPI_EXPORT(Graphdims_get)
MINIMPI_EXPORT(Graph_get)
MINIMPI_EXPORT(Graph_neighbors_count)
MINIMPI_EXPORT(Graph_neighbors)
