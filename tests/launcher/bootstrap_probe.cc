// Checks runtime::Bootstrap inside a real job (mpiexec or srun): rank, size
// and locality are consistent, and a Put/Commit/Fence/Get exchange delivers
// every rank's value byte for byte. Exits 0 when all holds, else prints what
// failed and exits 1.
//
// Usage: bootstrap_probe [--expect-size N] [--expect-env NAME=VALUE]...
//                        [--expect-bound] [--expect-nodes N] [--split K]
//
// --expect-nodes N: the launcher placed the ranks on N nodes (default 1);
// --split K: Bootstrap::Init(K) (MINIMPI_NODE_SPLIT's pretend nodes), and the
// node count expected is multiplied by K.

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/bootstrap.h"

namespace {

using minimpi::runtime::Bootstrap;

int failures = 0;
int my_rank = -1;

void Fail(const std::string& what) {
  std::fprintf(stderr, "bootstrap_probe rank %d: FAIL: %s\n", my_rank,
               what.c_str());
  ++failures;
}

// A value that differs per rank and per round and contains bytes that text
// handling would break (NUL, 0xff).
std::string ValueFor(int rank, int round) {
  std::string value =
      "rank-" + std::to_string(rank) + "-round-" + std::to_string(round) + "|";
  value.push_back('\0');
  value.push_back(static_cast<char>(0xff));
  for (int i = 0; i < 64 + rank; ++i) {
    value.push_back(static_cast<char>((rank * 31 + round * 7 + i) & 0xff));
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  int expected_size = -1;
  bool expect_bound = false;
  int expected_nodes = 1;
  int split = 1;
  std::vector<std::string> expected_env;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc) {
      expected_size = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--expect-env") == 0 && i + 1 < argc) {
      expected_env.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--expect-nodes") == 0 && i + 1 < argc) {
      expected_nodes = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--split") == 0 && i + 1 < argc) {
      split = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--expect-bound") == 0) {
      expect_bound = true;
    } else {
      std::fprintf(stderr, "bootstrap_probe: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }

  auto bootstrap_or = Bootstrap::Init(split);
  if (!bootstrap_or.ok()) {
    std::fprintf(stderr, "bootstrap_probe: Init failed: %s\n",
                 bootstrap_or.status().ToString().c_str());
    return 1;
  }
  Bootstrap& bootstrap = **bootstrap_or;
  my_rank = bootstrap.rank();
  const int size = bootstrap.size();

  if (expected_size > 0 && size != expected_size) {
    Fail("size " + std::to_string(size) + ", expected " +
         std::to_string(expected_size));
  }
  if (my_rank < 0 || my_rank >= size) Fail("rank out of range");
  if (bootstrap.is_singleton() !=
      (size == 1 && bootstrap.job_id().rfind("singleton-", 0) == 0)) {
    Fail("is_singleton() disagrees with job_id " + bootstrap.job_id());
  }
  if (bootstrap.job_id().empty()) Fail("empty job_id");

  // Locality: local_ranks are exactly the ranks the node map puts on this
  // rank's node; nodes are numbered in the order of their lowest rank.
  const std::vector<int>& local = bootstrap.local_ranks();
  std::vector<int> same_node;
  int next_node = 0;
  for (int r = 0; r < size; ++r) {
    const int node = bootstrap.node_of(r);
    if (node > next_node || node < 0) {
      Fail("rank " + std::to_string(r) + " is on node " + std::to_string(node) +
           ", but nodes are numbered by their lowest rank (next new: " +
           std::to_string(next_node) + ")");
    }
    if (node == next_node) ++next_node;
    if (node == bootstrap.node_of(my_rank)) same_node.push_back(r);
    if (bootstrap.node_name(r).empty()) Fail("empty node name");
  }
  if (local != same_node) Fail("local_ranks disagree with the node map");
  if (bootstrap.num_nodes() != expected_nodes * split) {
    Fail("num_nodes " + std::to_string(bootstrap.num_nodes()) + ", expected " +
         std::to_string(expected_nodes * split));
  }
  if (size > 1 && expected_nodes == 1 && split == 1 &&
      static_cast<int>(local.size()) != size) {
    Fail("one node, but local_ranks hold " + std::to_string(local.size()) +
         " of " + std::to_string(size) + " ranks");
  }
  if (bootstrap.local_rank() < 0 ||
      bootstrap.local_rank() >= static_cast<int>(local.size()) ||
      local[bootstrap.local_rank()] != my_rank) {
    Fail("local_rank " + std::to_string(bootstrap.local_rank()) +
         " does not point at this rank in local_ranks");
  }

  for (const std::string& expectation : expected_env) {
    std::string name = expectation.substr(0, expectation.find('='));
    std::string value = expectation.substr(name.size() + 1);
    const char* actual = std::getenv(name.c_str());
    if (actual == nullptr || value != actual) {
      Fail("environment " + name + "=" + (actual ? actual : "(unset)") +
           ", expected " + value);
    }
  }
  if (expect_bound) {
    const char* bind = std::getenv("MINIMPI_BIND_TO");
    if (bind == nullptr || std::strcmp(bind, "core") != 0) {
      Fail("MINIMPI_BIND_TO is not core");
    }
  }

  // Two rounds: a later exchange works too. Each round uses its own key: a
  // PMIx server may show a peer's newer committed value before the fence
  // that guarantees it, so reusing a key would race.
  for (int round = 0; round < 2; ++round) {
    const std::string key = "probe-" + std::to_string(round);
    auto status = bootstrap.Put(key, ValueFor(my_rank, round));
    if (status.ok()) status = bootstrap.Commit();
    if (status.ok()) status = bootstrap.Fence();
    if (!status.ok()) {
      Fail("round " + std::to_string(round) + ": " + status.ToString());
      break;
    }
    for (int r = 0; r < size; ++r) {
      auto value = bootstrap.Get(r, key);
      if (!value.ok()) {
        Fail("Get(" + std::to_string(r) + "): " + value.status().ToString());
      } else if (*value != ValueFor(r, round)) {
        Fail("Get(" + std::to_string(r) + ") round " + std::to_string(round) +
             " returned wrong bytes (" + std::to_string(value->size()) +
             " bytes)");
      }
    }
  }
  if (bootstrap.Get(size, "probe-0").ok())
    Fail("Get of rank == size succeeded");
  if (bootstrap.Get(0, "no-such-key").ok())
    Fail("Get of unknown key succeeded");

  auto finalized = bootstrap.Finalize();
  if (!finalized.ok()) Fail("Finalize: " + finalized.ToString());
  if (failures > 0) return 1;
  std::printf("bootstrap_probe rank %d of %d ok (job %s)\n", my_rank, size,
              bootstrap.job_id().c_str());
  return 0;
}
