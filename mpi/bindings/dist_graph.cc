// Distributed-graph topologies: MPI_Dist_graph_create(_adjacent) and the
// neighbor inquiries.
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

// Weights of a distributed graph: MPI_UNWEIGHTED means none; with edges, a
// real array is needed (MPI_WEIGHTS_EMPTY and null only stand for "no
// edges").
int CheckWeights(const char* call, Communicator* c, const int* weights,
                 int64_t edges, const char* what) {
  if (weights == MPI_UNWEIGHTED || edges == 0) return MPI_SUCCESS;
  if (weights == nullptr || weights == MPI_WEIGHTS_EMPTY) {
    return RaiseError(c, call, MPI_ERR_ARG,
                      absl::StrFormat("%s: %d edges but no weights array (use "
                                      "MPI_UNWEIGHTED for an unweighted "
                                      "graph)",
                                      what, edges));
  }
  for (int64_t i = 0; i < edges; ++i) {
    if (weights[i] < 0) {
      return RaiseError(
          c, call, MPI_ERR_ARG,
          absl::StrFormat("%s[%d] = %d is negative", what, i, weights[i]));
    }
  }
  return MPI_SUCCESS;
}

int CheckNeighborRanks(const char* call, Communicator* c, const int* ranks,
                       int64_t count, const char* what) {
  for (int64_t i = 0; i < count; ++i) {
    if (ranks[i] < 0 || ranks[i] >= c->size) {
      return RaiseError(c, call, MPI_ERR_RANK,
                        absl::StrFormat("%s[%d] = %d is not a rank "
                                        "(communicator size %d)",
                                        what, i, ranks[i], c->size));
    }
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                    const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[],
                                    const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm* comm_dist_graph) {
  MINIMPI_REQUIRE_INIT("MPI_Dist_graph_create_adjacent");
  constexpr const char* kCall = "MPI_Dist_graph_create_adjacent";
  (void)reorder;
  Communicator* parent;
  if (int error = minimpi::CheckIntracommunicator(kCall, comm_old, &parent)) {
    return error;
  }
  if (comm_dist_graph == nullptr) {
    return minimpi::NullArgument(kCall, parent, "comm_dist_graph");
  }
  *comm_dist_graph = MPI_COMM_NULL;  // what a failed call leaves
  if (indegree < 0 || outdegree < 0) {
    return RaiseError(parent, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid indegree %d or outdegree %d",
                                      indegree, outdegree));
  }
  if ((indegree > 0 && sources == nullptr) ||
      (outdegree > 0 && destinations == nullptr)) {
    return minimpi::NullArgument(kCall, parent, "sources or destinations");
  }
  const bool weighted = sourceweights != MPI_UNWEIGHTED;
  if (weighted != (destweights != MPI_UNWEIGHTED)) {
    return RaiseError(parent, kCall, MPI_ERR_ARG,
                      "sourceweights and destweights must both be "
                      "MPI_UNWEIGHTED or neither");
  }
  minimpi::Info* hints;
  if (int error = minimpi::CheckInfo(kCall, parent, info, true, &hints)) {
    return error;
  }
  if (int error =
          CheckNeighborRanks(kCall, parent, sources, indegree, "sources")) {
    return error;
  }
  if (int error = CheckNeighborRanks(kCall, parent, destinations, outdegree,
                                     "destinations")) {
    return error;
  }
  if (int error = CheckWeights(kCall, parent, sourceweights, indegree,
                               "sourceweights")) {
    return error;
  }
  if (int error =
          CheckWeights(kCall, parent, destweights, outdegree, "destweights")) {
    return error;
  }
  std::vector<int> source_weights, destination_weights;
  if (weighted) {
    source_weights.assign(sourceweights, sourceweights + indegree);
    destination_weights.assign(destweights, destweights + outdegree);
  }
  auto comm = minimpi::DuplicateCommunicator(*parent);
  comm->set_hints(minimpi::ApplyHints(minimpi::DefaultHints(), hints));
  *comm_dist_graph = PublishWithTopology(
      std::move(comm),
      std::make_unique<topo::DistGraphTopology>(
          std::vector<int>(sources, sources + indegree),
          std::move(source_weights),
          std::vector<int>(destinations, destinations + outdegree),
          std::move(destination_weights), weighted));
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                           const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder,
                           MPI_Comm* comm_dist_graph) {
  MINIMPI_REQUIRE_INIT("MPI_Dist_graph_create");
  constexpr const char* kCall = "MPI_Dist_graph_create";
  (void)reorder;
  Communicator* parent;
  if (int error = minimpi::CheckIntracommunicator(kCall, comm_old, &parent)) {
    return error;
  }
  if (comm_dist_graph == nullptr) {
    return minimpi::NullArgument(kCall, parent, "comm_dist_graph");
  }
  *comm_dist_graph = MPI_COMM_NULL;  // what a failed call leaves
  if (n < 0) {
    return RaiseError(parent, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid number of source nodes %d", n));
  }
  if (n > 0 && (sources == nullptr || degrees == nullptr)) {
    return minimpi::NullArgument(kCall, parent, "sources or degrees");
  }
  minimpi::Info* hints;
  if (int error = minimpi::CheckInfo(kCall, parent, info, true, &hints)) {
    return error;
  }
  if (int error = CheckNeighborRanks(kCall, parent, sources, n, "sources")) {
    return error;
  }
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0) {
      return RaiseError(
          parent, kCall, MPI_ERR_ARG,
          absl::StrFormat("degrees[%d] = %d is negative", i, degrees[i]));
    }
    total += degrees[i];
  }
  if (total > 0 && destinations == nullptr) {
    return minimpi::NullArgument(kCall, parent, "destinations");
  }
  if (int error = CheckNeighborRanks(kCall, parent, destinations, total,
                                     "destinations")) {
    return error;
  }
  const bool weighted = weights != MPI_UNWEIGHTED;
  if (int error = CheckWeights(kCall, parent, weights, total, "weights")) {
    return error;
  }
  // Everyone learns every edge, then keeps those that touch it. The graph
  // is as large as the program says; one exchange of all of it is the
  // simple way, and creation is rare.
  std::vector<topo::DistGraphEdge> mine;
  for (int i = 0, e = 0; i < n; ++i) {
    for (int d = 0; d < degrees[i]; ++d, ++e) {
      mine.push_back({sources[i], destinations[e], weighted ? weights[e] : 0});
    }
  }
  minimpi::Instance& instance = minimpi::Instance::Get();
  const uint64_t my_bytes = mine.size() * sizeof(topo::DistGraphEdge);
  std::vector<uint64_t> bytes(parent->size);
  minimpi::coll::AllgatherBytes(instance.p2p(), *parent, &my_bytes,
                                sizeof(my_bytes), bytes.data());
  std::vector<size_t> counts(bytes.begin(), bytes.end());
  size_t all_bytes = 0;
  for (size_t count : counts) all_bytes += count;
  std::vector<topo::DistGraphEdge> all(all_bytes / sizeof(topo::DistGraphEdge));
  minimpi::coll::AllgathervBytes(instance.p2p(), *parent, mine.data(), counts,
                                 all.data());
  auto comm = minimpi::DuplicateCommunicator(*parent);
  comm->set_hints(minimpi::ApplyHints(minimpi::DefaultHints(), hints));
  *comm_dist_graph = PublishWithTopology(
      std::move(comm),
      std::make_unique<topo::DistGraphTopology>(
          topo::DistGraphFromEdges(parent->rank, all, weighted)));
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree,
                                    int* outdegree, int* weighted) {
  MINIMPI_REQUIRE_INIT("MPI_Dist_graph_neighbors_count");
  constexpr const char* kCall = "MPI_Dist_graph_neighbors_count";
  Communicator* c;
  const topo::DistGraphTopology* graph;
  if (int error = CheckTopology(kCall, comm, topo::TopologyKind::kDistGraph, &c,
                                &graph)) {
    return error;
  }
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr) {
    return minimpi::NullArgument(kCall, c, "indegree, outdegree or weighted");
  }
  *indegree = static_cast<int>(graph->sources().size());
  *outdegree = static_cast<int>(graph->destinations().size());
  *weighted = graph->weighted() ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[]) {
  MINIMPI_REQUIRE_INIT("MPI_Dist_graph_neighbors");
  constexpr const char* kCall = "MPI_Dist_graph_neighbors";
  Communicator* c;
  const topo::DistGraphTopology* graph;
  if (int error = CheckTopology(kCall, comm, topo::TopologyKind::kDistGraph, &c,
                                &graph)) {
    return error;
  }
  if (maxindegree < 0 || maxoutdegree < 0) {
    return RaiseError(c, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid maxindegree %d or maxoutdegree "
                                      "%d",
                                      maxindegree, maxoutdegree));
  }
  const bool want_in = maxindegree > 0 && !graph->sources().empty();
  const bool want_out = maxoutdegree > 0 && !graph->destinations().empty();
  if ((want_in && sources == nullptr) ||
      (want_out && destinations == nullptr)) {
    return minimpi::NullArgument(kCall, c, "sources or destinations");
  }
  if (want_in) CopyOut(graph->sources(), maxindegree, sources);
  if (want_out) CopyOut(graph->destinations(), maxoutdegree, destinations);
  // Weights only where the graph has them and the caller asked for them.
  if (graph->weighted()) {
    if (want_in && sourceweights != MPI_UNWEIGHTED &&
        sourceweights != nullptr) {
      CopyOut(graph->source_weights(), maxindegree, sourceweights);
    }
    if (want_out && destweights != MPI_UNWEIGHTED && destweights != nullptr) {
      CopyOut(graph->destination_weights(), maxoutdegree, destweights);
    }
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Dist_graph_create_adjacent)
MINIMPI_EXPORT(Dist_graph_create)
MINIMPI_EXPORT(Dist_graph_neighbors_count)
MINIMPI_EXPORT(Dist_graph_neighbors)
