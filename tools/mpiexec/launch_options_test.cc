// Tests of mpiexec's command-line parsing.

#include "tools/mpiexec/launch_options.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::mpiexec {
namespace {

using Args = std::vector<std::string>;
using Variables = std::vector<std::pair<std::string, std::string>>;

absl::StatusOr<LaunchOptions> Parse(const Args& args) {
  static const std::map<std::string, std::string> environment = {
      {"HOME_DIR", "/home/me"}};
  return ParseLaunchOptions(args, [](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchOptionsTest, ParsesCountAndCommand) {
  auto options = Parse({"-n", "4", "./prog", "-n", "7", "--flag"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_ranks, 4);
  EXPECT_EQ(options->bind_to, "");  // the library's MINIMPI_BIND_TO decides
  // Options after the program belong to the program.
  EXPECT_EQ(options->command, (Args{"./prog", "-n", "7", "--flag"}));
}

TEST(LaunchOptionsTest, AcceptsNpAndGluedLongOptions) {
  auto options = Parse({"-np", "2", "--bind-to=core", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_ranks, 2);
  EXPECT_EQ(options->bind_to, "core");
  options = Parse({"--np=3", "--bind-to", "none", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_ranks, 3);
  EXPECT_EQ(options->bind_to, "none");
}

TEST(LaunchOptionsTest, DoubleDashEndsOptions) {
  auto options = Parse({"-n", "1", "--", "-weird-name", "arg"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, (Args{"-weird-name", "arg"}));
}

TEST(LaunchOptionsTest, ExportsVariables) {
  auto options = Parse({"-x", "A=1", "-x", "B=", "-x", "HOME_DIR", "-x",
                        "UNSET_VAR", "-n", "1", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->exported_variables,
            (Variables{{"A", "1"}, {"B", ""}, {"HOME_DIR", "/home/me"}}));
}

TEST(LaunchOptionsTest, RejectsBadInput) {
  for (const Args& args : std::vector<Args>{
           {"prog"},                  // no -n
           {"-n", "2"},               // no program
           {"-n"},                    // missing value
           {"-n", "0", "prog"},       // not positive
           {"-n", "two", "prog"},     // not a number
           {"-n", "100000", "prog"},  // absurd
           {"--bind-to", "socket", "-n", "1", "prog"},
           {"-x", "1BAD=2", "-n", "1", "prog"},
           {"-x", "=2", "-n", "1", "prog"},
           {"--frobnicate", "-n", "1", "prog"},
           {"--np=", "prog"},
           {"--timeout", "-1", "-n", "1", "prog"},
           {"--timeout", "soon", "-n", "1", "prog"},
       }) {
    auto options = Parse(args);
    EXPECT_FALSE(options.ok()) << "accepted: " << args[0];
    if (!options.ok()) {
      EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_FALSE(options.status().message().empty());
    }
  }
}

TEST(LaunchOptionsTest, TimeoutFromOptionOrEnvironment) {
  auto options = Parse({"-n", "1", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->timeout_seconds, 0);  // no limit by default
  options = Parse({"--timeout", "30", "-n", "1", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->timeout_seconds, 30);

  // MPIEXEC_TIMEOUT, as MPICH's and Open MPI's launchers read it; the
  // option wins over it.
  std::map<std::string, std::string> environment = {{"MPIEXEC_TIMEOUT", "7"}};
  auto lookup = [&environment](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  };
  options = ParseLaunchOptions({"-n", "1", "prog"}, lookup);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->timeout_seconds, 7);
  options = ParseLaunchOptions({"--timeout=9", "-n", "1", "prog"}, lookup);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->timeout_seconds, 9);
  environment["MPIEXEC_TIMEOUT"] = "later";
  options = ParseLaunchOptions({"-n", "1", "prog"}, lookup);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("MPIEXEC_TIMEOUT"),
            std::string::npos);
}

TEST(LaunchOptionsTest, ParsesHostOptionsInEverySpelling) {
  for (const char* spelling : {"-host", "-hosts", "--host", "--hosts", "-H"}) {
    auto options = Parse({spelling, "node1:2,node2", "-n", "4", "prog"});
    ASSERT_TRUE(options.ok()) << spelling << ": " << options.status();
    EXPECT_EQ(options->hosts, (Args{"node1", "node2"})) << spelling;
    EXPECT_EQ(options->host_option, std::string(spelling) + " node1:2,node2");
  }
  auto options = Parse({"--host=a,b", "-n", "2", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->hosts, (Args{"a", "b"}));
  for (const char* spelling :
       {"-f", "-hostfile", "--hostfile", "-machinefile", "--machinefile"}) {
    options = Parse({spelling, "/tmp/hosts", "-n", "4", "prog"});
    ASSERT_TRUE(options.ok()) << spelling << ": " << options.status();
    EXPECT_EQ(options->hostfile, "/tmp/hosts") << spelling;
  }
  for (const char* spelling : {"-ppn", "--ppn", "-npernode", "--npernode"}) {
    options = Parse({spelling, "2", "-n", "4", "prog"});
    ASSERT_TRUE(options.ok()) << spelling << ": " << options.status();
    EXPECT_EQ(options->ranks_per_node, 2) << spelling;
  }
  options = Parse({"-v", "-n", "1", "prog"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->verbose);
  for (const Args& args : std::vector<Args>{
           {"-host", "-n", "1", "prog"},  // "-n" is taken as the host list...
           {"-host", ",", "-n", "1", "prog"},
           {"-ppn", "0", "-n", "1", "prog"},
           {"-ppn", "x", "-n", "1", "prog"},
           {"-n", "1", "prog", "-host"},  // fine: the program's argument
       }) {
    auto parsed = Parse(args);
    if (args.back() == "-host") {
      EXPECT_TRUE(parsed.ok()) << parsed.status();
    } else {
      EXPECT_FALSE(parsed.ok()) << "accepted: " << args[0] << " " << args[1];
    }
  }
}

TEST(LaunchOptionsTest, ParsesHostfilesOfMpichAndOpenMpi) {
  EXPECT_EQ(ParseHostfile("# cluster\nnode1:2\n\n  node2 slots=4 # big\n"
                          "node3\r\n"),
            (Args{"node1", "node2", "node3"}));
  EXPECT_TRUE(ParseHostfile("").empty());
  EXPECT_TRUE(ParseHostfile("# nothing\n   \n").empty());
}

SlurmAllocation AllocationOf(const std::map<std::string, std::string>& env) {
  return SlurmAllocationFrom([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchOptionsTest, ReadsTheSlurmAllocation) {
  EXPECT_FALSE(AllocationOf({}).MultiNode());
  EXPECT_FALSE(
      AllocationOf({{"SLURM_JOB_ID", "7"}, {"SLURM_NNODES", "1"}}).MultiNode());
  EXPECT_TRUE(
      AllocationOf({{"SLURM_JOB_ID", "7"}, {"SLURM_NNODES", "2"}}).MultiNode());
  EXPECT_TRUE(
      AllocationOf({{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NUM_NODES", "3"}})
          .MultiNode());
  // Node count without a job (a stale variable) is no allocation.
  EXPECT_FALSE(AllocationOf({{"SLURM_NNODES", "2"}}).MultiNode());
  // Already a task of a step (srun -N 2 mpiexec ...): stay on this node.
  EXPECT_FALSE(AllocationOf({{"SLURM_JOB_ID", "7"},
                             {"SLURM_NNODES", "2"},
                             {"SLURM_STEP_ID", "0"}})
                   .MultiNode());
}

absl::StatusOr<LaunchPlan> Plan(const Args& args,
                                const SlurmAllocation& allocation,
                                const Args& hostfile_hosts = {}) {
  auto options = Parse(args);
  if (!options.ok()) return options.status();
  return PlanLaunch(*options, allocation, hostfile_hosts,
                    {"vm.example.org", "vm"});
}

TEST(LaunchOptionsTest, HandsAMultiNodeJobToSrun) {
  SlurmAllocation two_nodes{true, false, 2};
  auto plan = Plan({"-n", "4", "./prog", "a"}, two_nodes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->use_srun);
  EXPECT_EQ(plan->srun_command,
            (Args{"srun", "--mpi=pmix", "--overcommit", "--kill-on-bad-exit=1",
                  "-n", "4", "./prog", "a"}));
  EXPECT_TRUE(plan->srun_variables.empty());

  plan = Plan({"-v", "-n", "6", "-host", "node1,node2,node1", "-ppn", "3",
               "--timeout", "90", "--bind-to", "core", "-x", "A=1", "prog"},
              two_nodes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->srun_command,
            (Args{"srun", "--mpi=pmix", "--overcommit", "--kill-on-bad-exit=1",
                  "-n", "6", "--nodelist=node1,node2", "--nodes=2",
                  "--ntasks-per-node=3", "--time=1:30", "prog"}));
  EXPECT_EQ(plan->srun_variables,
            (Variables{{"A", "1"}, {"MINIMPI_BIND_TO", "core"}}));

  plan = Plan({"-f", "hosts", "-n", "2", "prog"}, two_nodes, {"node2"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->srun_command[6], "--nodelist=node2");
}

TEST(LaunchOptionsTest, OtherHostsOutsideAnAllocationNameSrun) {
  for (const SlurmAllocation& allocation :
       {SlurmAllocation{}, SlurmAllocation{true, false, 1},
        SlurmAllocation{true, true, 2}}) {
    auto plan = Plan({"-host", "node2", "-n", "2", "prog"}, allocation);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().message(),
              "-host node2: minimpi's mpiexec starts ranks on this node only; "
              "to run across nodes, use srun --mpi=pmix inside a Slurm "
              "allocation (salloc -N 2)");
    plan = Plan({"--hostfile", "h", "-n", "2", "prog"}, allocation,
                {"vm", "node2"});
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.status().message().find("--hostfile h (host node2): "),
              std::string::npos)
        << plan.status();
    plan = Plan({"-ppn", "2", "-n", "4", "prog"}, allocation);
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.status().message().find("srun --mpi=pmix"),
              std::string::npos);
  }
}

TEST(LaunchOptionsTest, ThisNodeAloneRunsHere) {
  for (const Args& args : std::vector<Args>{
           {"-n", "2", "prog"},
           {"-host", "localhost", "-n", "2", "prog"},
           {"-host", "vm:2,vm.example.org,127.0.0.1", "-n", "2", "prog"},
           {"-ppn", "4", "-n", "2", "prog"},
       }) {
    auto plan = Plan(args, SlurmAllocation{});
    ASSERT_TRUE(plan.ok()) << args[0] << " " << args[1] << ": "
                           << plan.status();
    EXPECT_FALSE(plan->use_srun);
  }
  auto plan = Plan({"-f", "h", "-n", "2", "prog"}, SlurmAllocation{},
                   {"localhost", "vm"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->use_srun);
}

TEST(LaunchOptionsTest, HelpNeedsNothingElse) {
  auto options = Parse({"--help"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->show_help);
  EXPECT_NE(UsageText("mpirun").find("usage: mpirun -n N"), std::string::npos);
}

}  // namespace
}  // namespace minimpi::mpiexec
