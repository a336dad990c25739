#include "mpi/topo/graph.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_format.h"

namespace minimpi::topo {
namespace {

// Sends in list order: with repeated edges, the j-th message to a process
// pairs with the j-th block from us in its list, since both lists follow
// the same order.
std::vector<int> ListOrder(size_t count) {
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

GraphTopology::GraphTopology(std::vector<int> index, std::vector<int> edges)
    : index_(std::move(index)), edges_(std::move(edges)) {}

std::unique_ptr<Topology> GraphTopology::Clone() const {
  return std::make_unique<GraphTopology>(*this);
}

std::vector<int> GraphTopology::NeighborsOfNode(int node) const {
  const int begin = node == 0 ? 0 : index_[node - 1];
  return std::vector<int>(edges_.begin() + begin,
                          edges_.begin() + index_[node]);
}

NeighborLists GraphTopology::NeighborsOf(int rank) const {
  NeighborLists lists;
  if (rank < 0 || rank >= nnodes()) return lists;
  lists.sources = NeighborsOfNode(rank);
  lists.destinations = lists.sources;
  lists.send_order = ListOrder(lists.destinations.size());
  return lists;
}

std::string GraphArraysProblem(int nnodes, const int* index, const int* edges) {
  int previous = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < previous) {
      return absl::StrFormat(
          "index[%d] = %d is less than index[%d] = %d (index must be "
          "non-decreasing and non-negative)",
          i, index[i], i - 1, previous);
    }
    previous = index[i];
  }
  const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  for (int e = 0; e < nedges; ++e) {
    if (edges[e] < 0 || edges[e] >= nnodes) {
      return absl::StrFormat("edges[%d] = %d is not a node (nnodes %d)", e,
                             edges[e], nnodes);
    }
  }
  return "";
}

DistGraphTopology::DistGraphTopology(std::vector<int> sources,
                                     std::vector<int> source_weights,
                                     std::vector<int> destinations,
                                     std::vector<int> destination_weights,
                                     bool weighted)
    : sources_(std::move(sources)),
      source_weights_(std::move(source_weights)),
      destinations_(std::move(destinations)),
      destination_weights_(std::move(destination_weights)),
      weighted_(weighted) {}

std::unique_ptr<Topology> DistGraphTopology::Clone() const {
  return std::make_unique<DistGraphTopology>(*this);
}

NeighborLists DistGraphTopology::NeighborsOf(int /*rank*/) const {
  NeighborLists lists;
  lists.sources = sources_;
  lists.destinations = destinations_;
  lists.send_order = ListOrder(destinations_.size());
  return lists;
}

DistGraphTopology DistGraphFromEdges(
    int rank, const std::vector<DistGraphEdge>& all_edges, bool weighted) {
  std::vector<int> sources, source_weights, destinations, destination_weights;
  for (const DistGraphEdge& edge : all_edges) {
    if (edge.destination == rank) {
      sources.push_back(edge.source);
      if (weighted) source_weights.push_back(edge.weight);
    }
    if (edge.source == rank) {
      destinations.push_back(edge.destination);
      if (weighted) destination_weights.push_back(edge.weight);
    }
  }
  return DistGraphTopology(std::move(sources), std::move(source_weights),
                           std::move(destinations),
                           std::move(destination_weights), weighted);
}

}  // namespace minimpi::topo
