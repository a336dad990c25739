/* Bad input to every call of groups, communicator creation, topologies,
 * neighbourhood collectives, attributes, info objects, memory and status
 * under MPI_ERRORS_RETURN: each must return the right error class (the
 * message naming the problem is shown on failure) and leave the library
 * usable, which real work at the end proves. Freed, stale and made-up
 * handles are among the bad input: they must give an error class, not a
 * crash.
 *
 * The classes are minimpi's documented choices; another MPI words some of
 * them differently and may crash on stale handles, so there the program
 * only says it skipped. */
#include "test_util.h"

#ifdef MINIMPI_TAG_UB

static int g_rank, g_size;

static void check_group_errors(void) {
  MPI_Group world, freed, out = MPI_GROUP_NULL;
  const MPI_Group garbage = (MPI_Group)(uintptr_t)0x0207000012345678ull;
  int size, rank, result, ranks[4] = {0, 0, 0, 0};
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &freed));
  const MPI_Group stale = freed;
  MPI_CHECK(MPI_Group_free(&freed));
  CHECK_ERROR_CLASS(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_size(stale, &size), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_size(garbage, &size), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_rank(stale, &rank), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_free(&freed), MPI_ERR_GROUP); /* MPI_GROUP_NULL */
  MPI_Group copy = stale;
  CHECK_ERROR_CLASS(MPI_Group_free(&copy), MPI_ERR_GROUP); /* freed twice */
  CHECK_ERROR_CLASS(MPI_Group_compare(world, stale, &result), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &out), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_intersection(garbage, world, &out), MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Group_difference(world, world, NULL), MPI_ERR_ARG);
  ranks[0] = g_size;
  CHECK_ERROR_CLASS(MPI_Group_incl(world, 1, ranks, &out), MPI_ERR_RANK);
  ranks[0] = -1;
  CHECK_ERROR_CLASS(MPI_Group_excl(world, 1, ranks, &out), MPI_ERR_RANK);
  if (g_size > 1) {
    ranks[0] = ranks[1] = 0;
    CHECK_ERROR_CLASS(MPI_Group_incl(world, 2, ranks, &out), MPI_ERR_RANK);
  }
  CHECK_ERROR_CLASS(MPI_Group_incl(world, -1, ranks, &out), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Group_incl(world, g_size + 1, ranks, &out), MPI_ERR_ARG);
  int zero_stride[1][3] = {{0, 0, 0}};
  CHECK_ERROR_CLASS(MPI_Group_range_incl(world, 1, zero_stride, &out), MPI_ERR_ARG);
  int past_end[1][3] = {{0, g_size, 1}};
  CHECK_ERROR_CLASS(MPI_Group_range_excl(world, 1, past_end, &out), MPI_ERR_RANK);
  if (g_size > 1) {
    int away[1][3] = {{1, 0, 1}};
    CHECK_ERROR_CLASS(MPI_Group_range_incl(world, 1, away, &out), MPI_ERR_ARG);
  }
  ranks[0] = g_size;
  int translated[4];
  CHECK_ERROR_CLASS(MPI_Group_translate_ranks(world, 1, ranks, world, translated),
               MPI_ERR_RANK);
  CHECK_ERROR_CLASS(MPI_Group_translate_ranks(world, -2, ranks, world, translated),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_group(MPI_COMM_NULL, &out), MPI_ERR_COMM);
  CHECK(out == MPI_GROUP_NULL, "a failed group call wrote a handle");
  MPI_CHECK(MPI_Group_free(&world));
}

static void check_communicator_errors(void) {
  MPI_Comm comm = MPI_COMM_NULL, half;
  MPI_Group world_group;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_ERROR_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &comm),
               MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Comm_create(MPI_COMM_NULL, world_group, &comm),
               MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_create(MPI_COMM_WORLD, world_group, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, -1, &comm),
               MPI_ERR_TAG);
  CHECK_ERROR_CLASS(
      MPI_Comm_create_group(MPI_COMM_WORLD, world_group, MPI_ANY_TAG, &comm),
      MPI_ERR_TAG);
  /* A group with processes outside the communicator. */
  if (g_size > 1) {
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, 0, &half));
    MPI_CHECK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    CHECK_ERROR_CLASS(MPI_Comm_create(half, world_group, &comm), MPI_ERR_GROUP);
    CHECK_ERROR_CLASS(MPI_Comm_create_group(half, world_group, 3, &comm),
                 MPI_ERR_GROUP);
    MPI_CHECK(MPI_Comm_free(&half));
  }
  CHECK_ERROR_CLASS(
      MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &comm),
      MPI_ERR_ARG);
  MPI_Info freed_info;
  MPI_CHECK(MPI_Info_create(&freed_info));
  const MPI_Info stale_info = freed_info;
  MPI_CHECK(MPI_Info_free(&freed_info));
  CHECK_ERROR_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                   stale_info, &comm),
               MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Comm_dup_with_info(MPI_COMM_WORLD, stale_info, &comm),
               MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Comm_set_info(MPI_COMM_WORLD, stale_info), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Comm_get_info(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  MPI_Request request;
  CHECK_ERROR_CLASS(MPI_Comm_idup(MPI_COMM_WORLD, &comm, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_idup(MPI_COMM_NULL, &comm, &request), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(
      MPI_Comm_idup_with_info(MPI_COMM_WORLD, stale_info, &comm, &request),
      MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  char name[MPI_MAX_OBJECT_NAME];
  int length;
  CHECK_ERROR_CLASS(MPI_Comm_get_name(MPI_COMM_NULL, name, &length), MPI_ERR_COMM);
  int flag, size;
  CHECK_ERROR_CLASS(MPI_Comm_test_inter(MPI_COMM_NULL, &flag), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &size), MPI_ERR_COMM);
  MPI_Group remote;
  CHECK_ERROR_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &remote), MPI_ERR_COMM);
  /* A freed communicator is no communicator. */
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  const MPI_Comm stale = comm;
  MPI_CHECK(MPI_Comm_free(&comm));
  CHECK_ERROR_CLASS(MPI_Comm_group(stale, &remote), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_set_name(stale, "x"), MPI_ERR_COMM);
  MPI_CHECK(MPI_Group_free(&world_group));
}

static void check_topology_errors(void) {
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[3] = {1, 0, 1}, periods[3] = {0, 0, 0}, coords[3], rank;
  CHECK_ERROR_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &cart),
               MPI_ERR_DIMS);
  CHECK_ERROR_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart),
               MPI_ERR_DIMS);
  dims[1] = -2;
  CHECK_ERROR_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart),
               MPI_ERR_DIMS);
  dims[1] = g_size + 1;
  CHECK_ERROR_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 3, dims, periods, &rank),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, NULL, periods, 0, &cart),
               MPI_ERR_ARG);
  int nodes[2] = {0, 0};
  CHECK_ERROR_CLASS(MPI_Dims_create(0, 2, nodes), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Dims_create(6, -1, nodes), MPI_ERR_DIMS);
  nodes[0] = 4;
  CHECK_ERROR_CLASS(MPI_Dims_create(6, 2, nodes), MPI_ERR_DIMS);
  nodes[0] = -1;
  CHECK_ERROR_CLASS(MPI_Dims_create(6, 2, nodes), MPI_ERR_DIMS);
  /* Inquiries on a communicator without the right topology. */
  CHECK_ERROR_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 3, coords), MPI_ERR_TOPOLOGY);
  CHECK_ERROR_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &rank), MPI_ERR_TOPOLOGY);
  int nneighbors, nedges;
  CHECK_ERROR_CLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &nneighbors),
               MPI_ERR_TOPOLOGY);
  CHECK_ERROR_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &nneighbors, &nedges),
               MPI_ERR_TOPOLOGY);
  int in, out, weighted;
  CHECK_ERROR_CLASS(
      MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &weighted),
      MPI_ERR_TOPOLOGY);
  /* On a real grid: bad ranks, coordinates and directions. */
  dims[0] = g_size;
  periods[0] = 0;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
  MPI_CHECK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
  CHECK_ERROR_CLASS(MPI_Cart_coords(cart, g_size, 1, coords), MPI_ERR_RANK);
  CHECK_ERROR_CLASS(MPI_Cart_coords(cart, 0, 0, coords), MPI_ERR_ARG);
  coords[0] = g_size;
  CHECK_ERROR_CLASS(MPI_Cart_rank(cart, coords, &rank), MPI_ERR_RANK);
  coords[0] = -1;
  CHECK_ERROR_CLASS(MPI_Cart_rank(cart, coords, &rank), MPI_ERR_RANK);
  int source, dest;
  CHECK_ERROR_CLASS(MPI_Cart_shift(cart, 1, 1, &source, &dest), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Cart_shift(cart, -1, 1, &source, &dest), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Cart_get(cart, 0, dims, periods, coords), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Graph_neighbors(cart, 0, 1, &source), MPI_ERR_TOPOLOGY);
  MPI_Comm sub;
  CHECK_ERROR_CLASS(MPI_Cart_sub(cart, NULL, &sub), MPI_ERR_ARG);
  /* Neighbourhood collectives: counts, types, buffers, requests. */
  int send[8] = {0}, recv[8] = {0};
  MPI_Request request;
  CHECK_ERROR_CLASS(
      MPI_Neighbor_allgather(send, -1, MPI_INT, recv, 1, MPI_INT, cart),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(
      MPI_Neighbor_alltoall(send, 1, MPI_DATATYPE_NULL, recv, 1, MPI_INT, cart),
      MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(
      MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, recv, 1, MPI_INT, cart),
      MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(
      MPI_Ineighbor_allgather(send, 1, MPI_INT, recv, 1, MPI_INT, cart, NULL),
      MPI_ERR_REQUEST);
  int counts[2] = {1, -1}, displs[2] = {0, 1};
  CHECK_ERROR_CLASS(MPI_Neighbor_allgatherv(send, 1, MPI_INT, recv, counts, displs,
                                       MPI_INT, cart),
               MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Neighbor_alltoallv(send, NULL, displs, MPI_INT, recv, counts,
                                      displs, MPI_INT, cart),
               MPI_ERR_ARG);
  MPI_Aint wdispls[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
  int wcounts[2] = {1, 1};
  CHECK_ERROR_CLASS(MPI_Ineighbor_alltoallw(send, wcounts, wdispls, types, recv,
                                       wcounts, wdispls, types, cart, &request),
               MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Neighbor_allgather(send, 1, MPI_INT, recv, 1, MPI_INT,
                                      MPI_COMM_WORLD),
               MPI_ERR_TOPOLOGY);
  MPI_CHECK(MPI_Comm_free(&cart));
  /* Graphs. */
  int index[2] = {1, 2}, edges[2] = {0, 5};
  MPI_Comm graph;
  CHECK_ERROR_CLASS(
      MPI_Graph_create(MPI_COMM_WORLD, g_size + 1, index, edges, 0, &graph),
      MPI_ERR_ARG);
  if (g_size >= 2) {
    CHECK_ERROR_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &graph),
                 MPI_ERR_ARG);
    index[0] = 2;
    index[1] = 1;
    edges[1] = 0;
    CHECK_ERROR_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &graph),
                 MPI_ERR_ARG);
  }
  /* Distributed graphs. */
  int sources[2] = {g_size, 0}, weights[2] = {1, -1};
  MPI_Comm dist;
  CHECK_ERROR_CLASS(MPI_Dist_graph_create_adjacent(
                   MPI_COMM_WORLD, 1, sources, MPI_UNWEIGHTED, 0, NULL,
                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist),
               MPI_ERR_RANK);
  sources[0] = 0;
  CHECK_ERROR_CLASS(MPI_Dist_graph_create_adjacent(
                   MPI_COMM_WORLD, 2, sources, weights, 0, NULL,
                   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dist),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, sources,
                                              MPI_UNWEIGHTED, 1, sources,
                                              weights, MPI_INFO_NULL, 0, &dist),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Dist_graph_create_adjacent(
                   MPI_COMM_WORLD, -1, sources, MPI_UNWEIGHTED, 0, NULL,
                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist),
               MPI_ERR_ARG);
  int degrees[1] = {-1};
  CHECK_ERROR_CLASS(
      MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, sources,
                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist),
      MPI_ERR_ARG);
  degrees[0] = 1;
  CHECK_ERROR_CLASS(
      MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, sources,
                            MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dist),
      MPI_ERR_ARG);
}

static void check_attribute_errors(void) {
  int keyval, flag;
  void* value;
  CHECK_ERROR_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL),
               MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 987654321, &value, &flag),
               MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, -5), MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL),
               MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_HOST), MPI_ERR_KEYVAL);
  int predefined = MPI_TAG_UB;
  CHECK_ERROR_CLASS(MPI_Comm_free_keyval(&predefined), MPI_ERR_KEYVAL);
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                   MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
  const int stale = keyval;
  MPI_CHECK(MPI_Comm_free_keyval(&keyval));
  CHECK_ERROR_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, stale, NULL), MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Attr_put(MPI_COMM_WORLD, stale, NULL), MPI_ERR_KEYVAL);
  keyval = stale;
  CHECK_ERROR_CLASS(MPI_Keyval_free(&keyval), MPI_ERR_KEYVAL);
  CHECK_ERROR_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, NULL),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                      MPI_COMM_NULL_DELETE_FN, NULL, NULL),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, NULL),
               MPI_ERR_COMM);
}

static void check_info_errors(void) {
  MPI_Info info, freed;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_create(&freed));
  const MPI_Info stale = freed;
  MPI_CHECK(MPI_Info_free(&freed));
  char long_key[MPI_MAX_INFO_KEY + 8], value[MPI_MAX_INFO_VAL];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = '\0';
  char* long_value = (char*)test_malloc(MPI_MAX_INFO_VAL + 8);
  memset(long_value, 'v', MPI_MAX_INFO_VAL + 7);
  long_value[MPI_MAX_INFO_VAL + 7] = '\0';
  int flag, nkeys, length;
  CHECK_ERROR_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Info_set(stale, "k", "v"), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Info_get_nkeys(stale, &nkeys), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Info_free(&freed), MPI_ERR_INFO); /* MPI_INFO_NULL */
  CHECK_ERROR_CLASS(MPI_Info_set(info, long_key, "v"), MPI_ERR_INFO_KEY);
  CHECK_ERROR_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
  CHECK_ERROR_CLASS(MPI_Info_set(info, NULL, "v"), MPI_ERR_INFO_KEY);
  CHECK_ERROR_CLASS(MPI_Info_set(info, "k", long_value), MPI_ERR_INFO_VALUE);
  CHECK_ERROR_CLASS(MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE);
  CHECK_ERROR_CLASS(MPI_Info_get(info, long_key, 10, value, &flag),
               MPI_ERR_INFO_KEY);
  CHECK_ERROR_CLASS(MPI_Info_get(info, "k", -1, value, &flag), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Info_get_valuelen(info, "", &length, &flag),
               MPI_ERR_INFO_KEY);
  CHECK_ERROR_CLASS(MPI_Info_delete(info, "missing"), MPI_ERR_INFO_NOKEY);
  CHECK_ERROR_CLASS(MPI_Info_get_nthkey(info, 0, value), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Info_get_nthkey(info, -1, value), MPI_ERR_ARG);
  int buflen = -1;
  CHECK_ERROR_CLASS(MPI_Info_get_string(info, "k", &buflen, value, &flag),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Info_dup(stale, &freed), MPI_ERR_INFO);
  /* MPI_INFO_ENV is read-only and never freed. */
  MPI_Info env = MPI_INFO_ENV;
  CHECK_ERROR_CLASS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Info_delete(MPI_INFO_ENV, "host"), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Info_free(&env), MPI_ERR_INFO);
  CHECK(env == MPI_INFO_ENV, "a failed Info_free changed MPI_INFO_ENV");
  /* The object still works. */
  MPI_CHECK(MPI_Info_set(info, "k", "v"));
  MPI_CHECK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 1, "info has %d keys after the errors", nkeys);
  MPI_CHECK(MPI_Info_free(&info));
  free(long_value);
}

static void check_memory_status_errors(void) {
  void* memory = NULL;
  CHECK_ERROR_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &memory), MPI_ERR_SIZE);
  CHECK_ERROR_CLASS(MPI_Alloc_mem((MPI_Aint)1 << 62, MPI_INFO_NULL, &memory),
               MPI_ERR_NO_MEM);
  CHECK_ERROR_CLASS(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  int local = 0;
  CHECK_ERROR_CLASS(MPI_Free_mem(&local), MPI_ERR_BASE);
  MPI_CHECK(MPI_Alloc_mem(8, MPI_INFO_NULL, &memory));
  MPI_CHECK(MPI_Free_mem(memory));
  CHECK_ERROR_CLASS(MPI_Free_mem(memory), MPI_ERR_BASE); /* freed twice */
  MPI_Status status;
  CHECK_ERROR_CLASS(MPI_Status_set_elements(&status, MPI_DATATYPE_NULL, 1),
               MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Status_set_elements(&status, MPI_INT, -1), MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Status_set_elements_x(&status, MPI_INT, -1), MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1), MPI_ERR_ARG);
  int source;
  CHECK_ERROR_CLASS(MPI_Status_set_source(MPI_STATUS_IGNORE, 1), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &source), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Status_get_source(&status, NULL), MPI_ERR_ARG);
}

/* After all that, real work still succeeds. */
static void check_still_usable(void) {
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Comm ring;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  int left = -1, right = -1, mine = g_rank * 10, got[2] = {-1, -1};
  MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
  MPI_CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring));
  CHECK(got[0] == left * 10 && got[1] == right * 10,
        "neighbour allgather after errors: %d %d", got[0], got[1]);
  MPI_CHECK(MPI_Comm_free(&ring));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  /* Errors tied to no communicator go to MPI_COMM_SELF's handler once the
   * program set one; errors on the world to its own. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  check_group_errors();
  check_communicator_errors();
  check_topology_errors();
  check_attribute_errors();
  check_info_errors();
  check_memory_status_errors();
  check_still_usable();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("errors_objects", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#else /* another MPI: classes and stale-handle behaviour differ */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("errors_objects: minimpi's error classes; skipped\n");
  MPI_Finalize();
  return 0;
}

#endif
