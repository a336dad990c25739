// PLACEHOLDER while the family is being written: adds no algorithms yet.
#include "mpi/coll/families.h"

namespace minimpi::coll {

void AddReductions(std::vector<CollectiveAlgorithms>& /*registry*/) {}

}  // namespace minimpi::coll
