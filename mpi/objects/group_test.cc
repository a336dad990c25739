// Group set operations and rank selections against references built with
// std::set and plain loops, on random groups (random subsets of 0..63 in
// random order), plus the argument checks and their error classes.
#include "mpi/objects/group.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::group_ops {
namespace {

std::vector<int> RandomGroup(std::mt19937& random) {
  std::vector<int> all(64);
  for (int i = 0; i < 64; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), random);
  all.resize(std::uniform_int_distribution<int>(0, 64)(random));
  return all;
}

bool Contains(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

TEST(GroupOpsTest, SetOperationsMatchReference) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<int> a = RandomGroup(random);
    const std::vector<int> b = RandomGroup(random);
    std::vector<int> expected_union = a, expected_intersection,
                     expected_difference;
    for (int x : b) {
      if (!Contains(a, x)) expected_union.push_back(x);
    }
    for (int x : a) {
      (Contains(b, x) ? expected_intersection : expected_difference)
          .push_back(x);
    }
    EXPECT_EQ(Union(a, b), expected_union);
    EXPECT_EQ(Intersection(a, b), expected_intersection);
    EXPECT_EQ(Difference(a, b), expected_difference);

    const std::set<int> set_a(a.begin(), a.end()), set_b(b.begin(), b.end());
    const int expected_compare =
        a == b ? MPI_IDENT : (set_a == set_b ? MPI_SIMILAR : MPI_UNEQUAL);
    EXPECT_EQ(Compare(a, b), expected_compare);
    std::vector<int> permuted = a;
    std::shuffle(permuted.begin(), permuted.end(), random);
    EXPECT_EQ(Compare(a, permuted), permuted == a ? MPI_IDENT : MPI_SIMILAR);
  }
}

TEST(GroupOpsTest, EmptyGroups) {
  const std::vector<int> empty, some = {3, 1, 2};
  EXPECT_EQ(Union(empty, some), some);
  EXPECT_EQ(Union(some, empty), some);
  EXPECT_TRUE(Intersection(some, empty).empty());
  EXPECT_EQ(Difference(some, empty), some);
  EXPECT_TRUE(Difference(some, some).empty());
  EXPECT_EQ(Compare(empty, empty), MPI_IDENT);
  EXPECT_EQ(Compare(empty, some), MPI_UNEQUAL);
}

TEST(GroupOpsTest, InclAndExclMatchReference) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<int> group = RandomGroup(random);
    const int size = static_cast<int>(group.size());
    std::vector<int> ranks(size);
    for (int i = 0; i < size; ++i) ranks[i] = i;
    std::shuffle(ranks.begin(), ranks.end(), random);
    ranks.resize(
        size == 0 ? 0 : std::uniform_int_distribution<int>(0, size)(random));
    const RankSelection selection =
        SelectRanks(size, static_cast<int>(ranks.size()), ranks.data());
    ASSERT_EQ(selection.error_class, MPI_SUCCESS) << selection.problem;
    EXPECT_EQ(selection.ranks, ranks);
    std::vector<int> included, excluded;
    for (int r : ranks) included.push_back(group[r]);
    for (int r = 0; r < size; ++r) {
      if (!Contains(ranks, r)) excluded.push_back(group[r]);
    }
    EXPECT_EQ(Include(group, selection.ranks), included);
    EXPECT_EQ(Exclude(group, selection.ranks), excluded);
  }
}

TEST(GroupOpsTest, BadRankListsAreRefused) {
  const int duplicate[] = {1, 2, 1};
  RankSelection s = SelectRanks(4, 3, duplicate);
  EXPECT_EQ(s.error_class, MPI_ERR_RANK);
  EXPECT_NE(s.problem.find("rank 1 named twice"), std::string::npos);
  const int out_of_range[] = {0, 4};
  EXPECT_EQ(SelectRanks(4, 2, out_of_range).error_class, MPI_ERR_RANK);
  const int negative[] = {-1};
  EXPECT_EQ(SelectRanks(4, 1, negative).error_class, MPI_ERR_RANK);
  EXPECT_EQ(SelectRanks(4, -1, duplicate).error_class, MPI_ERR_ARG);
  EXPECT_EQ(SelectRanks(2, 3, duplicate).error_class, MPI_ERR_ARG);
  EXPECT_EQ(SelectRanks(4, 2, nullptr).error_class, MPI_ERR_ARG);
  EXPECT_EQ(SelectRanks(4, 0, nullptr).error_class, MPI_SUCCESS);
}

// The standard's expansion: first, first + stride, ..., while not past
// last.
std::vector<int> ExpandReference(int first, int last, int stride) {
  std::vector<int> ranks;
  if (stride > 0) {
    for (int r = first; r <= last; r += stride) ranks.push_back(r);
  } else {
    for (int r = first; r >= last; r += stride) ranks.push_back(r);
  }
  return ranks;
}

TEST(GroupOpsTest, RangesMatchReference) {
  std::mt19937 random(13);
  for (int trial = 0; trial < 5000; ++trial) {
    const int size = std::uniform_int_distribution<int>(1, 40)(random);
    const int n = std::uniform_int_distribution<int>(0, 4)(random);
    std::vector<std::array<int, 3>> ranges(n);
    std::vector<int> expected;
    std::set<int> seen;
    bool valid = true;
    for (auto& range : ranges) {
      int first = std::uniform_int_distribution<int>(0, size - 1)(random);
      int last = std::uniform_int_distribution<int>(0, size - 1)(random);
      int stride = std::uniform_int_distribution<int>(1, 5)(random);
      if (first > last) stride = -stride;
      range = {first, last, stride};
      for (int r : ExpandReference(first, last, stride)) {
        if (!seen.insert(r).second) valid = false;
        expected.push_back(r);
      }
    }
    const RankSelection selection =
        SelectRanges(size, n, reinterpret_cast<const int(*)[3]>(ranges.data()));
    if (valid) {
      ASSERT_EQ(selection.error_class, MPI_SUCCESS) << selection.problem;
      EXPECT_EQ(selection.ranks, expected);
    } else {
      EXPECT_EQ(selection.error_class, MPI_ERR_RANK);
    }
  }
}

TEST(GroupOpsTest, BadRangesAreRefused) {
  const int zero_stride[][3] = {{0, 3, 0}};
  EXPECT_EQ(SelectRanges(4, 1, zero_stride).error_class, MPI_ERR_ARG);
  const int away[][3] = {{3, 1, 1}};
  EXPECT_EQ(SelectRanges(4, 1, away).error_class, MPI_ERR_ARG);
  const int past_end[][3] = {{0, 4, 1}};
  EXPECT_EQ(SelectRanges(4, 1, past_end).error_class, MPI_ERR_RANK);
  const int overlapping[][3] = {{0, 3, 2}, {2, 2, 1}};
  EXPECT_EQ(SelectRanges(4, 2, overlapping).error_class, MPI_ERR_RANK);
  const int single[][3] = {{2, 2, -7}};
  RankSelection s = SelectRanges(4, 1, single);
  EXPECT_EQ(s.error_class, MPI_SUCCESS);
  EXPECT_EQ(s.ranks, std::vector<int>{2});
  const int huge_stride[][3] = {{0, 3, 2147483647}};
  s = SelectRanges(4, 1, huge_stride);
  EXPECT_EQ(s.error_class, MPI_SUCCESS);
  EXPECT_EQ(s.ranks, std::vector<int>{0});
  EXPECT_EQ(SelectRanges(4, -1, single).error_class, MPI_ERR_ARG);
}

TEST(GroupOpsTest, TranslateRanksMatchesReference) {
  std::mt19937 random(17);
  for (int trial = 0; trial < 1000; ++trial) {
    const std::vector<int> a = RandomGroup(random), b = RandomGroup(random);
    std::vector<int> ranks;
    for (int r = 0; r < static_cast<int>(a.size()); ++r) ranks.push_back(r);
    ranks.push_back(MPI_PROC_NULL);
    std::shuffle(ranks.begin(), ranks.end(), random);
    std::vector<int> translated(ranks.size(), -12345);
    int bad = -1;
    ASSERT_TRUE(TranslateRanks(a, static_cast<int>(ranks.size()), ranks.data(),
                               b, translated.data(), &bad));
    for (size_t i = 0; i < ranks.size(); ++i) {
      int expected = MPI_PROC_NULL;
      if (ranks[i] != MPI_PROC_NULL) {
        auto it = std::find(b.begin(), b.end(), a[ranks[i]]);
        expected = it == b.end() ? MPI_UNDEFINED : int(it - b.begin());
      }
      EXPECT_EQ(translated[i], expected);
    }
  }
  const std::vector<int> a = {5, 6}, b = {6};
  const int bad_ranks[] = {1, 2};
  int translated[2], bad = -1;
  EXPECT_FALSE(TranslateRanks(a, 2, bad_ranks, b, translated, &bad));
  EXPECT_EQ(bad, 1);
}

TEST(GroupTest, RankOfAndFingerprint) {
  Group group({7, 3, 9});
  EXPECT_EQ(group.RankOf(3), 1);
  EXPECT_EQ(group.RankOf(4), MPI_UNDEFINED);
  EXPECT_EQ(Group::Empty()->size(), 0);
  EXPECT_EQ(Fingerprint({1, 2, 3}), Fingerprint({1, 2, 3}));
  EXPECT_NE(Fingerprint({1, 2, 3}), Fingerprint({1, 3, 2}));
  EXPECT_NE(Fingerprint({}), Fingerprint({0}));
}

}  // namespace
}  // namespace minimpi::group_ops
