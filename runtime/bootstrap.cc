// Two implementations of Bootstrap: PmixBootstrap, a thin client of the PMIx
// server that started us (minimpi's mpiexec or Slurm's pmix_v4 plugin), and
// SingletonBootstrap, used when a program is run without any launcher.
//
// Only job-level keys that both servers provide are read: PMIX_JOB_SIZE and
// PMIX_LOCAL_PEERS. Everything else (local rank) is derived from them, so the
// two launchers cannot disagree.

#include "runtime/bootstrap.h"

#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

extern char** environ;

namespace minimpi::runtime {
namespace {

// True when a PMIx server left its contact information in our environment.
bool StartedByPmixServer() {
  if (std::getenv("PMIX_RANK") != nullptr) return true;
  if (std::getenv("PMIX_NAMESPACE") != nullptr) return true;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "PMIX_SERVER_URI", 15) == 0) return true;
  }
  return false;
}

std::string OsHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

absl::Status PmixError(absl::string_view what, pmix_status_t rc) {
  return absl::InternalError(
      absl::StrCat(what, " failed: ", PMIx_Error_string(rc), " (", rc, ")"));
}

// Parses "0,1,2" or "0-3,5" (PMIx allows ranges in some servers' output).
absl::StatusOr<std::vector<int>> ParseRankList(absl::string_view text) {
  std::vector<int> ranks;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(item, absl::MaxSplits('-', 1));
    int first = 0;
    int last = 0;
    if (!absl::SimpleAtoi(range.first, &first)) {
      return absl::InternalError(absl::StrCat("bad rank list '", text, "'"));
    }
    last = first;
    if (!range.second.empty() && !absl::SimpleAtoi(range.second, &last)) {
      return absl::InternalError(absl::StrCat("bad rank list '", text, "'"));
    }
    for (int r = first; r <= last; ++r) ranks.push_back(r);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

// Owns a pmix_value_t returned by PMIx_Get.
struct PmixValueDeleter {
  void operator()(pmix_value_t* value) const { PMIX_VALUE_RELEASE(value); }
};
using PmixValuePtr = std::unique_ptr<pmix_value_t, PmixValueDeleter>;

// Servers differ in the integer type they use for sizes (the standard says
// uint32_t); accept any of them.
absl::StatusOr<int> ValueAsInt(const pmix_value_t& value) {
  switch (value.type) {
    case PMIX_UINT32:
      return static_cast<int>(value.data.uint32);
    case PMIX_INT32:
      return static_cast<int>(value.data.int32);
    case PMIX_UINT16:
      return static_cast<int>(value.data.uint16);
    case PMIX_INT:
      return value.data.integer;
    case PMIX_UINT:
      return static_cast<int>(value.data.uint);
    case PMIX_UINT64:
      return static_cast<int>(value.data.uint64);
    case PMIX_SIZE:
      return static_cast<int>(value.data.size);
    default:
      return absl::InternalError(absl::StrCat(
          "expected an integer, got ", PMIx_Data_type_string(value.type)));
  }
}

class PmixBootstrap final : public Bootstrap {
 public:
  static absl::StatusOr<std::unique_ptr<Bootstrap>> Create(int node_split) {
    auto bootstrap = std::unique_ptr<PmixBootstrap>(new PmixBootstrap());
    absl::Status status = bootstrap->Connect(node_split);
    if (!status.ok()) return status;
    return std::unique_ptr<Bootstrap>(std::move(bootstrap));
  }

  ~PmixBootstrap() override = default;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<int>& local_ranks() const override { return local_ranks_; }
  int local_rank() const override { return local_rank_; }
  bool is_singleton() const override { return false; }
  const std::string& job_id() const override { return job_id_; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    std::string key_string(key);
    pmix_value_t pmix_value;
    PMIX_VALUE_CONSTRUCT(&pmix_value);
    pmix_value.type = PMIX_BYTE_OBJECT;
    // PMIx_Put copies the value, so pointing at the caller's bytes is safe.
    pmix_value.data.bo.bytes = const_cast<char*>(value.data());
    pmix_value.data.bo.size = value.size();
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key_string.c_str(), &pmix_value);
    if (rc != PMIX_SUCCESS) {
      return PmixError(absl::StrCat("PMIx_Put(", key_string, ")"), rc);
    }
    return absl::OkStatus();
  }

  absl::Status Commit() override {
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_Commit", rc);
    return absl::OkStatus();
  }

  absl::Status Fence() override {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(nullptr, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_Fence", rc);
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Get(int rank, std::string_view key) override {
    if (rank < 0 || rank >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Get: rank ", rank, " out of range (size ", size_, ")"));
    }
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, my_proc_.nspace, static_cast<pmix_rank_t>(rank));
    std::string key_string(key);
    // Everything we Get was exchanged by a Fence with PMIX_COLLECT_DATA, so
    // it is already local; PMIX_OPTIONAL makes a missing key fail at once
    // instead of waiting for the server to ask the owner for it.
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool optional = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t* raw = nullptr;
    pmix_status_t rc = PMIx_Get(&proc, key_string.c_str(), &info, 1, &raw);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND) {
      // Where the server cannot share its data store with us (no usable
      // shared-memory dstore: some VMs and containers), local peers' data
      // stays in the server after the fence: ask it. PMIX_IMMEDIATE makes
      // it answer from what it holds, so a key nobody published still
      // fails at once.
      PMIX_INFO_CONSTRUCT(&info);
      bool immediate = true;
      PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
      rc = PMIx_Get(&proc, key_string.c_str(), &info, 1, &raw);
      PMIX_INFO_DESTRUCT(&info);
    }
    PmixValuePtr value(raw);
    if (rc == PMIX_ERR_NOT_FOUND) {
      return absl::NotFoundError(
          absl::StrCat("key '", key_string, "' not published by rank ", rank));
    }
    if (rc != PMIX_SUCCESS || value == nullptr) {
      return PmixError(
          absl::StrCat("PMIx_Get(rank ", rank, ", ", key_string, ")"), rc);
    }
    switch (value->type) {
      case PMIX_BYTE_OBJECT:
        return std::string(value->data.bo.bytes, value->data.bo.size);
      case PMIX_STRING:
        return std::string(value->data.string ? value->data.string : "");
      default:
        return absl::InternalError(
            absl::StrCat("PMIx_Get(", key_string, "): unexpected type ",
                         PMIx_Data_type_string(value->type)));
    }
  }

  [[noreturn]] void Abort(int error_code, std::string_view message) override {
    std::string text(message);
    // The launcher prints the message and kills the job; exit ourselves in
    // case it returns (a server may release us before killing us).
    PMIx_Abort(error_code, text.c_str(), nullptr, 0);
    std::fflush(nullptr);
    _exit(error_code != 0 ? error_code : 1);
  }

  absl::Status Finalize() override {
    pmix_status_t rc = PMIx_Finalize(nullptr, 0);
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_Finalize", rc);
    return absl::OkStatus();
  }

 private:
  PmixBootstrap() { PMIX_PROC_CONSTRUCT(&my_proc_); }

  absl::StatusOr<PmixValuePtr> GetJobValue(const char* key) {
    pmix_proc_t job;
    PMIX_PROC_LOAD(&job, my_proc_.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* raw = nullptr;
    pmix_status_t rc = PMIx_Get(&job, key, nullptr, 0, &raw);
    PmixValuePtr value(raw);
    if (rc != PMIX_SUCCESS || value == nullptr) {
      return PmixError(absl::StrCat("PMIx_Get(", key, ")"), rc);
    }
    return value;
  }

  // This node's name as the launcher gave it (PMIX_HOSTNAME); only a
  // server that gives none leaves naming to the OS.
  std::string LauncherHostname() {
    pmix_value_t* raw = nullptr;
    pmix_status_t rc = PMIx_Get(&my_proc_, PMIX_HOSTNAME, nullptr, 0, &raw);
    PmixValuePtr value(raw);
    if (rc == PMIX_SUCCESS && value != nullptr &&
        value->type == PMIX_STRING && value->data.string != nullptr &&
        value->data.string[0] != '\0') {
      return value->data.string;
    }
    return OsHostname();
  }

  absl::Status Connect(int node_split) {
    pmix_status_t rc = PMIx_Init(&my_proc_, nullptr, 0);
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_Init", rc);
    rank_ = static_cast<int>(my_proc_.rank);
    job_id_ = my_proc_.nspace;

    absl::StatusOr<PmixValuePtr> job_size = GetJobValue(PMIX_JOB_SIZE);
    if (!job_size.ok()) return job_size.status();
    absl::StatusOr<int> size = ValueAsInt(**job_size);
    if (!size.ok()) return size.status();
    size_ = *size;

    absl::StatusOr<PmixValuePtr> peers = GetJobValue(PMIX_LOCAL_PEERS);
    if (!peers.ok()) return peers.status();
    if ((*peers)->type != PMIX_STRING || (*peers)->data.string == nullptr) {
      return absl::InternalError("PMIX_LOCAL_PEERS is not a string");
    }
    absl::StatusOr<std::vector<int>> local =
        ParseRankList((*peers)->data.string);
    if (!local.ok()) return local.status();
    local_ranks_ = *std::move(local);
    auto mine = std::find(local_ranks_.begin(), local_ranks_.end(), rank_);
    if (mine == local_ranks_.end()) {
      return absl::InternalError(
          absl::StrCat("PMIX_LOCAL_PEERS '", (*peers)->data.string,
                       "' does not contain this rank ", rank_));
    }
    local_rank_ = static_cast<int>(mine - local_ranks_.begin());
    if (rank_ < 0 || rank_ >= size_) {
      return absl::InternalError(
          absl::StrCat("PMIx rank ", rank_, " outside job size ", size_));
    }
    std::string node_name = LauncherHostname();
    set_cores(local_rank_, static_cast<int>(local_ranks_.size()));
    if (node_split > 1) {
      // Contiguous blocks of the node's local ranks become pretend nodes;
      // a node with fewer ranks than pretend nodes gives one rank each.
      const int count = static_cast<int>(local_ranks_.size());
      const int parts = std::min(node_split, count);
      auto part_of = [&](int index) { return index * parts / count; };
      const int my_part = part_of(local_rank_);
      std::vector<int> same_part;
      for (int index = 0; index < count; ++index) {
        if (part_of(index) == my_part) same_part.push_back(local_ranks_[index]);
      }
      local_ranks_ = std::move(same_part);
      local_rank_ = static_cast<int>(
          std::find(local_ranks_.begin(), local_ranks_.end(), rank_) -
          local_ranks_.begin());
      absl::StrAppend(&node_name, "#", my_part);
    }
    return ExchangeNodes(node_name);
  }

  pmix_proc_t my_proc_;
  int rank_ = 0;
  int size_ = 0;
  int local_rank_ = 0;
  std::vector<int> local_ranks_;
  std::string job_id_;
};

// A job of one process: the key-value store is a local map, with the same
// visibility rules as PMIx (a Put is seen by Get only after Commit + Fence).
class SingletonBootstrap final : public Bootstrap {
 public:
  SingletonBootstrap() : job_id_(absl::StrCat("singleton-", getpid())) {
    // No launcher: the OS's name is the only one there is.
    SetNodes({0}, {OsHostname()});
  }

  int rank() const override { return 0; }
  int size() const override { return 1; }
  const std::vector<int>& local_ranks() const override { return local_ranks_; }
  int local_rank() const override { return 0; }
  bool is_singleton() const override { return true; }
  const std::string& job_id() const override { return job_id_; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    pending_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }

  absl::Status Commit() override {
    for (auto& [key, value] : pending_) committed_[key] = std::move(value);
    pending_.clear();
    return absl::OkStatus();
  }

  absl::Status Fence() override {
    for (auto& [key, value] : committed_) visible_[key] = std::move(value);
    committed_.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Get(int rank, std::string_view key) override {
    if (rank != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Get: rank ", rank, " out of range (size 1)"));
    }
    auto it = visible_.find(std::string(key));
    if (it == visible_.end()) {
      return absl::NotFoundError(
          absl::StrCat("key '", std::string(key), "' not published by rank 0"));
    }
    return it->second;
  }

  [[noreturn]] void Abort(int error_code, std::string_view message) override {
    std::fprintf(stderr, "rank 0 called MPI_Abort(errorcode %d): %.*s\n",
                 error_code, static_cast<int>(message.size()), message.data());
    std::fflush(nullptr);
    _exit(error_code != 0 ? error_code : 1);
  }

  absl::Status Finalize() override { return absl::OkStatus(); }

 private:
  std::string job_id_;
  std::vector<int> local_ranks_ = {0};
  std::map<std::string, std::string> pending_;
  std::map<std::string, std::string> committed_;
  std::map<std::string, std::string> visible_;
};

}  // namespace

absl::Status Bootstrap::ExchangeNodes(std::string_view my_node_name) {
  const int leader = local_ranks().front();
  if (size() == 1) {
    SetNodes({0}, {std::string(my_node_name)});
    return absl::OkStatus();
  }
  constexpr std::string_view kNodeKey = "minimpi.node";
  absl::Status status =
      Put(kNodeKey, absl::StrCat(leader, ":", std::string(my_node_name)));
  if (status.ok()) status = Commit();
  if (status.ok()) status = Fence();
  if (!status.ok()) return status;
  std::vector<int> node_of_rank(size());
  std::vector<std::string> names;
  std::map<int, int> node_of_leader;
  for (int rank = 0; rank < size(); ++rank) {
    absl::StatusOr<std::string> entry = Get(rank, kNodeKey);
    if (!entry.ok()) return entry.status();
    std::pair<absl::string_view, absl::string_view> fields =
        absl::StrSplit(*entry, absl::MaxSplits(':', 1));
    int rank_leader = -1;
    if (!absl::SimpleAtoi(fields.first, &rank_leader)) {
      return absl::InternalError(absl::StrCat("bootstrap: rank ", rank,
                                              " published a bad node '",
                                              *entry, "'"));
    }
    auto [it, added] =
        node_of_leader.emplace(rank_leader, static_cast<int>(names.size()));
    if (added) names.emplace_back(fields.second);
    node_of_rank[rank] = it->second;
  }
  SetNodes(std::move(node_of_rank), std::move(names));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Bootstrap>> Bootstrap::Init(int node_split) {
  if (!StartedByPmixServer()) {
    return std::unique_ptr<Bootstrap>(new SingletonBootstrap());
  }
  return PmixBootstrap::Create(node_split);
}

}  // namespace minimpi::runtime

// LeakSanitizer asks the program for built-in suppressions through this
// hook. libpmix keeps a few strings from PMIx_Init for the life of the
// process (never freed, even by PMIx_Finalize); without this every rank of a
// sanitizer build would fail its leak check on them. It takes effect where
// this file is linked into the executable (cc_binary's default).
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\n";
}

// The same for ThreadSanitizer: libpmix is not instrumented, and its
// progress thread's own locking shows up as races in every rank.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libpmix.so\nrace:libevent\n";
}
