/* LD_PRELOAD shim for init_death_test.sh: the rank named by DIE_IN_FENCE_RANK
 * exits at its first PMIx_Fence, which MPI_Init calls after the shared-memory
 * transport has created its segment and before peers have mapped it: the
 * worst moment to die. Every other call goes to the real PMIx_Fence. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pmix.h>
#include <stdlib.h>
#include <unistd.h>

typedef pmix_status_t (*FenceFunction)(const pmix_proc_t*, size_t,
                                       const pmix_info_t*, size_t);

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                         const pmix_info_t info[], size_t ninfo) {
  const char* victim = getenv("DIE_IN_FENCE_RANK");
  const char* rank = getenv("PMIX_RANK");
  if (victim != NULL && rank != NULL && atoi(victim) == atoi(rank)) _exit(7);
  FenceFunction real = (FenceFunction)dlsym(RTLD_NEXT, "PMIx_Fence");
  return real(procs, nprocs, info, ninfo);
}
