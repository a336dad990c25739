#include "tools/mpiexec/pmix_job_server.h"

#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
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

// Must match runtime/dynamic_processes.cc.
constexpr char kDynamicProcessesKey[] = "minimpi.dynamic_processes";

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
// every rank local there is nobody else to wait for (spawn excepted: the
// supervisor answers it).
struct ServerCallbacks {
  static PmixJobServer* Server(const pmix_proc_t* proc) {
    return proc != nullptr ? PmixJobServer::instance_ : nullptr;
  }

  static pmix_status_t ClientConnected(const pmix_proc_t* proc, void*,
                                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (PmixJobServer* server = Server(proc)) {
      server->RecordConnected(proc->nspace, static_cast<int>(proc->rank));
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }

  static pmix_status_t ClientFinalized(const pmix_proc_t* proc, void*,
                                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (PmixJobServer* server = Server(proc)) {
      server->RecordFinalized(proc->nspace, static_cast<int>(proc->rank));
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }

  // Whatever set of processes the caller names, the whole job ends: that is
  // what MPI_Abort promises and all minimpi asks for.
  static pmix_status_t Abort(const pmix_proc_t* proc, void*, int status,
                             const char msg[], pmix_proc_t[], size_t,
                             pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (PmixJobServer* server = Server(proc)) {
      server->RecordAbort(proc->nspace, static_cast<int>(proc->rank), status,
                          msg != nullptr ? msg : "");
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

  // Copies the request and leaves it to the supervisor (see the header):
  // the answer comes from its thread once the children are started.
  static pmix_status_t Spawn(const pmix_proc_t* proc, const pmix_info_t[],
                             size_t, const pmix_app_t apps[], size_t napps,
                             pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
    PmixJobServer* server = Server(proc);
    if (server == nullptr || napps == 0) return PMIX_ERR_BAD_PARAM;
    SpawnRequest request;
    request.parent_nspace = proc->nspace;
    for (size_t a = 0; a < napps; ++a) {
      SpawnApp app;
      if (apps[a].cmd == nullptr || apps[a].maxprocs < 1) {
        return PMIX_ERR_BAD_PARAM;
      }
      app.command = apps[a].cmd;
      for (char** arg = apps[a].argv; arg != nullptr && *arg != nullptr;
           ++arg) {
        app.argv.push_back(*arg);
      }
      if (app.argv.empty()) app.argv.push_back(app.command);
      for (char** entry = apps[a].env; entry != nullptr && *entry != nullptr;
           ++entry) {
        app.env.push_back(*entry);
      }
      if (apps[a].cwd != nullptr) app.cwd = apps[a].cwd;
      app.maxprocs = apps[a].maxprocs;
      request.apps.push_back(std::move(app));
    }
    request.reply_function = reinterpret_cast<void*>(cbfunc);
    request.reply_data = cbdata;
    {
      std::lock_guard<std::mutex> lock(server->mutex_);
      server->spawn_requests_.push_back(std::move(request));
    }
    // Wakes the supervisor, which waits for SIGCHLD (every thread blocks
    // it, so it stays pending for the supervisor's sigtimedwait); without
    // this a spawn waited for its next 50 ms look.
    kill(getpid(), SIGCHLD);
    return PMIX_SUCCESS;
  }

  static pmix_status_t Publish(const pmix_proc_t* proc,
                               const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void* cbdata) {
    PmixJobServer* server = Server(proc);
    if (server == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_status_t status = PMIX_SUCCESS;
    {
      std::lock_guard<std::mutex> lock(server->mutex_);
      for (size_t i = 0; i < ninfo; ++i) {
        // Directives (range, persistence) ride along under pmix.* keys.
        if (std::strncmp(info[i].key, "pmix.", 5) == 0) continue;
        if (info[i].value.type != PMIX_STRING) continue;
        const std::string key = info[i].key;
        if (server->published_.count(key) > 0) {
          status = PMIX_ERR_DUPLICATE_KEY;
          continue;
        }
        server->published_[key] = info[i].value.data.string;
      }
    }
    if (cbfunc != nullptr) cbfunc(status, cbdata);
    return PMIX_SUCCESS;
  }

  static pmix_status_t Lookup(const pmix_proc_t* proc, char** keys,
                              const pmix_info_t[], size_t,
                              pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
    PmixJobServer* server = Server(proc);
    if (server == nullptr) return PMIX_ERR_BAD_PARAM;
    std::vector<std::pair<std::string, std::string>> found;
    {
      std::lock_guard<std::mutex> lock(server->mutex_);
      for (char** key = keys; key != nullptr && *key != nullptr; ++key) {
        auto it = server->published_.find(*key);
        if (it != server->published_.end()) found.emplace_back(*it);
      }
    }
    if (cbfunc == nullptr) return PMIX_SUCCESS;
    if (found.empty()) {
      cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, cbdata);
      return PMIX_SUCCESS;
    }
    std::vector<pmix_pdata_t> data(found.size());
    for (size_t i = 0; i < found.size(); ++i) {
      PMIX_PDATA_CONSTRUCT(&data[i]);
      PMIX_PROC_LOAD(&data[i].proc, proc->nspace, 0);
      PMIX_LOAD_KEY(data[i].key, found[i].first.c_str());
      data[i].value.type = PMIX_STRING;
      data[i].value.data.string = strdup(found[i].second.c_str());
    }
    // The library copies the data before the callback returns.
    cbfunc(PMIX_SUCCESS, data.data(), data.size(), cbdata);
    for (pmix_pdata_t& entry : data) PMIX_PDATA_DESTRUCT(&entry);
    return PMIX_SUCCESS;
  }

  static pmix_status_t Unpublish(const pmix_proc_t* proc, char** keys,
                                 const pmix_info_t[], size_t,
                                 pmix_op_cbfunc_t cbfunc, void* cbdata) {
    PmixJobServer* server = Server(proc);
    if (server == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_status_t status = PMIX_SUCCESS;
    {
      std::lock_guard<std::mutex> lock(server->mutex_);
      for (char** key = keys; key != nullptr && *key != nullptr; ++key) {
        if (server->published_.erase(*key) == 0) status = PMIX_ERR_NOT_FOUND;
      }
    }
    if (cbfunc != nullptr) cbfunc(status, cbdata);
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
  module.spawn = &ServerCallbacks::Spawn;
  module.publish = &ServerCallbacks::Publish;
  module.lookup = &ServerCallbacks::Lookup;
  module.unpublish = &ServerCallbacks::Unpublish;

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

absl::Status PmixJobServer::RegisterJob(
    const std::string& nspace, int num_ranks,
    const std::vector<int>& appnum_of_rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_nspace_.empty()) first_nspace_ = nspace;
    reports_[nspace].assign(num_ranks, RankReport{});
  }
  auto appnum = [&](int rank) -> uint32_t {
    return appnum_of_rank.empty() ? 0u : uint32_t(appnum_of_rank[rank]);
  };
  const uint32_t num_apps =
      appnum_of_rank.empty() ? 1u : appnum(num_ranks - 1) + 1;
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
  job.AddUint32(PMIX_JOB_NUM_APPS, num_apps);
  if (num_apps == 1) job.AddUint32(PMIX_APP_SIZE, size);
  job.AddUint32(PMIX_APPNUM, 0);
  job.AddRank(PMIX_APPLDR, 0);
  job.AddUint32(PMIX_NUM_NODES, 1);
  job.AddString(PMIX_NODE_LIST, host);
  job.AddUint32(PMIX_LOCAL_SIZE, size);
  job.AddUint32(PMIX_NODE_SIZE, size);
  job.AddString(PMIX_LOCAL_PEERS, all_ranks);
  job.AddRank(PMIX_LOCALLDR, 0);
  // Tells the library this launcher serves spawn, publish and lookup
  // (runtime/dynamic_processes.h); Slurm's PMIx plugin does not.
  job.AddUint32(kDynamicProcessesKey, 1);

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
    proc.AddUint32(PMIX_APPNUM, appnum(r));
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
    const std::string& nspace, int rank, std::vector<std::string>* env) {
  // The library extends a malloc'ed, NULL-terminated array with its own
  // allocator; start from an empty one and copy the result out.
  char** pmix_env = static_cast<char**>(std::calloc(1, sizeof(char*)));
  if (pmix_env == nullptr) return absl::ResourceExhaustedError("out of memory");
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
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

RankReport PmixJobServer::Report(const std::string& nspace, int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto job = reports_.find(nspace);
  if (job == reports_.end() || rank < 0 ||
      rank >= static_cast<int>(job->second.size())) {
    return {};
  }
  return job->second[rank];
}

std::optional<AbortRequest> PmixJobServer::FirstAbort() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_abort_;
}

std::vector<SpawnRequest> PmixJobServer::TakeSpawnRequests() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SpawnRequest> requests;
  requests.swap(spawn_requests_);
  return requests;
}

void PmixJobServer::AnswerSpawn(const SpawnRequest& request, bool ok,
                                const std::string& nspace) {
  auto reply = reinterpret_cast<pmix_spawn_cbfunc_t>(request.reply_function);
  if (reply == nullptr) return;
  pmix_nspace_t answer;
  PMIX_LOAD_NSPACE(answer, ok ? nspace.c_str() : "");
  reply(ok ? PMIX_SUCCESS : PMIX_ERR_JOB_FAILED_TO_LAUNCH, answer,
        request.reply_data);
}

RankReport* PmixJobServer::FindReport(const std::string& nspace, int rank) {
  auto job = reports_.find(nspace);
  if (job == reports_.end() || rank < 0 ||
      rank >= static_cast<int>(job->second.size())) {
    return nullptr;
  }
  return &job->second[rank];
}

void PmixJobServer::RecordConnected(const std::string& nspace, int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (RankReport* report = FindReport(nspace, rank)) report->connected = true;
}

void PmixJobServer::RecordFinalized(const std::string& nspace, int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (RankReport* report = FindReport(nspace, rank)) report->finalized = true;
}

void PmixJobServer::RecordAbort(const std::string& nspace, int rank,
                                int error_code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FindReport(nspace, rank) == nullptr) return;
  if (!first_abort_.has_value()) {
    first_abort_ = AbortRequest{nspace, rank, error_code, message};
  }
}

}  // namespace minimpi::mpiexec
