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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace minimpi::runtime {

class Bootstrap {
 public:
  // Connects to the PMIx server that launched this process, or, when there
  // is none (no PMIX_* environment), returns a singleton of size 1.
  static absl::StatusOr<std::unique_ptr<Bootstrap>> Init();

  virtual ~Bootstrap() = default;

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
};

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_BOOTSTRAP_H_
