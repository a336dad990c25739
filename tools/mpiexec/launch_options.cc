#include "tools/mpiexec/launch_options.h"

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace minimpi::mpiexec {
namespace {

// More ranks than this on one node is surely a typo, not a request.
constexpr int kMaxRanks = 4096;

// A job time limit: whole seconds, 0 meaning none.
absl::StatusOr<int> ParseTimeout(absl::string_view source,
                                 absl::string_view value) {
  int seconds = 0;
  if (!absl::SimpleAtoi(value, &seconds) || seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", source, " '", value,
                     "' (expected whole seconds, 0 for no limit)"));
  }
  return seconds;
}

bool IsValidVariableName(absl::string_view name) {
  if (name.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

// "node1:2" (MPICH's host:count, Open MPI's host:slots) -> "node1".
std::string HostName(absl::string_view entry) {
  return std::string(entry.substr(0, entry.find(':')));
}

bool IsLocal(const std::string& host,
             const std::vector<std::string>& local_names) {
  if (host == "localhost" || host == "127.0.0.1") return true;
  for (const std::string& name : local_names) {
    if (host == name) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<LaunchOptions> ParseLaunchOptions(
    const std::vector<std::string>& args, const EnvironmentLookup& lookup) {
  LaunchOptions options;
  bool have_count = false;
  if (const char* timeout = lookup("MPIEXEC_TIMEOUT");
      timeout != nullptr && *timeout != '\0') {
    absl::StatusOr<int> seconds = ParseTimeout("MPIEXEC_TIMEOUT", timeout);
    if (!seconds.ok()) return seconds.status();
    options.timeout_seconds = *seconds;
  }
  size_t i = 0;
  // Returns the value of option args[i], either glued ("--bind-to=core") or
  // the next argument; advances i past what it used.
  auto take_value =
      [&](absl::string_view option,
          absl::string_view glued) -> absl::StatusOr<std::string> {
    if (!glued.empty()) return std::string(glued);
    if (i + 1 >= args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("option ", option, " needs a value"));
    }
    ++i;
    return args[i];
  };

  for (; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program

    absl::string_view name = arg;
    absl::string_view glued;
    if (size_t eq = arg.find('=');
        arg.substr(0, 2) == "--" && eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      glued = arg.substr(eq + 1);
      if (glued.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option ", name, " needs a value"));
      }
    }

    if (name == "-h" || name == "--help") {
      options.show_help = true;
      return options;
    } else if (name == "-n" || name == "-np" || name == "--n" ||
               name == "--np") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      int count = 0;
      if (!absl::SimpleAtoi(*value, &count) || count < 1 || count > kMaxRanks) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid number of ranks '", *value, "' (expected 1..",
                         kMaxRanks, ")"));
      }
      options.num_ranks = count;
      have_count = true;
    } else if (name == "--bind-to" || name == "-bind-to") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      if (*value != "core" && *value != "none") {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid --bind-to '", *value, "' (expected core or none)"));
      }
      options.bind_to = *value;
    } else if (name == "--timeout" || name == "-timeout") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      absl::StatusOr<int> seconds = ParseTimeout("--timeout", *value);
      if (!seconds.ok()) return seconds.status();
      options.timeout_seconds = *seconds;
    } else if (name == "-host" || name == "-hosts" || name == "--host" ||
               name == "--hosts" || name == "-H") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      for (absl::string_view entry :
           absl::StrSplit(*value, ',', absl::SkipWhitespace())) {
        options.hosts.push_back(HostName(absl::StripAsciiWhitespace(entry)));
      }
      if (options.hosts.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option ", name, " needs at least one host"));
      }
      if (options.host_option.empty()) {
        options.host_option = absl::StrCat(name, " ", *value);
      }
    } else if (name == "-f" || name == "-hostfile" || name == "--hostfile" ||
               name == "-machinefile" || name == "--machinefile" ||
               name == "--default-hostfile") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      options.hostfile = *value;
      if (options.host_option.empty()) {
        options.host_option = absl::StrCat(name, " ", *value);
      }
    } else if (name == "-ppn" || name == "--ppn" || name == "-npernode" ||
               name == "--npernode") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      int count = 0;
      if (!absl::SimpleAtoi(*value, &count) || count < 1 || count > kMaxRanks) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid ", name, " '", *value, "' (expected 1..", kMaxRanks, ")"));
      }
      options.ranks_per_node = count;
    } else if (name == "-v" || name == "--verbose") {
      options.verbose = true;
    } else if (name == "-x") {
      absl::StatusOr<std::string> value = take_value(name, glued);
      if (!value.ok()) return value.status();
      size_t eq = value->find('=');
      std::string variable = value->substr(0, eq);
      if (!IsValidVariableName(variable)) {
        return absl::InvalidArgumentError(
            absl::StrCat("-x: invalid variable name '", variable, "'"));
      }
      if (eq != std::string::npos) {
        options.exported_variables.emplace_back(variable,
                                                value->substr(eq + 1));
      } else if (const char* current = lookup(variable.c_str());
                 current != nullptr) {
        options.exported_variables.emplace_back(variable, current);
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", arg, "'"));
    }
  }

  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i),
                         args.end());
  if (options.command.empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  if (!have_count) {
    return absl::InvalidArgumentError("the number of ranks is required (-n N)");
  }
  return options;
}

SlurmAllocation SlurmAllocationFrom(
    const std::function<const char*(const char*)>& lookup) {
  auto set = [&](const char* name) {
    const char* value = lookup(name);
    return value != nullptr && *value != '\0';
  };
  SlurmAllocation allocation;
  allocation.in_job = set("SLURM_JOB_ID");
  allocation.in_step = set("SLURM_STEP_ID");
  for (const char* name : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
    int nodes = 0;
    if (set(name) && absl::SimpleAtoi(lookup(name), &nodes)) {
      allocation.num_nodes = nodes;
      break;
    }
  }
  return allocation;
}

std::vector<std::string> ParseHostfile(const std::string& contents) {
  std::vector<std::string> hosts;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (!words.empty()) hosts.push_back(HostName(words[0]));
  }
  return hosts;
}

absl::StatusOr<LaunchPlan> PlanLaunch(
    const LaunchOptions& options, const SlurmAllocation& allocation,
    const std::vector<std::string>& hostfile_hosts,
    const std::vector<std::string>& local_names) {
  std::vector<std::string> hosts = options.hosts;
  hosts.insert(hosts.end(), hostfile_hosts.begin(), hostfile_hosts.end());
  LaunchPlan plan;
  if (allocation.MultiNode()) {
    // As MPICH's Hydra does inside an allocation: Slurm starts the ranks on
    // the allocation's nodes and gives each its PMIx server. --overcommit:
    // mpiexec starts N ranks whatever the cores, and an `salloc -N 2` holds
    // one CPU per node; --kill-on-bad-exit: one failing rank ends the job,
    // as mpiexec ends it on one node.
    plan.use_srun = true;
    plan.srun_command = {"srun",         "--mpi=pmix",
                         "--overcommit", "--kill-on-bad-exit=1",
                         "-n",           absl::StrCat(options.num_ranks)};
    if (!hosts.empty()) {
      // Duplicates (a host listed once per slot) name one node once.
      std::vector<std::string> unique;
      for (const std::string& host : hosts) {
        bool seen = false;
        for (const std::string& u : unique) seen = seen || u == host;
        if (!seen) unique.push_back(host);
      }
      plan.srun_command.push_back(
          absl::StrCat("--nodelist=", absl::StrJoin(unique, ",")));
      plan.srun_command.push_back(absl::StrCat("--nodes=", unique.size()));
    }
    if (options.ranks_per_node > 0) {
      plan.srun_command.push_back(
          absl::StrCat("--ntasks-per-node=", options.ranks_per_node));
    }
    if (options.timeout_seconds > 0) {
      // minutes:seconds; Slurm enforces it to within its own polling period
      // (about a minute), not to the second as mpiexec does on one node.
      plan.srun_command.push_back(
          absl::StrCat("--time=", options.timeout_seconds / 60, ":",
                       options.timeout_seconds % 60));
    }
    plan.srun_variables = options.exported_variables;
    if (!options.bind_to.empty()) {
      plan.srun_variables.emplace_back("MINIMPI_BIND_TO", options.bind_to);
    }
    plan.srun_command.insert(plan.srun_command.end(), options.command.begin(),
                             options.command.end());
    return plan;
  }

  const std::string advice =
      "minimpi's mpiexec starts ranks on this node only; to run across "
      "nodes, use srun --mpi=pmix inside a Slurm allocation (salloc -N 2)";
  for (const std::string& host : hosts) {
    if (!IsLocal(host, local_names)) {
      return absl::FailedPreconditionError(absl::StrCat(
          options.host_option,
          host != options.host_option.substr(options.host_option.find(' ') + 1)
              ? absl::StrCat(" (host ", host, ")")
              : "",
          ": ", advice));
    }
  }
  if (options.ranks_per_node > 0 &&
      options.ranks_per_node < options.num_ranks) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.num_ranks, " ranks at ", options.ranks_per_node,
                     " per node need several nodes: ", advice));
  }
  return plan;
}

std::string UsageText(const std::string& program) {
  return absl::StrCat(
      "usage: ", program,
      " -n N [--bind-to core|none] [--timeout S] [-x VAR[=value]]...\n"
      "       [--] program [args...]\n"
      "  -n, -np N           start N ranks of program on this node\n"
      "  --bind-to core      bind each rank to one core (sets "
      "MINIMPI_BIND_TO=core)\n"
      "  --bind-to none      do not bind (sets MINIMPI_BIND_TO=none)\n"
      "                      default: bind each rank to a core of its own\n"
      "                      when 2 or more ranks fit on the cores, unless\n"
      "                      OMP_NUM_THREADS is over 1 or the program asks\n"
      "                      for MPI_THREAD_MULTIPLE (MINIMPI_BIND_TO=auto;\n"
      "                      under srun, Slurm's --cpu-bind decides)\n"
      "  --timeout S         end the job after S seconds (default: "
      "MPIEXEC_TIMEOUT,\n"
      "                      else no limit)\n"
      "  -x VAR=value        set VAR for every rank\n"
      "  -x VAR              forward this launcher's value of VAR\n"
      "  -host, --host H[,H] only this node (localhost or its name); other\n"
      "  -f, -hostfile F     hosts are an error outside a Slurm allocation\n"
      "  -ppn, --npernode K  ranks per node (across nodes: see below)\n"
      "  -v, --verbose       say how the job starts (the srun line)\n"
      "  -h, --help          show this help\n"
      "Inside a Slurm allocation of several nodes (salloc -N 2, sbatch -N 2),\n"
      "mpiexec hands the job to srun --mpi=pmix, which starts the ranks on "
      "every node;\nhosts become --nodelist, -ppn --ntasks-per-node.\n"
      "Exit status: 0 when every rank succeeds; otherwise the failing rank's "
      "exit code,\n128+signal when it was killed, the MPI_Abort error "
      "code, or 124 when the\ntime limit ended the job.\n");
}

}  // namespace minimpi::mpiexec
