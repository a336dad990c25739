#include "mpi/objects/group.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace minimpi {

int Group::RankOf(int world_rank) const {
  auto it = std::find(members_.begin(), members_.end(), world_rank);
  return it == members_.end() ? MPI_UNDEFINED
                              : static_cast<int>(it - members_.begin());
}

Group* Group::Empty() {
  static Group* empty = new Group({});  // never destroyed
  return empty;
}

namespace group_ops {

std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  absl::flat_hash_set<int> in_a(a.begin(), a.end());
  std::vector<int> result = a;
  for (int member : b) {
    // insert() also keeps a member listed twice in b from coming twice.
    if (in_a.insert(member).second) result.push_back(member);
  }
  return result;
}

std::vector<int> Intersection(const std::vector<int>& a,
                              const std::vector<int>& b) {
  absl::flat_hash_set<int> in_b(b.begin(), b.end());
  std::vector<int> result;
  for (int member : a) {
    if (in_b.contains(member)) result.push_back(member);
  }
  return result;
}

std::vector<int> Difference(const std::vector<int>& a,
                            const std::vector<int>& b) {
  absl::flat_hash_set<int> in_b(b.begin(), b.end());
  std::vector<int> result;
  for (int member : a) {
    if (!in_b.contains(member)) result.push_back(member);
  }
  return result;
}

int Compare(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  if (a.size() != b.size()) return MPI_UNEQUAL;
  std::vector<int> sorted_a = a, sorted_b = b;
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_b.begin(), sorted_b.end());
  return sorted_a == sorted_b ? MPI_SIMILAR : MPI_UNEQUAL;
}

namespace {

RankSelection Failure(int error_class, std::string problem) {
  RankSelection selection;
  selection.error_class = error_class;
  selection.problem = std::move(problem);
  return selection;
}

}  // namespace

RankSelection SelectRanks(int size, int n, const int* ranks) {
  if (n < 0 || n > size) {
    return Failure(
        MPI_ERR_ARG,
        absl::StrFormat("invalid number of ranks %d (group size %d)", n, size));
  }
  if (n > 0 && ranks == nullptr) {
    return Failure(MPI_ERR_ARG, "null ranks array");
  }
  RankSelection selection;
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    const int rank = ranks[i];
    if (rank < 0 || rank >= size) {
      return Failure(MPI_ERR_RANK,
                     absl::StrFormat("invalid rank %d at index %d (group size "
                                     "%d)",
                                     rank, i, size));
    }
    if (seen[rank]) {
      return Failure(
          MPI_ERR_RANK,
          absl::StrFormat("rank %d named twice (again at index %d)", rank, i));
    }
    seen[rank] = true;
    selection.ranks.push_back(rank);
  }
  return selection;
}

RankSelection SelectRanges(int size, int n, const int (*ranges)[3]) {
  if (n < 0) {
    return Failure(MPI_ERR_ARG,
                   absl::StrFormat("invalid number of ranges %d", n));
  }
  if (n > 0 && ranges == nullptr) {
    return Failure(MPI_ERR_ARG, "null ranges array");
  }
  RankSelection selection;
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    const std::string triplet =
        absl::StrFormat("range %d (%d, %d, %d)", i, first, last, stride);
    if (stride == 0) {
      return Failure(MPI_ERR_ARG, triplet + ": stride 0");
    }
    for (int end : {first, last}) {
      if (end < 0 || end >= size) {
        return Failure(MPI_ERR_RANK,
                       absl::StrFormat("%s: invalid rank %d (group size %d)",
                                       triplet, end, size));
      }
    }
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
      return Failure(MPI_ERR_ARG,
                     triplet + ": the stride points away from the last rank");
    }
    // Both ends are valid ranks, so every rank in between is too. 64-bit
    // steps: rank + stride may pass INT_MAX before the loop ends.
    for (int64_t rank = first; stride > 0 ? rank <= last : rank >= last;
         rank += stride) {
      if (seen[rank]) {
        return Failure(MPI_ERR_RANK, absl::StrFormat("%s: rank %d named twice",
                                                     triplet, rank));
      }
      seen[rank] = true;
      selection.ranks.push_back(static_cast<int>(rank));
    }
  }
  return selection;
}

std::vector<int> Include(const std::vector<int>& members,
                         const std::vector<int>& ranks) {
  std::vector<int> result;
  result.reserve(ranks.size());
  for (int rank : ranks) result.push_back(members[rank]);
  return result;
}

std::vector<int> Exclude(const std::vector<int>& members,
                         const std::vector<int>& ranks) {
  std::vector<bool> excluded(members.size(), false);
  for (int rank : ranks) excluded[rank] = true;
  std::vector<int> result;
  for (size_t rank = 0; rank < members.size(); ++rank) {
    if (!excluded[rank]) result.push_back(members[rank]);
  }
  return result;
}

bool TranslateRanks(const std::vector<int>& a, int n, const int* ranks,
                    const std::vector<int>& b, int* translated,
                    int* bad_index) {
  absl::flat_hash_map<int, int> rank_in_b;
  rank_in_b.reserve(b.size());
  for (size_t rank = 0; rank < b.size(); ++rank) {
    rank_in_b.emplace(b[rank], static_cast<int>(rank));
  }
  for (int i = 0; i < n; ++i) {
    const int rank = ranks[i];
    if (rank == MPI_PROC_NULL) {
      translated[i] = MPI_PROC_NULL;
      continue;
    }
    if (rank < 0 || rank >= static_cast<int>(a.size())) {
      *bad_index = i;
      return false;
    }
    auto it = rank_in_b.find(a[rank]);
    translated[i] = it == rank_in_b.end() ? MPI_UNDEFINED : it->second;
  }
  return true;
}

uint64_t Fingerprint(const std::vector<int>& members) {
  // FNV-1a over the member list, size included.
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  mix(members.size());
  for (int member : members) mix(static_cast<uint32_t>(member));
  return hash;
}

}  // namespace group_ops
}  // namespace minimpi
