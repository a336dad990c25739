// A job in which one rank fails while the others wait in a Fence, to test
// that the launcher notices, names the rank, ends the job and never hangs.
//
// Usage: job_failures MODE [CODE]
//   exit CODE     the failing rank calls exit(CODE) after Init
//   segv          the failing rank raises SIGSEGV
//   abort CODE    the failing rank calls Bootstrap::Abort(CODE, ...)
//   no-finalize   the failing rank returns 0 without Finalize
// The failing rank is 1 (0 when the job has one rank). The other ranks Fence
// and then sleep, so they only end when the launcher kills them; with
// JOB_FAILURES_IGNORE_SIGTERM=1 they ignore SIGTERM, so only SIGKILL works.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/bootstrap.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: job_failures MODE [CODE]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int code = argc > 2 ? std::atoi(argv[2]) : 0;

  auto bootstrap_or = minimpi::runtime::Bootstrap::Init();
  if (!bootstrap_or.ok()) {
    std::fprintf(stderr, "job_failures: Init failed: %s\n",
                 bootstrap_or.status().ToString().c_str());
    return 2;
  }
  auto& bootstrap = **bootstrap_or;
  const int failing_rank = bootstrap.size() > 1 ? 1 : 0;

  if (bootstrap.rank() == failing_rank) {
    // Let the others reach the fence first, so the failure interrupts them.
    usleep(100 * 1000);
    if (mode == "exit") {
      std::exit(code);
    } else if (mode == "segv") {
      // Sanitizers catch SIGSEGV to report it; the test wants the plain
      // death by signal a user's crashing program has.
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    } else if (mode == "abort") {
      bootstrap.Abort(code, "job_failures asked for it");
    } else if (mode == "no-finalize") {
      return 0;
    }
    std::fprintf(stderr, "job_failures: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  const char* ignore_term = std::getenv("JOB_FAILURES_IGNORE_SIGTERM");
  if (ignore_term != nullptr && std::strcmp(ignore_term, "1") == 0) {
    signal(SIGTERM, SIG_IGN);
  }
  // The fence cannot complete without the failing rank.
  auto status = bootstrap.Fence();
  std::fprintf(stderr, "job_failures rank %d: Fence returned %s\n",
               bootstrap.rank(), status.ToString().c_str());
  sleep(600);
  return 0;
}
