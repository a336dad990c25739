/* MPI_Comm_split_type with MPI_COMM_TYPE_RESOURCE_GUIDED (MPI-4.1):
 *  - "mpi_hw_resource_type" = "mpi_shared_memory" gives the same groups as
 *    MPI_COMM_TYPE_SHARED (also across the pretend nodes of
 *    MINIMPI_NODE_SPLIT), ordered by key;
 *  - a resource type minimpi does not support, MPI_INFO_NULL and an info
 *    without either key give MPI_COMM_NULL, and the call succeeds;
 *  - "mpi_pset_name" = "mpi://WORLD" gives every process of the
 *    communicator, "mpi://SELF" each process alone, an unknown process set
 *    MPI_COMM_NULL.
 * Also that the split types of MPI-4.0 are distinct constants. */
#include "test_util.h"

/* The world ranks of `comm`'s members, in rank order. */
static void world_ranks_of(MPI_Comm comm, int* ranks, int* count) {
  MPI_Group group, world_group;
  MPI_CHECK(MPI_Comm_group(comm, &group));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  MPI_CHECK(MPI_Group_size(group, count));
  int local[64];
  for (int i = 0; i < *count; ++i) local[i] = i;
  MPI_CHECK(
      MPI_Group_translate_ranks(group, *count, local, world_group, ranks));
  MPI_CHECK(MPI_Group_free(&group));
  MPI_CHECK(MPI_Group_free(&world_group));
}

static void check_same_members(MPI_Comm got, MPI_Comm expected,
                               const char* what) {
  int got_ranks[64], expected_ranks[64], got_count = 0, expected_count = 0;
  world_ranks_of(got, got_ranks, &got_count);
  world_ranks_of(expected, expected_ranks, &expected_count);
  CHECK(got_count == expected_count, "%s: %d members, expected %d", what,
        got_count, expected_count);
  for (int i = 0; i < got_count; ++i) {
    CHECK(got_ranks[i] == expected_ranks[i],
          "%s: rank %d is world rank %d, expected %d", what, i, got_ranks[i],
          expected_ranks[i]);
  }
}

static MPI_Comm split_with(const char* key, const char* value, int order_key) {
  MPI_Info info = MPI_INFO_NULL;
  if (key != NULL) {
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, key, value));
  }
  MPI_Comm result = MPI_COMM_WORLD; /* the call must overwrite it */
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED,
                                order_key, info, &result));
  if (info != MPI_INFO_NULL) MPI_CHECK(MPI_Info_free(&info));
  return result;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= 64, "at most 64 ranks");

  CHECK(MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_SHARED &&
            MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_HW_GUIDED &&
            MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_HW_UNGUIDED &&
            MPI_COMM_TYPE_HW_GUIDED != MPI_COMM_TYPE_HW_UNGUIDED &&
            MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_UNDEFINED,
        "the split types are not distinct");
  CHECK(MPI_COMM_TYPE_RESOURCE_GUIDED == 224,
        "MPI_COMM_TYPE_RESOURCE_GUIDED is %d, the "
        "standard ABI's value is 224",
        MPI_COMM_TYPE_RESOURCE_GUIDED);

  /* Shared memory: the node's ranks, reversed by the key. */
  MPI_Comm node, guided;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                                size - rank, MPI_INFO_NULL, &node));
  guided = split_with("mpi_hw_resource_type", "mpi_shared_memory", size - rank);
  CHECK(guided != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
  check_same_members(guided, node, "RESOURCE_GUIDED mpi_shared_memory");
  MPI_Info used;
  char value[MPI_MAX_INFO_VAL];
  int length = MPI_MAX_INFO_VAL, flag = 0;
  MPI_CHECK(MPI_Comm_get_info(guided, &used));
  MPI_CHECK(
      MPI_Info_get_string(used, "mpi_hw_resource_type", &length, value, &flag));
  CHECK(flag && strcmp(value, "mpi_shared_memory") == 0,
        "the communicator's info says mpi_hw_resource_type '%s' (flag %d)",
        flag ? value : "", flag);
  MPI_CHECK(MPI_Info_free(&used));
  /* Traffic on it. */
  int node_size = 0, sum = 0;
  MPI_CHECK(MPI_Comm_size(guided, &node_size));
  MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, guided));
  int node_sum = 0;
  MPI_CHECK(MPI_Allreduce(&rank, &node_sum, 1, MPI_INT, MPI_SUM, node));
  CHECK(sum == node_sum,
        "a sum over the guided communicator: %d, over the node: %d", sum,
        node_sum);
  MPI_CHECK(MPI_Comm_free(&guided));
  MPI_CHECK(MPI_Comm_free(&node));

  /* What gives no communicator, with the call succeeding. */
  const char* unsupported[][2] = {
      {"mpi_hw_resource_type", "hwloc://NUMANode"},
      {"mpi_hw_resource_type", "no such resource"},
      {"mpi_pset_name", "mpi://no-such-set"},
      {"some_other_key", "mpi_shared_memory"},
      {NULL, NULL},
  };
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; ++i) {
    MPI_Comm none = split_with(unsupported[i][0], unsupported[i][1], 0);
    CHECK(none == MPI_COMM_NULL,
          "RESOURCE_GUIDED with %s=%s gave a communicator",
          unsupported[i][0] ? unsupported[i][0] : "(MPI_INFO_NULL)",
          unsupported[i][1] ? unsupported[i][1] : "");
  }

  /* Process sets. */
  MPI_Comm everyone = split_with("mpi_pset_name", "mpi://WORLD", 0);
  CHECK(everyone != MPI_COMM_NULL, "mpi://WORLD gave MPI_COMM_NULL");
  check_same_members(everyone, MPI_COMM_WORLD, "RESOURCE_GUIDED mpi://WORLD");
  MPI_CHECK(MPI_Comm_free(&everyone));
  everyone = split_with("mpi_pset_name", "MPI://world", 0);
  CHECK(everyone != MPI_COMM_NULL, "MPI://world gave MPI_COMM_NULL");
  check_same_members(everyone, MPI_COMM_WORLD, "RESOURCE_GUIDED MPI://world");
  MPI_CHECK(MPI_Comm_free(&everyone));
  MPI_Comm alone = split_with("mpi_pset_name", "mpi://SELF", 0);
  CHECK(alone != MPI_COMM_NULL, "mpi://SELF gave MPI_COMM_NULL");
  check_same_members(alone, MPI_COMM_SELF, "RESOURCE_GUIDED mpi://SELF");
  MPI_CHECK(MPI_Comm_free(&alone));

  /* MPI_UNDEFINED still opts out. */
  MPI_Comm out = MPI_COMM_WORLD;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL,
                                &out));
  CHECK(out == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("split_resource_guided", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
