#include "net/testing/fake_bootstrap.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace minimpi::net::testing {

struct FakeJob::SharedState {
  struct Slot {
    char key[kMaxKeyBytes + 1];
    uint32_t value_length;
    char value[kMaxValueBytes];
  };
  struct RankArea {
    uint32_t num_slots;
    Slot slots[kMaxKeysPerRank];
  };
  // Sense-counting barrier: the last to arrive bumps the generation.
  alignas(64) std::atomic<uint32_t> arrived;
  alignas(64) std::atomic<uint32_t> generation;
  RankArea ranks[1];  // really options.size entries
};

FakeJob::FakeJob(FakeJobOptions options) : options_(std::move(options)) {
  if (options_.size < 1 || options_.size > kMaxRanks) {
    std::fprintf(stderr, "FakeJob: size %d out of range\n", options_.size);
    std::abort();
  }
  if (options_.job_id.empty()) {
    // Test sandboxes have their own PID namespaces but may share /dev/shm,
    // so the pid alone does not make the name unique.
    static int jobs_created = 0;
    options_.job_id =
        absl::StrCat("fakejob-", getpid(), "-", absl::ToUnixNanos(absl::Now()),
                     "-", ++jobs_created);
  }
  if (options_.node_of_rank.empty()) {
    options_.node_of_rank.assign(options_.size, 0);
  }
  shared_bytes_ =
      sizeof(SharedState) + sizeof(SharedState::RankArea) * (options_.size - 1);
  // Anonymous shared memory is zeroed and survives fork in every child.
  void* memory = mmap(nullptr, shared_bytes_, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::perror("FakeJob: mmap");
    std::abort();
  }
  shared_ = static_cast<SharedState*>(memory);
  new (&shared_->arrived) std::atomic<uint32_t>(0);
  new (&shared_->generation) std::atomic<uint32_t>(0);
}

FakeJob::~FakeJob() { munmap(shared_, shared_bytes_); }

class FakeBootstrap final : public runtime::Bootstrap {
 public:
  FakeBootstrap(FakeJob& job, int rank) : job_(job), rank_(rank) {
    const std::vector<int>& nodes = job.options().node_of_rank;
    for (int r = 0; r < job.options().size; ++r) {
      if (nodes[r] == nodes[rank]) {
        if (r == rank) local_rank_ = static_cast<int>(local_ranks_.size());
        local_ranks_.push_back(r);
      }
    }
    // The pretend nodes, numbered in the order of their lowest rank as
    // Bootstrap promises, named node0, node1, ...
    std::map<int, int> renumbered;
    std::vector<int> node_of_rank;
    std::vector<std::string> names;
    for (int r = 0; r < job.options().size; ++r) {
      auto [it, added] =
          renumbered.emplace(nodes[r], static_cast<int>(names.size()));
      if (added) names.push_back(absl::StrCat("node", it->second));
      node_of_rank.push_back(it->second);
    }
    SetNodes(std::move(node_of_rank), std::move(names));
    set_cores(local_rank_, static_cast<int>(local_ranks_.size()));
  }

  int rank() const override { return rank_; }
  int size() const override { return job_.options().size; }
  const std::vector<int>& local_ranks() const override { return local_ranks_; }
  int local_rank() const override { return local_rank_; }
  bool is_singleton() const override { return false; }
  const std::string& job_id() const override { return job_.options().job_id; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    if (key.size() > FakeJob::kMaxKeyBytes ||
        value.size() > FakeJob::kMaxValueBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("FakeBootstrap: key '", std::string(key), "' or its ",
                       value.size(), "-byte value is too large"));
    }
    pending_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }

  absl::Status Commit() override {
    FakeJob::SharedState::RankArea& area = job_.shared_->ranks[rank_];
    for (const auto& [key, value] : pending_) {
      uint32_t slot = 0;
      while (slot < area.num_slots && key != area.slots[slot].key) ++slot;
      if (slot == area.num_slots) {
        if (slot == FakeJob::kMaxKeysPerRank) {
          return absl::ResourceExhaustedError("FakeBootstrap: too many keys");
        }
        std::memcpy(area.slots[slot].key, key.c_str(), key.size() + 1);
        ++area.num_slots;
      }
      std::memcpy(area.slots[slot].value, value.data(), value.size());
      area.slots[slot].value_length = static_cast<uint32_t>(value.size());
    }
    pending_.clear();
    return absl::OkStatus();
  }

  absl::Status Fence() override {
    std::atomic<uint32_t>& arrived = job_.shared_->arrived;
    std::atomic<uint32_t>& generation = job_.shared_->generation;
    const uint32_t current = generation.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        static_cast<uint32_t>(size())) {
      arrived.store(0, std::memory_order_relaxed);
      generation.store(current + 1, std::memory_order_release);
    } else {
      // Ranks may outnumber cores: yield rather than spin.
      while (generation.load(std::memory_order_acquire) == current) {
        sched_yield();
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Get(int rank, std::string_view key) override {
    if (rank < 0 || rank >= size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("FakeBootstrap: no rank ", rank));
    }
    const FakeJob::SharedState::RankArea& area = job_.shared_->ranks[rank];
    for (uint32_t slot = 0; slot < area.num_slots; ++slot) {
      if (key == area.slots[slot].key) {
        return std::string(area.slots[slot].value,
                           area.slots[slot].value_length);
      }
    }
    return absl::NotFoundError(absl::StrCat(
        "FakeBootstrap: rank ", rank, " has no key '", std::string(key), "'"));
  }

  [[noreturn]] void Abort(int error_code, std::string_view message) override {
    std::fprintf(stderr, "rank %d aborts (%d): %.*s\n", rank_, error_code,
                 static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    _exit(error_code == 0 ? 1 : error_code);
  }

  absl::Status Finalize() override { return absl::OkStatus(); }

 private:
  FakeJob& job_;
  const int rank_;
  std::vector<int> local_ranks_;
  int local_rank_ = -1;
  std::map<std::string, std::string> pending_;
};

std::unique_ptr<runtime::Bootstrap> FakeJob::BootstrapFor(int rank) {
  return std::make_unique<FakeBootstrap>(*this, rank);
}

namespace {

// A rank killed in the middle of setting up shared memory leaves its named
// segments behind; everything the job named after its id goes.
void RemoveLeftoverSharedMemory(const std::string& job_id) {
  DIR* directory = opendir("/dev/shm");
  if (directory == nullptr) return;
  std::vector<std::string> leftovers;
  while (dirent* entry = readdir(directory)) {
    if (std::string_view(entry->d_name).find(job_id) !=
        std::string_view::npos) {
      leftovers.push_back(absl::StrCat("/", entry->d_name));
    }
  }
  closedir(directory);
  for (const std::string& name : leftovers) shm_unlink(name.c_str());
}

}  // namespace

absl::Status RunRanks(
    const FakeJobOptions& options,
    const std::function<absl::Status(runtime::Bootstrap&)>& body) {
  FakeJob job(options);
  std::vector<pid_t> pids(options.size, -1);
  std::fflush(nullptr);  // or children would print the parent's buffers
  for (int rank = 0; rank < options.size; ++rank) {
    pid_t pid = fork();
    if (pid < 0) {
      for (pid_t child : pids) {
        if (child > 0) kill(child, SIGKILL);
      }
      return absl::InternalError("RunRanks: fork failed");
    }
    if (pid == 0) {
      int exit_code = 0;
      {
        std::unique_ptr<runtime::Bootstrap> bootstrap = job.BootstrapFor(rank);
        absl::Status status = body(*bootstrap);
        if (!status.ok()) {
          std::fprintf(stderr, "rank %d failed: %s\n", rank,
                       status.ToString().c_str());
          exit_code = 1;
        }
      }
      std::fflush(nullptr);
      _exit(exit_code);  // skip the test framework's exit handlers
    }
    pids[rank] = pid;
  }

  std::string failures;
  int running = options.size;
  const absl::Time deadline = absl::Now() + options.timeout;
  bool killed = false;
  while (running > 0) {
    bool reaped = false;
    for (int rank = 0; rank < options.size; ++rank) {
      if (pids[rank] <= 0) continue;
      int wait_status = 0;
      if (waitpid(pids[rank], &wait_status, WNOHANG) != pids[rank]) continue;
      reaped = true;
      pids[rank] = -1;
      --running;
      if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) continue;
      absl::StrAppend(
          &failures, failures.empty() ? "" : "; ", "rank ", rank,
          WIFEXITED(wait_status) ? " exited with code " : " died of signal ",
          WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                 : WTERMSIG(wait_status));
    }
    const bool timed_out = absl::Now() > deadline;
    if (timed_out && !killed) {
      absl::StrAppend(&failures, failures.empty() ? "" : "; ",
                      "timed out after ",
                      absl::FormatDuration(options.timeout));
    }
    if ((!failures.empty() || timed_out) && !killed) {
      killed = true;
      for (pid_t child : pids) {
        if (child > 0) kill(child, SIGKILL);
      }
    }
    if (!reaped) usleep(1000);
  }
  RemoveLeftoverSharedMemory(job.options().job_id);
  if (failures.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("RunRanks: ", failures));
}

}  // namespace minimpi::net::testing
