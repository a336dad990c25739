/* Generalized requests (MPI_Grequest_start / MPI_Grequest_complete):
 *  - completed by another thread while the main thread waits in MPI_Wait:
 *    the status comes from query_fn (source, tag, element count, cancelled
 *    flag), then free_fn runs exactly once;
 *  - MPI_Test before completion says not done and runs no callback;
 *    MPI_Request_get_status after completion runs query_fn only;
 *  - mixed with point-to-point requests in MPI_Waitall and MPI_Waitany;
 *  - MPI_Cancel runs cancel_fn with the right "complete" flag;
 *  - MPI_Request_free before completion: free_fn runs at
 *    MPI_Grequest_complete, not before;
 *  - a failing query_fn: MPI_Wait returns its code, MPI_Waitall returns
 *    MPI_ERR_IN_STATUS with the code in that request's MPI_ERROR.
 * Runs at any size; each rank works on its own. */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

/* The code a failing query_fn returns: one the program made with
 * MPI_Add_error_code, as user callbacks should. */
static int our_error = MPI_ERR_OTHER;

typedef struct {
  int id;
  int fail_query;
  atomic_int queries;
  atomic_int frees;
  atomic_int cancels;
  atomic_int last_cancel_complete;
} State;

static int query_fn(void* extra, MPI_Status* status) {
  State* state = (State*)extra;
  atomic_fetch_add(&state->queries, 1);
  MPI_Status_set_elements(status, MPI_INT, state->id);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = 40 + state->id;
  status->MPI_TAG = 70 + state->id;
  return state->fail_query ? our_error : MPI_SUCCESS;
}

static int free_fn(void* extra) {
  atomic_fetch_add(&((State*)extra)->frees, 1);
  return MPI_SUCCESS;
}

static int cancel_fn(void* extra, int complete) {
  State* state = (State*)extra;
  atomic_fetch_add(&state->cancels, 1);
  atomic_store(&state->last_cancel_complete, complete);
  return MPI_SUCCESS;
}

static void init_state(State* state, int id) {
  state->id = id;
  state->fail_query = 0;
  atomic_init(&state->queries, 0);
  atomic_init(&state->frees, 0);
  atomic_init(&state->cancels, 0);
  atomic_init(&state->last_cancel_complete, -1);
}

typedef struct {
  MPI_Request request;
  atomic_int go;
} Completer;

static void* complete_later(void* arg) {
  Completer* completer = (Completer*)arg;
  while (!atomic_load(&completer->go)) {
  }
  MPI_CHECK(MPI_Grequest_complete(completer->request));
  return NULL;
}

static void expect_status(const MPI_Status* status, int id, const char* what) {
  int count = -1;
  MPI_CHECK(MPI_Get_count(status, MPI_INT, &count));
  CHECK(status->MPI_SOURCE == 40 + id && status->MPI_TAG == 70 + id &&
            count == id,
        "%s: source %d tag %d count %d, expected %d %d %d", what,
        status->MPI_SOURCE, status->MPI_TAG, count, 40 + id, 70 + id, id);
}

int main(int argc, char** argv) {
  int provided;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "no MPI_THREAD_MULTIPLE");
  int rank;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Status status;
  int flag;

  /* Completed by another thread while this one waits. */
  {
    State state;
    init_state(&state, 3);
    Completer completer;
    atomic_init(&completer.go, 0);
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state,
                                 &completer.request));
    MPI_Request request = completer.request;
    MPI_CHECK(MPI_Test(&request, &flag, &status));
    CHECK(!flag && request != MPI_REQUEST_NULL,
          "Test of an uncompleted generalized request says done");
    CHECK(atomic_load(&state.queries) == 0 && atomic_load(&state.frees) == 0,
          "callbacks ran before completion");
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, complete_later, &completer) == 0,
          "pthread_create");
    atomic_store(&completer.go, 1);
    status.MPI_ERROR = MPI_ERR_DIMS;
    MPI_CHECK(MPI_Wait(&request, &status));
    pthread_join(thread, NULL);
    CHECK(request == MPI_REQUEST_NULL, "Wait left the handle");
    expect_status(&status, 3, "Wait");
    CHECK(status.MPI_ERROR == MPI_ERR_DIMS, "Wait changed MPI_ERROR");
    CHECK(atomic_load(&state.queries) == 1 && atomic_load(&state.frees) == 1,
          "Wait: %d queries, %d frees", atomic_load(&state.queries),
          atomic_load(&state.frees));
  }

  /* Request_get_status after completion: query only; then Waitall with
   * point-to-point requests, and Waitany. */
  {
    State a, b;
    init_state(&a, 5);
    init_state(&b, 6);
    MPI_Request requests[4];
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a,
                                 &requests[0]));
    MPI_CHECK(MPI_Grequest_complete(requests[0]));
    MPI_CHECK(MPI_Request_get_status(requests[0], &flag, &status));
    CHECK(flag, "Request_get_status: not done");
    expect_status(&status, 5, "Request_get_status");
    CHECK(atomic_load(&a.queries) == 1 && atomic_load(&a.frees) == 0,
          "Request_get_status freed the request");
    int out = 1234 + rank, in = -1;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &requests[1]));
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &requests[2]));
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b,
                                 &requests[3]));
    MPI_CHECK(MPI_Grequest_complete(requests[3]));
    MPI_Status statuses[4];
    MPI_CHECK(MPI_Waitall(4, requests, statuses));
    expect_status(&statuses[0], 5, "Waitall[0]");
    expect_status(&statuses[3], 6, "Waitall[3]");
    CHECK(in == 1234 + rank, "Waitall: received %d", in);
    CHECK(atomic_load(&a.frees) == 1 && atomic_load(&b.frees) == 1,
          "Waitall: frees %d %d", atomic_load(&a.frees),
          atomic_load(&b.frees));

    State c;
    init_state(&c, 7);
    MPI_Request pair[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &pair[1]));
    MPI_CHECK(MPI_Grequest_complete(pair[1]));
    int index = -1;
    MPI_CHECK(MPI_Waitany(2, pair, &index, &status));
    CHECK(index == 1 && pair[1] == MPI_REQUEST_NULL, "Waitany index %d",
          index);
    expect_status(&status, 7, "Waitany");
  }

  /* Cancel before and after completion. */
  {
    State state;
    init_state(&state, 2);
    MPI_Request request, copy;
    MPI_CHECK(
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state, &request));
    MPI_CHECK(MPI_Cancel(&request));
    CHECK(atomic_load(&state.cancels) == 1 &&
              atomic_load(&state.last_cancel_complete) == 0,
          "cancel_fn before completion: %d calls, complete=%d",
          atomic_load(&state.cancels),
          atomic_load(&state.last_cancel_complete));
    copy = request;
    MPI_CHECK(MPI_Grequest_complete(copy));
    MPI_CHECK(MPI_Cancel(&request));
    CHECK(atomic_load(&state.last_cancel_complete) == 1,
          "cancel_fn after completion: complete=%d",
          atomic_load(&state.last_cancel_complete));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(atomic_load(&state.queries) == 1 && atomic_load(&state.frees) == 1,
          "Wait with MPI_STATUS_IGNORE: %d queries %d frees",
          atomic_load(&state.queries), atomic_load(&state.frees));
  }

  /* Freed before completion: free_fn waits for MPI_Grequest_complete. */
  {
    State state;
    init_state(&state, 1);
    MPI_Request request, copy;
    MPI_CHECK(
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state, &request));
    copy = request;
    MPI_CHECK(MPI_Request_free(&request));
    CHECK(request == MPI_REQUEST_NULL, "Request_free left the handle");
    CHECK(atomic_load(&state.frees) == 0, "free_fn ran before completion");
    MPI_CHECK(MPI_Grequest_complete(copy));
    CHECK(atomic_load(&state.frees) == 1 && atomic_load(&state.queries) == 0,
          "freed request at completion: %d frees %d queries",
          atomic_load(&state.frees), atomic_load(&state.queries));
  }

  /* A failing query_fn. */
  {
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int our_class;
    MPI_CHECK(MPI_Add_error_class(&our_class));
    MPI_CHECK(MPI_Add_error_code(our_class, &our_error));
    State state;
    init_state(&state, 4);
    state.fail_query = 1;
    MPI_Request request;
    MPI_CHECK(
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state, &request));
    MPI_CHECK(MPI_Grequest_complete(request));
    int error = MPI_Wait(&request, &status);
    CHECK(error == our_error, "Wait returned %d, expected query_fn's %d",
          error, our_error);
    CHECK(atomic_load(&state.frees) == 1, "free_fn not run after a failure");

    State good;
    init_state(&good, 8);
    init_state(&state, 4);
    state.fail_query = 1;
    MPI_Request requests[2];
    MPI_Status statuses[2];
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &good,
                                 &requests[0]));
    MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state,
                                 &requests[1]));
    MPI_CHECK(MPI_Grequest_complete(requests[0]));
    MPI_CHECK(MPI_Grequest_complete(requests[1]));
    error = MPI_Waitall(2, requests, statuses);
    int error_class = -1;
    MPI_CHECK(MPI_Error_class(error, &error_class));
    CHECK(error_class == MPI_ERR_IN_STATUS, "Waitall returned class %d",
          error_class);
    CHECK(statuses[0].MPI_ERROR == MPI_SUCCESS &&
              statuses[1].MPI_ERROR == our_error,
          "Waitall statuses' MPI_ERROR: %d %d", statuses[0].MPI_ERROR,
          statuses[1].MPI_ERROR);
    /* Bad input. */
    MPI_CHECK(MPI_Error_class(MPI_Grequest_complete(MPI_REQUEST_NULL),
                              &error_class));
    CHECK(error_class == MPI_ERR_REQUEST,
          "Grequest_complete(MPI_REQUEST_NULL): class %d", error_class);
    MPI_Request plain;
    int value = 0;
    MPI_CHECK(MPI_Isend(&value, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &plain));
    MPI_CHECK(MPI_Error_class(MPI_Grequest_complete(plain), &error_class));
    CHECK(error_class == MPI_ERR_REQUEST,
          "Grequest_complete of a send request: class %d", error_class);
    MPI_CHECK(MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Error_class(
        MPI_Grequest_start(NULL, free_fn, cancel_fn, NULL, &plain),
        &error_class));
    CHECK(error_class == MPI_ERR_ARG,
          "Grequest_start with a null query_fn: class %d", error_class);
  }

  test_report_pass("generalized_requests", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
