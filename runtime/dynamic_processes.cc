#include "runtime/dynamic_processes.h"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace minimpi::runtime {
namespace {

// Set in the job's data by minimpi's mpiexec (tools/mpiexec), never by
// Slurm.
constexpr char kDynamicProcessesKey[] = "minimpi.dynamic_processes";
// Published names live under this prefix, apart from anything else a
// launcher may publish.
constexpr char kServicePrefix[] = "minimpi.service.";

absl::Status PmixError(absl::string_view what, pmix_status_t rc) {
  return absl::InternalError(
      absl::StrCat(what, " failed: ", PMIx_Error_string(rc), " (", rc, ")"));
}

// A job-level value, asked of the local data only (PMIX_OPTIONAL): a key
// the launcher never set must not send the question to its server.
bool GetJobUint32(const Bootstrap& bootstrap, const char* key,
                  uint32_t* result) {
  pmix_proc_t job;
  PMIX_PROC_LOAD(&job, bootstrap.job_id().c_str(), PMIX_RANK_WILDCARD);
  pmix_info_t info;
  bool optional = true;
  PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  pmix_status_t rc = PMIx_Get(&job, key, &info, 1, &value);
  PMIX_INFO_DESTRUCT(&info);
  bool found = false;
  if (rc == PMIX_SUCCESS && value != nullptr) {
    switch (value->type) {
      case PMIX_UINT32:
        *result = value->data.uint32;
        found = true;
        break;
      case PMIX_UINT16:
        *result = value->data.uint16;
        found = true;
        break;
      case PMIX_INT:
        *result = static_cast<uint32_t>(value->data.integer);
        found = true;
        break;
      default:
        break;
    }
  }
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  return found;
}

absl::Status Unavailable(const Bootstrap& bootstrap, absl::string_view what) {
  std::string why;
  LauncherServesDynamicProcesses(bootstrap, &why);
  return absl::UnavailableError(absl::StrCat("cannot ", what, ": ", why));
}

}  // namespace

bool LauncherServesDynamicProcesses(const Bootstrap& bootstrap,
                                    std::string* why) {
  if (bootstrap.is_singleton()) {
    if (why != nullptr) {
      *why =
          "the program was started without a launcher (start it with "
          "mpiexec to use dynamic processes)";
    }
    return false;
  }
  uint32_t served = 0;
  if (GetJobUint32(bootstrap, kDynamicProcessesKey, &served) && served != 0) {
    return true;
  }
  if (why != nullptr) {
    *why = std::getenv("SLURM_STEP_ID") != nullptr
               ? "the launcher (Slurm's PMIx plugin, srun) does not serve "
                 "PMIx spawn or name publishing; start the job with minimpi's "
                 "mpiexec on one node"
               : "the launcher's PMIx server does not serve spawn or name "
                 "publishing (minimpi's mpiexec does)";
  }
  return false;
}

absl::StatusOr<std::string> Spawn(const Bootstrap& bootstrap,
                                  const std::vector<SpawnCommand>& commands) {
  if (!LauncherServesDynamicProcesses(bootstrap)) {
    return Unavailable(bootstrap, "spawn processes");
  }
  // pmix_app_t wants mutable NULL-terminated arrays; the strings live in
  // `storage` for the call.
  std::vector<std::vector<std::string>> storage;
  std::vector<std::vector<char*>> argvs(commands.size()), envs(commands.size());
  std::vector<pmix_app_t> apps(commands.size());
  storage.reserve(commands.size() * 3);
  for (size_t i = 0; i < commands.size(); ++i) {
    const SpawnCommand& command = commands[i];
    std::vector<std::string>& strings = storage.emplace_back();
    strings.push_back(command.command);
    for (const std::string& arg : command.argv) strings.push_back(arg);
    for (std::string& s : strings) argvs[i].push_back(s.data());
    argvs[i].push_back(nullptr);
    std::vector<std::string>& env = storage.emplace_back(command.env);
    for (std::string& s : env) envs[i].push_back(s.data());
    envs[i].push_back(nullptr);
    std::vector<std::string>& other = storage.emplace_back();
    other.push_back(command.command);
    other.push_back(command.working_directory);
    PMIX_APP_CONSTRUCT(&apps[i]);
    apps[i].cmd = other[0].data();
    apps[i].argv = argvs[i].data();
    apps[i].env = envs[i].data();
    apps[i].cwd = other[1].empty() ? nullptr : other[1].data();
    apps[i].maxprocs = command.maxprocs;
  }
  pmix_nspace_t nspace;
  std::memset(nspace, 0, sizeof(nspace));
  pmix_status_t rc = PMIx_Spawn(nullptr, 0, apps.data(), apps.size(), nspace);
  if (rc == PMIX_ERR_JOB_FAILED_TO_LAUNCH) {
    return absl::UnavailableError(
        "the launcher could not start the processes (it printed why: a "
        "command it cannot execute, a working directory it cannot enter)");
  }
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Spawn", rc);
  return std::string(nspace);
}

absl::Status PublishName(const Bootstrap& bootstrap, absl::string_view service,
                         absl::string_view port) {
  if (!LauncherServesDynamicProcesses(bootstrap)) {
    return Unavailable(bootstrap, "publish a name");
  }
  const std::string key = absl::StrCat(kServicePrefix, service);
  if (key.size() >= PMIX_MAX_KEYLEN) {
    return absl::InvalidArgumentError(absl::StrCat(
        "service name '", service, "' is longer than ",
        PMIX_MAX_KEYLEN - 1 - std::strlen(kServicePrefix), " characters"));
  }
  const std::string value(port);
  pmix_info_t info;
  PMIX_INFO_LOAD(&info, key.c_str(), value.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_Publish(&info, 1);
  PMIX_INFO_DESTRUCT(&info);
  if (rc == PMIX_ERR_DUPLICATE_KEY || rc == PMIX_EXISTS) {
    return absl::AlreadyExistsError(
        absl::StrCat("service name '", service, "' is already published"));
  }
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Publish", rc);
  return absl::OkStatus();
}

absl::StatusOr<std::string> LookupName(const Bootstrap& bootstrap,
                                       absl::string_view service) {
  if (!LauncherServesDynamicProcesses(bootstrap)) {
    return Unavailable(bootstrap, "look up a name");
  }
  const std::string key = absl::StrCat(kServicePrefix, service);
  if (key.size() >= PMIX_MAX_KEYLEN) {
    return absl::NotFoundError(
        absl::StrCat("service name '", service, "' is not published"));
  }
  pmix_pdata_t data;
  PMIX_PDATA_CONSTRUCT(&data);
  PMIX_LOAD_KEY(data.key, key.c_str());
  pmix_status_t rc = PMIx_Lookup(&data, 1, nullptr, 0);
  std::string port;
  const bool found = rc == PMIX_SUCCESS && data.value.type == PMIX_STRING &&
                     data.value.data.string != nullptr;
  if (found) port = data.value.data.string;
  PMIX_PDATA_DESTRUCT(&data);
  if (found) return port;
  if (rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND) {
    return absl::NotFoundError(
        absl::StrCat("service name '", service, "' is not published"));
  }
  return PmixError("PMIx_Lookup", rc);
}

absl::Status UnpublishName(const Bootstrap& bootstrap,
                           absl::string_view service) {
  if (!LauncherServesDynamicProcesses(bootstrap)) {
    return Unavailable(bootstrap, "unpublish a name");
  }
  const std::string key = absl::StrCat(kServicePrefix, service);
  if (key.size() >= PMIX_MAX_KEYLEN) {
    return absl::NotFoundError(
        absl::StrCat("service name '", service, "' is not published"));
  }
  std::vector<char> key_copy(key.begin(), key.end());
  key_copy.push_back('\0');
  char* keys[] = {key_copy.data(), nullptr};
  pmix_status_t rc = PMIx_Unpublish(keys, nullptr, 0);
  if (rc == PMIX_ERR_NOT_FOUND) {
    return absl::NotFoundError(
        absl::StrCat("service name '", service, "' is not published"));
  }
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Unpublish", rc);
  return absl::OkStatus();
}

int AppNumber(const Bootstrap& bootstrap) {
  if (bootstrap.is_singleton()) return 0;
  pmix_proc_t me;
  PMIX_PROC_LOAD(&me, bootstrap.job_id().c_str(),
                 static_cast<pmix_rank_t>(bootstrap.rank()));
  pmix_value_t* value = nullptr;
  int appnum = 0;
  if (PMIx_Get(&me, PMIX_APPNUM, nullptr, 0, &value) == PMIX_SUCCESS &&
      value != nullptr && value->type == PMIX_UINT32) {
    appnum = static_cast<int>(value->data.uint32);
  }
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  return appnum;
}

int UniverseSize(const Bootstrap& bootstrap) {
  uint32_t size = 0;
  if (!bootstrap.is_singleton() &&
      GetJobUint32(bootstrap, PMIX_UNIV_SIZE, &size) && size > 0) {
    return static_cast<int>(size);
  }
  return bootstrap.size();
}

}  // namespace minimpi::runtime
