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
  EXPECT_EQ(options->bind_to, "none");
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

TEST(LaunchOptionsTest, HelpNeedsNothingElse) {
  auto options = Parse({"--help"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->show_help);
  EXPECT_NE(UsageText("mpirun").find("usage: mpirun -n N"), std::string::npos);
}

}  // namespace
}  // namespace minimpi::mpiexec
