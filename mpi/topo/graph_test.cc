// Graph and distributed-graph topologies: neighbour lists from MPI's
// index/edges arrays, the validity check of those arrays, and the edge
// distribution of MPI_Dist_graph_create checked against a reference that
// scans the global edge list per process.
#include "mpi/topo/graph.h"

#include <vector>

#include "gtest/gtest.h"

namespace minimpi::topo {
namespace {

TEST(GraphTest, NeighborsFollowIndexAndEdges) {
  // MPI-4.1 example 8.3: 4 nodes, edges 0-1, 0-3, 1-0, 2-3, 3-0, 3-2.
  GraphTopology graph({2, 3, 4, 6}, {1, 3, 0, 3, 0, 2});
  EXPECT_EQ(graph.nnodes(), 4);
  EXPECT_EQ(graph.nedges(), 6);
  EXPECT_EQ(graph.NeighborsOfNode(0), (std::vector<int>{1, 3}));
  EXPECT_EQ(graph.NeighborsOfNode(1), (std::vector<int>{0}));
  EXPECT_EQ(graph.NeighborsOfNode(2), (std::vector<int>{3}));
  EXPECT_EQ(graph.NeighborsOfNode(3), (std::vector<int>{0, 2}));
  const NeighborLists lists = graph.NeighborsOf(3);
  EXPECT_EQ(lists.sources, (std::vector<int>{0, 2}));
  EXPECT_EQ(lists.destinations, (std::vector<int>{0, 2}));
  EXPECT_EQ(lists.send_order, (std::vector<int>{0, 1}));
  EXPECT_TRUE(graph.NeighborsOf(4).sources.empty());  // outside the graph
}

TEST(GraphTest, RepeatedEdgesAndSelfLoopsAreKept) {
  GraphTopology graph({3, 4}, {1, 1, 0, 0});
  EXPECT_EQ(graph.NeighborsOfNode(0), (std::vector<int>{1, 1, 0}));
  auto clone = graph.Clone();
  EXPECT_EQ(clone->kind(), TopologyKind::kGraph);
  EXPECT_EQ(clone->NeighborsOf(0).sources, (std::vector<int>{1, 1, 0}));
}

TEST(GraphTest, ArrayProblemsAreNamed) {
  const int index[] = {2, 3, 4, 6};
  const int edges[] = {1, 3, 0, 3, 0, 2};
  EXPECT_EQ(GraphArraysProblem(4, index, edges), "");
  const int decreasing[] = {2, 1, 4, 6};
  EXPECT_NE(GraphArraysProblem(4, decreasing, edges).find("index[1] = 1"),
            std::string::npos);
  const int negative[] = {-1, 3, 4, 6};
  EXPECT_NE(GraphArraysProblem(4, negative, edges), "");
  const int bad_edges[] = {1, 3, 0, 4, 0, 2};
  EXPECT_NE(GraphArraysProblem(4, index, bad_edges).find("edges[3] = 4"),
            std::string::npos);
  EXPECT_EQ(GraphArraysProblem(0, nullptr, nullptr), "");
}

TEST(DistGraphTest, EachProcessKeepsItsEdgesInGlobalOrder) {
  // Specified by several processes, with a repeated edge 2->0 and a self
  // loop 1->1.
  const std::vector<DistGraphEdge> edges = {
      {0, 1, 10}, {2, 0, 20}, {1, 1, 11}, {2, 0, 21}, {0, 2, 12}, {1, 0, 13},
  };
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<int> sources, source_weights, destinations, destination_weights;
    for (const DistGraphEdge& e : edges) {
      if (e.destination == rank) {
        sources.push_back(e.source);
        source_weights.push_back(e.weight);
      }
      if (e.source == rank) {
        destinations.push_back(e.destination);
        destination_weights.push_back(e.weight);
      }
    }
    const DistGraphTopology weighted = DistGraphFromEdges(rank, edges, true);
    EXPECT_TRUE(weighted.weighted());
    EXPECT_EQ(weighted.sources(), sources);
    EXPECT_EQ(weighted.source_weights(), source_weights);
    EXPECT_EQ(weighted.destinations(), destinations);
    EXPECT_EQ(weighted.destination_weights(), destination_weights);
    const NeighborLists lists = weighted.NeighborsOf(rank);
    EXPECT_EQ(lists.sources, sources);
    EXPECT_EQ(lists.destinations, destinations);
    const DistGraphTopology plain = DistGraphFromEdges(rank, edges, false);
    EXPECT_FALSE(plain.weighted());
    EXPECT_TRUE(plain.source_weights().empty());
    EXPECT_EQ(plain.sources(), sources);
  }
  const DistGraphTopology zero = DistGraphFromEdges(0, edges, true);
  EXPECT_EQ(zero.sources(), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(zero.source_weights(), (std::vector<int>{20, 21, 13}));
}

}  // namespace
}  // namespace minimpi::topo
