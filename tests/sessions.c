/* Sessions (MPI-4.1 chapter 11), the ground MPICH's test/mpi/session tests
 * and ompi-tests-public's sessions/ cover:
 *   - process sets listed and looked up without regard to case, their info
 *     (mpi_size) and the session's (thread_level);
 *   - communicators from the WORLD, SELF and node process sets carrying
 *     point-to-point and collective data, checked byte for byte;
 *   - MPI_Comm_create_from_group with different string tags, also at once
 *     from two threads over the same group;
 *   - MPI_Intercomm_create_from_groups carrying data;
 *   - sessions and the world model in both orders, sessions begun and
 *     ended repeatedly, also after MPI_Finalize;
 *   - session error handlers, and stale and garbage session handles.
 *
 * With the argument "world_without_init" it instead uses MPI_COMM_WORLD
 * while only a session is live, which must fail with a clear message. */
#include <pthread.h>

#include "test_util.h"

#define NODE_PREFIX "mpix://node/"

static int session_world_size;
static int session_world_rank;

/* A communicator over the process set `pset` of `session`. */
static MPI_Comm comm_from_pset(MPI_Session session, const char* pset,
                               const char* tag) {
  MPI_Group group;
  MPI_CHECK(MPI_Group_from_session_pset(session, pset, &group));
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL,
                                       MPI_ERRORS_RETURN, &comm));
  CHECK(comm != MPI_COMM_NULL, "no communicator for %s", pset);
  int group_size, comm_size, group_rank, comm_rank;
  MPI_CHECK(MPI_Group_size(group, &group_size));
  MPI_CHECK(MPI_Group_rank(group, &group_rank));
  MPI_CHECK(MPI_Comm_size(comm, &comm_size));
  MPI_CHECK(MPI_Comm_rank(comm, &comm_rank));
  CHECK(comm_size == group_size && comm_rank == group_rank,
        "%s: communicator rank %d of %d, group rank %d of %d", pset, comm_rank,
        comm_size, group_rank, group_size);
  MPI_CHECK(MPI_Group_free(&group));
  return comm;
}

/* A ring of point-to-point messages and three collectives on `comm`, every
 * byte checked; `salt` makes each use's data its own. */
static void exercise(MPI_Comm comm, int salt) {
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  enum { kCount = 1000 };
  int sent[kCount], received[kCount];
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < kCount; ++i) sent[i] = salt * 1000003 + rank * kCount + i;
  MPI_CHECK(MPI_Sendrecv(sent, kCount, MPI_INT, right, 7, received, kCount,
                         MPI_INT, left, 7, comm, MPI_STATUS_IGNORE));
  for (int i = 0; i < kCount; ++i) {
    CHECK(received[i] == salt * 1000003 + left * kCount + i,
          "ring: element %d is %d, expected %d", i, received[i],
          salt * 1000003 + left * kCount + i);
  }
  long long sum = 0, mine = (long long)rank + salt;
  MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm));
  const long long expected =
      (long long)size * (size - 1) / 2 + (long long)size * salt;
  CHECK(sum == expected, "allreduce: %lld, expected %lld", sum, expected);
  int root_value = rank == size - 1 ? salt * 31 + 5 : -1;
  MPI_CHECK(MPI_Bcast(&root_value, 1, MPI_INT, size - 1, comm));
  CHECK(root_value == salt * 31 + 5, "bcast: %d", root_value);
  int* to_all = malloc(sizeof(int) * size);
  int* from_all = malloc(sizeof(int) * size);
  for (int peer = 0; peer < size; ++peer)
    to_all[peer] = salt + rank * 100 + peer;
  MPI_CHECK(MPI_Alltoall(to_all, 1, MPI_INT, from_all, 1, MPI_INT, comm));
  for (int peer = 0; peer < size; ++peer) {
    CHECK(from_all[peer] == salt + peer * 100 + rank,
          "alltoall: from %d got %d", peer, from_all[peer]);
  }
  free(to_all);
  free(from_all);
}

static void check_info_value(MPI_Info info, const char* key,
                             const char* expected) {
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag, "info has no %s", key);
  CHECK(strcmp(value, expected) == 0, "info %s is \"%s\", expected \"%s\"", key,
        value, expected);
}

static int pset_size(MPI_Session session, const char* pset) {
  MPI_Info info;
  MPI_CHECK(MPI_Session_get_pset_info(session, pset, &info));
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag, "pset info of %s has no mpi_size", pset);
  MPI_CHECK(MPI_Info_free(&info));
  return atoi(value);
}

static MPI_Session begin_session(const char* thread_level) {
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "thread_level", thread_level));
  MPI_Session session;
  MPI_CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &session));
  MPI_CHECK(MPI_Info_free(&info));
  CHECK(session != MPI_SESSION_NULL, "MPI_Session_init gave no session");
  return session;
}

/* The process sets: listed, their names' lengths, lookups in any case. */
static char node_pset[MPI_MAX_PSET_NAME_LEN];

static void check_process_sets(MPI_Session session) {
  int count = 0;
  MPI_CHECK(MPI_Session_get_num_psets(session, MPI_INFO_NULL, &count));
  CHECK(count >= 3, "%d process sets, expected WORLD, SELF and a node", count);
  int saw_world = 0, saw_self = 0;
  node_pset[0] = '\0';
  for (int n = 0; n < count; ++n) {
    int length = 0;
    MPI_CHECK(
        MPI_Session_get_nth_pset(session, MPI_INFO_NULL, n, &length, NULL));
    char name[MPI_MAX_PSET_NAME_LEN];
    CHECK(length > 1 && length <= MPI_MAX_PSET_NAME_LEN,
          "process set %d: length %d", n, length);
    MPI_CHECK(
        MPI_Session_get_nth_pset(session, MPI_INFO_NULL, n, &length, name));
    CHECK((int)strlen(name) + 1 == length, "process set %d: \"%s\", length %d",
          n, name, length);
    if (strcmp(name, "mpi://WORLD") == 0) saw_world = 1;
    if (strcmp(name, "mpi://SELF") == 0) saw_self = 1;
    if (strncmp(name, NODE_PREFIX, strlen(NODE_PREFIX)) == 0) {
      /* Only one of the node sets holds this process. */
      MPI_Group group;
      int rank;
      MPI_CHECK(MPI_Group_from_session_pset(session, name, &group));
      MPI_CHECK(MPI_Group_rank(group, &rank));
      MPI_CHECK(MPI_Group_free(&group));
      if (rank != MPI_UNDEFINED) {
        CHECK(node_pset[0] == '\0', "two node process sets hold this process");
        strcpy(node_pset, name);
      }
    }
  }
  CHECK(saw_world && saw_self, "mpi://WORLD or mpi://SELF is not listed");
  CHECK(node_pset[0] != '\0', "no node process set holds this process");
  /* A short buffer gets the name's beginning, terminated. */
  char shortened[5];
  int short_length = (int)sizeof shortened;
  MPI_CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &short_length,
                                     shortened));
  CHECK(strlen(shortened) == 4, "truncated name \"%s\"", shortened);

  session_world_size = pset_size(session, "mpi://WORLD");
  CHECK(pset_size(session, "MPI://world") == session_world_size,
        "WORLD looked up in another case has another size");
  CHECK(pset_size(session, "Mpi://Self") == 1, "SELF's mpi_size is not 1");
  const int node_size = pset_size(session, node_pset);
  CHECK(node_size >= 1 && node_size <= session_world_size,
        "node set's mpi_size %d (world %d)", node_size, session_world_size);
  MPI_Group world_group;
  MPI_CHECK(MPI_Group_from_session_pset(session, "mpi://world", &world_group));
  int group_size;
  MPI_CHECK(MPI_Group_size(world_group, &group_size));
  MPI_CHECK(MPI_Group_rank(world_group, &session_world_rank));
  MPI_CHECK(MPI_Group_free(&world_group));
  CHECK(group_size == session_world_size,
        "WORLD group has %d members, its mpi_size says %d", group_size,
        session_world_size);

  /* A name that names no set: MPI_ERR_ARG, through the session's
   * MPI_ERRORS_RETURN. */
  MPI_Group none;
  int rc = MPI_Group_from_session_pset(session, "mpi://NOWHERE", &none);
  int error_class = -1;
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_ARG, "unknown process set gave class %d",
        error_class);
  MPI_Info info;
  rc = MPI_Session_get_pset_info(session, "mpi://WORLDS", &info);
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_ARG, "unknown pset info gave class %d",
        error_class);
}

/* Two threads create communicators over the same group at once, each with
 * its own tag, and use them: the creations must not take each other's
 * messages. */
struct thread_work {
  MPI_Session session;
  int index;
};

static void* create_and_use(void* argument) {
  struct thread_work* work = argument;
  for (int round = 0; round < 5; ++round) {
    char tag[64];
    snprintf(tag, sizeof tag, "org.minimpi.test.thread%d.round%d", work->index,
             round);
    MPI_Comm comm = comm_from_pset(work->session, "mpi://WORLD", tag);
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    int value = rank * 10 + work->index, sum = 0;
    MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) * 5 + size * work->index,
          "thread %d round %d: sum %d", work->index, round, sum);
    MPI_CHECK(MPI_Comm_free(&comm));
  }
  return NULL;
}

static void check_communicators(MPI_Session session, int salt) {
  MPI_Comm world = comm_from_pset(session, "mpi://WORLD", "org.minimpi.world");
  exercise(world, salt);
  /* Another tag over the same group: another communicator, and both work. */
  MPI_Comm again = comm_from_pset(session, "MPI://WORLD", "org.minimpi.again");
  exercise(again, salt + 1);
  exercise(world, salt + 2);
  int result;
  MPI_CHECK(MPI_Comm_compare(world, again, &result));
  CHECK(result == MPI_CONGRUENT, "two communicators over WORLD compare %d",
        result);
  MPI_CHECK(MPI_Comm_free(&again));

  MPI_Comm self = comm_from_pset(session, "mpi://SELF", "org.minimpi.self");
  exercise(self, salt + 3);
  MPI_CHECK(MPI_Comm_free(&self));

  MPI_Comm node = comm_from_pset(session, node_pset, "org.minimpi.node");
  exercise(node, salt + 4);
  MPI_CHECK(MPI_Comm_free(&node));

  /* A group this process is not in: MPI_ERR_GROUP on the handler given. */
  if (session_world_size > 1) {
    MPI_Group world_group, others;
    MPI_CHECK(
        MPI_Group_from_session_pset(session, "mpi://WORLD", &world_group));
    MPI_CHECK(MPI_Group_excl(world_group, 1, &session_world_rank, &others));
    MPI_Comm none;
    int rc = MPI_Comm_create_from_group(
        others, "org.minimpi.notme", MPI_INFO_NULL, MPI_ERRORS_RETURN, &none);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_GROUP, "group without me gave class %d",
          error_class);
    MPI_CHECK(MPI_Group_free(&others));

    /* An intercommunicator between the even and odd world ranks. */
    MPI_Group even, odd;
    int range_even[1][3] = {{0, session_world_size - 1, 2}};
    int range_odd[1][3] = {{1, session_world_size - 1, 2}};
    MPI_CHECK(MPI_Group_range_incl(world_group, 1, range_even, &even));
    MPI_CHECK(MPI_Group_range_incl(world_group, 1, range_odd, &odd));
    const int i_am_even = session_world_rank % 2 == 0;
    MPI_Comm inter;
    MPI_CHECK(MPI_Intercomm_create_from_groups(
        i_am_even ? even : odd, 0, i_am_even ? odd : even, 0,
        "org.minimpi.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter));
    int is_inter = 0, remote_size = 0, local_size = 0;
    MPI_CHECK(MPI_Comm_test_inter(inter, &is_inter));
    MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));
    MPI_CHECK(MPI_Comm_size(inter, &local_size));
    const int evens = (session_world_size + 1) / 2;
    const int odds = session_world_size / 2;
    CHECK(is_inter && local_size == (i_am_even ? evens : odds) &&
              remote_size == (i_am_even ? odds : evens),
          "intercommunicator: inter %d, sizes %d and %d", is_inter, local_size,
          remote_size);
    /* The sum of the remote group's world ranks, and a message from the
     * remote group's rank 0 to each local rank. */
    int mine = session_world_rank, remote_sum = 0, expected = 0;
    for (int r = i_am_even ? 1 : 0; r < session_world_size; r += 2) {
      expected += r;
    }
    MPI_CHECK(MPI_Allreduce(&mine, &remote_sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(remote_sum == expected, "intercomm allreduce %d, expected %d",
          remote_sum, expected);
    int local_rank;
    MPI_CHECK(MPI_Comm_rank(inter, &local_rank));
    if (local_rank == 0) {
      for (int r = 0; r < remote_size; ++r) {
        int payload[3] = {salt, session_world_rank, r};
        MPI_CHECK(MPI_Send(payload, 3, MPI_INT, r, 11, inter));
      }
    }
    int payload[3];
    MPI_CHECK(MPI_Recv(payload, 3, MPI_INT, 0, 11, inter, MPI_STATUS_IGNORE));
    CHECK(payload[0] == salt && payload[1] == (i_am_even ? 1 : 0) &&
              payload[2] == local_rank,
          "intercomm message {%d, %d, %d}", payload[0], payload[1], payload[2]);
    MPI_CHECK(MPI_Comm_free(&inter));
    MPI_CHECK(MPI_Group_free(&even));
    MPI_CHECK(MPI_Group_free(&odd));
    MPI_CHECK(MPI_Group_free(&world_group));
  }

  /* Two threads at once, each with its own tags. */
  pthread_t threads[2];
  struct thread_work work[2];
  for (int t = 0; t < 2; ++t) {
    work[t].session = session;
    work[t].index = t;
    CHECK(pthread_create(&threads[t], NULL, create_and_use, &work[t]) == 0,
          "pthread_create");
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);

  exercise(world, salt + 5);
  MPI_CHECK(MPI_Comm_free(&world));
}

/* Session error handlers. */
static int handler_calls;
static int handler_last_class;
static MPI_Session handler_last_session;

static void record_error(MPI_Session* session, int* code, ...) {
  ++handler_calls;
  handler_last_session = *session;
  MPI_Error_class(*code, &handler_last_class);
}

static void check_error_handlers(MPI_Session session) {
  MPI_Errhandler handler;
  MPI_CHECK(MPI_Session_create_errhandler(record_error, &handler));
  MPI_CHECK(MPI_Session_set_errhandler(session, handler));
  MPI_Errhandler got;
  MPI_CHECK(MPI_Session_get_errhandler(session, &got));
  CHECK(got == handler, "MPI_Session_get_errhandler gave another handler");
  MPI_CHECK(MPI_Errhandler_free(&got));

  handler_calls = 0;
  MPI_Group none;
  int rc = MPI_Group_from_session_pset(session, "no such set", &none);
  CHECK(handler_calls == 1 && handler_last_session == session &&
            handler_last_class == MPI_ERR_ARG,
        "handler: %d calls, class %d", handler_calls, handler_last_class);
  CHECK(rc != MPI_SUCCESS, "a bad pset name returned MPI_SUCCESS");

  MPI_CHECK(MPI_Session_call_errhandler(session, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_last_class == MPI_ERR_OTHER,
        "MPI_Session_call_errhandler: %d calls, class %d", handler_calls,
        handler_last_class);

  MPI_CHECK(MPI_Session_set_errhandler(session, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Errhandler_free(&handler));
  MPI_CHECK(MPI_Session_get_errhandler(session, &got));
  CHECK(got == MPI_ERRORS_RETURN, "handler not back to MPI_ERRORS_RETURN");
}

/* Stale, null and garbage session handles: MPI_ERR_SESSION, raised on the
 * live session's MPI_ERRORS_RETURN (or the world's, once MPI_Init ran). */
static void check_bad_handles(void) {
  MPI_Session other = begin_session("MPI_THREAD_SINGLE");
  MPI_Session stale = other;
  /* Through an integer and back while it lives; after, an error. */
  const MPI_Fint as_int = MPI_Session_c2f(other);
  CHECK(MPI_Session_f2c(as_int) == other, "MPI_Session_f2c(c2f) differs");
  CHECK(MPI_Session_f2c(MPI_Session_c2f(MPI_SESSION_NULL)) == MPI_SESSION_NULL,
        "MPI_SESSION_NULL through an integer");
  MPI_CHECK(MPI_Session_finalize(&other));
  CHECK(other == MPI_SESSION_NULL, "MPI_Session_finalize left the handle");
  MPI_Session bad[4] = {stale, MPI_SESSION_NULL, (MPI_Session)0x5e55a1dULL,
                        MPI_Session_f2c(as_int)};
  for (int i = 0; i < 4; ++i) {
    int count = 0;
    int rc = MPI_Session_get_num_psets(bad[i], MPI_INFO_NULL, &count);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_SESSION, "bad handle %d gave class %d", i,
          error_class);
  }
  int rc = MPI_Session_finalize(&stale);
  int error_class = -1;
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_SESSION, "finalizing twice gave class %d",
        error_class);
}

static void check_initialized(int initialized, int finalized) {
  int flag;
  MPI_CHECK(MPI_Initialized(&flag));
  CHECK(flag == initialized, "MPI_Initialized %d, expected %d", flag,
        initialized);
  MPI_CHECK(MPI_Finalized(&flag));
  CHECK(flag == finalized, "MPI_Finalized %d, expected %d", flag, finalized);
}

/* One short session: begin, a communicator, data, end. */
static void short_session(int salt) {
  MPI_Session session = begin_session("MPI_THREAD_FUNNELED");
  MPI_Info info;
  MPI_CHECK(MPI_Session_get_info(session, &info));
  check_info_value(info, "thread_level", "MPI_THREAD_FUNNELED");
  MPI_CHECK(MPI_Info_free(&info));
  /* The same tag each time: sequential uses never meet. */
  MPI_Comm comm = comm_from_pset(session, "mpi://WORLD", "org.minimpi.short");
  exercise(comm, salt);
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Session_finalize(&session));
}

static void world_without_init(void) {
  MPI_Session session;
  MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session));
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size); /* fatal: no world model */
  fprintf(stderr, "MPI_COMM_WORLD was usable without MPI_Init\n");
  exit(0); /* the test expects failure */
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "world_without_init") == 0) {
    world_without_init();
  }
  check_initialized(0, 0);

  /* A session first, alone. */
  MPI_Session first = begin_session("MPI_THREAD_MULTIPLE");
  check_initialized(0, 0);
  MPI_Info info;
  MPI_CHECK(MPI_Session_get_info(first, &info));
  check_info_value(info, "thread_level", "MPI_THREAD_MULTIPLE");
  MPI_CHECK(MPI_Info_free(&info));
  check_process_sets(first);
  check_communicators(first, 100);
  check_error_handlers(first);
  check_bad_handles();
  /* A bad error handler for a new communicator: no session to name, so
   * the error goes to the live session's handler (MPI_ERRORS_RETURN). */
  {
    MPI_Group group;
    MPI_CHECK(MPI_Group_from_session_pset(first, "mpi://SELF", &group));
    MPI_Comm none;
    int rc = MPI_Comm_create_from_group(group, "org.minimpi.bad", MPI_INFO_NULL,
                                        (MPI_Errhandler)0x7777777ULL, &none);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_ARG, "bad errhandler gave class %d",
          error_class);
    MPI_CHECK(MPI_Group_free(&group));
  }

  /* MPI_Finalize without MPI_Init is an error (on the session's
   * MPI_ERRORS_RETURN here), and leaves MPI_Init possible. */
  {
    int error_class = -1;
    MPI_Error_class(MPI_Finalize(), &error_class);
    CHECK(error_class == MPI_ERR_OTHER, "MPI_Finalize before MPI_Init: %d",
          error_class);
    check_initialized(0, 0);
  }

  /* Then the world model beside it. */
  int provided;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  check_initialized(1, 0);
  int world_rank, world_size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  CHECK(world_size == session_world_size && world_rank == session_world_rank,
        "MPI_COMM_WORLD rank %d of %d, session WORLD rank %d of %d", world_rank,
        world_size, session_world_rank, session_world_size);
  {
    /* The node set is the node MPI_COMM_TYPE_SHARED and
     * MPI_Get_processor_name name. */
    MPI_Comm shared;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                  MPI_INFO_NULL, &shared));
    int shared_size;
    MPI_CHECK(MPI_Comm_size(shared, &shared_size));
    CHECK(shared_size == pset_size(first, node_pset),
          "node set %s has %d processes, MPI_COMM_TYPE_SHARED %d", node_pset,
          pset_size(first, node_pset), shared_size);
    MPI_CHECK(MPI_Comm_free(&shared));
    char host[MPI_MAX_PROCESSOR_NAME];
    int length;
    MPI_CHECK(MPI_Get_processor_name(host, &length));
    CHECK(strcmp(node_pset + strlen(NODE_PREFIX), host) == 0,
          "node set %s, processor name %s", node_pset, host);
  }
  /* Session communicators and MPI_COMM_WORLD at once. */
  MPI_Comm from_session =
      comm_from_pset(first, "mpi://WORLD", "org.minimpi.beside");
  exercise(from_session, 200);
  exercise(MPI_COMM_WORLD, 201);
  exercise(from_session, 202);
  MPI_CHECK(MPI_Comm_free(&from_session));
  MPI_CHECK(MPI_Session_finalize(&first));

  /* Sessions begun and ended while the world model runs. */
  for (int i = 0; i < 3; ++i) short_session(300 + i);
  /* One begun now and ended after MPI_Finalize. */
  MPI_Session across = begin_session("MPI_THREAD_SINGLE");
  exercise(MPI_COMM_WORLD, 400);
  MPI_CHECK(MPI_Finalize());
  check_initialized(1, 1);
  {
    int error_class = -1;
    MPI_Error_class(MPI_Finalize(), &error_class);
    CHECK(error_class == MPI_ERR_OTHER, "MPI_Finalize twice: %d", error_class);
  }
  {
    MPI_Comm comm = comm_from_pset(across, "mpi://WORLD", "org.minimpi.across");
    exercise(comm, 500);
    MPI_CHECK(MPI_Comm_free(&comm));
  }
  MPI_CHECK(MPI_Session_finalize(&across));

  /* And again and again after MPI_Finalize. */
  for (int i = 0; i < 3; ++i) short_session(600 + i);
  check_initialized(1, 1);
  if (session_world_rank == 0) printf("sessions: all checks passed\n");
  return 0;
}
