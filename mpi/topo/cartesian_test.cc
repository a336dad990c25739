// Cartesian grid arithmetic against a reference that enumerates the grid in
// row-major order with nested counters: coordinates, ranks (with periodic
// wrap and off-grid coordinates), shifts, sub-grids and the neighbourhood
// order, over many shapes including size-1 and size-2 periodic dimensions.
#include "mpi/topo/cartesian.h"

#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/mpi.h"

namespace minimpi::topo {
namespace {

struct Shape {
  std::vector<int> dims;
  std::vector<bool> periods;
};

std::vector<Shape> Shapes() {
  return {
      {{}, {}},
      {{1}, {true}},
      {{2}, {true}},
      {{2}, {false}},
      {{5}, {false}},
      {{5}, {true}},
      {{3, 4}, {false, true}},
      {{2, 2}, {true, true}},
      {{1, 3}, {true, false}},
      {{2, 3, 4}, {true, false, true}},
      {{3, 1, 2, 2}, {false, true, true, false}},
  };
}

// Row-major enumeration: the coordinates of rank r, counting with the last
// dimension fastest.
std::vector<std::vector<int>> Enumerate(const std::vector<int>& dims) {
  std::vector<std::vector<int>> all;
  std::vector<int> counter(dims.size(), 0);
  int size = 1;
  for (int d : dims) size *= d;
  for (int r = 0; r < size; ++r) {
    all.push_back(counter);
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
      if (++counter[i] < dims[i]) break;
      counter[i] = 0;
    }
  }
  return all;
}

int RankOfReference(const std::vector<std::vector<int>>& all,
                    const std::vector<int>& coordinates) {
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r] == coordinates) return static_cast<int>(r);
  }
  return -1;
}

// The neighbour `displacement` steps along `direction`, by moving the
// coordinate and looking it up.
int Neighbor(const Shape& shape, const std::vector<std::vector<int>>& all,
             int rank, int direction, int displacement) {
  std::vector<int> coordinates = all[rank];
  int c = coordinates[direction] + displacement;
  const int extent = shape.dims[direction];
  if (shape.periods[direction]) {
    c = ((c % extent) + extent) % extent;
  } else if (c < 0 || c >= extent) {
    return MPI_PROC_NULL;
  }
  coordinates[direction] = c;
  return RankOfReference(all, coordinates);
}

TEST(CartesianTest, CoordinatesAndRanksRoundTrip) {
  for (const Shape& shape : Shapes()) {
    CartesianTopology grid(shape.dims, shape.periods);
    const auto all = Enumerate(shape.dims);
    ASSERT_EQ(grid.size(), static_cast<int>(all.size()));
    for (int r = 0; r < grid.size(); ++r) {
      EXPECT_EQ(grid.CoordinatesOf(r), all[r]);
      EXPECT_EQ(grid.RankOf(all[r]), r);
    }
  }
}

TEST(CartesianTest, OffGridCoordinatesWrapOnlyWhenPeriodic) {
  CartesianTopology grid({3, 4}, {false, true});
  EXPECT_EQ(grid.RankOf(std::vector<int>{1, -1}), 1 * 4 + 3);
  EXPECT_EQ(grid.RankOf(std::vector<int>{1, 9}), 1 * 4 + 1);
  EXPECT_EQ(grid.RankOf(std::vector<int>{1, -9}), 1 * 4 + 3);
  EXPECT_EQ(grid.RankOf(std::vector<int>{3, 0}), std::nullopt);
  EXPECT_EQ(grid.RankOf(std::vector<int>{-1, 0}), std::nullopt);
}

TEST(CartesianTest, ShiftsMatchReference) {
  for (const Shape& shape : Shapes()) {
    CartesianTopology grid(shape.dims, shape.periods);
    const auto all = Enumerate(shape.dims);
    for (int r = 0; r < grid.size(); ++r) {
      for (int d = 0; d < grid.ndims(); ++d) {
        for (int displacement = -7; displacement <= 7; ++displacement) {
          const auto shift = grid.ShiftOf(r, d, displacement);
          EXPECT_EQ(shift.destination, Neighbor(shape, all, r, d, displacement))
              << "rank " << r << " direction " << d << " disp " << displacement;
          EXPECT_EQ(shift.source, Neighbor(shape, all, r, d, -displacement));
        }
      }
    }
  }
}

TEST(CartesianTest, HugeDisplacementsDoNotOverflow) {
  CartesianTopology grid({4}, {true});
  const auto shift = grid.ShiftOf(1, 0, 2147483647);
  EXPECT_EQ(shift.destination, (1 + 2147483647LL) % 4);
  EXPECT_EQ(shift.source, ((1 - 2147483647LL) % 4 + 4) % 4);
  CartesianTopology open({4}, {false});
  EXPECT_EQ(open.ShiftOf(1, 0, 2147483647).destination, MPI_PROC_NULL);
}

TEST(CartesianTest, SubgridsPartitionTheGridInRowMajorOrder) {
  for (const Shape& shape : Shapes()) {
    CartesianTopology grid(shape.dims, shape.periods);
    const auto all = Enumerate(shape.dims);
    const int n = grid.ndims();
    for (int mask = 0; mask < (1 << n); ++mask) {
      std::vector<bool> remain(n);
      for (int i = 0; i < n; ++i) remain[i] = (mask >> i) & 1;
      // Reference: group ranks by their dropped coordinates; within a
      // group, the kept coordinates in row-major order.
      std::map<std::vector<int>, std::vector<int>> groups;
      for (int r = 0; r < grid.size(); ++r) {
        std::vector<int> dropped;
        for (int i = 0; i < n; ++i) {
          if (!remain[i]) dropped.push_back(all[r][i]);
        }
        groups[dropped].push_back(r);
      }
      const CartesianTopology sub = grid.Subgrid(remain);
      std::set<int> colors;
      for (const auto& [dropped, members] : groups) {
        const int color = grid.SubgridColor(members[0], remain);
        EXPECT_TRUE(colors.insert(color).second) << "color reused";
        ASSERT_EQ(static_cast<int>(members.size()), sub.size());
        for (size_t i = 0; i < members.size(); ++i) {
          EXPECT_EQ(grid.SubgridColor(members[i], remain), color);
          // Members were listed in increasing rank, which is row-major
          // order of the kept coordinates too.
          EXPECT_EQ(grid.SubgridKey(members[i], remain), static_cast<int>(i));
        }
      }
      for (int i = 0, j = 0; i < n; ++i) {
        if (!remain[i]) continue;
        EXPECT_EQ(sub.dims()[j], shape.dims[i]);
        EXPECT_EQ(sub.periods()[j], shape.periods[i]);
        ++j;
      }
    }
  }
}

TEST(CartesianTest, NeighborsAreNegativeThenPositivePerDimension) {
  for (const Shape& shape : Shapes()) {
    CartesianTopology grid(shape.dims, shape.periods);
    const auto all = Enumerate(shape.dims);
    for (int r = 0; r < grid.size(); ++r) {
      const NeighborLists lists = grid.NeighborsOf(r);
      std::vector<int> expected;
      for (int d = 0; d < grid.ndims(); ++d) {
        expected.push_back(Neighbor(shape, all, r, d, -1));
        expected.push_back(Neighbor(shape, all, r, d, +1));
      }
      EXPECT_EQ(lists.sources, expected);
      EXPECT_EQ(lists.destinations, expected);
      std::vector<int> order;
      for (int d = 0; d < grid.ndims(); ++d) {
        order.push_back(2 * d + 1);
        order.push_back(2 * d);
      }
      EXPECT_EQ(lists.send_order, order);
    }
  }
}

// With sends posted in send_order and receives in block order, and
// messages between a pair matched first-in first-out, the block a process
// sends in one direction must arrive in the receiver's block for the
// opposite direction, even when both neighbours are one process.
TEST(CartesianTest, PostingOrderPairsBlocksByDirection) {
  for (const Shape& shape : Shapes()) {
    CartesianTopology grid(shape.dims, shape.periods);
    // queue[(from, to)] lists (direction sign, dimension) in send order.
    std::map<std::pair<int, int>, std::vector<int>> queue;
    for (int r = 0; r < grid.size(); ++r) {
      const NeighborLists lists = grid.NeighborsOf(r);
      for (int block : lists.send_order) {
        if (lists.destinations[block] == MPI_PROC_NULL) continue;
        queue[{r, lists.destinations[block]}].push_back(block);
      }
    }
    for (int q = 0; q < grid.size(); ++q) {
      const NeighborLists lists = grid.NeighborsOf(q);
      std::map<int, size_t> consumed;
      for (size_t slot = 0; slot < lists.sources.size(); ++slot) {
        const int from = lists.sources[slot];
        if (from == MPI_PROC_NULL) continue;
        const auto& sent = queue[{from, q}];
        ASSERT_LT(consumed[from], sent.size());
        const int block = sent[consumed[from]++];
        // Same dimension, opposite direction.
        EXPECT_EQ(block / 2, static_cast<int>(slot) / 2);
        EXPECT_NE(block % 2, static_cast<int>(slot) % 2)
            << "rank " << q << " slot " << slot << " got block " << block
            << " from " << from;
      }
    }
  }
}

TEST(CartesianTest, MapKeepsRanksThatFit) {
  EXPECT_EQ(CartesianMapRank(3, std::vector<int>{2, 2}), 3);
  EXPECT_EQ(CartesianMapRank(4, std::vector<int>{2, 2}), MPI_UNDEFINED);
  EXPECT_EQ(CartesianMapRank(0, std::vector<int>{}), 0);
  EXPECT_EQ(CartesianMapRank(1, std::vector<int>{}), MPI_UNDEFINED);
}

}  // namespace
}  // namespace minimpi::topo
