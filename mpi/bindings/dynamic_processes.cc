// Dynamic processes (MPI-4.1 chapter 11.8-11.10): MPI_Comm_spawn(_multiple),
// MPI_Comm_get_parent, ports (MPI_Open_port, MPI_Close_port,
// MPI_Comm_accept, MPI_Comm_connect), MPI_Comm_join, MPI_Comm_disconnect,
// and name publishing. The launcher starts processes and keeps published
// names (runtime/dynamic_processes.h); groups meet through a socket between
// their roots (dynamic_util.h). Where only the root's arguments count, the
// root checks them and every process returns the root's answer.
#include "runtime/dynamic_processes.h"

#include <limits.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/dynamic_util.h"
#include "mpi/coll/basic.h"
#include "mpi/objects/info.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;

namespace {

// What the root of a spawn decided, for every process.
struct SpawnVerdict {
  int32_t error_class = MPI_SUCCESS;
  int32_t processes = 0;  // how many were asked for (errcodes' length)
  uint32_t message_length = 0;
};

// Checks an intracommunicator and a root in it, as every collective
// dynamic-process call does.
int CheckCommAndRoot(const char* call, MPI_Comm handle, int root,
                     Communicator** comm) {
  if (int error = minimpi::CheckCommunicator(call, handle, comm)) return error;
  if ((*comm)->inter) {
    return RaiseError(*comm, call, MPI_ERR_COMM,
                      "comm must be an intracommunicator");
  }
  if ((*comm)->on_endpoints()) {
    return RaiseError(*comm, call, MPI_ERR_COMM,
                      "endpoints communicators cannot take part in dynamic "
                      "processes");
  }
  if (root < 0 || root >= (*comm)->size) {
    return RaiseError(*comm, call, MPI_ERR_ROOT,
                      absl::StrFormat("invalid root %d (communicator size %d)",
                                      root, (*comm)->size));
  }
  return MPI_SUCCESS;
}

// The root's half of a spawn: checks its arguments, opens the port the
// children will connect to and asks the launcher for them. Returns the
// error class (with *problem) or MPI_SUCCESS (with *port and *processes).
int SpawnAtRoot(int count, char* commands[], char** argvs[],
                const int maxprocs[], const MPI_Info infos[], bool multiple,
                std::string* port, int* processes, std::string* problem) {
  if (count < 1) {
    *problem = absl::StrFormat("invalid count %d (must be at least 1)", count);
    return MPI_ERR_ARG;
  }
  if (commands == nullptr || maxprocs == nullptr) {
    *problem = multiple ? "null array_of_commands or array_of_maxprocs"
                        : "null command";
    return MPI_ERR_ARG;
  }
  std::vector<minimpi::runtime::SpawnCommand> spawn(count);
  *processes = 0;
  for (int i = 0; i < count; ++i) {
    if (commands[i] == nullptr || commands[i][0] == '\0') {
      *problem = absl::StrFormat("command %d is empty", i);
      return MPI_ERR_ARG;
    }
    if (maxprocs[i] < 1) {
      *problem = absl::StrFormat(
          "invalid maxprocs %d for '%s' (must be at "
          "least 1)",
          maxprocs[i], commands[i]);
      return MPI_ERR_ARG;
    }
    spawn[i].command = commands[i];
    spawn[i].maxprocs = maxprocs[i];
    *processes += maxprocs[i];
    char** argv = argvs == nullptr ? nullptr : argvs[i];
    for (char** arg = argv; arg != nullptr && *arg != nullptr; ++arg) {
      spawn[i].argv.push_back(*arg);
    }
    const minimpi::Info* info = infos == nullptr || infos[i] == MPI_INFO_NULL
                                    ? nullptr
                                    : minimpi::LookupInfo(infos[i]);
    if (infos != nullptr && infos[i] != MPI_INFO_NULL && info == nullptr) {
      *problem = absl::StrFormat("invalid info handle for command %d", i);
      return MPI_ERR_INFO;
    }
    // "wdir" is honoured; "host" and the other reserved keys are accepted
    // and ignored: the launcher runs every process on its one node.
    if (info != nullptr) {
      if (std::optional<std::string> wdir = info->Get("wdir")) {
        spawn[i].working_directory = *wdir;
      }
    }
    // Without "wdir" the children start where their parent runs, so a
    // relative command means what it means to the parent.
    if (spawn[i].working_directory.empty()) {
      char here[PATH_MAX];
      if (getcwd(here, sizeof(here)) != nullptr) {
        spawn[i].working_directory = here;
      }
    }
    // "path": directories to look for a bare command in (MPI's reserved
    // key), relative ones from where the children start.
    if (std::optional<std::string> path =
            info != nullptr ? info->Get("path") : std::nullopt;
        path.has_value() && spawn[i].command.find('/') == std::string::npos) {
      for (absl::string_view dir : absl::StrSplit(*path, ':')) {
        if (dir.empty()) continue;
        std::string candidate = absl::StrCat(dir, "/", spawn[i].command);
        std::string from_start =
            candidate[0] == '/'
                ? candidate
                : absl::StrCat(spawn[i].working_directory, "/", candidate);
        if (access(from_start.c_str(), X_OK) == 0) {
          spawn[i].command = from_start;
          break;
        }
      }
    }
  }
  absl::StatusOr<std::string> opened = minimpi::OpenPort();
  if (!opened.ok()) {
    *problem = std::string(opened.status().message());
    return MPI_ERR_SPAWN;
  }
  for (auto& command : spawn) {
    command.env.push_back(
        absl::StrCat(minimpi::kParentPortVariable, "=", *opened));
  }
  absl::StatusOr<std::string> job =
      minimpi::runtime::Spawn(Instance::Get().bootstrap(), spawn);
  if (!job.ok()) {
    (void)minimpi::ClosePort(*opened);
    *problem = std::string(job.status().message());
    return MPI_ERR_SPAWN;
  }
  *port = *opened;
  return MPI_SUCCESS;
}

// MPI_Comm_spawn and MPI_Comm_spawn_multiple.
int Spawn(const char* call, int count, char* commands[], char** argvs[],
          const int maxprocs[], const MPI_Info infos[], int root,
          MPI_Comm comm_handle, MPI_Comm* intercomm, int errcodes[],
          bool multiple) {
  Communicator* comm;
  if (int error = CheckCommAndRoot(call, comm_handle, root, &comm)) {
    return error;
  }
  if (intercomm == nullptr) {
    return minimpi::NullArgument(call, comm, "intercomm");
  }
  *intercomm = MPI_COMM_NULL;
  SpawnVerdict verdict;
  std::string problem, port;
  if (comm->rank == root) {
    int processes = 0;
    verdict.error_class = SpawnAtRoot(count, commands, argvs, maxprocs, infos,
                                      multiple, &port, &processes, &problem);
    verdict.processes = processes;
    verdict.message_length = static_cast<uint32_t>(problem.size());
  }
  minimpi::p2p::PointToPoint& p2p = Instance::Get().p2p();
  minimpi::coll::BcastBytes(p2p, *comm, &verdict, sizeof(verdict), root);
  if (errcodes != MPI_ERRCODES_IGNORE) {
    for (int i = 0; i < verdict.processes; ++i) {
      errcodes[i] = verdict.error_class;
    }
  }
  if (verdict.error_class != MPI_SUCCESS) {
    problem.resize(verdict.message_length);
    minimpi::coll::BcastBytes(p2p, *comm, problem.data(), problem.size(), root);
    return RaiseError(comm, call, verdict.error_class, problem);
  }
  absl::StatusOr<std::unique_ptr<Communicator>> inter = minimpi::MeetOtherGroup(
      *comm, root, minimpi::MeetRole::kAccept, port, -1);
  if (comm->rank == root) (void)minimpi::ClosePort(port);
  if (!inter.ok()) {
    if (errcodes != MPI_ERRCODES_IGNORE) {
      for (int i = 0; i < verdict.processes; ++i) errcodes[i] = MPI_ERR_SPAWN;
    }
    return RaiseError(comm, call, MPI_ERR_SPAWN,
                      absl::StrCat("the spawned processes did not connect: ",
                                   inter.status().message()));
  }
  *intercomm = minimpi::Publish(*std::move(inter))->handle;
  return MPI_SUCCESS;
}

// MPI_Comm_accept and MPI_Comm_connect.
int AcceptOrConnect(const char* call, minimpi::MeetRole role,
                    const char* port_name, MPI_Info info, int root,
                    MPI_Comm comm_handle, MPI_Comm* newcomm) {
  Communicator* comm;
  if (int error = CheckCommAndRoot(call, comm_handle, root, &comm)) {
    return error;
  }
  if (newcomm == nullptr) return minimpi::NullArgument(call, comm, "newcomm");
  *newcomm = MPI_COMM_NULL;
  if (info != MPI_INFO_NULL && minimpi::LookupInfo(info) == nullptr) {
    return RaiseError(comm, call, MPI_ERR_INFO, "invalid info handle");
  }
  std::string port;
  if (comm->rank == root) {
    // A null port name at the root is sent on as one nobody opened, so the
    // other processes learn of it too.
    port = port_name == nullptr ? "" : port_name;
  }
  absl::StatusOr<std::unique_ptr<Communicator>> inter =
      minimpi::MeetOtherGroup(*comm, root, role, port, -1);
  if (!inter.ok()) {
    return RaiseError(comm, call, MPI_ERR_PORT,
                      std::string(inter.status().message()));
  }
  *newcomm = minimpi::Publish(*std::move(inter))->handle;
  return MPI_SUCCESS;
}

// Copies `text` into a caller's buffer of MPI_MAX_PORT_NAME characters.
void CopyPortName(const std::string& text, char* to) {
  const size_t n = std::min(text.size(), size_t{MPI_MAX_PORT_NAME - 1});
  std::memcpy(to, text.data(), n);
  to[n] = '\0';
}

}  // namespace

extern "C" {

int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs,
                    MPI_Info info, int root, MPI_Comm comm, MPI_Comm* intercomm,
                    int array_of_errcodes[]) {
  constexpr const char* kCall = "MPI_Comm_spawn";
  MINIMPI_REQUIRE_INIT(kCall);
  char* commands[] = {const_cast<char*>(command)};
  char** argvs[] = {argv};
  const int counts[] = {maxprocs};
  const MPI_Info infos[] = {info};
  return Spawn(kCall, 1, command == nullptr ? nullptr : commands, argvs, counts,
               infos, root, comm, intercomm, array_of_errcodes,
               /*multiple=*/false);
}

int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[],
                             char** array_of_argv[],
                             const int array_of_maxprocs[],
                             const MPI_Info array_of_info[], int root,
                             MPI_Comm comm, MPI_Comm* intercomm,
                             int array_of_errcodes[]) {
  constexpr const char* kCall = "MPI_Comm_spawn_multiple";
  MINIMPI_REQUIRE_INIT(kCall);
  return Spawn(kCall, count, array_of_commands, array_of_argv,
               array_of_maxprocs, array_of_info, root, comm, intercomm,
               array_of_errcodes, /*multiple=*/true);
}

int PMPI_Comm_get_parent(MPI_Comm* parent) {
  constexpr const char* kCall = "MPI_Comm_get_parent";
  MINIMPI_REQUIRE_INIT(kCall);
  if (parent == nullptr) return minimpi::NullArgument(kCall, nullptr, "parent");
  Communicator* parents = minimpi::Parents();
  *parent = parents == nullptr ? MPI_COMM_NULL : parents->handle;
  return MPI_SUCCESS;
}

int PMPI_Open_port(MPI_Info info, char* port_name) {
  constexpr const char* kCall = "MPI_Open_port";
  MINIMPI_REQUIRE_INIT(kCall);
  if (port_name == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "port_name");
  }
  if (info != MPI_INFO_NULL && minimpi::LookupInfo(info) == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_INFO, "invalid info handle");
  }
  absl::StatusOr<std::string> port = minimpi::OpenPort();
  if (!port.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_PORT,
                      std::string(port.status().message()));
  }
  CopyPortName(*port, port_name);
  return MPI_SUCCESS;
}

int PMPI_Close_port(const char* port_name) {
  constexpr const char* kCall = "MPI_Close_port";
  MINIMPI_REQUIRE_INIT(kCall);
  if (port_name == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "port_name");
  }
  absl::Status closed = minimpi::ClosePort(port_name);
  if (!closed.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_PORT,
                      std::string(closed.message()));
  }
  return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char* port_name, MPI_Info info, int root,
                     MPI_Comm comm, MPI_Comm* newcomm) {
  constexpr const char* kCall = "MPI_Comm_accept";
  MINIMPI_REQUIRE_INIT(kCall);
  return AcceptOrConnect(kCall, minimpi::MeetRole::kAccept, port_name, info,
                         root, comm, newcomm);
}

int PMPI_Comm_connect(const char* port_name, MPI_Info info, int root,
                      MPI_Comm comm, MPI_Comm* newcomm) {
  constexpr const char* kCall = "MPI_Comm_connect";
  MINIMPI_REQUIRE_INIT(kCall);
  return AcceptOrConnect(kCall, minimpi::MeetRole::kConnect, port_name, info,
                         root, comm, newcomm);
}

int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  constexpr const char* kCall = "MPI_Comm_join";
  MINIMPI_REQUIRE_INIT(kCall);
  if (intercomm == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "intercomm");
  }
  *intercomm = MPI_COMM_NULL;
  if (fd < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid socket descriptor %d", fd));
  }
  absl::StatusOr<std::unique_ptr<Communicator>> inter = minimpi::MeetOtherGroup(
      *Instance::Get().self(), 0, minimpi::MeetRole::kJoin, "", fd);
  if (!inter.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_OTHER,
                      std::string(inter.status().message()));
  }
  *intercomm = minimpi::Publish(*std::move(inter))->handle;
  return MPI_SUCCESS;
}

int PMPI_Comm_disconnect(MPI_Comm* comm) {
  constexpr const char* kCall = "MPI_Comm_disconnect";
  MINIMPI_REQUIRE_INIT(kCall);
  if (comm == nullptr) return minimpi::NullArgument(kCall, nullptr, "comm");
  Communicator* c;
  if (int error = minimpi::CheckCommunicator(kCall, *comm, &c)) return error;
  if (c->predefined) {
    return RaiseError(c, kCall, MPI_ERR_COMM,
                      "cannot disconnect a predefined communicator");
  }
  // Collective: every process gets here once its own operations on the
  // communicator are done (MPI requires them complete before the call),
  // and the barrier keeps anyone from freeing it while a peer's messages
  // to it may still be on their way.
  if (int error = PMPI_Barrier(*comm)) return error;
  minimpi::ForgetParents(c);
  return PMPI_Comm_free(comm);
}

int PMPI_Publish_name(const char* service_name, MPI_Info info,
                      const char* port_name) {
  constexpr const char* kCall = "MPI_Publish_name";
  MINIMPI_REQUIRE_INIT(kCall);
  if (service_name == nullptr || port_name == nullptr) {
    return minimpi::NullArgument(
        kCall, nullptr, service_name == nullptr ? "service_name" : "port_name");
  }
  if (info != MPI_INFO_NULL && minimpi::LookupInfo(info) == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_INFO, "invalid info handle");
  }
  absl::Status published = minimpi::runtime::PublishName(
      Instance::Get().bootstrap(), service_name, port_name);
  if (!published.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_SERVICE,
                      std::string(published.message()));
  }
  return MPI_SUCCESS;
}

int PMPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
  constexpr const char* kCall = "MPI_Lookup_name";
  MINIMPI_REQUIRE_INIT(kCall);
  if (service_name == nullptr || port_name == nullptr) {
    return minimpi::NullArgument(
        kCall, nullptr, service_name == nullptr ? "service_name" : "port_name");
  }
  if (info != MPI_INFO_NULL && minimpi::LookupInfo(info) == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_INFO, "invalid info handle");
  }
  absl::StatusOr<std::string> port =
      minimpi::runtime::LookupName(Instance::Get().bootstrap(), service_name);
  if (!port.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_NAME,
                      std::string(port.status().message()));
  }
  CopyPortName(*port, port_name);
  return MPI_SUCCESS;
}

int PMPI_Unpublish_name(const char* service_name, MPI_Info info,
                        const char* port_name) {
  constexpr const char* kCall = "MPI_Unpublish_name";
  MINIMPI_REQUIRE_INIT(kCall);
  if (service_name == nullptr || port_name == nullptr) {
    return minimpi::NullArgument(
        kCall, nullptr, service_name == nullptr ? "service_name" : "port_name");
  }
  if (info != MPI_INFO_NULL && minimpi::LookupInfo(info) == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_INFO, "invalid info handle");
  }
  absl::Status removed = minimpi::runtime::UnpublishName(
      Instance::Get().bootstrap(), service_name);
  if (!removed.ok()) {
    return RaiseError(nullptr, kCall, MPI_ERR_SERVICE,
                      std::string(removed.message()));
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_spawn)
MINIMPI_EXPORT(Comm_spawn_multiple)
MINIMPI_EXPORT(Comm_get_parent)
MINIMPI_EXPORT(Open_port)
MINIMPI_EXPORT(Close_port)
MINIMPI_EXPORT(Comm_accept)
MINIMPI_EXPORT(Comm_connect)
MINIMPI_EXPORT(Comm_join)
MINIMPI_EXPORT(Comm_disconnect)
MINIMPI_EXPORT(Publish_name)
MINIMPI_EXPORT(Lookup_name)
MINIMPI_EXPORT(Unpublish_name)
