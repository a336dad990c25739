/* One erroneous call under the default MPI_ERRORS_ARE_FATAL (or
 * MPI_ERRORS_ABORT) per run: the job must die with a non-zero exit status,
 * and minimpi prints one line naming the call, the rank and the problem.
 * The last rank makes the bad call; the others wait for a message from it
 * that only comes if the call wrongly returns, in which case everyone
 * finishes with status 0 and the runner (expecting failure) reports it.
 *
 * Usage: fatal_errors CASE, CASE one of the names in kCases below. */
#include "test_util.h"

enum { kReleaseTag = 900, kDataTag = 901 };

static int g_rank, g_size, g_erring_rank;
/* Created by every rank, since Comm_dup is collective. */
static MPI_Comm g_dup = MPI_COMM_NULL;

/* Reached only when the bad call returned instead of aborting the job. */
static void report_return(const char* call, int rc) {
  fprintf(stderr, "FAIL [rank %d]: %s returned %d instead of aborting the job\n", g_rank, call, rc);
  for (int r = 0; r < g_size; ++r)
    if (r != g_rank) MPI_Send(NULL, 0, MPI_BYTE, r, kReleaseTag, MPI_COMM_WORLD);
}

static void run_case(const char* name) {
  int value[4] = {0, 0, 0, 0};
  MPI_Request request = MPI_REQUEST_NULL;
  int rc;
  if (strcmp(name, "send_bad_rank") == 0) {
    rc = MPI_Send(value, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD);
    report_return("MPI_Send to rank == size", rc);
  } else if (strcmp(name, "recv_bad_source") == 0) {
    rc = MPI_Recv(value, 1, MPI_INT, g_size + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    report_return("MPI_Recv from rank size + 1", rc);
  } else if (strcmp(name, "bad_tag") == 0) {
    rc = MPI_Send(value, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);
    report_return("MPI_Send with tag -3", rc);
  } else if (strcmp(name, "bad_count") == 0) {
    rc = MPI_Send(value, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    report_return("MPI_Send with count -1", rc);
  } else if (strcmp(name, "comm_null") == 0) {
    rc = MPI_Send(value, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    report_return("MPI_Send on MPI_COMM_NULL", rc);
  } else if (strcmp(name, "datatype_null") == 0) {
    rc = MPI_Send(value, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    report_return("MPI_Send with MPI_DATATYPE_NULL", rc);
  } else if (strcmp(name, "start_null_request") == 0) {
    rc = MPI_Start(&request);
    report_return("MPI_Start on MPI_REQUEST_NULL", rc);
  } else if (strcmp(name, "null_buffer") == 0) {
    rc = MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
    report_return("MPI_Send of 4 ints from a null buffer", rc);
  } else if (strcmp(name, "truncate") == 0) {
    /* Rank 0 sent 100 bytes (see main); 10 are posted. */
    unsigned char small[10];
    rc = MPI_Recv(small, 10, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    report_return("MPI_Recv of 100 bytes into 10", rc);
  } else if (strcmp(name, "errors_abort") == 0) {
#ifdef MPI_ERRORS_ABORT
    MPI_CHECK(MPI_Comm_set_errhandler(g_dup, MPI_ERRORS_ABORT));
#else
    /* An MPI-3 reference library lacks MPI_ERRORS_ABORT; FATAL is closest. */
    MPI_CHECK(MPI_Comm_set_errhandler(g_dup, MPI_ERRORS_ARE_FATAL));
#endif
    rc = MPI_Send(value, 1, MPI_INT, g_size, 0, g_dup);
    report_return("MPI_Send to rank == size under MPI_ERRORS_ABORT", rc);
  } else if (strcmp(name, "abort") == 0) {
    MPI_Abort(MPI_COMM_WORLD, 3);
    report_return("MPI_Abort", 0);
  } else {
    fprintf(stderr, "fatal_errors: unknown case '%s'\n", name);
    /* Exit 0 so that a typo in the test list shows up as a failed test. */
    report_return("(unknown case)", 0);
  }
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  CHECK(argc == 2, "usage: fatal_errors CASE");
  g_erring_rank = g_size - 1;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &g_dup));
  const int truncate_case = strcmp(argv[1], "truncate") == 0;
  if (truncate_case && g_rank == 0 && g_erring_rank != 0) {
    unsigned char message[100];
    test_fill(message, sizeof message, 0, kDataTag);
    MPI_Request request;
    MPI_CHECK(MPI_Isend(message, 100, MPI_BYTE, g_erring_rank, kDataTag, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, g_erring_rank, kReleaseTag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else if (g_rank == g_erring_rank) {
    CHECK(!truncate_case || g_size > 1, "the truncate case needs at least 2 ranks");
    run_case(argv[1]);
  } else {
    /* Blocked here when the job is killed: the launcher must end us. */
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, g_erring_rank, kReleaseTag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_Finalize());
  return 0;
}
