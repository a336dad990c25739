// Cartesian grids (MPI_Cart_*): ranks are laid out in row-major order, the
// last dimension varying fastest, as MPI-4.1 section 8.5.1 prescribes.
// Coordinates, ranks, shifts with periodic wrap or MPI_PROC_NULL at
// non-periodic edges, sub-grids for MPI_Cart_sub, and the neighbourhood
// order: dimension by dimension, the negative direction before the positive
// one.
//
// Owned by: mpi/topo. Called by: the topology bindings, the neighbourhood
// collectives (through Topology).
#ifndef MINIMPI_MPI_TOPO_CARTESIAN_H_
#define MINIMPI_MPI_TOPO_CARTESIAN_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "mpi/topo/topology.h"

namespace minimpi::topo {

class CartesianTopology : public Topology {
 public:
  // `dims` are positive; `periods` has one entry per dimension. Zero
  // dimensions is a grid of one process (MPI-2.1 made that explicit).
  CartesianTopology(std::vector<int> dims, std::vector<bool> periods);

  TopologyKind kind() const override { return TopologyKind::kCartesian; }
  std::unique_ptr<Topology> Clone() const override;
  NeighborLists NeighborsOf(int rank) const override;

  int ndims() const { return static_cast<int>(dims_.size()); }
  const std::vector<int>& dims() const { return dims_; }
  const std::vector<bool>& periods() const { return periods_; }
  // The number of processes in the grid (1 for zero dimensions).
  int size() const { return size_; }

  // The coordinates of `rank` (0 <= rank < size()).
  std::vector<int> CoordinatesOf(int rank) const;
  // The rank at `coordinates` (one per dimension): periodic dimensions wrap
  // any value; a non-periodic coordinate outside [0, dims[i]) has no rank.
  std::optional<int> RankOf(absl::Span<const int> coordinates) const;

  struct Shift {
    int source;       // the rank `displacement` steps below, or PROC_NULL
    int destination;  // the rank `displacement` steps above, or PROC_NULL
  };
  // MPI_Cart_shift from `rank` along `direction` (0 <= direction < ndims).
  Shift ShiftOf(int rank, int direction, int displacement) const;

  // MPI_Cart_sub: the processes whose coordinates agree in every dropped
  // dimension (remain[i] false) form one sub-grid. SubgridColor numbers the
  // sub-grid of `rank` (the same for all its members, different for
  // different sub-grids); SubgridKey orders the members by their
  // coordinates in the kept dimensions, which is the sub-grid's own
  // row-major order.
  int SubgridColor(int rank, const std::vector<bool>& remain) const;
  int SubgridKey(int rank, const std::vector<bool>& remain) const;
  // The topology of each sub-grid: the kept dimensions and periods.
  CartesianTopology Subgrid(const std::vector<bool>& remain) const;

 private:
  std::vector<int> dims_;
  std::vector<bool> periods_;
  int size_ = 1;
};

// MPI_Cart_map without reordering: the calling process keeps its rank if
// the grid has room for it, else it gets no place (MPI_UNDEFINED).
int CartesianMapRank(int rank, absl::Span<const int> dims);

}  // namespace minimpi::topo

#endif  // MINIMPI_MPI_TOPO_CARTESIAN_H_
