#include "mpi/topo/cartesian.h"

#include <utility>

#include "mpi/mpi.h"

namespace minimpi::topo {

CartesianTopology::CartesianTopology(std::vector<int> dims,
                                     std::vector<bool> periods)
    : dims_(std::move(dims)), periods_(std::move(periods)) {
  for (int extent : dims_) size_ *= extent;
}

std::unique_ptr<Topology> CartesianTopology::Clone() const {
  return std::make_unique<CartesianTopology>(*this);
}

std::vector<int> CartesianTopology::CoordinatesOf(int rank) const {
  std::vector<int> coordinates(dims_.size());
  // Row-major: the last dimension varies fastest.
  for (int i = ndims() - 1; i >= 0; --i) {
    coordinates[i] = rank % dims_[i];
    rank /= dims_[i];
  }
  return coordinates;
}

std::optional<int> CartesianTopology::RankOf(
    absl::Span<const int> coordinates) const {
  int rank = 0;
  for (int i = 0; i < ndims(); ++i) {
    int coordinate = coordinates[i];
    if (periods_[i]) {
      coordinate %= dims_[i];
      if (coordinate < 0) coordinate += dims_[i];
    } else if (coordinate < 0 || coordinate >= dims_[i]) {
      return std::nullopt;
    }
    rank = rank * dims_[i] + coordinate;
  }
  return rank;
}

CartesianTopology::Shift CartesianTopology::ShiftOf(int rank, int direction,
                                                    int displacement) const {
  std::vector<int> coordinates = CoordinatesOf(rank);
  const int here = coordinates[direction];
  // 64-bit sums: a displacement near INT_MAX must not overflow.
  auto rank_at = [&](long long coordinate) {
    const int extent = dims_[direction];
    if (periods_[direction]) {
      coordinate %= extent;
      if (coordinate < 0) coordinate += extent;
    } else if (coordinate < 0 || coordinate >= extent) {
      return static_cast<int>(MPI_PROC_NULL);
    }
    coordinates[direction] = static_cast<int>(coordinate);
    return *RankOf(coordinates);
  };
  Shift shift;
  shift.source = rank_at(static_cast<long long>(here) - displacement);
  shift.destination = rank_at(static_cast<long long>(here) + displacement);
  return shift;
}

NeighborLists CartesianTopology::NeighborsOf(int rank) const {
  NeighborLists lists;
  for (int d = 0; d < ndims(); ++d) {
    const Shift shift = ShiftOf(rank, d, 1);
    lists.sources.push_back(shift.source);
    lists.sources.push_back(shift.destination);
    lists.destinations.push_back(shift.source);
    lists.destinations.push_back(shift.destination);
    // Positive direction first. When both neighbours along d are the same
    // process q (a periodic dimension of size 1 or 2), q posts its receive
    // from the negative side first; our block travelling in the positive
    // direction is the one that must land there (MPICH's
    // ring_neighbor_alltoall checks exactly this).
    lists.send_order.push_back(2 * d + 1);
    lists.send_order.push_back(2 * d);
  }
  return lists;
}

int CartesianTopology::SubgridColor(int rank,
                                    const std::vector<bool>& remain) const {
  const std::vector<int> coordinates = CoordinatesOf(rank);
  int color = 0;
  for (int i = 0; i < ndims(); ++i) {
    if (!remain[i]) color = color * dims_[i] + coordinates[i];
  }
  return color;
}

int CartesianTopology::SubgridKey(int rank,
                                  const std::vector<bool>& remain) const {
  const std::vector<int> coordinates = CoordinatesOf(rank);
  int key = 0;
  for (int i = 0; i < ndims(); ++i) {
    if (remain[i]) key = key * dims_[i] + coordinates[i];
  }
  return key;
}

CartesianTopology CartesianTopology::Subgrid(
    const std::vector<bool>& remain) const {
  std::vector<int> dims;
  std::vector<bool> periods;
  for (int i = 0; i < ndims(); ++i) {
    if (!remain[i]) continue;
    dims.push_back(dims_[i]);
    periods.push_back(periods_[i]);
  }
  return CartesianTopology(std::move(dims), std::move(periods));
}

int CartesianMapRank(int rank, absl::Span<const int> dims) {
  long long size = 1;
  for (int extent : dims) size *= extent;
  return rank < size ? rank : MPI_UNDEFINED;
}

}  // namespace minimpi::topo
