/* MPI-4.1's additions at 2 ranks (any rank count >= 2 works; ranks past
 * the second only take part in the collective parts):
 *   MPI_Request_get_status_any/all/some: test without freeing, null and
 *   inactive requests as the standard counts them;
 *   per-communicator buffers for buffered sends (MPI_Comm_attach_buffer,
 *   detach, flush, iflush, MPI_BUFFER_AUTOMATIC) against the process's;
 *   per-session buffers (MPI_Session_attach_buffer and friends);
 *   MPI_Get_hw_resource_info and a MPI_COMM_TYPE_RESOURCE_GUIDED split
 *   that uses its resource type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"

static int failures = 0;
static int rank;

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

enum { kItems = 64 };

static void Fill(int* items, int message) {
  for (int i = 0; i < kItems; ++i) items[i] = message * 1000 + i;
}

static int Differs(const int* items, int message) {
  int bad = 0;
  for (int i = 0; i < kItems; ++i) bad += items[i] != message * 1000 + i;
  return bad;
}

static void RequestGetStatus(void) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int first[kItems], second[kItems];
  if (rank == 1) {
    MPI_Barrier(comm);
    Fill(first, 1);
    MPI_Send(first, kItems, MPI_INT, 0, 1, comm);
    MPI_Barrier(comm);
    Fill(second, 2);
    MPI_Send(second, kItems, MPI_INT, 0, 2, comm);
    return;
  }
  if (rank != 0) {
    MPI_Barrier(comm);
    MPI_Barrier(comm);
    return;
  }
  /* [0] null, [1] tag 1, [2] tag 2, [3] an inactive persistent receive. */
  int unused[kItems];
  MPI_Request requests[4];
  MPI_Status statuses[4];
  int indices[4];
  requests[0] = MPI_REQUEST_NULL;
  MPI_Irecv(first, kItems, MPI_INT, 1, 1, comm, &requests[1]);
  MPI_Irecv(second, kItems, MPI_INT, 1, 2, comm, &requests[2]);
  MPI_Recv_init(unused, kItems, MPI_INT, 1, 3, comm, &requests[3]);
  MPI_Request kept[4];
  memcpy(kept, requests, sizeof(kept));

  /* Nothing sent yet. */
  int flag = -1, index = -2, outcount = -2;
  MPI_Status status;
  MPI_Request_get_status_any(4, requests, &index, &flag, &status);
  CHECK(flag == 0 && index == MPI_UNDEFINED, "any before sends: %d %d", flag,
        index);
  MPI_Request_get_status_all(4, requests, &flag, statuses);
  CHECK(flag == 0, "all before sends: %d", flag);
  MPI_Request_get_status_some(4, requests, &outcount, indices, statuses);
  CHECK(outcount == 0, "some before sends: %d", outcount);

  MPI_Barrier(comm); /* rank 1 sends tag 1 */
  flag = 0;
  while (!flag) MPI_Request_get_status_any(4, requests, &index, &flag, &status);
  CHECK(index == 1 && status.MPI_SOURCE == 1 && status.MPI_TAG == 1,
        "any: index %d source %d tag %d", index, status.MPI_SOURCE,
        status.MPI_TAG);
  int count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  CHECK(count == kItems, "any: count %d", count);
  /* Nothing was freed: the same answer again, and the handles stand. */
  MPI_Request_get_status_any(4, requests, &index, &flag, &status);
  CHECK(flag == 1 && index == 1, "any again: %d %d", flag, index);
  CHECK(memcmp(kept, requests, sizeof(kept)) == 0,
        "MPI_Request_get_status_any changed a handle");
  MPI_Request_get_status_some(4, requests, &outcount, indices, statuses);
  CHECK(outcount == 1 && indices[0] == 1 && statuses[0].MPI_TAG == 1 &&
            statuses[0].MPI_ERROR == MPI_SUCCESS,
        "some: outcount %d index %d tag %d", outcount, indices[0],
        statuses[0].MPI_TAG);
  MPI_Wait(&requests[1], &status);
  CHECK(requests[1] == MPI_REQUEST_NULL && status.MPI_TAG == 1,
        "MPI_Wait after get_status");
  CHECK(Differs(first, 1) == 0, "first message: %d items differ",
        Differs(first, 1));

  MPI_Barrier(comm); /* rank 1 sends tag 2 */
  flag = 0;
  while (!flag) MPI_Request_get_status_all(4, requests, &flag, statuses);
  CHECK(statuses[0].MPI_SOURCE == MPI_ANY_SOURCE &&
            statuses[0].MPI_TAG == MPI_ANY_TAG,
        "all: the null request's status is not empty");
  CHECK(statuses[1].MPI_SOURCE == MPI_ANY_SOURCE,
        "all: the completed-and-freed slot's status is not empty");
  CHECK(statuses[2].MPI_SOURCE == 1 && statuses[2].MPI_TAG == 2 &&
            statuses[2].MPI_ERROR == MPI_SUCCESS,
        "all: source %d tag %d", statuses[2].MPI_SOURCE, statuses[2].MPI_TAG);
  CHECK(statuses[3].MPI_SOURCE == MPI_ANY_SOURCE,
        "all: the inactive request's status is not empty");
  CHECK(requests[2] == kept[2] && requests[3] == kept[3],
        "MPI_Request_get_status_all changed a handle");
  MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
  CHECK(Differs(second, 2) == 0, "second message differs");
  CHECK(requests[2] == MPI_REQUEST_NULL && requests[3] == kept[3],
        "MPI_Waitall after get_status_all");

  /* Only null and inactive requests. */
  requests[0] = requests[1] = requests[2] = MPI_REQUEST_NULL;
  MPI_Request_get_status_any(4, requests, &index, &flag, &status);
  CHECK(flag == 1 && index == MPI_UNDEFINED, "any of inactive: %d %d", flag,
        index);
  MPI_Request_get_status_some(4, requests, &outcount, indices, statuses);
  CHECK(outcount == MPI_UNDEFINED, "some of inactive: %d", outcount);
  MPI_Request_get_status_all(4, requests, &flag, MPI_STATUSES_IGNORE);
  CHECK(flag == 1, "all of inactive: %d", flag);
  MPI_Request_free(&requests[3]);
}

/* Rank 0 sends message `message` with MPI_Bsend on `comm`; rank 1 checks
 * it. Returns the send's error class. */
static int BufferedMessage(MPI_Comm comm, int message) {
  int items[kItems];
  int error_class = MPI_SUCCESS;
  if (rank == 0) {
    Fill(items, message);
    MPI_Error_class(MPI_Bsend(items, kItems, MPI_INT, 1, message, comm),
                    &error_class);
  }
  MPI_Bcast(&error_class, 1, MPI_INT, 0, comm);
  if (rank == 1 && error_class == MPI_SUCCESS) {
    memset(items, 0, sizeof(items));
    MPI_Recv(items, kItems, MPI_INT, 0, message, comm, MPI_STATUS_IGNORE);
    CHECK(Differs(items, message) == 0, "buffered message %d differs", message);
  }
  return error_class;
}

static void CommunicatorBuffers(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int one_message = kItems * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  char* own = malloc(one_message);
  CHECK(MPI_Comm_attach_buffer(comm, own, one_message) == MPI_SUCCESS,
        "MPI_Comm_attach_buffer");
  int error_class = MPI_SUCCESS;
  MPI_Error_class(MPI_Comm_attach_buffer(comm, own, one_message), &error_class);
  CHECK(error_class == MPI_ERR_BUFFER, "a second attach: class %d",
        error_class);

  /* The communicator's buffer serves it; the process has none. */
  CHECK(BufferedMessage(comm, 1) == MPI_SUCCESS, "Bsend on the dup");
  CHECK(MPI_Comm_flush_buffer(comm) == MPI_SUCCESS, "MPI_Comm_flush_buffer");
  CHECK(BufferedMessage(MPI_COMM_WORLD, 2) == MPI_ERR_BUFFER,
        "Bsend on a communicator without a buffer (and none for the "
        "process) must be MPI_ERR_BUFFER");
  CHECK(BufferedMessage(comm, 3) == MPI_SUCCESS, "Bsend on the dup again");
  MPI_Request request;
  CHECK(MPI_Comm_iflush_buffer(comm, &request) == MPI_SUCCESS,
        "MPI_Comm_iflush_buffer");
  MPI_Wait(&request, MPI_STATUS_IGNORE);

  void* detached = NULL;
  int size = -1;
  MPI_Comm_detach_buffer(comm, &detached, &size);
  CHECK(detached == own && size == one_message, "MPI_Comm_detach_buffer: %p/%d",
        detached, size);
  free(own);

  /* Detached: the process's buffer serves the communicator now. */
  char* process = malloc(one_message);
  MPI_Buffer_attach(process, one_message);
  CHECK(BufferedMessage(comm, 4) == MPI_SUCCESS,
        "Bsend through the process's buffer");
  MPI_Buffer_detach(&detached, &size);
  CHECK(detached == process, "MPI_Buffer_detach");
  free(process);

  /* The library's own memory, with the _c forms. */
  CHECK(MPI_Comm_attach_buffer_c(comm, MPI_BUFFER_AUTOMATIC, 0) == MPI_SUCCESS,
        "MPI_Comm_attach_buffer_c(MPI_BUFFER_AUTOMATIC)");
  for (int message = 5; message < 9; ++message) {
    CHECK(BufferedMessage(comm, message) == MPI_SUCCESS,
          "Bsend through an automatic buffer");
  }
  MPI_Count large_size = -1;
  MPI_Comm_detach_buffer_c(comm, &detached, &large_size);
  CHECK(detached == MPI_BUFFER_AUTOMATIC && large_size == 0,
        "MPI_Comm_detach_buffer_c: %p/%lld", detached, (long long)large_size);
  /* Nothing attached: a null buffer of size 0. */
  MPI_Comm_detach_buffer(comm, &detached, &size);
  CHECK(detached == NULL && size == 0, "a second detach: %p/%d", detached,
        size);
  MPI_Comm_free(&comm);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void SessionBuffers(void) {
  MPI_Session session;
  if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) !=
      MPI_SUCCESS) {
    CHECK(0, "MPI_Session_init failed");
    return;
  }
  /* A communicator of the session's, and one derived from it. */
  MPI_Group group;
  MPI_Comm comm = MPI_COMM_NULL, dup = MPI_COMM_NULL;
  MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  MPI_Comm_create_from_group(group, "mpi41_calls.session_buffers",
                             MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  MPI_Group_free(&group);
  MPI_Comm_dup(comm, &dup);
  /* No buffer anywhere yet. */
  CHECK(BufferedMessage(comm, 50) == MPI_ERR_BUFFER,
        "Bsend on a session's communicator before any attach");

  char* buffer = malloc(4096);
  CHECK(MPI_Session_attach_buffer(session, buffer, 4096) == MPI_SUCCESS,
        "MPI_Session_attach_buffer");
  /* The session's buffer serves its communicators, not the world's. */
  CHECK(BufferedMessage(comm, 51) == MPI_SUCCESS,
        "Bsend through the session's buffer");
  CHECK(BufferedMessage(dup, 52) == MPI_SUCCESS,
        "Bsend on a dup of a session's communicator");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(BufferedMessage(MPI_COMM_WORLD, 53) == MPI_ERR_BUFFER,
        "Bsend on MPI_COMM_WORLD must not use a session's buffer");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* The communicator's own buffer comes first. */
  const int one_message = kItems * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  char* own = malloc(one_message);
  MPI_Comm_attach_buffer(dup, own, one_message);
  CHECK(BufferedMessage(dup, 54) == MPI_SUCCESS,
        "Bsend through the dup's own buffer");
  void* detached = NULL;
  int own_size = 0;
  MPI_Comm_detach_buffer(dup, &detached, &own_size);
  CHECK(detached == own, "MPI_Comm_detach_buffer on the dup");
  free(own);
  CHECK(MPI_Session_flush_buffer(session) == MPI_SUCCESS,
        "MPI_Session_flush_buffer");
  MPI_Request request;
  CHECK(MPI_Session_iflush_buffer(session, &request) == MPI_SUCCESS,
        "MPI_Session_iflush_buffer");
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Count size = -1;
  MPI_Session_detach_buffer_c(session, &detached, &size);
  CHECK(detached == buffer && size == 4096,
        "MPI_Session_detach_buffer_c: %p/%lld", detached, (long long)size);
  int int_size = -1;
  MPI_Session_detach_buffer(session, &detached, &int_size);
  CHECK(detached == NULL && int_size == 0, "a second session detach");
  CHECK(BufferedMessage(comm, 55) == MPI_ERR_BUFFER,
        "Bsend on a session's communicator after its detach");
  free(buffer);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&comm);
  MPI_Session_finalize(&session);
}

static void HardwareResources(void) {
  MPI_Info info;
  CHECK(MPI_Get_hw_resource_info(&info) == MPI_SUCCESS,
        "MPI_Get_hw_resource_info");
  char value[MPI_MAX_INFO_VAL];
  int length = sizeof(value), flag = 0;
  MPI_Info_get_string(info, "mpi_hw_resource_type", &length, value, &flag);
  CHECK(flag && strcmp(value, "mpi_shared_memory") == 0,
        "mpi_hw_resource_type: %s", flag ? value : "(missing)");
  length = sizeof(value);
  MPI_Info_get_string(info, "hwloc://Machine", &length, value, &flag);
  CHECK(flag && strcmp(value, "1") == 0, "hwloc://Machine: %s",
        flag ? value : "(missing)");
  length = sizeof(value);
  MPI_Info_get_string(info, "hwloc://PU", &length, value, &flag);
  CHECK(flag && atoi(value) >= 1, "hwloc://PU: %s", flag ? value : "(missing)");

  /* The resource type it names splits the job by node. */
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_hw_resource_type", "mpi_shared_memory");
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank,
                      hints, &node);
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &shared);
  int node_size = -1, shared_size = -2;
  CHECK(node != MPI_COMM_NULL, "RESOURCE_GUIDED gave MPI_COMM_NULL");
  if (node != MPI_COMM_NULL) MPI_Comm_size(node, &node_size);
  MPI_Comm_size(shared, &shared_size);
  CHECK(node_size == shared_size, "RESOURCE_GUIDED size %d, shared %d",
        node_size, shared_size);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  MPI_Comm_free(&shared);
  MPI_Info_free(&hints);
  MPI_Info_free(&info);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "mpi41_calls needs 2 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  RequestGetStatus();
  MPI_Barrier(MPI_COMM_WORLD);
  CommunicatorBuffers();
  MPI_Barrier(MPI_COMM_WORLD);
  SessionBuffers();
  MPI_Barrier(MPI_COMM_WORLD);
  HardwareResources();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(total == 0 ? "mpi41_calls: ok\n" : "mpi41_calls: %d failures\n",
           total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
