// MPI_Dims_create's factorization against a brute-force search that tries
// every non-increasing factorization (no pruning), and against the
// standard's own examples and a few answers MPICH's test suite expects.
#include "mpi/topo/dims.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::topo {
namespace {

// Every non-increasing factorization of n into k factors, each <= cap.
void AllFactorizations(int n, int k, int cap, std::vector<int>& prefix,
                       std::vector<std::vector<int>>& out) {
  if (k == 1) {
    if (n <= cap) {
      prefix.push_back(n);
      out.push_back(prefix);
      prefix.pop_back();
    }
    return;
  }
  for (int f = 1; f <= std::min(n, cap); ++f) {
    if (n % f != 0) continue;
    prefix.push_back(f);
    AllFactorizations(n / f, k - 1, f, prefix, out);
    prefix.pop_back();
  }
}

// The rule, stated as plainly as possible: least spread, then the largest
// smallest factor, then the largest second smallest, ...
std::vector<int> ReferenceBalanced(int n, int k) {
  std::vector<std::vector<int>> all;
  std::vector<int> prefix;
  AllFactorizations(n, k, n, prefix, all);
  std::vector<int> best;
  for (const std::vector<int>& candidate : all) {
    if (best.empty()) {
      best = candidate;
      continue;
    }
    const int spread = candidate.front() - candidate.back();
    const int best_spread = best.front() - best.back();
    if (spread < best_spread) {
      best = candidate;
    } else if (spread == best_spread) {
      std::vector<int> a(candidate.rbegin(), candidate.rend());
      std::vector<int> b(best.rbegin(), best.rend());
      if (a > b) best = candidate;
    }
  }
  return best;
}

TEST(BalancedFactorsTest, MatchesBruteForce) {
  for (int k = 1; k <= 5; ++k) {
    for (int n = 1; n <= (k <= 3 ? 2000 : 400); ++n) {
      ASSERT_EQ(BalancedFactors(n, k), ReferenceBalanced(n, k))
          << n << " in " << k << " dimensions";
    }
  }
}

TEST(BalancedFactorsTest, FactorsMultiplyAndDoNotIncrease) {
  for (int n : {1, 2, 97, 360, 1024, 65536, 720720, 1000000007}) {
    for (int k = 1; k <= 8; ++k) {
      const std::vector<int> factors = BalancedFactors(n, k);
      ASSERT_EQ(static_cast<int>(factors.size()), k);
      long long product = 1;
      for (int f : factors) product *= f;
      EXPECT_EQ(product, n) << n << " in " << k;
      EXPECT_TRUE(std::is_sorted(factors.rbegin(), factors.rend()));
    }
  }
}

TEST(BalancedFactorsTest, TieBreakFavoursLargerSmallFactors) {
  // Both spread by 94; MPICH's suite expects the first.
  EXPECT_EQ(BalancedFactors(712656, 5), (std::vector<int>{101, 14, 9, 8, 7}));
  EXPECT_EQ(BalancedFactors(883008, 5), (std::vector<int>{73, 14, 12, 9, 8}));
  EXPECT_EQ(BalancedFactors(72, 2), (std::vector<int>{9, 8}));
}

TEST(BalancedFactorsTest, LargeInputsAreFast) {
  EXPECT_EQ(BalancedFactors(1000 * 1000 * 1000, 3),
            (std::vector<int>{1000, 1000, 1000}));
  EXPECT_EQ(BalancedFactors(1 << 30, 10),
            (std::vector<int>{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}));
  const std::vector<int> ones = BalancedFactors(1, 40);
  EXPECT_EQ(ones, std::vector<int>(40, 1));
  // A large prime has one factorization.
  EXPECT_EQ(BalancedFactors(2147483647, 3),
            (std::vector<int>{2147483647, 1, 1}));
}

TEST(DimsCreateTest, StandardExamples) {
  // MPI-4.1 section 8.5.2, example 8.2.
  std::vector<int> dims = {0, 0};
  ASSERT_EQ(DimsCreate(6, dims).error, DimsError::kNone);
  EXPECT_EQ(dims, (std::vector<int>{3, 2}));
  dims = {0, 0};
  ASSERT_EQ(DimsCreate(7, dims).error, DimsError::kNone);
  EXPECT_EQ(dims, (std::vector<int>{7, 1}));
  dims = {0, 3, 0};
  ASSERT_EQ(DimsCreate(6, dims).error, DimsError::kNone);
  EXPECT_EQ(dims, (std::vector<int>{2, 3, 1}));
  dims = {0, 3, 0};
  EXPECT_EQ(DimsCreate(7, dims).error, DimsError::kNotDivisible);
  EXPECT_EQ(dims, (std::vector<int>{0, 3, 0}));  // untouched on error
}

TEST(DimsCreateTest, FixedEntriesAreKeptAndFreeOnesBalanced) {
  std::vector<int> dims = {0, 4, 0, 0};
  ASSERT_EQ(DimsCreate(4 * 60, dims).error, DimsError::kNone);
  EXPECT_EQ(dims, (std::vector<int>{5, 4, 4, 3}));
  dims = {2, 3};
  ASSERT_EQ(DimsCreate(6, dims).error, DimsError::kNone);  // nothing to do
  EXPECT_EQ(dims, (std::vector<int>{2, 3}));
  std::vector<int> none;
  EXPECT_EQ(DimsCreate(1, none).error, DimsError::kNone);
}

TEST(DimsCreateTest, Errors) {
  std::vector<int> dims = {0, 0};
  EXPECT_EQ(DimsCreate(0, dims).error, DimsError::kBadNodeCount);
  EXPECT_EQ(DimsCreate(-4, dims).error, DimsError::kBadNodeCount);
  dims = {0, -1};
  EXPECT_EQ(DimsCreate(4, dims).error, DimsError::kBadDimension);
  dims = {2, 3};
  EXPECT_EQ(DimsCreate(8, dims).error, DimsError::kNotDivisible);
  dims = {3, 0};
  DimsResult result = DimsCreate(8, dims);
  EXPECT_EQ(result.error, DimsError::kNotDivisible);
  EXPECT_NE(result.message.find("do not divide 8"), std::string::npos)
      << result.message;
  std::vector<int> none;
  EXPECT_EQ(DimsCreate(2, none).error, DimsError::kNotDivisible);
  dims = {65536, 65536, 0};  // the product must not overflow
  EXPECT_EQ(DimsCreate(1 << 30, dims).error, DimsError::kNotDivisible);
}

}  // namespace
}  // namespace minimpi::topo
