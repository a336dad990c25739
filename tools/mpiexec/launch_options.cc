#include "tools/mpiexec/launch_options.h"

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

std::string UsageText(const std::string& program) {
  return absl::StrCat(
      "usage: ", program,
      " -n N [--bind-to core|none] [--timeout S] [-x VAR[=value]]...\n"
      "       [--] program [args...]\n"
      "  -n, -np N           start N ranks of program on this node\n"
      "  --bind-to core      bind each rank to one core (sets "
      "MINIMPI_BIND_TO=core)\n"
      "  --bind-to none      do not bind (default)\n"
      "  --timeout S         end the job after S seconds (default: "
      "MPIEXEC_TIMEOUT,\n"
      "                      else no limit)\n"
      "  -x VAR=value        set VAR for every rank\n"
      "  -x VAR              forward this launcher's value of VAR\n"
      "  -h, --help          show this help\n"
      "Exit status: 0 when every rank succeeds; otherwise the failing rank's "
      "exit code,\n128+signal when it was killed, the MPI_Abort error "
      "code, or 124 when the\ntime limit ended the job.\n");
}

}  // namespace minimpi::mpiexec
