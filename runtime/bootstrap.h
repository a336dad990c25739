// Process bootstrap through PMIx: who am I, how many of us, who shares my
// node, and a key-value exchange (Put/Commit/Fence/Get) for transport
// addresses. Works under minimpi's own mpiexec and under `srun --mpi=pmix`
// (both are PMIx servers); a program started with no launcher is a singleton.
//
// Owned by: runtime/. Called by: mpi/ at MPI_Init, net/ transports at setup.
#ifndef MINIMPI_RUNTIME_BOOTSTRAP_H_
#define MINIMPI_RUNTIME_BOOTSTRAP_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace minimpi::runtime {

class Bootstrap {
 public:
  // Connects to the PMIx server that launched this process, or, when there
  // is none (no PMIX_* environment), returns a singleton of size 1.
  //
  // `node_split` > 1 splits each node's ranks into that many pretend nodes
  // (contiguous blocks of its local ranks, as MPICH's
  // MPIR_CVAR_NUM_CLIQUES does), so the cross-node paths can be exercised
  // on one machine: local_ranks() and the node map then describe the
  // pretend nodes, and everything above follows them.
  static absl::StatusOr<std::unique_ptr<Bootstrap>> Init(int node_split = 1);

  virtual ~Bootstrap() = default;

  // Where ranks run, as the launcher placed them: never the OS's view (on a
  // simulated cluster, network namespaces share memory and hostnames may
  // repeat, so only PMIx knows which ranks share a node). Nodes are
  // numbered 0.. in the order of their lowest rank; every rank sees the
  // same map.
  int num_nodes() const { return static_cast<int>(node_names_.size()); }
  // A process of another job (a rank past size(): dynamic processes add
  // them, net::Transport::AddPeer) is on a node of its own as far as this
  // job knows: a negative number no other rank has.
  int node_of(int rank) const {
    return rank < static_cast<int>(node_of_rank_.size()) ? node_of_rank_[rank]
                                                         : -1 - rank;
  }
  // The node's name (PMIX_HOSTNAME, with "#k" appended for the k-th
  // pretend node of a split one); MPI_Get_processor_name returns it.
  const std::string& node_name(int rank) const {
    static const std::string kOtherJob = "(a node of another job)";
    return node_of(rank) < 0 ? kOtherJob : node_names_[node_of_rank_[rank]];
  }
  const std::string& hostname() const { return node_name(rank()); }
  // This rank's position among the ranks of the launcher's node before any
  // MINIMPI_NODE_SPLIT (pretend nodes share the real node's cores), for
  // binding ranks to distinct cores.
  int core_slot() const { return core_slot_; }
  // How many ranks share this rank's cores: its launcher node's, before any
  // split.
  int ranks_sharing_cores() const { return ranks_sharing_cores_; }

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // World ranks sharing this node, in increasing order; includes rank().
  virtual const std::vector<int>& local_ranks() const = 0;
  // Position of rank() in local_ranks().
  virtual int local_rank() const = 0;
  virtual bool is_singleton() const = 0;
  // A string unique to this job (the PMIx namespace); names shared memory.
  virtual const std::string& job_id() const = 0;

  // Publishes `value` under `key` for every rank; visible after Commit and
  // Fence. Values are opaque bytes.
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  virtual absl::Status Commit() = 0;
  // Collective over all ranks of the job; exchanges committed data.
  virtual absl::Status Fence() = 0;
  virtual absl::StatusOr<std::string> Get(int rank, std::string_view key) = 0;

  // Asks the launcher to end the whole job; does not return.
  [[noreturn]] virtual void Abort(int error_code, std::string_view message) = 0;
  // Tells the launcher this process finished cleanly.
  virtual absl::Status Finalize() = 0;

 protected:
  // Implementations call one of these once, before handing the bootstrap
  // out. `node_of_rank` has size() entries numbered as described above.
  void SetNodes(std::vector<int> node_of_rank,
                std::vector<std::string> node_names) {
    node_of_rank_ = std::move(node_of_rank);
    node_names_ = std::move(node_names);
  }
  // Learns every rank's node from its peers: each rank publishes the lowest
  // rank of its node (a name no two nodes share) and the node's name, then
  // one Fence. Collective; a job of one rank needs no exchange.
  absl::Status ExchangeNodes(std::string_view my_node_name);
  void set_cores(int slot, int sharing) {
    core_slot_ = slot;
    ranks_sharing_cores_ = sharing;
  }

 private:
  int core_slot_ = 0;
  int ranks_sharing_cores_ = 1;
  std::vector<int> node_of_rank_;
  std::vector<std::string> node_names_;
};

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_BOOTSTRAP_H_
