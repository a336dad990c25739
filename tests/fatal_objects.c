/* One bad call per run under the default MPI_ERRORS_ARE_FATAL, for the
 * calls of groups, communicator creation, topologies, attributes and info:
 * the job must die with a non-zero exit status, and minimpi prints one
 * line naming the call, the rank and the problem (tests.bzl matches it).
 * The last rank makes the bad call (every rank, for collective calls);
 * the others wait for a message that comes only if the call wrongly
 * returns, and then everyone exits 0, which the runner reports.
 *
 * Usage: fatal_objects CASE, CASE one of the names in run_case. */
#include "test_util.h"

enum { kReleaseTag = 900 };

static int g_rank, g_size;

/* Reached only when the bad call returned instead of ending the job. */
static void report_return(const char* call, int rc) {
  fprintf(stderr,
          "FAIL [rank %d]: %s returned %d instead of aborting the job\n",
          g_rank, call, rc);
  for (int r = 0; r < g_size; ++r)
    if (r != g_rank)
      MPI_Send(NULL, 0, MPI_BYTE, r, kReleaseTag, MPI_COMM_WORLD);
}

/* Collective bad calls: every rank makes them. */
static int run_collective_case(const char* name) {
  int rc;
  if (strcmp(name, "cart_create_bad_dims") == 0) {
    int dims[3] = {2, 0, 2}, periods[3] = {0, 0, 0};
    MPI_Comm cart;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    report_return("MPI_Cart_create with a zero dimension", rc);
    return 1;
  }
  if (strcmp(name, "cart_create_too_big") == 0) {
    int dims[2] = {g_size, 2}, periods[2] = {0, 0};
    MPI_Comm cart;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    report_return("MPI_Cart_create larger than the communicator", rc);
    return 1;
  }
  return 0;
}

static void run_case(const char* name) {
  int rc;
  MPI_Group world;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  if (strcmp(name, "group_incl_bad_rank") == 0) {
    int ranks[1] = {g_size + 3};
    MPI_Group out;
    rc = MPI_Group_incl(world, 1, ranks, &out);
    report_return("MPI_Group_incl of a rank past the group", rc);
  } else if (strcmp(name, "group_freed") == 0) {
    MPI_Group copy = world;
    MPI_CHECK(MPI_Group_free(&world));
    int size;
    rc = MPI_Group_size(copy, &size);
    report_return("MPI_Group_size of a freed group", rc);
  } else if (strcmp(name, "comm_create_group_bad_tag") == 0) {
    MPI_Comm comm;
    rc = MPI_Comm_create_group(MPI_COMM_SELF, MPI_GROUP_EMPTY, -7, &comm);
    report_return("MPI_Comm_create_group with tag -7", rc);
  } else if (strcmp(name, "cart_shift_no_topology") == 0) {
    int source, dest;
    rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &source, &dest);
    report_return("MPI_Cart_shift without a topology", rc);
  } else if (strcmp(name, "neighbor_no_topology") == 0) {
    int x = 0, y[2];
    rc = MPI_Neighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_SELF);
    report_return("MPI_Neighbor_alltoall without a topology", rc);
  } else if (strcmp(name, "set_attr_bad_keyval") == 0) {
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, 123456, NULL);
    report_return("MPI_Comm_set_attr with a made-up keyval", rc);
  } else if (strcmp(name, "info_long_key") == 0) {
    char key[300];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    rc = MPI_Info_set(info, key, "v");
    report_return("MPI_Info_set with a 299-character key", rc);
  } else if (strcmp(name, "info_delete_missing") == 0) {
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    rc = MPI_Info_delete(info, "nothing");
    report_return("MPI_Info_delete of a missing key", rc);
  } else if (strcmp(name, "free_mem_bad_base") == 0) {
    int local;
    rc = MPI_Free_mem(&local);
    report_return("MPI_Free_mem of stack memory", rc);
  } else if (strcmp(name, "remote_size") == 0) {
    int size;
    rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &size);
    report_return("MPI_Comm_remote_size of an intracommunicator", rc);
  } else {
    fprintf(stderr, "fatal_objects: unknown case '%s'\n", name);
    report_return("(unknown case)", 0);
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "info_before_init") == 0) {
    /* Before MPI_Init no handler exists: the initial one is fatal. */
    MPI_Info info;
    MPI_Info_create(&info);
    int rc = MPI_Info_set(info, "", "v");
    fprintf(
        stderr,
        "FAIL: MPI_Info_set with an empty key before MPI_Init returned %d\n",
        rc);
    return 0;
  }
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  CHECK(argc == 2, "usage: fatal_objects CASE");
  if (!run_collective_case(argv[1])) {
    if (g_rank == g_size - 1) {
      run_case(argv[1]);
    } else {
      MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, g_size - 1, kReleaseTag,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
  }
  MPI_Finalize();
  return 0;
}
