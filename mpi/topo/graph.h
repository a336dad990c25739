// Graph topologies: the general graph of MPI_Graph_create (every process
// knows the whole graph, given as MPI's index/edges arrays) and the
// distributed graph of MPI_Dist_graph_create(_adjacent) (each process knows
// only its own incoming and outgoing edges, with optional weights).
//
// Neighbourhood order (MPI-4.1 section 8.6): a graph process's neighbours
// are MPI_Graph_neighbors' list, used for sending and receiving alike; a
// distributed graph process receives from its sources and sends to its
// destinations in the order MPI_Dist_graph_neighbors returns them. Repeated
// edges between one pair of processes pair up in list order, so sends are
// posted in list order.
//
// Owned by: mpi/topo. Called by: the topology bindings, the neighbourhood
// collectives (through Topology).
#ifndef MINIMPI_MPI_TOPO_GRAPH_H_
#define MINIMPI_MPI_TOPO_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "mpi/topo/topology.h"

namespace minimpi::topo {

class GraphTopology : public Topology {
 public:
  // `index[i]` is the number of edges of nodes 0..i together; `edges` lists
  // each node's neighbours in turn (MPI_Graph_create's arrays).
  GraphTopology(std::vector<int> index, std::vector<int> edges);

  TopologyKind kind() const override { return TopologyKind::kGraph; }
  std::unique_ptr<Topology> Clone() const override;
  NeighborLists NeighborsOf(int rank) const override;

  int nnodes() const { return static_cast<int>(index_.size()); }
  int nedges() const { return static_cast<int>(edges_.size()); }
  const std::vector<int>& index() const { return index_; }
  const std::vector<int>& edges() const { return edges_; }
  // MPI_Graph_neighbors of `node` (0 <= node < nnodes()).
  std::vector<int> NeighborsOfNode(int node) const;

 private:
  std::vector<int> index_;
  std::vector<int> edges_;
};

// Checks MPI_Graph_create's arrays for `nnodes` nodes: index
// non-decreasing and non-negative, edges naming nodes. Returns "" when they
// are valid, else what is wrong.
std::string GraphArraysProblem(int nnodes, const int* index, const int* edges);

class DistGraphTopology : public Topology {
 public:
  DistGraphTopology(std::vector<int> sources, std::vector<int> source_weights,
                    std::vector<int> destinations,
                    std::vector<int> destination_weights, bool weighted);

  TopologyKind kind() const override { return TopologyKind::kDistGraph; }
  std::unique_ptr<Topology> Clone() const override;
  NeighborLists NeighborsOf(int rank) const override;

  const std::vector<int>& sources() const { return sources_; }
  const std::vector<int>& destinations() const { return destinations_; }
  // Empty when the graph is unweighted.
  const std::vector<int>& source_weights() const { return source_weights_; }
  const std::vector<int>& destination_weights() const {
    return destination_weights_;
  }
  bool weighted() const { return weighted_; }

 private:
  std::vector<int> sources_;
  std::vector<int> source_weights_;
  std::vector<int> destinations_;
  std::vector<int> destination_weights_;
  bool weighted_;
};

// One edge of MPI_Dist_graph_create as some process specified it.
struct DistGraphEdge {
  int source;
  int destination;
  int weight;  // 0 when unweighted
};

// MPI_Dist_graph_create: every process specified some edges of the graph
// (`all_edges`, the concatenation of all processes' lists in rank order);
// the process `rank` keeps the edges that end at it (its sources) and those
// that start at it (its destinations). Both keep the global order, so two
// processes joined by several edges list them in the same order.
DistGraphTopology DistGraphFromEdges(
    int rank, const std::vector<DistGraphEdge>& all_edges, bool weighted);

}  // namespace minimpi::topo

#endif  // MINIMPI_MPI_TOPO_GRAPH_H_
