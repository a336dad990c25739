/* Scaffolding shared by the endpoints test programs (endpoints.c,
 * endpoints_collectives.c, endpoints_comms.c): the common options
 * (--endpoints K, --counts A,B,..., --varying, --quick, --watchdog
 * SECONDS), which process holds which endpoints rank, the table of this
 * process's handles, the alarm watchdog that names the phase that hung,
 * and running a body on every handle at once, one thread per handle (or
 * more).  Static state and static functions, one copy per program, as in
 * test_util.h.
 *
 * Include it (instead of test_util.h) after defining _POSIX_C_SOURCE
 * 200809L; without MINIMPI_HAS_ENDPOINTS it only includes test_util.h.
 * A program that keeps more per handle defines ENDPOINT_EXTRA_FIELDS (the
 * member declarations) before including it. */
#ifndef MINIMPI_TESTS_ENDPOINTS_UTIL_H_
#define MINIMPI_TESTS_ENDPOINTS_UTIL_H_

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "test_util.h"

#ifdef MINIMPI_HAS_ENDPOINTS

enum { kMaxHandles = 64, kMaxCounts = 16, kGuard = 32, kPoison = 0xA5 };
enum { kMaxThreadsPerHandle = 2 };

static int g_rank, g_size;     /* in MPI_COMM_WORLD */
static int g_per_process = 2;  /* --endpoints K */
static int g_counts[kMaxCounts], g_num_counts; /* --counts */
static int g_quick;
static int g_watchdog_s = 100;

/* Set by endpoints_init: the program's name (it starts the output lines),
 * its usage after the program path, and what stands before the quoted
 * phase name in a hang message ("phase " or ""). */
static const char* g_program;
static const char* g_usage;
static const char* g_hang_word;

/* ---- which process holds which rank ------------------------------------ */

static inline int handles_of(int process) {
  return g_num_counts ? g_counts[process % g_num_counts] : g_per_process;
}

static inline int first_rank_of(int process) {
  int sum = 0;
  for (int q = 0; q < process; ++q) sum += handles_of(q);
  return sum;
}

/* The process holding endpoints rank `ep_rank`, and the handle's index. */
static inline int owner_of(int ep_rank, int* index) {
  int first = 0;
  for (int p = 0; p < g_size; ++p) {
    if (ep_rank < first + handles_of(p)) {
      *index = ep_rank - first;
      return p;
    }
    first += handles_of(p);
  }
  *index = -1;
  return -1;
}

typedef struct {
  int index;      /* handle index in this process */
  MPI_Comm comm;  /* the handle */
  int rank, size; /* in the endpoints communicator */
#ifdef ENDPOINT_EXTRA_FIELDS
  ENDPOINT_EXTRA_FIELDS
#endif
} Endpoint;

static Endpoint g_ep[kMaxHandles];
static int g_num_ep, g_ep_size;

/* The handle's rank and size, from its own thread: rank
 * first_rank_of(g_rank) + index of g_ep_size (the ordering rule), kept in
 * *ep. */
static inline void check_rank(Endpoint* ep) {
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(ep->comm, &rank));
  MPI_CHECK(MPI_Comm_size(ep->comm, &size));
  CHECK(rank == first_rank_of(g_rank) + ep->index && size == g_ep_size,
        "handle %d of process %d: rank %d of %d, expected rank %d of %d", ep->index, g_rank,
        rank, size, first_rank_of(g_rank) + ep->index, g_ep_size);
  ep->rank = rank;
  ep->size = size;
}

/* ---- hang guard ---------------------------------------------------------- */

static char g_watchdog_text[300];
static size_t g_watchdog_length;

static void on_watchdog(int signal_number) {
  (void)signal_number;
  ssize_t ignored = write(2, g_watchdog_text, g_watchdog_length);
  (void)ignored;
  _exit(3);
}

/* Restarts the alarm: `phase` must finish within g_watchdog_s seconds. */
static inline void watchdog(const char* phase) {
  alarm(0);
  int n = snprintf(g_watchdog_text, sizeof g_watchdog_text,
                   "FAIL [rank %d] %s: %s'%s' did not finish within %d s (hang)\n", g_rank,
                   g_program, g_hang_word, phase, g_watchdog_s);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof g_watchdog_text) n = (int)sizeof g_watchdog_text - 1;
  g_watchdog_length = (size_t)n;
  alarm((unsigned)g_watchdog_s);
}

/* ---- options and setup --------------------------------------------------- */

/* MPI_Init_thread with MPI_THREAD_MULTIPLE, g_rank and g_size; `program`,
 * `usage` and `hang_word` as for g_program, g_usage and g_hang_word. */
static inline void endpoints_init(int* argc, char*** argv, const char* program,
                                  const char* usage, const char* hang_word) {
  g_program = program;
  g_usage = usage;
  g_hang_word = hang_word;
  int provided = -1;
  MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d, expected "
        "MPI_THREAD_MULTIPLE", provided);
}

static inline void usage_exit(const char* program) {
  if (g_rank == 0) fprintf(stderr, "usage: %s %s\n", program, g_usage);
  MPI_Finalize();
  exit(2);
}

/* A comma-separated list of 1 to kMaxCounts counts 0..kMaxHandles into
 * `counts`; returns how many.  Anything else is a usage error. */
static inline int parse_counts(const char* text, int* counts, const char* program) {
  int number = 0;
  while (*text) {
    char* end = NULL;
    const long value = strtol(text, &end, 10);
    if (end == text || value < 0 || value > kMaxHandles || number == kMaxCounts)
      usage_exit(program);
    counts[number++] = (int)value;
    if (*end != ',' && *end != '\0') usage_exit(program);
    text = *end == ',' ? end + 1 : end;
  }
  if (number == 0) usage_exit(program);
  return number;
}

/* Takes argv[*i] (and its value, advancing *i) if it is one of the common
 * options; returns 0, taking nothing, if it is not. */
static inline int common_option(int argc, char** argv, int* i) {
  const int has_value = *i + 1 < argc;
  const char* option = argv[*i];
  if (strcmp(option, "--endpoints") == 0 && has_value) {
    g_per_process = atoi(argv[++*i]);
    g_num_counts = 0;
  } else if (strcmp(option, "--counts") == 0 && has_value) {
    g_num_counts = parse_counts(argv[++*i], g_counts, argv[0]);
  } else if (strcmp(option, "--varying") == 0) {
    g_num_counts = parse_counts("2,0,1", g_counts, argv[0]);
  } else if (strcmp(option, "--quick") == 0) {
    g_quick = 1;
  } else if (strcmp(option, "--watchdog") == 0 && has_value) {
    g_watchdog_s = atoi(argv[++*i]);
  } else {
    return 0;
  }
  return 1;
}

/* After the options: this process's handle count g_num_ep, the endpoints
 * communicator's size g_ep_size (which must not be 0), and the watchdog's
 * signal handler. */
static inline void endpoints_layout(void) {
  g_num_ep = handles_of(g_rank);
  g_ep_size = first_rank_of(g_size);
  CHECK(g_ep_size > 0, "no process asks for an endpoint: nothing to test");
  signal(SIGALRM, on_watchdog);
}

/* This process's one MPIX_Comm_create_endpoints call over MPI_COMM_WORLD
 * (under the watchdog), for g_num_ep handles into `handles` (no array
 * when there are none); g_ep[i] becomes handle i, rank and size unknown
 * (-1) until check_rank. */
static inline void endpoints_create(MPI_Comm* handles) {
  watchdog("MPIX_Comm_create_endpoints");
  MPI_CHECK(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, g_num_ep, MPI_INFO_NULL,
                                       g_num_ep > 0 ? handles : NULL));
  for (int i = 0; i < g_num_ep; ++i) {
    g_ep[i].index = i;
    g_ep[i].comm = handles[i];
    g_ep[i].rank = g_ep[i].size = -1;
  }
}

/* ---- phases: one thread per handle (or more) ------------------------------- */

/* Runs on a handle from a thread of its own; `helper` tells apart the
 * threads of one handle (0 when there is one). */
typedef void (*PhaseBody)(Endpoint* ep, int helper);

typedef struct {
  PhaseBody body;
  Endpoint* ep;
  int helper;
} PhaseArg;

static inline void* phase_thread(void* pointer) {
  PhaseArg* arg = (PhaseArg*)pointer;
  arg->body(arg->ep, arg->helper);
  return NULL;
}

/* Runs `body` on every handle of this process at once, threads_per_handle
 * threads each, waits for them all, then a barrier on MPI_COMM_WORLD. */
static inline void on_every_handle(PhaseBody body, int threads_per_handle) {
  pthread_t threads[kMaxThreadsPerHandle * kMaxHandles];
  PhaseArg args[kMaxThreadsPerHandle * kMaxHandles];
  CHECK(threads_per_handle >= 1 && threads_per_handle <= kMaxThreadsPerHandle,
        "%d threads per handle (1..%d)", threads_per_handle, kMaxThreadsPerHandle);
  int count = 0;
  for (int i = 0; i < g_num_ep; ++i)
    for (int h = 0; h < threads_per_handle; ++h) {
      args[count].body = body;
      args[count].ep = &g_ep[i];
      args[count].helper = h;
      CHECK(pthread_create(&threads[count], NULL, phase_thread, &args[count]) == 0,
            "pthread_create failed");
      ++count;
    }
  for (int t = 0; t < count; ++t) pthread_join(threads[t], NULL);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A phase: on_every_handle under the watchdog, then "<program>: <name> ok"
 * from rank 0. */
static inline void run_phase(const char* name, PhaseBody body, int threads_per_handle) {
  watchdog(name);
  on_every_handle(body, threads_per_handle);
  if (g_rank == 0) printf("%s: %s ok\n", g_program, name);
  fflush(stdout);
}

/* ---- byte checks ----------------------------------------------------------- */

/* The kGuard bytes after a `from`-byte message must still be kPoison. */
static inline void check_guard(const unsigned char* p, size_t from, const char* what) {
  for (size_t i = from; i < from + kGuard; ++i)
    CHECK(p[i] == kPoison, "%s: byte %zu, past the %zu-byte message, was overwritten (0x%02x)",
          what, i, from, p[i]);
}

#endif /* MINIMPI_HAS_ENDPOINTS */

#endif /* MINIMPI_TESTS_ENDPOINTS_UTIL_H_ */
