/* Communicator creation beyond dup and split, and what communicators carry:
 *
 *   - MPI_Comm_idup (and _with_info): several outstanding at once on one
 *     parent, overlapped with point-to-point traffic (eager and
 *     rendezvous), a nonblocking and a blocking collective and a blocking
 *     MPI_Comm_dup on that parent; then every new communicator is checked
 *     (group, isolation from the parent with wildcard receives, a
 *     collective on it). Before its request completes (made deterministic
 *     by holding back the peer) the local calls work on it, as in MPICH and
 *     Open MPI: error handler, name, attributes, rank, size, group,
 *     compare, test_inter, info; communicating on it is MPI_ERR_COMM,
 *     raised on its own handler; the name, attribute and handler set early
 *     are still there once it completes, and it then works;
 *   - MPI_Comm_split_type: MPI_COMM_TYPE_SHARED (every rank of a one-node
 *     job, ordered by key), MPI_COMM_TYPE_HW_GUIDED with
 *     "mpi_shared_memory", another resource, no key and MPI_INFO_NULL,
 *     MPI_COMM_TYPE_HW_UNGUIDED, MPI_UNDEFINED;
 *   - names: MPI_COMM_WORLD and MPI_COMM_SELF by default, empty for new
 *     communicators, set/get, truncation, not copied by dup;
 *   - info hints: MPI_Comm_dup_with_info, set_info/get_info, hints copied by
 *     dup and idup, MPI_INFO_NULL;
 *   - MPI_Comm_test_inter is false everywhere. */
#include "test_util.h"

static int g_rank, g_size;

/* Checks of choices the standard leaves to the implementation, where
 * minimpi's are documented; skipped when the reference MPIs run this. */
#ifdef MINIMPI_TAG_UB
#define MINIMPI_ONLY 1
#else
#define MINIMPI_ONLY 0
#endif

static void check_same_group(MPI_Comm comm, MPI_Comm reference,
                             const char* what) {
  int result = -1;
  MPI_CHECK(MPI_Comm_compare(comm, reference, &result));
  CHECK(result == MPI_CONGRUENT,
        "%s: Comm_compare gives %d, expected CONGRUENT", what, result);
}

/* Messages on `comm` and `other` (same group, same tags, wildcard
 * receives) never cross, and a collective on `comm` works. */
static void check_isolated(MPI_Comm comm, MPI_Comm other, int key,
                           const char* what) {
  enum { kBytes = 700 };
  unsigned char out[2][kBytes], in[2][kBytes];
  MPI_Request requests[4];
  MPI_Comm comms[2] = {other, comm};
  for (int c = 0; c < 2; ++c) {
    memset(in[c], 0, kBytes);
    MPI_CHECK(MPI_Irecv(in[c], kBytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        comms[c], &requests[c]));
  }
  for (int c = 1; c >= 0; --c) {
    test_fill(out[c], kBytes, g_rank, key * 2 + c);
    MPI_CHECK(MPI_Isend(out[c], kBytes, MPI_BYTE, (g_rank + 1) % g_size, 3,
                        comms[c], &requests[2 + c]));
  }
  MPI_Status statuses[4];
  MPI_CHECK(MPI_Waitall(4, requests, statuses));
  const int left = (g_rank + g_size - 1) % g_size;
  for (int c = 0; c < 2; ++c) {
    CHECK_STATUS(statuses[c], left, 3, MPI_BYTE, kBytes, what);
    CHECK_PATTERN(in[c], kBytes, left, key * 2 + c, what);
  }
  int sum = 0;
  MPI_CHECK(MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, comm));
  CHECK(sum == g_size * (g_size - 1) / 2, "%s: Allreduce %d", what, sum);
}

static void check_idup_overlapped(void) {
  enum { kDups = 4, kBig = 100 * 1024 };
  MPI_Comm parent, dups[kDups + 1];
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
  MPI_Request requests[kDups + 4];
  for (int i = 0; i < kDups; ++i)
    MPI_CHECK(MPI_Comm_idup(parent, &dups[i], &requests[i]));
  /* Traffic on the parent while the duplications are pending. */
  const int right = (g_rank + 1) % g_size,
            left = (g_rank + g_size - 1) % g_size;
  unsigned char* big_out = (unsigned char*)test_malloc(kBig);
  unsigned char* big_in = (unsigned char*)test_malloc(kBig);
  unsigned char small_out[64], small_in[64];
  test_fill(big_out, kBig, g_rank, 11);
  test_fill(small_out, sizeof small_out, g_rank, 12);
  memset(big_in, 0, kBig);
  memset(small_in, 0, sizeof small_in);
  MPI_CHECK(
      MPI_Irecv(big_in, kBig, MPI_BYTE, left, 11, parent, &requests[kDups]));
  MPI_CHECK(MPI_Irecv(small_in, 64, MPI_BYTE, MPI_ANY_SOURCE, 12, parent,
                      &requests[kDups + 1]));
  MPI_CHECK(MPI_Isend(big_out, kBig, MPI_BYTE, right, 11, parent,
                      &requests[kDups + 2]));
  int value = g_rank + 1, sum = 0;
  MPI_CHECK(MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, parent,
                           &requests[kDups + 3]));
  MPI_CHECK(MPI_Send(small_out, 64, MPI_BYTE, right, 12, parent));
  int root_value = g_rank == 0 ? 4242 : -1;
  MPI_CHECK(MPI_Bcast(&root_value, 1, MPI_INT, 0, parent));
#if defined(OPEN_MPI)
  /* Open MPI 4.1 deadlocks in a blocking dup of a parent with idups
   * pending (legal MPI); it duplicates the world instead. */
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dups[kDups]));
#else
  MPI_CHECK(MPI_Comm_dup(parent, &dups[kDups])); /* blocking, in between */
#endif
  MPI_Status statuses[kDups + 4];
  MPI_CHECK(MPI_Waitall(kDups + 4, requests, statuses));
  for (int i = 0; i < kDups; ++i)
    CHECK(requests[i] == MPI_REQUEST_NULL,
          "idup request %d not freed by Waitall", i);
  CHECK(root_value == 4242, "Bcast during idups gave %d", root_value);
  CHECK(sum == g_size * (g_size + 1) / 2, "Iallreduce during idups gave %d",
        sum);
  CHECK_PATTERN(big_in, kBig, left, 11, "rendezvous message during idups");
  CHECK_PATTERN(small_in, 64, left, 12, "eager message during idups");
  for (int i = 0; i <= kDups; ++i) {
    char what[64];
    snprintf(what, sizeof what, "idup %d", i);
    check_same_group(dups[i], parent, what);
    check_isolated(dups[i], parent, i, what);
    check_isolated(dups[i], dups[(i + 1) % (kDups + 1)], 10 + i, what);
  }
  for (int i = 0; i <= kDups; ++i) MPI_CHECK(MPI_Comm_free(&dups[i]));
  MPI_CHECK(MPI_Comm_free(&parent));
  free(big_out);
  free(big_in);
}

/* Rank 0 starts an idup that cannot finish until rank 1 joins, which it
 * does only after rank 0 has tried to use the new communicator. */
static void check_idup_use_before_completion(void) {
  /* Open MPI 4.1 hangs here at 2 ranks (its idup does not progress while
   * the blocking send waits), so only minimpi runs it. */
  if (g_size < 2 || !MINIMPI_ONLY) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm early = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int keyval = MPI_KEYVAL_INVALID;
  static int attribute_value = 4711;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                   MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
  if (g_rank == 0) {
    /* World goes back to fatal: an error on `early` must reach the handler
     * set on `early` itself, or the job ends. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &early, &request));
    /* The peer has not joined, so the request cannot have completed. */
    int done = 1;
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    CHECK(!done, "the held-back idup completed before its peer joined");
    MPI_CHECK(MPI_Comm_set_errhandler(early, MPI_ERRORS_RETURN));
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_get_errhandler(early, &handler));
    CHECK(handler == MPI_ERRORS_RETURN,
          "Comm_get_errhandler on a pending idup communicator");
    MPI_CHECK(MPI_Errhandler_free(&handler));
    MPI_CHECK(MPI_Comm_set_name(early, "early bird"));
    char name[MPI_MAX_OBJECT_NAME];
    int length = -1;
    MPI_CHECK(MPI_Comm_get_name(early, name, &length));
    CHECK(length == 10 && strcmp(name, "early bird") == 0,
          "Comm_get_name on a pending idup communicator: \"%s\" (%d)", name,
          length);
    MPI_CHECK(MPI_Comm_set_attr(early, keyval, &attribute_value));
    int* got = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(early, keyval, &got, &flag));
    CHECK(flag && got == &attribute_value,
          "Comm_get_attr on a pending idup communicator");
    int rank = -1, size = -1, inter = -1, result = -1;
    MPI_CHECK(MPI_Comm_rank(early, &rank));
    MPI_CHECK(MPI_Comm_size(early, &size));
    CHECK(rank == g_rank && size == g_size,
          "pending idup communicator: rank %d size %d, expected %d and %d",
          rank, size, g_rank, g_size);
    MPI_CHECK(MPI_Comm_test_inter(early, &inter));
    CHECK(inter == 0, "Comm_test_inter on a pending idup gives %d", inter);
    MPI_CHECK(MPI_Comm_compare(early, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT,
          "Comm_compare(pending idup, world) gives %d, expected CONGRUENT",
          result);
    MPI_Group group, world_group;
    MPI_CHECK(MPI_Comm_group(early, &group));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPI_CHECK(MPI_Group_compare(group, world_group, &result));
    CHECK(result == MPI_IDENT, "Comm_group of a pending idup: compare %d",
          result);
    MPI_CHECK(MPI_Group_free(&group));
    MPI_CHECK(MPI_Group_free(&world_group));
    MPI_Info info = MPI_INFO_NULL;
    MPI_CHECK(MPI_Comm_get_info(early, &info));
    MPI_CHECK(MPI_Info_free(&info));
    /* Communicating is refused, on early's own handler (world's is fatal),
     * and nothing is sent. */
    int value = 7, error_class = -1;
    const int rc = MPI_Send(&value, 1, MPI_INT, 1, 5, early);
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_COMM,
          "MPI_Send on a pending idup communicator: class %d, expected "
          "MPI_ERR_COMM",
          error_class);
    const int barrier_rc = MPI_Barrier(early);
    MPI_Error_class(barrier_rc, &error_class);
    CHECK(error_class == MPI_ERR_COMM,
          "MPI_Barrier on a pending idup communicator: class %d, expected "
          "MPI_ERR_COMM",
          error_class);
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  } else {
    if (g_rank == 1)
      MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &early, &request));
  }
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  int size = -1;
  MPI_CHECK(MPI_Comm_size(early, &size));
  CHECK(size == g_size, "idup communicator has size %d after completion", size);
  if (g_rank == 0) {
    /* What was set early survived the completion. */
    char name[MPI_MAX_OBJECT_NAME];
    int length = -1, flag = 0;
    int* got = NULL;
    MPI_CHECK(MPI_Comm_get_name(early, name, &length));
    CHECK(strcmp(name, "early bird") == 0, "name after completion: \"%s\"",
          name);
    MPI_CHECK(MPI_Comm_get_attr(early, keyval, &got, &flag));
    CHECK(flag && got == &attribute_value, "attribute after completion");
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_get_errhandler(early, &handler));
    CHECK(handler == MPI_ERRORS_RETURN, "error handler after completion");
    MPI_CHECK(MPI_Errhandler_free(&handler));
  }
  check_isolated(early, MPI_COMM_WORLD, 30, "idup held back");
  MPI_CHECK(MPI_Comm_free(&early));
  MPI_CHECK(MPI_Comm_free_keyval(&keyval));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static inline int info_value(MPI_Info info, const char* key, char* value) {
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag));
  return flag;
}

/* Which world ranks share this rank's node, by processor name (the
 * launcher's node name: on a cluster, or with pretend nodes, the job spans
 * several): node_mates[r] is 1 for each. Returns how many. */
static int find_node_mates(int* node_mates) {
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0;
  MPI_CHECK(MPI_Get_processor_name(name, &length));
  char* names = malloc((size_t)g_size * MPI_MAX_PROCESSOR_NAME);
  CHECK(names != NULL, "out of memory");
  MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names,
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
  int count = 0;
  for (int r = 0; r < g_size; ++r) {
    node_mates[r] = strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    count += node_mates[r];
  }
  free(names);
  return count;
}

static void check_split_type(void) {
  int* mates = malloc(sizeof(int) * (size_t)g_size);
  CHECK(mates != NULL, "out of memory");
  const int on_node = find_node_mates(mates);
  /* Keys reverse the world order: my rank there is the number of node
   * mates above me, and rank 0 is the highest world rank on the node. */
  int mates_above = 0, highest_mate = g_rank, even_mates = 0;
  for (int r = 0; r < g_size; ++r) {
    if (!mates[r]) continue;
    if (r > g_rank) ++mates_above;
    if (r > highest_mate) highest_mate = r;
    if (r % 2 == 0) ++even_mates;
  }
  MPI_Comm shared;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                                g_size - g_rank, MPI_INFO_NULL, &shared));
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(shared, &rank));
  MPI_CHECK(MPI_Comm_size(shared, &size));
  CHECK(size == on_node && rank == mates_above,
        "MPI_COMM_TYPE_SHARED: rank %d of %d, expected %d of %d (the ranks "
        "with this processor name)",
        rank, size, mates_above, on_node);
  /* The node's ranks in world order, for the splits made with key 0. */
  MPI_Comm node_in_order;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                MPI_INFO_NULL, &node_in_order));
  int world_rank_of_zero = -1;
  if (rank == 0) world_rank_of_zero = g_rank;
  MPI_CHECK(MPI_Bcast(&world_rank_of_zero, 1, MPI_INT, 0, shared));
  CHECK(world_rank_of_zero == highest_mate,
        "shared rank 0 is world rank %d, expected %d", world_rank_of_zero,
        highest_mate);
  MPI_Comm undefined;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL,
                                &undefined));
  CHECK(undefined == MPI_COMM_NULL,
        "MPI_UNDEFINED split_type gave a communicator");
  /* Some ranks MPI_UNDEFINED, the others SHARED. */
  MPI_Comm some;
  MPI_CHECK(MPI_Comm_split_type(
      MPI_COMM_WORLD, g_rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
      MPI_INFO_NULL, &some));
  if (g_rank % 2) {
    CHECK(some == MPI_COMM_NULL, "MPI_UNDEFINED rank got a communicator");
  } else {
    MPI_CHECK(MPI_Comm_size(some, &size));
    CHECK(size == even_mates,
          "even ranks' shared communicator has size %d, expected %d", size,
          even_mates);
    MPI_CHECK(MPI_Comm_free(&some));
  }
#if MPI_VERSION >= 4
  char value[MPI_MAX_INFO_VAL];
  (void)value;
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
  MPI_Comm guided;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                info, &guided));
  CHECK(guided != MPI_COMM_NULL,
        "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
  check_same_group(guided, node_in_order, "HW_GUIDED mpi_shared_memory");
#if MINIMPI_ONLY
  MPI_Info used;
  MPI_CHECK(MPI_Comm_get_info(guided, &used));
  CHECK(info_value(used, "mpi_hw_resource_type", value) &&
            strcmp(value, "mpi_shared_memory") == 0,
        "HW_GUIDED communicator's info lacks mpi_hw_resource_type");
  MPI_CHECK(MPI_Info_free(&used));
  MPI_CHECK(MPI_Comm_get_info(shared, &used));
  CHECK(info_value(used, "mpi_hw_resource_type", value) &&
            strcmp(value, "mpi_shared_memory") == 0,
        "SHARED communicator's info lacks mpi_hw_resource_type");
  MPI_CHECK(MPI_Info_free(&used));
  /* Resources minimpi knows nothing finer about give no communicator. */
  MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", "hwloc://NUMANode"));
  MPI_Comm other;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                info, &other));
  CHECK(other == MPI_COMM_NULL, "HW_GUIDED NUMANode gave a communicator");
  /* The node is the finest split minimpi knows: a job on one node has
   * none to offer, one across nodes splits by node. */
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0,
                                MPI_INFO_NULL, &other));
  if (on_node == g_size) {
    CHECK(other == MPI_COMM_NULL,
          "HW_UNGUIDED on one node gave a communicator");
  } else {
    CHECK(other != MPI_COMM_NULL, "HW_UNGUIDED across nodes gave none");
    check_same_group(other, node_in_order, "HW_UNGUIDED across nodes");
    MPI_CHECK(MPI_Comm_free(&other));
  }
#endif
  MPI_CHECK(MPI_Info_delete(info, "mpi_hw_resource_type"));
  MPI_Comm missing;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                info, &missing));
  CHECK(missing == MPI_COMM_NULL,
        "HW_GUIDED without the key gave a communicator");
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                MPI_INFO_NULL, &missing));
  CHECK(missing == MPI_COMM_NULL,
        "HW_GUIDED with MPI_INFO_NULL gave a communicator");
  MPI_CHECK(MPI_Info_free(&info));
  MPI_CHECK(MPI_Comm_free(&guided));
#endif
  MPI_CHECK(MPI_Comm_free(&node_in_order));
  MPI_CHECK(MPI_Comm_free(&shared));
  free(mates);
}

static void expect_name(MPI_Comm comm, const char* expected, const char* what) {
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  MPI_CHECK(MPI_Comm_get_name(comm, name, &length));
  CHECK(strcmp(name, expected) == 0 && length == (int)strlen(expected),
        "%s: name \"%s\" (length %d), expected \"%s\"", what, name, length,
        expected);
}

static void check_names(void) {
  expect_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "MPI_COMM_WORLD");
  expect_name(MPI_COMM_SELF, "MPI_COMM_SELF", "MPI_COMM_SELF");
  MPI_Comm comm, copy;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  expect_name(comm, "", "new communicator");
  MPI_CHECK(MPI_Comm_set_name(comm, "halo exchange"));
  expect_name(comm, "halo exchange", "named communicator");
  MPI_CHECK(MPI_Comm_dup(comm, &copy));
  expect_name(copy, "", "dup of a named communicator");
  /* A name longer than MPI_MAX_OBJECT_NAME - 1 is truncated. */
  char long_name[MPI_MAX_OBJECT_NAME + 40];
  for (int i = 0; i < (int)sizeof long_name - 1; ++i)
    long_name[i] = (char)('a' + i % 26);
  long_name[sizeof long_name - 1] = '\0';
  MPI_CHECK(MPI_Comm_set_name(copy, long_name));
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  MPI_CHECK(MPI_Comm_get_name(copy, name, &length));
  CHECK(length == MPI_MAX_OBJECT_NAME - 1 &&
            strncmp(name, long_name, (size_t)length) == 0 &&
            name[length] == '\0',
        "long name: length %d, expected %d", length, MPI_MAX_OBJECT_NAME - 1);
  MPI_CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "world renamed"));
  expect_name(MPI_COMM_WORLD, "world renamed", "renamed MPI_COMM_WORLD");
  MPI_CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));
  MPI_CHECK(MPI_Comm_free(&copy));
  MPI_CHECK(MPI_Comm_free(&comm));
}

#if MPI_VERSION >= 4 && MINIMPI_ONLY
/* The hints a communicator reports: each of the four assertions, with its
 * expected value, and nothing unknown. */
static void expect_hints(MPI_Comm comm, const char* no_any_tag,
                         const char* what) {
  MPI_Info used;
  MPI_CHECK(MPI_Comm_get_info(comm, &used));
  char value[MPI_MAX_INFO_VAL];
  CHECK(info_value(used, "mpi_assert_no_any_tag", value) &&
            strcmp(value, no_any_tag) == 0,
        "%s: mpi_assert_no_any_tag is not %s", what, no_any_tag);
  const char* others[] = {"mpi_assert_no_any_source", "mpi_assert_exact_length",
                          "mpi_assert_allow_overtaking"};
  for (int i = 0; i < 3; ++i)
    CHECK(info_value(used, others[i], value) && strcmp(value, "false") == 0,
          "%s: %s is missing or not false", what, others[i]);
  CHECK(!info_value(used, "made_up_hint", value),
        "%s: an unknown hint was kept", what);
  MPI_CHECK(MPI_Info_free(&used));
}
#endif

static void check_hints(void) {
#if MPI_VERSION >= 4
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
  MPI_CHECK(MPI_Info_set(info, "made_up_hint", "42"));
  MPI_Comm with_info, plain, copied, cleared, idup;
  MPI_CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &with_info));
  check_same_group(with_info, MPI_COMM_WORLD, "Comm_dup_with_info");
  check_isolated(with_info, MPI_COMM_WORLD, 40, "Comm_dup_with_info");
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &plain));
  MPI_CHECK(MPI_Comm_dup(with_info, &copied));
  MPI_CHECK(MPI_Comm_dup_with_info(with_info, MPI_INFO_NULL, &cleared));
  MPI_Request request;
  MPI_CHECK(MPI_Comm_idup(with_info, &idup, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
#if MINIMPI_ONLY
  expect_hints(with_info, "true", "dup_with_info");
  expect_hints(plain, "false", "plain dup");
  expect_hints(copied, "true", "dup of a hinted communicator");
  expect_hints(idup, "true", "idup of a hinted communicator");
  expect_hints(cleared, "false", "dup_with_info(MPI_INFO_NULL)");
  MPI_CHECK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
  MPI_CHECK(MPI_Comm_set_info(with_info, info));
  expect_hints(with_info, "false", "after set_info");
#endif
  MPI_Comm idup_info;
  MPI_CHECK(MPI_Comm_idup_with_info(plain, info, &idup_info, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  check_isolated(idup_info, plain, 41, "Comm_idup_with_info");
  MPI_CHECK(MPI_Comm_free(&idup_info));
  MPI_CHECK(MPI_Info_free(&info));
  MPI_CHECK(MPI_Comm_free(&with_info));
  MPI_CHECK(MPI_Comm_free(&plain));
  MPI_CHECK(MPI_Comm_free(&copied));
  MPI_CHECK(MPI_Comm_free(&cleared));
  MPI_CHECK(MPI_Comm_free(&idup));
#endif
}

static void check_test_inter(void) {
  MPI_Comm comms[3] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL};
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, 0, &comms[2]));
  for (int i = 0; i < 3; ++i) {
    int flag = -1;
    MPI_CHECK(MPI_Comm_test_inter(comms[i], &flag));
    CHECK(flag == 0, "Comm_test_inter on an intracommunicator gave %d", flag);
  }
  MPI_CHECK(MPI_Comm_free(&comms[2]));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  check_idup_overlapped();
  check_idup_use_before_completion();
  check_split_type();
  check_names();
  check_hints();
  check_test_inter();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("communicators", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
