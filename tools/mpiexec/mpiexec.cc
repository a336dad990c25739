// mpiexec (also installed as mpirun): starts N ranks of a program on this
// node under minimpi's own PMIx server, forwards their output (they inherit
// stdout and stderr), and supervises them. The job ends at the first failure
// - a rank that exits non-zero, is killed by a signal, leaves without
// finalizing, or calls MPI_Abort - with one line naming the rank and the
// cause; the other ranks get SIGTERM, then SIGKILL, so the launcher never
// hangs. A job that outlives its time limit (--timeout, or MPIEXEC_TIMEOUT
// as MPICH's and Open MPI's launchers read it) ends the same way. Its exit
// status is the failing rank's exit code, 128+signal, the abort code, or 124
// for the time limit; 0 when every rank succeeds.
//
// Inside a Slurm allocation of several nodes it starts nothing itself: it
// execs `srun --mpi=pmix -n N ...` (its options mapped, see PlanLaunch), as
// MPICH's Hydra hands the job to Slurm there. Outside one, asking for other
// hosts is an error that says to use srun.

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/mpiexec/launch_options.h"
#include "tools/mpiexec/pmix_job_server.h"

extern char** environ;

namespace minimpi::mpiexec {
namespace {

// How long ranks get to exit after SIGTERM before SIGKILL.
constexpr auto kTerminationGrace = std::chrono::seconds(2);
// Exit status of a job ended by its time limit, as timeout(1) uses.
constexpr int kTimeLimitExitCode = 124;

// Unix socket paths are limited to 108 bytes and PMIx appends its own file
// names, so a deep TMPDIR (as test runners set) falls back to /tmp.
constexpr size_t kMaxTmpdirLength = 60;

std::string program_name = "mpiexec";

void PrintError(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program_name.c_str(), message.c_str());
  std::fflush(stderr);
}

// Signals the supervisor waits for synchronously; they are blocked in every
// thread (the PMIx library's threads inherit the mask) and unblocked in the
// children before exec.
sigset_t SupervisedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// A private directory for the PMIx server's files, removed at exit.
class PrivateDirectory {
 public:
  static absl::StatusOr<PrivateDirectory> Create() {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string base = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    if (base.size() > kMaxTmpdirLength) base = "/tmp";
    std::string pattern = base + "/minimpi-mpiexec.XXXXXX";
    std::vector<char> path(pattern.begin(), pattern.end());
    path.push_back('\0');
    if (mkdtemp(path.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a directory under ", base, ": ",
                       std::strerror(errno)));
    }
    return PrivateDirectory(path.data());
  }
  PrivateDirectory(PrivateDirectory&& other) : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  PrivateDirectory& operator=(PrivateDirectory&&) = delete;
  ~PrivateDirectory() {
    if (path_.empty()) return;
    nftw(
        path_.c_str(),
        [](const char* path, const struct stat*, int, struct FTW*) {
          return remove(path);
        },
        16, FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }

 private:
  explicit PrivateDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Finds the executable the way execvp would, so a bad program is reported
// once, before any rank starts.
absl::StatusOr<std::string> ResolveProgram(const std::string& program) {
  auto check = [](const std::string& path) -> int {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) return errno;
    if (S_ISDIR(info.st_mode)) return EISDIR;
    if (access(path.c_str(), X_OK) != 0) return errno;
    return 0;
  };
  int error = ENOENT;
  if (program.find('/') != std::string::npos) {
    error = check(program);
    if (error == 0) return program;
  } else {
    const char* path_variable = std::getenv("PATH");
    std::string search_path =
        path_variable != nullptr ? path_variable : "/usr/bin:/bin";
    for (absl::string_view dir : absl::StrSplit(search_path, ':')) {
      std::string candidate =
          absl::StrCat(dir.empty() ? "." : dir, "/", program);
      int candidate_error = check(candidate);
      if (candidate_error == 0) return candidate;
      // Prefer "permission denied" over "not found", as a shell does.
      if (candidate_error != ENOENT && candidate_error != ENOTDIR) {
        error = candidate_error;
      }
    }
  }
  return absl::NotFoundError(
      absl::StrCat("cannot execute '", program, "': ", std::strerror(error)));
}

// The environment every rank starts from: ours, without any PMIx contact
// information we may have inherited (mpiexec run inside another job), plus
// the launcher's settings.
std::vector<std::string> BaseRankEnvironment(const LaunchOptions& options) {
  std::map<std::string, std::string> overrides;
  for (const auto& [name, value] : options.exported_variables) {
    overrides[name] = value;
  }
  if (!options.bind_to.empty()) overrides["MINIMPI_BIND_TO"] = options.bind_to;
  // -v: the library too says what it decided (a transport falling back).
  if (options.verbose) overrides["MINIMPI_VERBOSE"] = "1";
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string item(*entry);
    std::string name = item.substr(0, item.find('='));
    bool pmix_contact =
        name.rfind("PMIX_", 0) == 0 && name.rfind("PMIX_MCA_", 0) != 0;
    if (pmix_contact || overrides.count(name) > 0) continue;
    env.push_back(std::move(item));
  }
  for (const auto& [name, value] : overrides) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

// A NULL-terminated pointer array over strings that outlive it.
std::vector<char*> PointerArray(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

struct Rank {
  pid_t pid = -1;
  bool running = false;
  // The job it belongs to (spawned jobs have namespaces of their own) and
  // its rank there.
  std::string nspace;
  int job_rank = 0;
  bool spawned = false;
};

// Why the job ends early, and the status mpiexec exits with.
struct Failure {
  std::string message;
  int exit_code = 1;
};

// Exit codes are 8 bits; never let a failure wrap around to "success".
int NonZeroExitCode(int code) {
  int truncated = code & 0xff;
  return truncated != 0 ? truncated : 1;
}

class JobSupervisor {
 public:
  JobSupervisor(const LaunchOptions& options, PmixJobServer& server)
      : options_(options), server_(server) {}

  // Forks and execs every rank. On failure the ranks already started keep
  // running; the caller ends them with TerminateRunning.
  absl::Status StartRanks(const std::string& executable,
                          const std::vector<std::string>& base_env,
                          const std::string& nspace) {
    nspace_ = nspace;
    base_env_ = base_env;
    for (int r = 0; r < options_.num_ranks; ++r) {
      absl::Status status =
          StartProcess(executable, options_.command, base_env, "", nspace, r,
                       /*spawned=*/false, /*keep_stdin=*/r == 0);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // Forks and executes one process of job `nspace` (rank `rank` there).
  absl::Status StartProcess(const std::string& executable,
                            const std::vector<std::string>& arguments,
                            const std::vector<std::string>& job_env,
                            const std::string& cwd, const std::string& nspace,
                            int rank, bool spawned, bool keep_stdin) {
    std::vector<std::string> argv_strings = arguments;
    std::vector<char*> argv = PointerArray(argv_strings);
    sigset_t empty;
    sigemptyset(&empty);
    const pid_t launcher_pid = getpid();
    std::vector<std::string> env = job_env;
    absl::Status status = server_.AddClientEnvironment(nspace, rank, &env);
    if (!status.ok()) return status;
    std::vector<char*> envp = PointerArray(env);
    std::string exec_error =
        absl::StrCat(program_name, ": ", spawned ? "spawned " : "", "rank ",
                     rank, ": cannot execute '", executable, "'\n");
    std::string cwd_error =
        absl::StrCat(program_name, ": ", spawned ? "spawned " : "", "rank ",
                     rank, ": cannot enter directory '", cwd, "'\n");
    pid_t pid = fork();
    if (pid < 0) {
      return absl::InternalError(
          absl::StrCat("fork failed: ", std::strerror(errno)));
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &empty, nullptr);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher_pid) _exit(127);
      if (!keep_stdin) {
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0) {
          dup2(null_fd, STDIN_FILENO);
          close(null_fd);
        }
      }
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
        ssize_t ignored =
            write(STDERR_FILENO, cwd_error.data(), cwd_error.size());
        (void)ignored;
        _exit(127);
      }
      execve(executable.c_str(), argv.data(), envp.data());
      ssize_t ignored =
          write(STDERR_FILENO, exec_error.data(), exec_error.size());
      (void)ignored;
      _exit(127);
    }
    Rank process;
    process.pid = pid;
    process.running = true;
    process.nspace = nspace;
    process.job_rank = rank;
    process.spawned = spawned;
    ranks_.push_back(std::move(process));
    ++running_;
    return absl::OkStatus();
  }

  // Serves the spawn requests the PMIx server queued (MPI_Comm_spawn): a new
  // namespace per request, registered, its processes started, then the
  // answer. A failure answers the parent with an error and starts nothing
  // more; the parent's MPI_Comm_spawn reports it.
  void ServeSpawnRequests() {
    for (const SpawnRequest& request : server_.TakeSpawnRequests()) {
      const std::string nspace =
          absl::StrCat(nspace_, ".spawn", ++spawned_jobs_);
      std::vector<int> appnum_of_rank;
      std::vector<std::string> executables;
      absl::Status status;
      for (size_t a = 0; a < request.apps.size() && status.ok(); ++a) {
        // A relative path names a file in the directory the processes
        // start in (the parent's, unless it asked for another).
        const SpawnApp& app = request.apps[a];
        const bool relative_path = app.command.find('/') != std::string::npos &&
                                   app.command[0] != '/' && !app.cwd.empty();
        absl::StatusOr<std::string> executable = ResolveProgram(
            relative_path ? absl::StrCat(app.cwd, "/", app.command)
                          : app.command);
        if (!executable.ok()) {
          status = executable.status();
          break;
        }
        executables.push_back(*executable);
        appnum_of_rank.insert(appnum_of_rank.end(), request.apps[a].maxprocs,
                              static_cast<int>(a));
      }
      if (status.ok()) {
        status = server_.RegisterJob(
            nspace, static_cast<int>(appnum_of_rank.size()), appnum_of_rank);
      }
      int rank = 0;
      for (size_t a = 0; a < request.apps.size() && status.ok(); ++a) {
        const SpawnApp& app = request.apps[a];
        std::vector<std::string> env = base_env_;
        for (const std::string& entry : app.env) env.push_back(entry);
        for (int copy = 0; copy < app.maxprocs && status.ok(); ++copy) {
          status = StartProcess(executables[a], app.argv, env, app.cwd, nspace,
                                rank++, /*spawned=*/true,
                                /*keep_stdin=*/false);
        }
      }
      if (!status.ok()) {
        PrintError(absl::StrCat("cannot spawn the processes ",
                                request.parent_nspace,
                                " asked for: ", status.message()));
      } else if (options_.verbose) {
        PrintError(
            absl::StrCat("spawned ", rank, " processes as job ", nspace));
      }
      PmixJobServer::AnswerSpawn(request, status.ok(), nspace);
    }
  }

  int Supervise() {
    sigset_t signals = SupervisedSignals();
    const timespec poll_interval = {0, 50 * 1000 * 1000};
    const std::optional<std::chrono::steady_clock::time_point> deadline =
        options_.timeout_seconds > 0
            ? std::optional(std::chrono::steady_clock::now() +
                            std::chrono::seconds(options_.timeout_seconds))
            : std::nullopt;
    std::optional<Failure> failure;
    while (running_ > 0 && !failure.has_value()) {
      siginfo_t info;
      int sig = sigtimedwait(&signals, &info, &poll_interval);
      if (deadline.has_value() &&
          std::chrono::steady_clock::now() >= *deadline) {
        failure = Failure{
            absl::StrCat("the job ran past its time limit of ",
                         options_.timeout_seconds,
                         " s (--timeout or MPIEXEC_TIMEOUT); terminating it"),
            kTimeLimitExitCode};
        break;
      }
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        failure =
            Failure{absl::StrCat("received signal ", sig, " (", strsignal(sig),
                                 "); terminating the job"),
                    128 + sig};
        break;
      }
      // Reap first, then look for an abort: a rank's abort is recorded
      // before it is released to exit, so an exit seen here is never
      // mistaken for the cause when an abort preceded it.
      ServeSpawnRequests();
      std::vector<std::pair<int, int>> exited = ReapExited();
      if (std::optional<AbortRequest> abort = server_.FirstAbort()) {
        failure = Failure{
            absl::StrCat(abort->nspace == nspace_ ? "" : "spawned ", "rank ",
                         abort->rank, " called MPI_Abort(errorcode ",
                         abort->error_code, "): ", abort->message),
            NonZeroExitCode(abort->error_code)};
        break;
      }
      for (const auto& [rank, status] : exited) {
        failure = ClassifyExit(rank, status);
        if (failure.has_value()) break;
      }
    }
    if (failure.has_value()) {
      PrintError(failure->message);
      TerminateRunning();
      return failure->exit_code;
    }
    return 0;
  }

  // Ends every rank still running: SIGTERM, then SIGKILL after a grace
  // period. Returns once all are reaped.
  void TerminateRunning() {
    for (const Rank& rank : ranks_) {
      if (rank.running) kill(rank.pid, SIGTERM);
    }
    auto deadline = std::chrono::steady_clock::now() + kTerminationGrace;
    while (running_ > 0 && std::chrono::steady_clock::now() < deadline) {
      ReapExited();
      if (running_ > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    for (const Rank& rank : ranks_) {
      if (rank.running) kill(rank.pid, SIGKILL);
    }
    while (running_ > 0) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, 0);
      if (pid < 0) break;
      MarkExited(pid);
    }
  }

 private:
  // Returns the (rank, wait status) of every child that has exited.
  std::vector<std::pair<int, int>> ReapExited() {
    std::vector<std::pair<int, int>> exited;
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      int rank = MarkExited(pid);
      if (rank >= 0) exited.emplace_back(rank, status);
    }
    return exited;
  }

  int MarkExited(pid_t pid) {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      if (ranks_[r].pid == pid && ranks_[r].running) {
        ranks_[r].running = false;
        --running_;
        return r;
      }
    }
    return -1;
  }

  std::optional<Failure> ClassifyExit(int rank, int status) {
    pid_t pid = ranks_[rank].pid;
    const Rank& process = ranks_[rank];
    std::string who =
        process.spawned
            ? absl::StrCat("rank ", process.job_rank, " of spawned job ",
                           process.nspace, " (pid ", pid, ")")
            : absl::StrCat("rank ", rank, " (pid ", pid, ")");
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      return Failure{absl::StrCat(who, " was killed by signal ", sig, " (",
                                  strsignal(sig), "); terminating the job"),
                     128 + sig};
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      int code = WEXITSTATUS(status);
      return Failure{absl::StrCat(who, " exited with code ", code,
                                  "; terminating the job"),
                     code};
    }
    RankReport report = server_.Report(process.nspace, process.job_rank);
    if (process.spawned && !report.connected) {
      // Its parents wait in MPI_Comm_spawn until every child has called
      // MPI_Init: waiting on would be forever.
      return Failure{absl::StrCat(who,
                                  " exited without calling MPI_Init, which "
                                  "its parents' MPI_Comm_spawn waits for; "
                                  "terminating the job"),
                     1};
    }
    if (report.connected && !report.finalized) {
      return Failure{absl::StrCat(who,
                                  " exited without calling MPI_Finalize; "
                                  "terminating the job"),
                     1};
    }
    return std::nullopt;
  }

  const LaunchOptions& options_;
  PmixJobServer& server_;
  // Every process started: the job's ranks first (index = rank), then the
  // spawned ones as they come.
  std::vector<Rank> ranks_;
  int running_ = 0;
  std::string nspace_;
  std::vector<std::string> base_env_;
  int spawned_jobs_ = 0;
};

// This node's names: its hostname and, for a qualified one, the short name
// ("localhost" PlanLaunch knows).
std::vector<std::string> LocalNames() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  std::string full = name;
  std::vector<std::string> names = {full};
  if (size_t dot = full.find('.'); dot != std::string::npos) {
    names.push_back(full.substr(0, dot));
  }
  return names;
}

// A word of the srun line as a shell would need it, for -v.
std::string ShellQuote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                             "WXYZ0123456789-_=./,:+@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// Replaces mpiexec with srun; returns only when exec fails.
int ExecSrun(const LaunchPlan& plan, bool verbose) {
  for (const auto& [name, value] : plan.srun_variables) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  // srun passes our environment on to every rank.
  if (verbose) setenv("MINIMPI_VERBOSE", "1", 1);
  if (verbose) {
    std::vector<std::string> words;
    for (const auto& [name, value] : plan.srun_variables) {
      words.push_back(ShellQuote(absl::StrCat(name, "=", value)));
    }
    for (const std::string& word : plan.srun_command) {
      words.push_back(ShellQuote(word));
    }
    const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
    if (nodes == nullptr) nodes = std::getenv("SLURM_NNODES");
    PrintError(absl::StrCat("in Slurm job ", std::getenv("SLURM_JOB_ID"), " (",
                            nodes != nullptr ? nodes : "?",
                            " nodes): ", absl::StrJoin(words, " ")));
  }
  std::vector<std::string> argv_strings = plan.srun_command;
  std::vector<char*> argv = PointerArray(argv_strings);
  execvp(argv[0], argv.data());
  PrintError(
      absl::StrCat("cannot run srun to start the job across the "
                   "allocation's nodes: ",
                   std::strerror(errno)));
  return 127;
}

// A namespace unique on this node: concurrent jobs name shared memory after
// it.
std::string MakeNamespace() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return absl::StrCat(
      "minimpi.", getpid(), ".",
      absl::Hex(static_cast<uint64_t>(now.tv_sec) * 1000000000u +
                static_cast<uint64_t>(now.tv_nsec)));
}

int Run(int argc, char** argv) {
  if (argc > 0 && argv[0] != nullptr) {
    std::string invoked = argv[0];
    program_name = invoked.substr(invoked.find_last_of('/') + 1);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<LaunchOptions> options = ParseLaunchOptions(
      args, [](const char* name) { return std::getenv(name); });
  if (!options.ok()) {
    PrintError(std::string(options.status().message()));
    std::fprintf(stderr, "%s", UsageText(program_name).c_str());
    return 2;
  }
  if (options->show_help) {
    std::printf("%s", UsageText(program_name).c_str());
    return 0;
  }
  std::vector<std::string> hostfile_hosts;
  if (!options->hostfile.empty()) {
    std::ifstream file(options->hostfile);
    if (!file) {
      PrintError(absl::StrCat("cannot read hostfile '", options->hostfile,
                              "': ", std::strerror(errno)));
      return 2;
    }
    std::stringstream contents;
    contents << file.rdbuf();
    hostfile_hosts = ParseHostfile(contents.str());
  }
  absl::StatusOr<LaunchPlan> plan = PlanLaunch(
      *options,
      SlurmAllocationFrom([](const char* name) { return std::getenv(name); }),
      hostfile_hosts, LocalNames());
  if (!plan.ok()) {
    PrintError(std::string(plan.status().message()));
    return 2;
  }
  if (plan->use_srun) return ExecSrun(*plan, options->verbose);
  if (options->verbose) {
    PrintError(
        absl::StrCat("starting ", options->num_ranks, " ranks on this node"));
  }
  absl::StatusOr<std::string> executable = ResolveProgram(options->command[0]);
  if (!executable.ok()) {
    PrintError(std::string(executable.status().message()));
    return 127;
  }

  // Block before the PMIx library starts its threads so they inherit it.
  sigset_t signals = SupervisedSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<PrivateDirectory> directory = PrivateDirectory::Create();
  if (!directory.ok()) {
    PrintError(std::string(directory.status().message()));
    return 1;
  }
  int exit_code = 0;
  {
    absl::StatusOr<std::unique_ptr<PmixJobServer>> server =
        PmixJobServer::Start(directory->path());
    if (!server.ok()) {
      PrintError(std::string(server.status().message()));
      return 1;
    }
    const std::string nspace = MakeNamespace();
    absl::Status status = (*server)->RegisterJob(nspace, options->num_ranks);
    if (!status.ok()) {
      PrintError(std::string(status.message()));
      (*server)->Abandon();
      return 1;
    }
    JobSupervisor supervisor(*options, **server);
    status = supervisor.StartRanks(*executable, BaseRankEnvironment(*options),
                                   nspace);
    if (!status.ok()) {
      PrintError(std::string(status.message()));
      supervisor.TerminateRunning();
      (*server)->Abandon();
      return 1;
    }
    exit_code = supervisor.Supervise();
    if (exit_code != 0) (*server)->Abandon();
  }
  return exit_code;
}

}  // namespace
}  // namespace minimpi::mpiexec

// Sanitizer builds: libpmix is not instrumented and PMIx 4.2's server has
// races and a use-after-free of its own when clients die mid-collective
// (the reason for PmixJobServer::Abandon); report only minimpi's bugs.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libpmix.so\nrace:libevent\n";
}
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\n";
}

// _exit, not exit: after a failed job the PMIx library's threads are still
// running (see PmixJobServer::Abandon), and global destructors must not run
// under them. Run has already released everything it owns.
int main(int argc, char** argv) {
  int exit_code = minimpi::mpiexec::Run(argc, argv);
  std::fflush(nullptr);
  _exit(exit_code);
}
