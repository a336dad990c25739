#include "mpi/topo/dims.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace minimpi::topo {
namespace {

// x^m compared with n without overflow: -1, 0 or 1.
int ComparePower(int64_t x, int m, int64_t n) {
  int64_t power = 1;
  for (int i = 0; i < m; ++i) {
    if (power > n / x) return 1;  // the next product would exceed n
    power *= x;
  }
  return power < n ? -1 : (power == n ? 0 : 1);
}

// The largest x with x^m <= n, and the smallest with x^m >= n (n >= 1).
int64_t FloorRoot(int64_t n, int m) {
  int64_t x = static_cast<int64_t>(std::pow(static_cast<double>(n), 1.0 / m));
  x = std::max<int64_t>(x, 1);
  while (ComparePower(x, m, n) > 0) --x;
  while (ComparePower(x + 1, m, n) <= 0) ++x;
  return x;
}
int64_t CeilRoot(int64_t n, int m) {
  const int64_t floor = FloorRoot(n, m);
  return ComparePower(floor, m, n) == 0 ? floor : floor + 1;
}

// Depth-first search over non-increasing factorizations with a bound on the
// spread: the smallest factor of what is left can be at most its geometric
// mean, so a branch whose largest factor already exceeds that by more than
// the best spread found cannot win.
class BalancedSearch {
 public:
  BalancedSearch(int n, int k) : n_(n), k_(k) {
    for (int64_t d = 1; d * d <= n; ++d) {
      if (n % d != 0) continue;
      divisors_.push_back(static_cast<int>(d));
      if (d * d != n) divisors_.push_back(static_cast<int>(n / d));
    }
    std::sort(divisors_.begin(), divisors_.end());
  }

  std::vector<int> Run() {
    current_.clear();
    Extend(n_, k_, n_);
    return best_;
  }

 private:
  // Better: smaller spread; on a tie, larger smallest factor, then larger
  // second smallest, and so on.
  bool Better(const std::vector<int>& a, const std::vector<int>& b) const {
    const int spread_a = a.front() - a.back();
    const int spread_b = b.front() - b.back();
    if (spread_a != spread_b) return spread_a < spread_b;
    return std::lexicographical_compare(b.rbegin(), b.rend(), a.rbegin(),
                                        a.rend());
  }

  int BestSpread() const {
    return best_.empty() ? n_ : best_.front() - best_.back();
  }

  // Chooses the next factor of `left` (slots factors still to choose), at
  // most `cap` (the previous factor).
  void Extend(int left, int slots, int cap) {
    if (slots == 1) {
      if (left > cap) return;
      current_.push_back(left);
      if (best_.empty() || Better(current_, best_)) best_ = current_;
      current_.pop_back();
      return;
    }
    // The largest remaining factor is at least the geometric mean.
    const int64_t lowest = CeilRoot(left, slots);
    auto first = std::lower_bound(divisors_.begin(), divisors_.end(), lowest);
    for (auto it = first; it != divisors_.end() && *it <= cap; ++it) {
      const int factor = *it;
      if (left % factor != 0) continue;
      const int largest = current_.empty() ? factor : current_.front();
      // The smallest factor to come is at most this one and at most the
      // geometric mean of the rest.
      const int64_t smallest_bound =
          std::min<int64_t>(factor, FloorRoot(left / factor, slots - 1));
      if (largest - smallest_bound > BestSpread()) {
        // Larger factors only raise the bound (at the top level the
        // largest factor itself grows); deeper down a larger factor lowers
        // the geometric mean of the rest, so keep looking there.
        if (current_.empty()) break;
        continue;
      }
      current_.push_back(factor);
      Extend(left / factor, slots - 1, factor);
      current_.pop_back();
    }
  }

  const int n_;
  const int k_;
  std::vector<int> divisors_;
  std::vector<int> current_;
  std::vector<int> best_;
};

}  // namespace

std::vector<int> BalancedFactors(int n, int k) {
  return BalancedSearch(n, k).Run();
}

DimsResult DimsCreate(int nnodes, std::vector<int>& dims) {
  DimsResult result;
  if (nnodes < 1) {
    result.error = DimsError::kBadNodeCount;
    result.message =
        absl::StrFormat("invalid number of nodes %d (must be >= 1)", nnodes);
    return result;
  }
  int64_t fixed = 1;
  int free_slots = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      result.error = DimsError::kBadDimension;
      result.message = absl::StrFormat(
          "invalid dimension %d at index %d (must be >= 0)", dims[i], i);
      return result;
    }
    if (dims[i] == 0) {
      ++free_slots;
    } else {
      fixed *= dims[i];
      if (fixed > nnodes) break;  // cannot divide; reported below
    }
  }
  if (fixed > nnodes || nnodes % fixed != 0 ||
      (free_slots == 0 && fixed != nnodes)) {
    result.error = DimsError::kNotDivisible;
    result.message = absl::StrFormat(
        free_slots == 0
            ? "the given dimensions multiply to %d, not to %d nodes"
            : "the given dimensions (product %d) do not divide %d nodes",
        fixed, nnodes);
    return result;
  }
  if (free_slots == 0) return result;
  const std::vector<int> factors =
      BalancedFactors(static_cast<int>(nnodes / fixed), free_slots);
  size_t next = 0;
  for (int& entry : dims) {
    if (entry == 0) entry = factors[next++];
  }
  return result;
}

}  // namespace minimpi::topo
