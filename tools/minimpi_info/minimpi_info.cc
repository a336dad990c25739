// minimpi_info: what this installation of minimpi is and how it is set up.
//
// Prints the library version, every MINIMPI_* setting (value in force,
// default, description) exactly as MPI_Init would read it from this
// environment, the compiler-wrapper variables, the transports and whether
// each one can be selected here, the matching engines and the thread level.
// It never calls MPI_Init, so it needs no launcher: the version queries it
// makes are among the calls the standard allows before initialization.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mpi/coll/algorithms.h"
#include "mpi/instance/choice_lists.h"
#include "mpi/match/match_engine.h"
#include "mpi/part/aggregator.h"
#include "mpi/part/backend_choice.h"
#include "mpi/part/model/loggp.h"
#include "mpi/vci/wait_policy.h"
#include "net/ib/ib_transport.h"
#include "net/tcp/tcp_transport.h"
#include "runtime/settings.h"
#include "runtime/topology.h"

namespace {

using minimpi::runtime::DescribeSettings;
using minimpi::runtime::SettingInfo;
using minimpi::runtime::Settings;

void PrintSection(const char* title) { std::printf("\n%s\n", title); }

// One line per entry of an owner's table of choices: name, description.
template <typename Table>
void PrintChoices(const Table& table) {
  for (const auto& entry : table) {
    std::printf("  %-8s %s\n", entry.name, entry.description);
  }
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && value[0] != '\0') ? value : fallback;
}

// A MINIMPI_* variable whose value MPI_Init would reject.
struct InvalidSetting {
  std::string raw_value;
  std::string error;
};

// Reads the settings as MPI_Init would. Settings::FromEnvironment stops at
// the first invalid variable, so to report every one, each offending variable
// is set aside (its raw value and error kept in `invalid`) and the rest read
// again. Returns the settings in force for the valid variables.
Settings ReadSettings(std::map<std::string, InvalidSetting>& invalid) {
  for (;;) {
    absl::StatusOr<Settings> settings =
        Settings::FromEnvironment(minimpi::LibraryChoiceLists());
    if (settings.ok()) return *settings;
    std::string message(settings.status().message());
    // Errors name the variable first: "MINIMPI_X=value is not ...".
    std::string name = message.substr(0, message.find('='));
    const char* raw = std::getenv(name.c_str());
    if (raw == nullptr || invalid.count(name) > 0) {
      invalid["(settings)"] = {"", message};
      return Settings();
    }
    invalid[name] = {raw, message};
    unsetenv(name.c_str());
  }
}

// Returns false when the environment holds an invalid MINIMPI_* value:
// MPI_Init would refuse that environment.
bool PrintSettings() {
  PrintSection("Settings (environment variables, read once at MPI_Init):");
  std::map<std::string, InvalidSetting> invalid;
  Settings settings = ReadSettings(invalid);
  std::vector<SettingInfo> infos =
      DescribeSettings(settings, minimpi::LibraryChoiceLists());
  size_t name_width = 0;
  for (const SettingInfo& info : infos) {
    name_width = std::max(name_width, info.name.size());
  }
  for (const SettingInfo& info : infos) {
    auto bad = invalid.find(info.name);
    const std::string& value =
        bad == invalid.end() ? info.value : bad->second.raw_value;
    std::printf("  %-*s = %-8s (default %s)\n", static_cast<int>(name_width),
                info.name.c_str(), value.c_str(), info.default_value.c_str());
    std::printf("  %-*s   %s\n", static_cast<int>(name_width), "",
                info.description.c_str());
  }
  for (const auto& [name, setting] : invalid) {
    std::printf("  ERROR: %s\n", setting.error.c_str());
  }
  // Algorithm names belong to mpi/coll, which checks them at MPI_Init.
  absl::Status algorithms =
      minimpi::coll::ConfigureAlgorithms(settings.collective_algorithms);
  if (!algorithms.ok()) {
    std::printf("  ERROR: %s\n", std::string(algorithms.message()).c_str());
  }
  if (!invalid.empty() || !algorithms.ok()) {
    std::printf("  (MPI_Init fails in this environment)\n");
  }
  return invalid.empty() && algorithms.ok();
}

const char* PvarClassName(int var_class) {
  switch (var_class) {
    case MPI_T_PVAR_CLASS_STATE:
      return "state";
    case MPI_T_PVAR_CLASS_LEVEL:
      return "level";
    case MPI_T_PVAR_CLASS_SIZE:
      return "size";
    case MPI_T_PVAR_CLASS_PERCENTAGE:
      return "percentage";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK:
      return "highwatermark";
    case MPI_T_PVAR_CLASS_LOWWATERMARK:
      return "lowwatermark";
    case MPI_T_PVAR_CLASS_COUNTER:
      return "counter";
    case MPI_T_PVAR_CLASS_AGGREGATE:
      return "aggregate";
    case MPI_T_PVAR_CLASS_TIMER:
      return "timer";
    default:
      return "generic";
  }
}

const char* BindingName(int bind) {
  switch (bind) {
    case MPI_T_BIND_MPI_COMM:
      return "MPI_Comm";
    case MPI_T_BIND_MPI_REQUEST:
      return "MPI_Request";
    case MPI_T_BIND_MPI_WIN:
      return "MPI_Win";
    default:
      return "process";
  }
}

// The performance variables and events, as a tool sees them: through
// MPI_T itself (which needs no MPI_Init).
void PrintToolInterface() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
  int num = 0;
  MPI_T_pvar_get_num(&num);
  PrintSection(
      "Performance variables (MPI_T; counters and timers read from a "
      "handle's start):");
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, var_class = 0, bind = 0,
        continuous = 0;
    if (MPI_T_pvar_get_info(i, name, &name_len, nullptr, &var_class, nullptr,
                            nullptr, desc, &desc_len, &bind, nullptr,
                            &continuous, nullptr) != MPI_SUCCESS) {
      continue;
    }
    std::printf("  %-36s %-13s per %-11s%s\n", name, PvarClassName(var_class),
                BindingName(bind), continuous ? "" : " (start/stop)");
    std::printf("  %-36s %s\n", "", desc);
  }
  MPI_T_event_get_num(&num);
  PrintSection("Events (MPI_T; stamped by the steady clock in ns):");
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, bind = 0;
    if (MPI_T_event_get_info(i, name, &name_len, nullptr, nullptr, nullptr,
                             nullptr, nullptr, nullptr, desc, &desc_len,
                             &bind) != MPI_SUCCESS) {
      continue;
    }
    std::printf("  %-36s per %s\n", name, BindingName(bind));
    std::printf("  %-36s %s\n", "", desc);
  }
  MPI_T_finalize();
}

void PrintWrappers() {
  PrintSection("Compiler wrappers (mpicc, mpicxx):");
  std::printf("  MINIMPI_CC  = %-8s (default cc)  C compiler under mpicc\n",
              EnvOr("MINIMPI_CC", "cc").c_str());
  std::printf("  MINIMPI_CXX = %-8s (default c++) C++ compiler under mpicxx\n",
              EnvOr("MINIMPI_CXX", "c++").c_str());
}

void PrintTransports() {
  PrintSection(
      "Transports (MINIMPI_TRANSPORT; auto gives each pair of ranks one):");
  std::printf(
      "  shm  usable   ranks of one node: shared-memory rings, single copy "
      "with\n"
      "                process_vm_readv/writev; auto: pairs on one node\n");
  std::map<std::string, InvalidSetting> invalid;
  const Settings settings = ReadSettings(invalid);
  const absl::StatusOr<std::string> address =
      minimpi::net::tcp::ListenAddress(settings.tcp_interface);
  if (address.ok()) {
    std::printf(
        "  tcp  usable   any ranks over TCP/IP (one connection per pair of "
        "VCIs,\n"
        "                made on first use), listening on %s here; auto: "
        "pairs on\n                different nodes; tcp: every pair\n",
        address->c_str());
  } else {
    std::printf("  tcp  no       %s\n",
                std::string(address.status().message()).c_str());
  }
  std::string why;
  if (minimpi::net::ib::IbUsable(settings, &why)) {
    absl::StatusOr<std::unique_ptr<minimpi::net::ib::Verbs>> verbs =
        minimpi::net::ib::LoadVerbs(settings);
    absl::StatusOr<minimpi::net::ib::PortChoice> port =
        minimpi::net::ib::ChoosePort(**verbs, settings);
    std::printf(
        "  ib   usable   RDMA (RC queue pairs per pair of VCIs, made on first "
        "use)\n                on %s port %d (%s%s)%s; auto: pairs on "
        "different nodes\n",
        port->device.c_str(), int{port->port},
        port->ethernet ? "RoCE, GID index " : "InfiniBand, LID ",
        absl::StrCat(port->ethernet ? port->gid_index : port->lid).c_str(),
        settings.ib_test_device.empty() ? "" : " [software test device]");
    std::printf(
        "  Here: a job on one node uses shm; a job across nodes (srun -N 2) "
        "uses shm\n  inside each node and ib between them.\n");
  } else {
    std::printf("  ib   no       %s; auto: tcp instead\n", why.c_str());
    std::printf(
        "  Here: a job on one node uses shm; a job across nodes (srun -N 2) "
        "uses shm\n  inside each node and tcp between them.\n");
  }
}

// The waiting policy MPI_Init would choose here (mpi/vci/wait_policy.h),
// for a job that fits the cores and for one that oversubscribes them.
void PrintWaiting() {
  PrintSection("Waiting (MINIMPI_WAIT_*; the policy MPI_Init chooses here):");
  std::map<std::string, InvalidSetting> invalid;
  const Settings settings = ReadSettings(invalid);
  const int cores = minimpi::runtime::NumCores();
  const int threads = minimpi::vci::ThreadsPerRankFromEnvironment();
  for (int ranks : {1, cores + 1}) {
    const minimpi::vci::WaitPolicy policy = minimpi::vci::WaitPolicy::Choose(
        settings, cores, ranks, threads, /*has_doorbell=*/true);
    std::printf("  %d rank%s on this node: %s\n", ranks, ranks == 1 ? "" : "s",
                policy.Describe().c_str());
  }
  // What each rank of a job that MINIMPI_BIND_TO binds (a core each) does.
  const minimpi::vci::WaitPolicy bound = minimpi::vci::WaitPolicy::Choose(
      settings, 1, 1, threads, /*has_doorbell=*/true, /*own_core=*/true);
  std::printf("  a rank bound to a core of its own: %s\n",
              bound.Describe().c_str());
}

}  // namespace

int main() {
  char library_version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library_version, &length);
  int version = 0;
  int subversion = 0;
  MPI_Get_version(&version, &subversion);
  std::printf("%s\n", library_version);
  std::printf("MPI standard version: %d.%d\n", version, subversion);

  bool settings_valid = PrintSettings();
  PrintToolInterface();
  PrintWaiting();
  PrintWrappers();
  PrintTransports();

  PrintSection("Matching engines (MINIMPI_MATCH):");
  PrintChoices(minimpi::match::MatchEngineChoices());

  PrintSection(
      "Partitioned aggregators (MINIMPI_PART_AGGR, or the MPI_Info key "
      "minimpi_part_aggr of MPI_Psend_init):");
  PrintChoices(minimpi::part::AggregatorChoices());
  {
    const minimpi::part::LogGPParameters loggp = minimpi::part::DefaultLogGP();
    std::printf(
        "  built-in LogGP (MINIMPI_PART_LOGGP unset): L %.3f us, o_s %.3f us, "
        "o_r %.3f us, g %.3f us, G %.6f us/byte\n",
        loggp.latency_us, loggp.send_overhead_us, loggp.receive_overhead_us,
        loggp.gap_us, loggp.gap_per_byte_us);
  }

  PrintSection(
      "Partitioned backends (MINIMPI_PART_BACKEND, or the MPI_Info key "
      "minimpi_part_backend of MPI_Psend_init):");
  PrintChoices(minimpi::part::kBackends);

  PrintSection(
      "Collective algorithms (MINIMPI_COLL_<NAME>=<algorithm>, default "
      "auto: chosen by message and communicator size):");
  for (const minimpi::coll::CollectiveAlgorithms& entry :
       minimpi::coll::Registry()) {
    std::printf("  %s\n", entry.name);
    for (const minimpi::coll::Algorithm& algorithm : entry.algorithms) {
      std::printf("    %-20s %s\n", algorithm.name, algorithm.description);
    }
  }

  PrintSection("Threads:");
  std::printf(
      "  MPI_Init_thread provides the level asked for; every level is "
      "thread-safe inside\n");
  return settings_valid ? 0 : 1;
}
