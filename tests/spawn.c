/* MPI_Comm_spawn and MPI_Comm_spawn_multiple under mpiexec, the basics that
 * MPICH's test/mpi/spawn and mpi4py's test_spawn exercise: the parents spawn
 * children running this program ("child" as argv[1]), the counts and error
 * codes are checked, the children find their parents, data moves both ways
 * over the intercommunicator (point-to-point, a broadcast from a parent with
 * MPI_ROOT, an allreduce), the intercommunicator is merged and a collective
 * runs on the result, and both sides disconnect.
 *
 * Usage: spawn [children]   (default 2)
 *        spawn multiple     (spawn_multiple: two commands, 1 + 2 children,
 *                            each with its own argv; MPI_APPNUM checked)
 *        spawn iccreate     (rank 0 alone spawns; then MPI_Intercomm_create
 *                            over both worlds through the spawn's
 *                            intercommunicator, as MPICH's spaiccreate)
 *        spawn nested       (each child spawns a grandchild, all at once)
 *        spawn missing      (a command that does not exist: fatal error)
 *        spawn die          (a spawned process exits with code 3: mpiexec
 *                            reports it and ends the job)
 *        spawn not-mpi      (the spawned program never calls MPI_Init:
 *                            mpiexec ends the job instead of letting the
 *                            parents wait forever)
 * Under srun every mode but the last two checks instead that spawning and
 * name publishing fail cleanly (MPI_ERR_SPAWN, MPI_ERR_SERVICE, ...). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The exchanges both sides make over `inter`; `parents` says which side this
 * is. Every value depends on the sender's rank, so a misrouted message is
 * caught. */
static void Exchange(MPI_Comm inter, int parents) {
  int rank, size, remote_size;
  MPI_CHECK(MPI_Comm_rank(inter, &rank));
  MPI_CHECK(MPI_Comm_size(inter, &size));
  MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));

  /* Point-to-point: parent 0 sends each child its rank * 100 + 7; each
   * child answers with that plus its rank. */
  if (parents && rank == 0) {
    for (int child = 0; child < remote_size; ++child) {
      int value[4] = {child * 100 + 7, child, -child, 42};
      MPI_CHECK(MPI_Send(value, 4, MPI_INT, child, 11, inter));
    }
    for (int child = 0; child < remote_size; ++child) {
      int answer = -1;
      MPI_Status status;
      MPI_CHECK(MPI_Recv(&answer, 1, MPI_INT, child, 12, inter, &status));
      CHECK(answer == child * 101 + 7, "child %d answered %d, expected %d",
            child, answer, child * 101 + 7);
      CHECK(status.MPI_SOURCE == child, "answer from source %d, expected %d",
            status.MPI_SOURCE, child);
    }
  } else if (!parents) {
    int value[4] = {0, 0, 0, 0};
    MPI_Status status;
    MPI_CHECK(MPI_Recv(value, 4, MPI_INT, 0, 11, inter, &status));
    CHECK(value[0] == rank * 100 + 7 && value[1] == rank && value[2] == -rank &&
              value[3] == 42,
          "child %d got {%d, %d, %d, %d}", rank, value[0], value[1], value[2],
          value[3]);
    CHECK(status.MPI_SOURCE == 0, "message from source %d, expected 0",
          status.MPI_SOURCE);
    int answer = value[0] + rank;
    MPI_CHECK(MPI_Send(&answer, 1, MPI_INT, 0, 12, inter));
  }

  /* A broadcast from parent 0 to the children (MPI_ROOT / MPI_PROC_NULL on
   * the parents' side). */
  double data[64];
  if (parents) {
    for (int i = 0; i < 64; ++i) data[i] = rank == 0 ? i * 0.5 + 3 : -1;
    MPI_CHECK(MPI_Bcast(data, 64, MPI_DOUBLE,
                        rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
  } else {
    for (int i = 0; i < 64; ++i) data[i] = -1;
    MPI_CHECK(MPI_Bcast(data, 64, MPI_DOUBLE, 0, inter));
    for (int i = 0; i < 64; ++i) {
      CHECK(data[i] == i * 0.5 + 3, "bcast element %d is %g, expected %g", i,
            data[i], i * 0.5 + 3);
    }
  }

  /* Allreduce across: each side gets the sum over the other side. */
  int mine = parents ? 1000 + rank : 1 + rank, sum = -1;
  MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  int expected = 0;
  for (int r = 0; r < remote_size; ++r) expected += parents ? 1 + r : 1000 + r;
  CHECK(sum == expected, "intercomm allreduce gave %d, expected %d", sum,
        expected);

  /* Merge (parents first) and a collective over everybody. */
  MPI_Comm merged;
  MPI_CHECK(MPI_Intercomm_merge(inter, parents ? 0 : 1, &merged));
  int merged_rank, merged_size;
  MPI_CHECK(MPI_Comm_rank(merged, &merged_rank));
  MPI_CHECK(MPI_Comm_size(merged, &merged_size));
  CHECK(merged_size == size + remote_size, "merged size %d, expected %d",
        merged_size, size + remote_size);
  const int expected_rank = parents ? rank : remote_size + rank;
  CHECK(merged_rank == expected_rank, "merged rank %d, expected %d",
        merged_rank, expected_rank);
  long contribution = 10 + merged_rank, total = -1;
  MPI_CHECK(MPI_Allreduce(&contribution, &total, 1, MPI_LONG, MPI_SUM, merged));
  long expected_total = 0;
  for (int r = 0; r < merged_size; ++r) expected_total += 10 + r;
  CHECK(total == expected_total, "merged allreduce gave %ld, expected %ld",
        total, expected_total);
  /* Point-to-point on the merged communicator: a ring. */
  int right = (merged_rank + 1) % merged_size;
  int left = (merged_rank + merged_size - 1) % merged_size;
  int token = merged_rank * 3, got = -1;
  MPI_CHECK(MPI_Sendrecv(&token, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left,
                         5, merged, MPI_STATUS_IGNORE));
  CHECK(got == left * 3, "ring on the merged communicator got %d from %d", got,
        left);
  MPI_CHECK(MPI_Comm_free(&merged));
}

/* Under srun (Slurm's PMIx plugin serves no spawn and no name publishing)
 * every dynamic-process call that needs the launcher must fail at once with
 * a clear class and message, never hang. */
static void CheckLauncherCannotSpawn(void) {
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm children = MPI_COMM_SELF;
  int errcodes[2] = {-1, -1};
  char* child_argv[] = {"child", "1", NULL};
  int rc = MPI_Comm_spawn("/bin/true", child_argv, 2, MPI_INFO_NULL, 0,
                          MPI_COMM_WORLD, &children, errcodes);
  int error_class = -1;
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_SPAWN, "spawn under srun returned class %d",
        error_class);
  CHECK(children == MPI_COMM_NULL, "spawn under srun left a communicator");
  CHECK(errcodes[0] == MPI_ERR_SPAWN && errcodes[1] == MPI_ERR_SPAWN,
        "errcodes %d %d", errcodes[0], errcodes[1]);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_CHECK(MPI_Error_string(rc, text, &length));
  rc = MPI_Publish_name("spawn-test", MPI_INFO_NULL, "nothing");
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_SERVICE, "publish under srun: class %d",
        error_class);
  char port[MPI_MAX_PORT_NAME];
  rc = MPI_Lookup_name("spawn-test", MPI_INFO_NULL, port);
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_NAME, "lookup under srun: class %d",
        error_class);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm parent;
  MPI_CHECK(MPI_Comm_get_parent(&parent));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int fatal_mode = argc >= 2 && (strcmp(argv[1], "missing") == 0 ||
                                       strcmp(argv[1], "die") == 0 ||
                                       strcmp(argv[1], "not-mpi") == 0);
  if (getenv("SLURM_STEP_ID") != NULL && !fatal_mode &&
      parent == MPI_COMM_NULL) {
    CheckLauncherCannotSpawn();
    if (rank == 0) printf("spawn: the launcher cannot spawn, as expected\n");
    MPI_CHECK(MPI_Finalize());
    return 0;
  }
  if (parent != MPI_COMM_NULL && argc >= 2 && strcmp(argv[1], "dying") == 0) {
    /* A spawned process that dies: mpiexec must report it and end the job. */
    if (rank == 0) exit(3);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (parent == MPI_COMM_NULL && fatal_mode) {
    /* Under the default MPI_ERRORS_ARE_FATAL: a command that does not
     * exist ends the job with MPI_Comm_spawn's one-line message; a child
     * that dies ends it with mpiexec's report. */
    const int missing = strcmp(argv[1], "missing") == 0;
    const int not_mpi = strcmp(argv[1], "not-mpi") == 0;
    char* child_argv[] = {"dying", "1", NULL};
    MPI_Comm children;
    MPI_Comm_spawn(missing   ? "./no-such-program-here"
                   : not_mpi ? "true"
                             : argv[0],
                   child_argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                   MPI_ERRCODES_IGNORE);
    if (!missing && !not_mpi) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, 0, 0, children, MPI_STATUS_IGNORE);
    }
    CHECK(0, "the job survived a failed spawn");
  }

  if (argc >= 2 &&
      (strcmp(argv[1], "nested") == 0 || strcmp(argv[1], "child-nest") == 0 ||
       strcmp(argv[1], "grandchild") == 0)) {
    /* Spawned processes spawn too, each on its own and at once (as
     * MPICH's concurrent_spawns): the launcher serves several requests
     * and every generation reaches the one before. */
    if (strcmp(argv[1], "grandchild") == 0) {
      int value = 1000;
      MPI_CHECK(MPI_Send(&value, 1, MPI_INT, 0, 7, parent));
      MPI_CHECK(MPI_Comm_disconnect(&parent));
    } else if (strcmp(argv[1], "child-nest") == 0) {
      char* grandchild_argv[] = {"grandchild", NULL};
      MPI_Comm grandchild;
      MPI_CHECK(MPI_Comm_spawn(argv[0], grandchild_argv, 1, MPI_INFO_NULL, 0,
                               MPI_COMM_SELF, &grandchild,
                               MPI_ERRCODES_IGNORE));
      int value = 0;
      MPI_CHECK(
          MPI_Recv(&value, 1, MPI_INT, 0, 7, grandchild, MPI_STATUS_IGNORE));
      value += rank;
      MPI_CHECK(MPI_Send(&value, 1, MPI_INT, 0, 8, parent));
      MPI_CHECK(MPI_Comm_disconnect(&grandchild));
      MPI_CHECK(MPI_Comm_disconnect(&parent));
    } else {
      const int children = 3;
      char* child_argv[] = {"child-nest", NULL};
      MPI_Comm spawned;
      MPI_CHECK(MPI_Comm_spawn(argv[0], child_argv, children, MPI_INFO_NULL, 0,
                               MPI_COMM_WORLD, &spawned, MPI_ERRCODES_IGNORE));
      if (rank == 0) {
        for (int child = 0; child < children; ++child) {
          int value = -1;
          MPI_CHECK(MPI_Recv(&value, 1, MPI_INT, child, 8, spawned,
                             MPI_STATUS_IGNORE));
          CHECK(value == 1000 + child, "child %d reported %d", child, value);
        }
        printf("spawn: %d children spawned a grandchild each: ok\n", children);
      }
      MPI_CHECK(MPI_Comm_disconnect(&spawned));
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
  }

  if (argc >= 2 &&
      (strcmp(argv[1], "iccreate") == 0 || strcmp(argv[1], "child-ic") == 0)) {
    /* As MPICH's spaiccreate: world rank 0 alone spawns (on MPI_COMM_SELF);
     * then both whole worlds make an intercommunicator through the spawn's,
     * so the children meet parents they were never connected to. */
    MPI_Comm spawned = parent;
    const int children = 2;
    if (parent == MPI_COMM_NULL) {
      spawned = MPI_COMM_NULL;
      if (rank == 0) {
        char* child_argv[] = {"child-ic", NULL};
        MPI_CHECK(MPI_Comm_spawn(argv[0], child_argv, children, MPI_INFO_NULL,
                                 0, MPI_COMM_SELF, &spawned,
                                 MPI_ERRCODES_IGNORE));
      }
    }
    MPI_Comm both;
    MPI_CHECK(MPI_Intercomm_create(MPI_COMM_WORLD, 0, spawned, 0, 123, &both));
    int remote_size;
    MPI_CHECK(MPI_Comm_remote_size(both, &remote_size));
    const int is_parent = parent == MPI_COMM_NULL;
    CHECK(remote_size == (is_parent ? children : remote_size), "%d children",
          remote_size);
    const int last_parent = is_parent ? size - 1 : remote_size - 1;
    if (!is_parent) {
      int value = 500 + rank;
      MPI_CHECK(MPI_Send(&value, 1, MPI_INT, last_parent, rank, both));
    } else if (rank == last_parent) {
      for (int child = 0; child < remote_size; ++child) {
        int value = -1;
        MPI_CHECK(MPI_Recv(&value, 1, MPI_INT, child, child, both,
                           MPI_STATUS_IGNORE));
        CHECK(value == 500 + child, "child %d sent %d", child, value);
      }
    }
    Exchange(both, is_parent);
    MPI_CHECK(MPI_Comm_free(&both));
    if (spawned != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_disconnect(&spawned));
    if (is_parent && rank == 0) {
      printf("spawn: intercomm_create through a spawn: ok\n");
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
  }

  if (parent != MPI_COMM_NULL) {
    CHECK(argc >= 2 && strncmp(argv[1], "child", 5) == 0,
          "a spawned process got argv[1] = '%s'", argc >= 2 ? argv[1] : "");
    int remote_size, is_inter;
    MPI_CHECK(MPI_Comm_test_inter(parent, &is_inter));
    CHECK(is_inter, "the parent communicator is not an intercommunicator");
    MPI_CHECK(MPI_Comm_remote_size(parent, &remote_size));
    int parents_size = argc >= 3 ? atoi(argv[2]) : -1;
    CHECK(remote_size == parents_size, "%d parents, expected %d", remote_size,
          parents_size);
    int* appnum = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag, "MPI_APPNUM is not set");
    if (strcmp(argv[1], "child-a") == 0) {
      CHECK(*appnum == 0, "MPI_APPNUM is %d for command 0", *appnum);
      CHECK(argc == 4 && strcmp(argv[3], "alpha") == 0, "child-a's argv");
    } else if (strcmp(argv[1], "child-b") == 0) {
      CHECK(*appnum == 1, "MPI_APPNUM is %d for command 1", *appnum);
      CHECK(argc == 5 && strcmp(argv[3], "beta") == 0 &&
                strcmp(argv[4], "gamma") == 0,
            "child-b's argv");
    }
    Exchange(parent, 0);
    MPI_CHECK(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    MPI_Comm again;
    MPI_CHECK(MPI_Comm_get_parent(&again));
    CHECK(again == MPI_COMM_NULL, "get_parent after disconnect is not null");
    MPI_CHECK(MPI_Finalize());
    return 0;
  }

  char parents_text[16];
  snprintf(parents_text, sizeof parents_text, "%d", size);
  MPI_Comm children;
  int expected_children;
  int errcodes[8];
  for (int i = 0; i < 8; ++i) errcodes[i] = -12345;
  if (argc >= 2 && strcmp(argv[1], "multiple") == 0) {
    char* commands[2] = {argv[0], argv[0]};
    char* argv_a[] = {"child-a", parents_text, "alpha", NULL};
    char* argv_b[] = {"child-b", parents_text, "beta", "gamma", NULL};
    char** argvs[2] = {argv_a, argv_b};
    int maxprocs[2] = {1, 2};
    MPI_Info infos[2];
    MPI_CHECK(MPI_Info_create(&infos[0]));
    MPI_CHECK(MPI_Info_set(infos[0], "wdir", "."));
    infos[1] = MPI_INFO_NULL;
    expected_children = 3;
    MPI_CHECK(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 0,
                                      MPI_COMM_WORLD, &children, errcodes));
    MPI_CHECK(MPI_Info_free(&infos[0]));
  } else {
    expected_children = argc >= 2 ? atoi(argv[1]) : 2;
    char* child_argv[] = {"child", parents_text, NULL};
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "host", "localhost"));
    /* Only the root's arguments count: the others pass nonsense. */
    MPI_CHECK(MPI_Comm_spawn(rank == 0 ? argv[0] : "no-such-program",
                             child_argv, rank == 0 ? expected_children : -5,
                             info, 0, MPI_COMM_WORLD, &children, errcodes));
    MPI_CHECK(MPI_Info_free(&info));
  }
  for (int i = 0; i < expected_children; ++i) {
    CHECK(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
  }
  CHECK(errcodes[expected_children] == -12345,
        "errcodes written past the %d children", expected_children);
  int remote_size;
  MPI_CHECK(MPI_Comm_remote_size(children, &remote_size));
  CHECK(remote_size == expected_children, "%d children, expected %d",
        remote_size, expected_children);
  Exchange(children, 1);
  MPI_CHECK(MPI_Comm_disconnect(&children));
  CHECK(children == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
  if (rank == 0)
    printf("spawn: %d parents, %d children: ok\n", size, expected_children);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
