// MPI_Dims_create: split `nnodes` processes into a grid whose free
// dimensions are as balanced as possible.
//
// "Balanced" as MPICH computes it (its test suite lists 75,000 expected
// answers, which this rule reproduces): among all ways to write the free
// part of nnodes as a product of k factors in non-increasing order, take
// the one whose largest and smallest factors differ least; among those,
// the one whose smallest factor is largest, then whose second smallest is
// largest, and so on. E.g. 712656 in 5 dimensions is 101 x 14 x 9 x 8 x 7,
// not 101 x 12 x 12 x 7 x 7 (both spread by 94).
//
// Owned by: mpi/topo. Called by: the MPI_Dims_create binding.
#ifndef MINIMPI_MPI_TOPO_DIMS_H_
#define MINIMPI_MPI_TOPO_DIMS_H_

#include <string>
#include <vector>

namespace minimpi::topo {

enum class DimsError {
  kNone,
  kBadNodeCount,  // nnodes < 1 (MPI_ERR_ARG)
  kBadDimension,  // a negative entry in dims (MPI_ERR_DIMS)
  kNotDivisible,  // the fixed entries do not divide nnodes (MPI_ERR_DIMS)
};

struct DimsResult {
  DimsError error = DimsError::kNone;
  std::string message;  // what was wrong, for the error line
};

// Fills the zero entries of `dims` (fixed entries are kept); on error
// `dims` is left as it was.
DimsResult DimsCreate(int nnodes, std::vector<int>& dims);

// The balanced factorization of n (>= 1) into k (>= 1) factors, largest
// first, by the rule above.
std::vector<int> BalancedFactors(int n, int k);

}  // namespace minimpi::topo

#endif  // MINIMPI_MPI_TOPO_DIMS_H_
