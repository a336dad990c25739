#include "tools/mpiexec/pmix_job_server.h"

#include <pmix.h>
#include <pmix_server.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace minimpi::mpiexec {

PmixJobServer* PmixJobServer::instance_ = nullptr;

namespace {

absl::Status PmixError(const std::string& what, pmix_status_t rc) {
  return absl::InternalError(
      absl::StrCat(what, " failed: ", PMIx_Error_string(rc), " (", rc, ")"));
}

// Turns one of the library's asynchronous operations into a blocking call:
// pass Callback/this as cbfunc/cbdata, then Wait on the operation's return
// code.
class OperationWaiter {
 public:
  static void Callback(pmix_status_t status, void* cbdata) {
    auto* waiter = static_cast<OperationWaiter*>(cbdata);
    std::lock_guard<std::mutex> lock(waiter->mutex_);
    waiter->status_ = status;
    waiter->done_ = true;
    waiter->cv_.notify_all();
  }

  // `rc` is what the call returned: PMIX_SUCCESS promises a callback,
  // PMIX_OPERATION_SUCCEEDED means it completed in place.
  pmix_status_t Wait(pmix_status_t rc) {
    if (rc == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS) return rc;
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  pmix_status_t status_ = PMIX_SUCCESS;
};

// An owned list of pmix_info_t built with the library's list helpers.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() { PMIx_Info_list_release(list_); }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void Add(const char* key, const void* value, pmix_data_type_t type) {
    if (status_ != PMIX_SUCCESS) return;
    status_ = PMIx_Info_list_add(list_, key, value, type);
    if (status_ != PMIX_SUCCESS) failed_key_ = key;
  }
  void AddString(const char* key, const std::string& value) {
    Add(key, value.c_str(), PMIX_STRING);
  }
  void AddUint32(const char* key, uint32_t value) {
    Add(key, &value, PMIX_UINT32);
  }
  void AddUint16(const char* key, uint16_t value) {
    Add(key, &value, PMIX_UINT16);
  }
  void AddRank(const char* key, pmix_rank_t value) {
    Add(key, &value, PMIX_PROC_RANK);
  }

  // Copies the list into `array` (an array of pmix_info_t), which the caller
  // destructs with PMIX_DATA_ARRAY_DESTRUCT.
  absl::Status Convert(pmix_data_array_t* array) {
    if (status_ != PMIX_SUCCESS) {
      return PmixError(absl::StrCat("PMIx_Info_list_add(", failed_key_, ")"),
                       status_);
    }
    PMIX_DATA_ARRAY_CONSTRUCT(array, 0, PMIX_INFO);
    pmix_status_t rc = PMIx_Info_list_convert(list_, array);
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_Info_list_convert", rc);
    return absl::OkStatus();
  }

 private:
  void* list_;
  pmix_status_t status_ = PMIX_SUCCESS;
  std::string failed_key_;
};

// Owns a pmix_data_array_t of pmix_info_t.
struct InfoArray {
  InfoArray() { PMIX_DATA_ARRAY_CONSTRUCT(&array, 0, PMIX_INFO); }
  ~InfoArray() { PMIX_DATA_ARRAY_DESTRUCT(&array); }
  InfoArray(const InfoArray&) = delete;
  InfoArray& operator=(const InfoArray&) = delete;
  pmix_info_t* info() { return static_cast<pmix_info_t*>(array.array); }
  size_t size() const { return array.size; }
  pmix_data_array_t array;
};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

// The server module's callbacks. Each completes its operation at once: with
// every rank local there is nobody else to wait for.
struct ServerCallbacks {
  static bool IsOurs(const pmix_proc_t* proc) {
    PmixJobServer* server = PmixJobServer::instance_;
    if (server == nullptr || proc == nullptr) return false;
    std::lock_guard<std::mutex> lock(server->mutex_);
    return server->nspace_ == proc->nspace &&
           proc->rank < server->reports_.size();
  }

  static pmix_status_t ClientConnected(const pmix_proc_t* proc, void*,
                                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (IsOurs(proc)) {
      PmixJobServer::instance_->RecordConnected(static_cast<int>(proc->rank));
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }

  static pmix_status_t ClientFinalized(const pmix_proc_t* proc, void*,
                                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (IsOurs(proc)) {
      PmixJobServer::instance_->RecordFinalized(static_cast<int>(proc->rank));
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }

  // Whatever set of processes the caller names, the whole job ends: that is
  // what MPI_Abort promises and all minimpi asks for.
  static pmix_status_t Abort(const pmix_proc_t* proc, void*, int status,
                             const char msg[], pmix_proc_t[], size_t,
                             pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (IsOurs(proc)) {
      PmixJobServer::instance_->RecordAbort(static_cast<int>(proc->rank),
                                            status, msg != nullptr ? msg : "");
    }
    // Releasing the caller lets it exit; its abort is already recorded, so
    // the supervisor reports the abort, not the exit.
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }

  // The library may release `data` once we return, so the reply owns a copy
  // that it frees when the library calls ReleaseCopy.
  static void ReleaseCopy(void* copy) { std::free(copy); }

  static pmix_status_t FenceNb(const pmix_proc_t[], size_t, const pmix_info_t[],
                               size_t, char* data, size_t ndata,
                               pmix_modex_cbfunc_t cbfunc, void* cbdata) {
    if (cbfunc == nullptr) return PMIX_SUCCESS;
    char* copy = nullptr;
    if (ndata > 0) {
      copy = static_cast<char*>(std::malloc(ndata));
      if (copy == nullptr) return PMIX_ERR_NOMEM;
      std::memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, &ReleaseCopy, copy);
    return PMIX_SUCCESS;
  }
};

absl::StatusOr<std::unique_ptr<PmixJobServer>> PmixJobServer::Start(
    const std::string& private_dir) {
  if (instance_ != nullptr) {
    return absl::FailedPreconditionError("a PMIx server is already running");
  }
  static pmix_server_module_t module;  // the library keeps a pointer to it
  std::memset(&module, 0, sizeof(module));
  module.client_connected = &ServerCallbacks::ClientConnected;
  module.client_finalized = &ServerCallbacks::ClientFinalized;
  module.abort = &ServerCallbacks::Abort;
  module.fence_nb = &ServerCallbacks::FenceNb;

  InfoList list;
  // Private rendezvous and shared-memory directories keep concurrent
  // mpiexec runs from finding each other's files.
  list.AddString(PMIX_SERVER_TMPDIR, private_dir);
  list.AddString(PMIX_SYSTEM_TMPDIR, private_dir);
  list.AddRank(PMIX_SERVER_RANK, 0);
  InfoArray info;
  absl::Status status = list.Convert(&info.array);
  if (!status.ok()) return status;

  // The ranks are our children on this node and reach the server through a
  // Unix socket, so the kernel's peer credentials (psec "native") say who
  // they are. Left to choose, PMIx prefers munge when libmunge is present,
  // and where munged does not run it retries for over two seconds at every
  // launch before falling back. A user's own PMIX_MCA_psec wins.
  setenv("PMIX_MCA_psec", "native", /*overwrite=*/0);
  std::unique_ptr<PmixJobServer> server(new PmixJobServer());
  instance_ = server.get();
  pmix_status_t rc = PMIx_server_init(&module, info.info(), info.size());
  if (rc != PMIX_SUCCESS) {
    instance_ = nullptr;
    return PmixError("PMIx_server_init", rc);
  }
  return server;
}

PmixJobServer::~PmixJobServer() {
  // PMIx 4.2 can crash or deadlock finalizing (or deregistering) a job whose
  // ranks died inside a collective, so an abandoned server is left to the
  // process exit instead.
  if (!abandoned_) PMIx_server_finalize();
  instance_ = nullptr;
}

void PmixJobServer::Abandon() { abandoned_ = true; }

absl::Status PmixJobServer::RegisterJob(const std::string& nspace,
                                        int num_ranks) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    nspace_ = nspace;
    reports_.assign(num_ranks, RankReport{});
  }
  const uint32_t size = static_cast<uint32_t>(num_ranks);
  const std::string host = HostName();
  std::vector<std::string> rank_names;
  for (int r = 0; r < num_ranks; ++r) rank_names.push_back(std::to_string(r));
  const std::string all_ranks = absl::StrJoin(rank_names, ",");

  InfoList job;
  job.AddUint32(PMIX_UNIV_SIZE, size);
  job.AddUint32(PMIX_JOB_SIZE, size);
  job.AddUint32(PMIX_MAX_PROCS, size);
  job.AddString(PMIX_JOBID, nspace);
  job.AddUint32(PMIX_JOB_NUM_APPS, 1);
  job.AddUint32(PMIX_APP_SIZE, size);
  job.AddUint32(PMIX_APPNUM, 0);
  job.AddRank(PMIX_APPLDR, 0);
  job.AddUint32(PMIX_NUM_NODES, 1);
  job.AddString(PMIX_NODE_LIST, host);
  job.AddUint32(PMIX_LOCAL_SIZE, size);
  job.AddUint32(PMIX_NODE_SIZE, size);
  job.AddString(PMIX_LOCAL_PEERS, all_ranks);
  job.AddRank(PMIX_LOCALLDR, 0);

  // The node and process maps in the library's compressed form.
  char* node_map = nullptr;
  char* proc_map = nullptr;
  pmix_status_t rc = PMIx_generate_regex(host.c_str(), &node_map);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_generate_regex", rc);
  rc = PMIx_generate_ppn(all_ranks.c_str(), &proc_map);
  if (rc != PMIX_SUCCESS) {
    std::free(node_map);
    return PmixError("PMIx_generate_ppn", rc);
  }
  job.AddString(PMIX_NODE_MAP, node_map);
  job.AddString(PMIX_PROC_MAP, proc_map);
  std::free(node_map);
  std::free(proc_map);

  // Per-rank data: on a single node local rank, node rank and rank agree.
  for (int r = 0; r < num_ranks; ++r) {
    InfoList proc;
    proc.AddRank(PMIX_RANK, static_cast<pmix_rank_t>(r));
    proc.AddUint16(PMIX_LOCAL_RANK, static_cast<uint16_t>(r));
    proc.AddUint16(PMIX_NODE_RANK, static_cast<uint16_t>(r));
    proc.AddUint32(PMIX_NODEID, 0);
    proc.AddUint32(PMIX_APPNUM, 0);
    proc.AddString(PMIX_HOSTNAME, host);
    InfoArray proc_array;
    absl::Status status = proc.Convert(&proc_array.array);
    if (!status.ok()) return status;
    job.Add(PMIX_PROC_DATA, &proc_array.array, PMIX_DATA_ARRAY);
  }

  InfoArray job_array;
  absl::Status status = job.Convert(&job_array.array);
  if (!status.ok()) return status;

  pmix_nspace_t pmix_nspace;
  PMIX_LOAD_NSPACE(pmix_nspace, nspace.c_str());
  OperationWaiter registered;
  rc = registered.Wait(PMIx_server_register_nspace(
      pmix_nspace, num_ranks, job_array.info(), job_array.size(),
      &OperationWaiter::Callback, &registered));
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_server_register_nspace", rc);

  for (int r = 0; r < num_ranks; ++r) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace.c_str(), static_cast<pmix_rank_t>(r));
    OperationWaiter client;
    rc = client.Wait(
        PMIx_server_register_client(&proc, getuid(), getgid(), nullptr,
                                    &OperationWaiter::Callback, &client));
    if (rc != PMIX_SUCCESS) {
      return PmixError(
          absl::StrCat("PMIx_server_register_client(rank ", r, ")"), rc);
    }
  }
  return absl::OkStatus();
}

absl::Status PmixJobServer::AddClientEnvironment(
    int rank, std::vector<std::string>* env) {
  // The library extends a malloc'ed, NULL-terminated array with its own
  // allocator; start from an empty one and copy the result out.
  char** pmix_env = static_cast<char**>(std::calloc(1, sizeof(char*)));
  if (pmix_env == nullptr) return absl::ResourceExhaustedError("out of memory");
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
  pmix_status_t rc = PMIx_server_setup_fork(&proc, &pmix_env);
  for (char** entry = pmix_env; entry != nullptr && *entry != nullptr;
       ++entry) {
    if (rc == PMIX_SUCCESS) env->push_back(*entry);
    std::free(*entry);
  }
  std::free(pmix_env);
  if (rc != PMIX_SUCCESS) {
    return PmixError(absl::StrCat("PMIx_server_setup_fork(rank ", rank, ")"),
                     rc);
  }
  return absl::OkStatus();
}

RankReport PmixJobServer::Report(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= static_cast<int>(reports_.size())) return {};
  return reports_[rank];
}

std::optional<AbortRequest> PmixJobServer::FirstAbort() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_abort_;
}

void PmixJobServer::RecordConnected(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  reports_[rank].connected = true;
}

void PmixJobServer::RecordFinalized(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  reports_[rank].finalized = true;
}

void PmixJobServer::RecordAbort(int rank, int error_code,
                                const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!first_abort_.has_value()) {
    first_abort_ = AbortRequest{rank, error_code, message};
  }
}

}  // namespace minimpi::mpiexec
