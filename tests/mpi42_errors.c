/* Issue 42's calls given hostile input under MPI_ERRORS_RETURN: stale,
 * freed and garbage session, request, communicator, group and info handles;
 * null output pointers; bad process set names, negative counts and sizes,
 * roots out of range; persistent requests started twice or twice in one
 * MPI_Startall; the MPI-4.1 status queries on null and inactive requests;
 * buffers attached twice; dynamic-process calls with bad ports, commands
 * and descriptors. Each must return its error class at once (none may hang)
 * and leave the library usable: real persistent collectives, checked byte
 * for byte, follow the errors.
 *
 * Usage: mpi42_errors [CASE]. Without CASE, every check above. With CASE,
 * one erroneous call under MPI_ERRORS_ARE_FATAL that must end the job (the
 * runner matches minimpi's message): startall_duplicate, or
 * session_attach_twice (a session whose handler is fatal while
 * MPI_COMM_WORLD's returns: the error must go to the session's). */
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

#if MPI_VERSION < 4 || (MPI_VERSION == 4 && MPI_SUBVERSION < 1)
TEST_SKIPPED_MAIN("mpi42_errors",
                  "MPI-4.1's sessions buffers and status queries are missing")
#else

enum { kReleaseTag = 900 };

#define GARBAGE(type) ((type)(uintptr_t)0x5a5a5a5a5a50)

/* --- Sessions, with no world model yet -------------------------------- */

static void check_session_errors(void) {
  MPI_Session session, stale, unused;
  MPI_Info info;
  MPI_Group group;
  MPI_Comm comm;
  int n, len;
  char name[256];
  MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
  CHECK_ERROR_CLASS(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Session_init(GARBAGE(MPI_Info), MPI_ERRORS_RETURN, &unused),
      MPI_ERR_INFO);
  CHECK_ERROR_CLASS(
      MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n),
      MPI_ERR_SESSION);
  CHECK_ERROR_CLASS(
      MPI_Session_get_num_psets(GARBAGE(MPI_Session), MPI_INFO_NULL, &n),
      MPI_ERR_SESSION);
  CHECK_ERROR_CLASS(MPI_Session_get_num_psets(session, MPI_INFO_NULL, NULL),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_num_psets(session, GARBAGE(MPI_Info), &n),
                    MPI_ERR_INFO);
  MPI_CHECK(MPI_Session_get_num_psets(session, MPI_INFO_NULL, &n));
  CHECK(n >= 2, "%d process sets (mpi://WORLD and mpi://SELF at least)", n);
  CHECK_ERROR_CLASS(
      MPI_Session_get_nth_pset(session, MPI_INFO_NULL, -1, &len, name),
      MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Session_get_nth_pset(session, MPI_INFO_NULL, n, &len, name),
      MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, NULL, name),
      MPI_ERR_ARG);
  len = -5;
  CHECK_ERROR_CLASS(
      MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, name),
      MPI_ERR_ARG);
  len = 0; /* asks for the length, terminating null included */
  MPI_CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, NULL));
  CHECK(len > 1, "length of process set 0 is %d", len);
  len = 4;
  memset(name, 'x', sizeof name);
  MPI_CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, name));
  CHECK(strlen(name) == 3, "a 4-character buffer holds \"%s\"", name);

  char too_long[5000];
  memset(too_long, 'a', sizeof too_long);
  too_long[sizeof too_long - 1] = '\0';
  CHECK_ERROR_CLASS(MPI_Session_get_pset_info(session, NULL, &info),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_pset_info(session, "", &info), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_pset_info(session, "mpi://nowhere", &info),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_pset_info(session, too_long, &info),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_pset_info(session, "mpi://WORLD", NULL),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_get_info(session, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Group_from_session_pset(session, NULL, &group),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Group_from_session_pset(session, "mpi://WORLD", NULL),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://WORLD", &group),
      MPI_ERR_SESSION);
  CHECK_ERROR_CLASS(
      MPI_Session_set_errhandler(session, GARBAGE(MPI_Errhandler)),
      MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Session_call_errhandler(MPI_SESSION_NULL, MPI_ERR_OTHER),
      MPI_ERR_SESSION);

  /* MPI_Comm_create_from_group: bad groups, tags, info, handler, output. */
  char long_tag[MPI_MAX_STRINGTAG_LEN + 10];
  memset(long_tag, 't', sizeof long_tag);
  long_tag[sizeof long_tag - 1] = '\0';
  MPI_CHECK(MPI_Group_from_session_pset(session, "mpi://WORLD", &group));
  CHECK_ERROR_CLASS(
      MPI_Comm_create_from_group(MPI_GROUP_NULL, "h6", MPI_INFO_NULL,
                                 MPI_ERRORS_RETURN, &comm),
      MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(
      MPI_Comm_create_from_group(GARBAGE(MPI_Group), "h6", MPI_INFO_NULL,
                                 MPI_ERRORS_RETURN, &comm),
      MPI_ERR_GROUP);
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(group, NULL, MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &comm),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(group, long_tag, MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &comm),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(group, "h6", GARBAGE(MPI_Info),
                                               MPI_ERRORS_RETURN, &comm),
                    MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(group, "h6", MPI_INFO_NULL,
                                               GARBAGE(MPI_Errhandler), &comm),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(group, "h6", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, NULL),
                    MPI_ERR_ARG);
  MPI_CHECK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "h6", MPI_INFO_NULL,
                                       MPI_ERRORS_RETURN, &comm));
  CHECK(comm == MPI_COMM_NULL, "the empty group gave a communicator");
  MPI_Group freed = group;
  MPI_CHECK(MPI_Group_free(&group));
  CHECK_ERROR_CLASS(MPI_Comm_create_from_group(freed, "h6", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &comm),
                    MPI_ERR_GROUP);

  /* Session buffers: a bad session, sizes, a second attach, detach of none. */
  static char buffer[1 << 14];
  void* address;
  int size;
  MPI_Request request;
  CHECK_ERROR_CLASS(
      MPI_Session_attach_buffer(MPI_SESSION_NULL, buffer, sizeof buffer),
      MPI_ERR_SESSION);
  MPI_CHECK(MPI_Session_detach_buffer(session, &address, &size));
  CHECK(address == NULL && size == 0, "detach with none attached gave %p, %d",
        address, size);
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(session, buffer, -1),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer_c(session, buffer, -1),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(session, NULL, 100),
                    MPI_ERR_BUFFER);
  MPI_CHECK(MPI_Session_attach_buffer(session, buffer, sizeof buffer));
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(session, buffer, sizeof buffer),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(session, MPI_BUFFER_AUTOMATIC, 0),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(MPI_Session_detach_buffer(session, NULL, &size),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_detach_buffer(session, &address, NULL),
                    MPI_ERR_ARG);
  MPI_CHECK(MPI_Session_detach_buffer(session, &address, &size));
  CHECK(address == buffer && size == (int)sizeof buffer, "detached %p, %d",
        address, size);
  CHECK_ERROR_CLASS(MPI_Session_iflush_buffer(session, NULL), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Session_flush_buffer(MPI_SESSION_NULL),
                    MPI_ERR_SESSION);
  MPI_CHECK(MPI_Session_iflush_buffer(session, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));

  /* A finalized session's handle is stale, also once a new session lives. */
  stale = session;
  CHECK_ERROR_CLASS(MPI_Session_finalize(NULL), MPI_ERR_ARG);
  MPI_CHECK(MPI_Session_finalize(&session));
  CHECK(session == MPI_SESSION_NULL, "MPI_Session_finalize left the handle");
  MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
  CHECK_ERROR_CLASS(MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n),
                    MPI_ERR_SESSION);
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(stale, buffer, sizeof buffer),
                    MPI_ERR_SESSION);
  CHECK_ERROR_CLASS(MPI_Session_finalize(&stale), MPI_ERR_SESSION);
  MPI_CHECK(MPI_Session_finalize(&session));
}

/* A session whose handler returns while MPI_COMM_WORLD's is fatal: errors
 * of session calls go to the session's handler. */
static void check_session_handler_with_world(void) {
  MPI_Session session;
  static char buffer[1024];
  void* address;
  int size;
  MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Session_attach_buffer(session, buffer, sizeof buffer));
  CHECK_ERROR_CLASS(MPI_Session_attach_buffer(session, buffer, sizeof buffer),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(MPI_Session_detach_buffer(session, NULL, &size),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Session_iflush_buffer(session, NULL), MPI_ERR_REQUEST);
  MPI_CHECK(MPI_Session_detach_buffer(session, &address, &size));
  MPI_CHECK(MPI_Session_finalize(&session));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

/* --- Persistent collectives and MPI_Start/Startall --------------------- */

static void check_persistent_init_errors(int size) {
  int send[8] = {0}, recv[64] = {0};
  int counts[64], displs[64];
  MPI_Count large_counts[64];
  MPI_Aint large_displs[64];
  MPI_Request request;
  MPI_Comm dup, freed;
  for (int i = 0; i < size; ++i) {
    counts[i] = 1;
    displs[i] = i;
    large_counts[i] = 1;
    large_displs[i] = i;
  }
  counts[size - 1] = -1;
  large_counts[size - 1] = -1;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  freed = dup;
  MPI_CHECK(MPI_Comm_free(&dup));

  CHECK_ERROR_CLASS(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &request),
                    MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Barrier_init(freed, MPI_INFO_NULL, &request),
                    MPI_ERR_COMM);
  CHECK_ERROR_CLASS(
      MPI_Barrier_init(GARBAGE(MPI_Comm), MPI_INFO_NULL, &request),
      MPI_ERR_COMM);
  CHECK_ERROR_CLASS(
      MPI_Barrier_init(MPI_COMM_WORLD, GARBAGE(MPI_Info), &request),
      MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL),
                    MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Bcast_init(send, -1, MPI_INT, 0, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &request),
                    MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Bcast_init_c(send, (MPI_Count)-1, MPI_INT, 0,
                                     MPI_COMM_WORLD, MPI_INFO_NULL, &request),
                    MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Bcast_init(send, 1, MPI_INT, size, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &request),
                    MPI_ERR_ROOT);
  CHECK_ERROR_CLASS(MPI_Bcast_init(send, 1, MPI_INT, -1, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &request),
                    MPI_ERR_ROOT);
  CHECK_ERROR_CLASS(MPI_Bcast_init(send, 1, GARBAGE(MPI_Datatype), 0,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &request),
                    MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Bcast_init(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &request),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(MPI_Allreduce_init(send, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM,
                                       MPI_COMM_WORLD, MPI_INFO_NULL, &request),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(
      MPI_Allreduce_init_c(send, recv, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &request),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Allreduce_init(send, recv, 1, MPI_INT, GARBAGE(MPI_Op),
                                       MPI_COMM_WORLD, MPI_INFO_NULL, &request),
                    MPI_ERR_OP);
  CHECK_ERROR_CLASS(
      MPI_Gather_init(send, 1, MPI_INT, recv, 1, MPI_INT, size + 5,
                      MPI_COMM_WORLD, MPI_INFO_NULL, &request),
      MPI_ERR_ROOT);
  CHECK_ERROR_CLASS(
      MPI_Allgatherv_init(send, 1, MPI_INT, recv, counts, displs, MPI_INT,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &request),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(
      MPI_Allgatherv_init_c(send, 1, MPI_INT, recv, large_counts, large_displs,
                            MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &request),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(
      MPI_Reduce_scatter_init(send, recv, counts, MPI_INT, MPI_SUM,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &request),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(
      MPI_Neighbor_allgather_init(send, 1, MPI_INT, recv, 1, MPI_INT,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &request),
      MPI_ERR_TOPOLOGY);
}

/* Start, Startall and Request_free on persistent collectives, then the
 * same requests run for real. */
static void check_start_errors(int rank, int size) {
  int value = rank + 1, sum = 0, root_value = 0;
  MPI_Request barrier, allreduce, bcast, pair[2],
      nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Request garbage = GARBAGE(MPI_Request);
  MPI_CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier));
  MPI_CHECK(MPI_Allreduce_init(&value, &sum, 1, MPI_INT, MPI_SUM,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &allreduce));
  if (rank == 0) root_value = 4242;
  MPI_CHECK(MPI_Bcast_init(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &bcast));

  CHECK_ERROR_CLASS(MPI_Start(NULL), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Start(&garbage), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Startall(-1, pair), MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Startall(1, NULL), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Startall(2, nulls), MPI_ERR_REQUEST);
  MPI_CHECK(MPI_Startall(0, NULL));

  /* The same request twice in one Startall starts nothing. */
  pair[0] = allreduce;
  pair[1] = allreduce;
  CHECK_ERROR_CLASS(MPI_Startall(2, pair), MPI_ERR_REQUEST);

  /* An active request among inactive ones: nothing before it starts. */
  MPI_CHECK(MPI_Start(&barrier));
  CHECK_ERROR_CLASS(MPI_Start(&barrier), MPI_ERR_REQUEST);
  pair[0] = allreduce;
  pair[1] = barrier;
  CHECK_ERROR_CLASS(MPI_Startall(2, pair), MPI_ERR_REQUEST);
  MPI_CHECK(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
  CHECK(barrier != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");

  /* The requests still work, once each, with the right data. */
  pair[0] = allreduce;
  pair[1] = bcast;
  MPI_CHECK(MPI_Startall(2, pair));
  MPI_CHECK(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE));
  CHECK(sum == size * (size + 1) / 2, "allreduce gave %d, expected %d", sum,
        size * (size + 1) / 2);
  CHECK(root_value == 4242, "bcast gave %d", root_value);

  /* MPI-4.1's status queries on inactive requests: flag true, index
   * MPI_UNDEFINED; with null output pointers: MPI_ERR_ARG. */
  int flag = 0, index = 0, outcount = 0, indices[2];
  MPI_Status status;
  MPI_CHECK(MPI_Request_get_status_any(2, pair, &index, &flag, &status));
  CHECK(flag && index == MPI_UNDEFINED,
        "get_status_any on inactive: flag %d index %d", flag, index);
  MPI_CHECK(
      MPI_Request_get_status_any(0, NULL, &index, &flag, MPI_STATUS_IGNORE));
  CHECK(flag && index == MPI_UNDEFINED,
        "get_status_any on none: flag %d index %d", flag, index);
  MPI_CHECK(MPI_Request_get_status_all(2, nulls, &flag, MPI_STATUSES_IGNORE));
  CHECK(flag, "get_status_all on null requests: flag %d", flag);
  MPI_CHECK(MPI_Request_get_status_some(2, pair, &outcount, indices,
                                        MPI_STATUSES_IGNORE));
  CHECK(outcount == MPI_UNDEFINED, "get_status_some on inactive: outcount %d",
        outcount);
  CHECK_ERROR_CLASS(MPI_Request_get_status_any(2, NULL, &index, &flag, &status),
                    MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(
      MPI_Request_get_status_any(-1, nulls, &index, &flag, &status),
      MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Request_get_status_any(2, nulls, NULL, &flag, &status),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Request_get_status_any(2, nulls, &index, NULL, &status),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Request_get_status_all(2, nulls, NULL, MPI_STATUSES_IGNORE),
      MPI_ERR_ARG);
  CHECK_ERROR_CLASS(
      MPI_Request_get_status_some(2, nulls, NULL, indices, MPI_STATUSES_IGNORE),
      MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Request_get_status_some(2, pair, &outcount, NULL,
                                                MPI_STATUSES_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Request_get_status(MPI_REQUEST_NULL, NULL, &status),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Request_get_status(garbage, &flag, &status),
                    MPI_ERR_REQUEST);
  /* The completion calls before MPI-4.1 take the same care of their outputs. */
  CHECK_ERROR_CLASS(MPI_Test(&pair[0], NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Testany(2, nulls, &index, NULL, MPI_STATUS_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Testany(2, nulls, NULL, &flag, MPI_STATUS_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Waitany(2, nulls, NULL, MPI_STATUS_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Testall(2, nulls, NULL, MPI_STATUSES_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Testsome(2, nulls, NULL, indices, MPI_STATUSES_IGNORE),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Waitsome(2, pair, &outcount, NULL, MPI_STATUSES_IGNORE),
                    MPI_ERR_ARG);

  /* A started request that MPI_Request_get_status_any finds done stays
   * active until a Wait completes it. */
  value = 10 * (rank + 1);
  MPI_CHECK(MPI_Start(&allreduce));
  for (flag = 0; !flag;) {
    MPI_CHECK(MPI_Request_get_status_any(1, &allreduce, &index, &flag,
                                         MPI_STATUS_IGNORE));
  }
  CHECK(index == 0, "get_status_any index %d", index);
  CHECK_ERROR_CLASS(MPI_Start(&allreduce), MPI_ERR_REQUEST);
  MPI_CHECK(MPI_Wait(&allreduce, MPI_STATUS_IGNORE));
  CHECK(sum == 10 * size * (size + 1) / 2, "second allreduce gave %d", sum);

  /* Freed while active: the handle goes, the operation still completes. */
  MPI_Request kept = barrier;
  MPI_CHECK(MPI_Start(&barrier));
  MPI_CHECK(MPI_Request_free(&barrier));
  CHECK(barrier == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
  CHECK_ERROR_CLASS(MPI_Start(&kept), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Wait(&kept, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Request_free(&kept), MPI_ERR_REQUEST);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Request_free(&allreduce));
  MPI_CHECK(MPI_Request_free(&bcast));
}

/* --- Large counts, buffers, MPI-4.1 additions -------------------------- */

static void check_large_count_and_buffers(int rank) {
  MPI_Status status;
  int count;
  MPI_Count large_count;
  MPI_CHECK(
      MPI_Status_set_elements_x(&status, MPI_BYTE, (MPI_Count)INT_MAX + 10));
  MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
  CHECK(count == MPI_UNDEFINED, "MPI_Get_count past INT_MAX gave %d", count);
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &large_count));
  CHECK(large_count == (MPI_Count)INT_MAX + 10, "MPI_Get_count_c gave %lld",
        (long long)large_count);
  MPI_CHECK(MPI_Get_elements(&status, MPI_BYTE, &count));
  CHECK(count == MPI_UNDEFINED, "MPI_Get_elements past INT_MAX gave %d", count);
  CHECK_ERROR_CLASS(MPI_Status_set_elements_c(&status, MPI_BYTE, -1),
                    MPI_ERR_COUNT);
  CHECK_ERROR_CLASS(MPI_Get_count_c(&status, MPI_BYTE, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Send_c(&count, -1, MPI_INT, rank, 0, MPI_COMM_WORLD),
                    MPI_ERR_COUNT);
  MPI_Request request;
  CHECK_ERROR_CLASS(
      MPI_Recv_init_c(&count, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &request),
      MPI_ERR_COUNT);
  MPI_Datatype type;
  CHECK_ERROR_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &type), MPI_ERR_COUNT);

  /* Communicator buffers: a second attach, one too small for a message. */
  static char small[8];
  int data[100], received[100];
  void* address;
  int size;
  for (int i = 0; i < 100; ++i) data[i] = rank * 1000 + i;
  CHECK_ERROR_CLASS(MPI_Comm_attach_buffer(MPI_COMM_NULL, small, sizeof small),
                    MPI_ERR_COMM);
  MPI_CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &address, &size));
  CHECK(address == NULL && size == 0, "detach with none attached gave %p, %d",
        address, size);
  MPI_CHECK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, small, sizeof small));
  CHECK_ERROR_CLASS(MPI_Comm_attach_buffer(MPI_COMM_WORLD, small, sizeof small),
                    MPI_ERR_BUFFER);
  CHECK_ERROR_CLASS(MPI_Bsend(data, 100, MPI_INT, rank, 5, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER);
  MPI_CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &address, &size));
  MPI_CHECK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0));
  MPI_CHECK(MPI_Bsend(data, 100, MPI_INT, rank, 5, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Recv(received, 100, MPI_INT, rank, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE));
  CHECK(memcmp(received, data, sizeof data) == 0, "buffered message differs");
  MPI_CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &address, &size));
  CHECK(address == MPI_BUFFER_AUTOMATIC,
        "detach gave %p, not MPI_BUFFER_AUTOMATIC", address);
  CHECK_ERROR_CLASS(MPI_Comm_flush_buffer(MPI_COMM_NULL), MPI_ERR_COMM);

  MPI_Info info;
  CHECK_ERROR_CLASS(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);
  MPI_CHECK(MPI_Get_hw_resource_info(&info));
  MPI_CHECK(MPI_Info_free(&info));
}

/* --- Dynamic processes: each error at once, none waits ------------------ */

static void check_dynamic_errors(void) {
  char port[MPI_MAX_PORT_NAME];
  char* no_arguments[] = {NULL};
  int errcodes[4];
  MPI_Comm comm, stale, dup;
  CHECK_ERROR_CLASS(MPI_Open_port(MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Open_port(GARBAGE(MPI_Info), port), MPI_ERR_INFO);
  CHECK_ERROR_CLASS(MPI_Close_port(NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Close_port("no port at all"), MPI_ERR_PORT);
  CHECK_ERROR_CLASS(
      MPI_Lookup_name("mpi42_errors-no-such-service", MPI_INFO_NULL, port),
      MPI_ERR_NAME);
  CHECK_ERROR_CLASS(
      MPI_Unpublish_name("mpi42_errors-no-such-service", MPI_INFO_NULL, "x"),
      MPI_ERR_SERVICE);
  CHECK_ERROR_CLASS(MPI_Comm_spawn("/bin/true", no_arguments, 0, MPI_INFO_NULL,
                                   0, MPI_COMM_SELF, &comm, errcodes),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_spawn("/bin/true", no_arguments, -3, MPI_INFO_NULL,
                                   0, MPI_COMM_SELF, &comm, errcodes),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_spawn("/bin/true", no_arguments, 1, MPI_INFO_NULL,
                                   1, MPI_COMM_SELF, &comm, errcodes),
                    MPI_ERR_ROOT);
  CHECK_ERROR_CLASS(MPI_Comm_spawn(NULL, no_arguments, 1, MPI_INFO_NULL, 0,
                                   MPI_COMM_SELF, &comm, errcodes),
                    MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_spawn("/bin/true", no_arguments, 1, MPI_INFO_NULL,
                                   0, MPI_COMM_NULL, &comm, errcodes),
                    MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_disconnect(NULL), MPI_ERR_ARG);
  comm = MPI_COMM_WORLD;
  CHECK_ERROR_CLASS(MPI_Comm_disconnect(&comm), MPI_ERR_COMM);
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
  stale = dup;
  MPI_CHECK(MPI_Comm_free(&dup));
  CHECK_ERROR_CLASS(MPI_Comm_disconnect(&stale), MPI_ERR_COMM);

  /* MPI_Comm_join on descriptors that lead to no MPI process. */
  CHECK_ERROR_CLASS(MPI_Comm_join(-1, &comm), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Comm_join(0, NULL), MPI_ERR_ARG);
  int fd = open("/dev/null", O_RDONLY);
  CHECK(fd >= 0, "cannot open /dev/null");
  CHECK_ERROR_CLASS(MPI_Comm_join(fd, &comm), MPI_ERR_OTHER);
  close(fd);
  CHECK_ERROR_CLASS(MPI_Comm_join(fd, &comm), MPI_ERR_OTHER);
  int sockets[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) == 0, "socketpair failed");
  close(sockets[1]);
  CHECK_ERROR_CLASS(MPI_Comm_join(sockets[0], &comm), MPI_ERR_OTHER);
  close(sockets[0]);

  /* Ports nobody listens on: an error, not a wait. */
  CHECK_ERROR_CLASS(MPI_Comm_connect("no port at all", MPI_INFO_NULL, 0,
                                     MPI_COMM_SELF, &comm),
                    MPI_ERR_PORT);
  CHECK_ERROR_CLASS(
      MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, MPI_COMM_SELF, &comm),
      MPI_ERR_PORT);
  CHECK_ERROR_CLASS(
      MPI_Comm_accept("no port at all", MPI_INFO_NULL, 0, MPI_COMM_SELF, &comm),
      MPI_ERR_PORT);
  MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
  MPI_CHECK(MPI_Close_port(port));
  CHECK_ERROR_CLASS(MPI_Close_port(port), MPI_ERR_PORT);
  CHECK_ERROR_CLASS(
      MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &comm),
      MPI_ERR_PORT);

  /* A port that exists but where nobody accepts: MPI-4.1 lets the connect
   * time out, and minimpi does after MINIMPI_CONNECT_TIMEOUT seconds (the
   * test case sets a short one; other MPIs may wait much longer). */
  if (getenv("MINIMPI_CONNECT_TIMEOUT") != NULL) {
    MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
    const double start = MPI_Wtime();
    CHECK_ERROR_CLASS(
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &comm),
        MPI_ERR_PORT);
    CHECK(MPI_Wtime() - start < 30, "the connect took %.1f s",
          MPI_Wtime() - start);
    MPI_CHECK(MPI_Close_port(port));
  }
}

/* A connect that timed out leaves a dead connection in the port's queue: a
 * later accept must skip it and meet the next connector. Ranks 0 and 1. */
static void check_accept_after_timed_out_connect(int rank, int size) {
  if (size < 2 || getenv("MINIMPI_CONNECT_TIMEOUT") == NULL) return;
  char port[MPI_MAX_PORT_NAME] = "";
  MPI_Comm inter = MPI_COMM_NULL;
  if (rank == 0) MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
  MPI_CHECK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
  if (rank == 1) {
    CHECK_ERROR_CLASS(
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
        MPI_ERR_PORT);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int value = 0;
  if (rank == 0) {
    MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
    value = 4711;
    MPI_CHECK(MPI_Send(&value, 1, MPI_INT, 0, 0, inter));
  } else if (rank == 1) {
    MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
    MPI_CHECK(MPI_Recv(&value, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE));
    CHECK(value == 4711, "received %d over the new intercommunicator", value);
  }
  if (rank <= 1) MPI_CHECK(MPI_Comm_disconnect(&inter));
  if (rank == 0) MPI_CHECK(MPI_Close_port(port));
}

/* --- One fatal error per run ------------------------------------------ */

static void run_fatal_case(const char* name, int rank, int size) {
  const int erring_rank = size - 1;
  if (rank != erring_rank) {
    /* Released only if the bad call returned instead of ending the job. */
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, erring_rank, kReleaseTag,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return;
  }
  int rc = MPI_SUCCESS;
  if (strcmp(name, "startall_duplicate") == 0) {
    MPI_Request request, twice[2];
    MPI_CHECK(MPI_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, &request));
    twice[0] = request;
    twice[1] = request;
    rc = MPI_Startall(2, twice);
  } else if (strcmp(name, "session_attach_twice") == 0) {
    MPI_Session session;
    static char buffer[1024];
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session));
    MPI_CHECK(MPI_Session_attach_buffer(session, buffer, sizeof buffer));
    rc = MPI_Session_attach_buffer(session, buffer, sizeof buffer);
  } else {
    CHECK(0, "unknown case %s", name);
  }
  fprintf(stderr, "FAIL [rank %d]: %s returned %d instead of ending the job\n",
          rank, name, rc);
  for (int r = 0; r < size; ++r) {
    if (r != rank) MPI_Send(NULL, 0, MPI_BYTE, r, kReleaseTag, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) check_session_errors();
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (argc >= 2) {
    run_fatal_case(argv[1], rank, size);
    MPI_Finalize();
    return 0;
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  check_session_handler_with_world();
  check_persistent_init_errors(size);
  check_start_errors(rank, size);
  check_large_count_and_buffers(rank);
  check_dynamic_errors();
  check_accept_after_timed_out_connect(rank, size);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("mpi42_errors: all checks passed on %d ranks\n", size);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#endif
