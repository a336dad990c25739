// Groups (MPI-4.1 section 7.3): an ordered set of processes, each named by
// its rank in MPI_COMM_WORLD, the group rank being the position in the
// list. A group is immutable once made, so a handle owns its Group outright
// and MPI_Group_free deletes it; MPI_GROUP_EMPTY is one shared empty group
// that is never deleted.
//
// The set algebra and the rank selections of MPI_Group_incl/excl/
// range_incl/range_excl are plain functions on member lists, so they are
// tested alone against std::set references; the checks they make name what
// is wrong and the error class MPI gives it.
//
// Owned by: mpi/. Called by: the group and communicator bindings.
#ifndef MINIMPI_MPI_OBJECTS_GROUP_H_
#define MINIMPI_MPI_OBJECTS_GROUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mpi/mpi.h"

namespace minimpi {

class Group {
 public:
  explicit Group(std::vector<int> members) : members_(std::move(members)) {}

  // World ranks, by group rank.
  const std::vector<int>& members() const { return members_; }
  int size() const { return static_cast<int>(members_.size()); }
  // The group rank of the process with this world rank, or MPI_UNDEFINED.
  int RankOf(int world_rank) const;

  // The one empty group behind MPI_GROUP_EMPTY.
  static Group* Empty();

  // The session the group was derived from (MPI_Group_from_session_pset,
  // then the group calls), so a communicator made from it belongs to that
  // session; MPI_SESSION_NULL for the world model's groups.
  MPI_Session session = MPI_SESSION_NULL;

 private:
  std::vector<int> members_;
};

namespace group_ops {

// The group operations of MPI-4.1 section 7.3.2 on member lists:
//   union         every member of a, then the members of b not in a;
//   intersection  the members of a that are in b, in a's order;
//   difference    the members of a that are not in b, in a's order.
std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> Intersection(const std::vector<int>& a,
                              const std::vector<int>& b);
std::vector<int> Difference(const std::vector<int>& a,
                            const std::vector<int>& b);

// MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or
// MPI_UNEQUAL.
int Compare(const std::vector<int>& a, const std::vector<int>& b);

// A validated choice of group ranks, or why the arguments are wrong.
struct RankSelection {
  std::vector<int> ranks;  // in the order the arguments name them
  int error_class = MPI_SUCCESS;
  std::string problem;
};

// MPI_Group_incl/excl's `n` ranks of a group of `size`: n in [0, size],
// each rank valid and named once.
RankSelection SelectRanks(int size, int n, const int* ranks);
// MPI_Group_range_incl/excl's `n` (first, last, stride) triplets: the ranks
// first, first + stride, ... up to last, for every triplet in turn; stride
// non-zero and pointing from first towards last, every rank valid and named
// once overall.
RankSelection SelectRanges(int size, int n, const int (*ranges)[3]);

// The members at the selected group ranks, in selection order
// (MPI_Group_incl), and the members not selected, in group order
// (MPI_Group_excl).
std::vector<int> Include(const std::vector<int>& members,
                         const std::vector<int>& ranks);
std::vector<int> Exclude(const std::vector<int>& members,
                         const std::vector<int>& ranks);

// MPI_Group_translate_ranks: for each rank of group a, the rank of the same
// process in group b, MPI_UNDEFINED if it is not there; MPI_PROC_NULL maps
// to itself. Returns false (and sets *bad_index) for a rank that is neither
// valid in a nor MPI_PROC_NULL.
bool TranslateRanks(const std::vector<int>& a, int n, const int* ranks,
                    const std::vector<int>& b, int* translated, int* bad_index);

// A digest of a member list, for checking that ranks agree on a group
// without sending the whole list (MPI_Comm_create).
uint64_t Fingerprint(const std::vector<int>& members);

}  // namespace group_ops
}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_GROUP_H_
