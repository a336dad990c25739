/* Message matching under load, end to end: two traffic patterns that make
 * rank 0's matching queues long, timed through the whole MPI stack.
 *
 * Plain C and MPI only, so the same source builds with any MPI
 * (apps/bench/match_compare.sh runs it once per minimpi matching engine).
 *
 *   usage: match_hotspot [--quick] [--iterations N] [--messages N]
 *                        [--reps N]
 *     --iterations  collectives per repetition in the gather scenarios
 *                   (default 500)
 *     --messages    messages waiting in rank 0's unexpected queue in the
 *                   unexpected scenario, over all senders (default 8192)
 *     --reps        timed repetitions; best and median are reported
 *                   (default 5)
 *     --quick       a small, fast correctness run (20 iterations, 256
 *                   messages, 2 repetitions), for tests
 *
 * Scenarios, each at 8 B and 1 KiB per message or block:
 *   gather      MPI_Gather to root 0, back to back: every rank's block
 *               converges on the root, and ranks running ahead of it leave
 *               unexpected collective messages there.
 *   gatherv     MPI_Gatherv to root 0 with blocks placed in reverse rank
 *               order and gaps between them (the gaps must stay untouched).
 *   unexpected  every rank other than 0 sends M = ceil(messages / (ranks-1))
 *               messages with tags 0..M-1, then a token; rank 0 takes the
 *               tokens first, so all the data waits in its unexpected queue,
 *               then receives it by source from the last rank down and by
 *               tag from the highest down.  A single arrival-ordered list is
 *               searched almost to its end on every receive (the latest
 *               arrivals are taken first); per-sender queues only to the end
 *               of that sender's part.
 * Rank 0 times each repetition with MPI_Wtime; the reported time is per
 * collective (gather, gatherv) or per receive (unexpected).  Every
 * repetition's data is checked byte for byte at rank 0 (gatherv's gaps too);
 * wrong data exits non-zero through MPI_Abort.
 *
 * Output: '#' comment lines, then one line per scenario and size:
 *   scenario  size_bytes  ranks  best_us  median_us
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  kMaxReps = 100,
  kGapBytes = 8,  /* between gatherv blocks */
  kPoison = 0xA5, /* what rank 0 fills receive buffers with first */
};
static const size_t kSizes[] = {8, 1024};

typedef struct {
  int iterations;
  int messages;
  int reps;
} Options;

static int rank, size;

static void Usage(void) {
  if (rank == 0) {
    fprintf(stderr,
            "usage: match_hotspot [--quick] [--iterations N] [--messages N] "
            "[--reps N]\n");
  }
  MPI_Finalize();
  exit(2);
}

static int PositiveArg(int argc, char** argv, int* i, int max) {
  if (*i + 1 >= argc) Usage();
  char* end = NULL;
  long value = strtol(argv[++*i], &end, 10);
  if (*end != '\0' || value < 1 || value > max) Usage();
  return (int)value;
}

static Options ParseOptions(int argc, char** argv) {
  Options options = {500, 8192, 5};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      options.iterations = 20;
      options.messages = 256;
      options.reps = 2;
    } else if (strcmp(argv[i], "--iterations") == 0) {
      options.iterations = PositiveArg(argc, argv, &i, 1 << 30);
    } else if (strcmp(argv[i], "--messages") == 0) {
      options.messages = PositiveArg(argc, argv, &i, 1 << 24);
    } else if (strcmp(argv[i], "--reps") == 0) {
      options.reps = PositiveArg(argc, argv, &i, kMaxReps);
    } else {
      Usage();
    }
  }
  return options;
}

/* The byte at `index` of the block `owner` sends with `stamp` (the
 * repetition, or the tag): a stale block, another rank's block or a shifted
 * copy never passes for the right one. */
static unsigned char PatternByte(int owner, int stamp, size_t index) {
  return (unsigned char)((index * 131u + (size_t)owner * 29u +
                          (size_t)stamp * 7u + 1u) &
                         0xffu);
}

static void Fill(unsigned char* block, size_t bytes, int owner, int stamp) {
  for (size_t i = 0; i < bytes; ++i) block[i] = PatternByte(owner, stamp, i);
}

static void Check(const char* scenario, size_t bytes,
                  const unsigned char* block, int owner, int stamp) {
  for (size_t i = 0; i < bytes; ++i) {
    if (block[i] != PatternByte(owner, stamp, i)) {
      fprintf(stderr,
              "match_hotspot: %s %zu B: wrong byte %zu of rank %d's data "
              "(stamp %d): got %d, want %d\n",
              scenario, bytes, i, owner, stamp, block[i],
              PatternByte(owner, stamp, i));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Rank 0 prints best and median of the per-operation times of the reps. */
static void Report(const char* scenario, size_t bytes, double* us, int reps) {
  if (rank != 0) return;
  qsort(us, (size_t)reps, sizeof(double), CompareDoubles);
  double median =
      reps % 2 == 1 ? us[reps / 2] : (us[reps / 2 - 1] + us[reps / 2]) / 2;
  printf("%s %zu %d %.3f %.3f\n", scenario, bytes, size, us[0], median);
  fflush(stdout);
}

static void GatherScenario(const Options* options, size_t bytes, int variable) {
  const char* scenario = variable ? "gatherv" : "gather";
  unsigned char* block = malloc(bytes);
  /* gatherv: rank r's block lands at (size-1-r) * (bytes + gap), so a
   * library that placed blocks by rank, or wrote past a count, is caught. */
  size_t stride = variable ? bytes + kGapBytes : bytes;
  size_t total = stride * (size_t)size;
  unsigned char* gathered = rank == 0 ? malloc(total) : NULL;
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displacements = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; ++r) {
    counts[r] = (int)bytes;
    displacements[r] = (int)(stride * (size_t)(size - 1 - r));
  }
  double us[kMaxReps];
  for (int rep = 0; rep < options->reps; ++rep) {
    /* A new stamp each repetition: data left from the last one fails. */
    Fill(block, bytes, rank, rep);
    if (rank == 0) memset(gathered, kPoison, total);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int it = 0; it < options->iterations; ++it) {
      if (variable) {
        MPI_Gatherv(block, (int)bytes, MPI_BYTE, gathered, counts,
                    displacements, MPI_BYTE, 0, MPI_COMM_WORLD);
      } else {
        MPI_Gather(block, (int)bytes, MPI_BYTE, gathered, (int)bytes, MPI_BYTE,
                   0, MPI_COMM_WORLD);
      }
    }
    us[rep] = (MPI_Wtime() - start) / options->iterations * 1e6;
    if (rank == 0) {
      for (int r = 0; r < size; ++r) {
        const unsigned char* at =
            gathered + (variable ? (size_t)displacements[r] : bytes * r);
        Check(scenario, bytes, at, r, rep);
        for (size_t g = bytes; g < stride; ++g) {
          if (at[g] != kPoison) {
            fprintf(stderr,
                    "match_hotspot: gatherv %zu B: gap byte after rank %d's "
                    "block was overwritten\n",
                    bytes, r);
            MPI_Abort(MPI_COMM_WORLD, 3);
          }
        }
      }
    }
  }
  Report(scenario, bytes, us, options->reps);
  free(displacements);
  free(counts);
  free(gathered);
  free(block);
}

static void UnexpectedScenario(const Options* options, size_t bytes) {
  if (size < 2) return; /* nobody to send */
  const int senders = size - 1;
  const int per_sender = (options->messages + senders - 1) / senders;
  const int token_tag = per_sender; /* after every data tag */
  const size_t received_bytes = bytes * (size_t)per_sender * (size_t)senders;
  unsigned char* message = malloc(bytes);
  unsigned char* received = rank == 0 ? malloc(received_bytes) : NULL;
  double us[kMaxReps];
  for (int rep = 0; rep < options->reps; ++rep) {
    /* Tags repeat every repetition: the barrier keeps one repetition's
     * messages out of the previous one's queue. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
      for (int tag = 0; tag < per_sender; ++tag) {
        Fill(message, bytes, rank, rep * per_sender + tag);
        MPI_Send(message, (int)bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
      }
      MPI_Send(NULL, 0, MPI_BYTE, 0, token_tag, MPI_COMM_WORLD);
      us[rep] = 0;
      continue;
    }
    /* A sender's messages are matched in the order it sent them, so once
     * its token is received its data is all queued at rank 0 (in minimpi,
     * and in any MPI that delivers a sender's eager messages in order).  A
     * blocking receive searches the queue once, unlike a polling probe. */
    for (int source = 1; source < size; ++source) {
      MPI_Recv(NULL, 0, MPI_BYTE, source, token_tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    memset(received, kPoison, received_bytes);
    double start = MPI_Wtime();
    for (int source = size - 1; source >= 1; --source) {
      for (int tag = per_sender - 1; tag >= 0; --tag) {
        size_t slot = (size_t)(source - 1) * (size_t)per_sender + (size_t)tag;
        MPI_Recv(received + slot * bytes, (int)bytes, MPI_BYTE, source, tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    us[rep] = (MPI_Wtime() - start) / ((double)per_sender * senders) * 1e6;
    for (int source = 1; source < size; ++source) {
      for (int tag = 0; tag < per_sender; ++tag) {
        size_t slot = (size_t)(source - 1) * (size_t)per_sender + (size_t)tag;
        Check("unexpected", bytes, received + slot * bytes, source,
              rep * per_sender + tag);
      }
    }
  }
  Report("unexpected", bytes, us, options->reps);
  free(received);
  free(message);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Options options = ParseOptions(argc, argv);
  if (rank == 0) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    for (char* p = library; *p; ++p) {
      if (*p == '\n' || *p == '\t') *p = ' ';
    }
    printf("# library: %.120s\n# ranks: %d\n", library, size);
    printf("# gather: %d iterations per repetition; %d repetitions\n",
           options.iterations, options.reps);
    printf("# scenario size_bytes ranks best_us median_us\n");
    fflush(stdout);
  }
  const size_t sizes = sizeof(kSizes) / sizeof(kSizes[0]);
  for (size_t s = 0; s < sizes; ++s) GatherScenario(&options, kSizes[s], 0);
  for (size_t s = 0; s < sizes; ++s) GatherScenario(&options, kSizes[s], 1);
  if (rank == 0 && size > 1) {
    const int per_sender = (options.messages + size - 2) / (size - 1);
    printf("# unexpected: %d messages per sender, %d queued at rank 0\n",
           per_sender, per_sender * (size - 1));
    fflush(stdout);
  }
  for (size_t s = 0; s < sizes; ++s) UnexpectedScenario(&options, kSizes[s]);
  MPI_Finalize();
  return 0;
}
