/* Handles are untrusted input. Under MPI_ERRORS_RETURN, a stale copy of a
 * freed or completed handle, a double free through a copy, and garbage
 * values each give the right error class, and the library keeps working
 * (real traffic follows every abuse). Also: an invalid communicator is
 * reported to MPI_COMM_WORLD's handler when only that one was set to
 * MPI_ERRORS_RETURN, MPI_Error_string of a returned code names the argument
 * and its value, user error handlers are called with the code, and user
 * error classes, codes and strings work. */
#include "test_util.h"

/* Garbage that no handle table issued: small, odd, huge, and the bit
 * pattern of a real handle with a wrong generation or index. */
static const uintptr_t kGarbage[] = {0x1000, 0x12345, (uintptr_t)-1,
                                     (uintptr_t)0x0500000000000001ull,
                                     (uintptr_t)0x0100000000abcdefull};

/* One message each way between 0 and the last rank: the library works. */
static void real_traffic(int tag) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = size - 1 - rank;
  unsigned char out[300], in[300];
  test_fill(out, sizeof out, rank, tag);
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(out, sizeof out, MPI_BYTE, peer, tag, in, sizeof in,
                         MPI_BYTE, peer, tag, MPI_COMM_WORLD, &status));
  CHECK_PATTERN(in, sizeof in, peer, tag, "traffic after bad handles");
}

static void stale_requests(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = 7, got = 0;
  MPI_Request request, copy;

  /* Completed and collected: the copy is stale. */
  MPI_CHECK(MPI_Isend(&value, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &request));
  copy = request;
  MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, rank, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(request == MPI_REQUEST_NULL, "Wait did not null the handle");
  CHECK_ERROR_CLASS(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  int flag = 0;
  CHECK_ERROR_CLASS(MPI_Test(&copy, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Request_free(&copy), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Cancel(&copy), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Request_get_status(copy, &flag, MPI_STATUS_IGNORE),
               MPI_ERR_REQUEST);

  /* Freed while pending: every copy dies at once, the receive still
   * completes (its buffer is filled by the matching send below). */
  MPI_CHECK(MPI_Irecv(&got, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &request));
  copy = request;
  MPI_CHECK(MPI_Request_free(&request));
  CHECK_ERROR_CLASS(MPI_Request_free(&copy), MPI_ERR_REQUEST); /* double free */
  CHECK_ERROR_CLASS(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  value = 99;
  MPI_CHECK(MPI_Send(&value, 1, MPI_INT, rank, 2, MPI_COMM_WORLD));

  /* A freed persistent request. */
  MPI_CHECK(MPI_Send_init(&value, 1, MPI_INT, rank, 3, MPI_COMM_WORLD,
                          &request));
  copy = request;
  MPI_CHECK(MPI_Request_free(&request));
  CHECK_ERROR_CLASS(MPI_Start(&copy), MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Startall(1, &copy), MPI_ERR_REQUEST);

  /* A stale handle inside an array: the whole call fails before waiting. */
  MPI_Request array[3];
  MPI_CHECK(MPI_Irecv(&got, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &array[0]));
  array[1] = copy;
  array[2] = MPI_REQUEST_NULL;
  CHECK_ERROR_CLASS(MPI_Waitall(3, array, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  int index, outcount, indices[3];
  CHECK_ERROR_CLASS(MPI_Waitany(3, array, &index, MPI_STATUS_IGNORE),
               MPI_ERR_REQUEST);
  CHECK_ERROR_CLASS(MPI_Testsome(3, array, &outcount, indices, MPI_STATUSES_IGNORE),
               MPI_ERR_REQUEST);
  value = 5;
  MPI_CHECK(MPI_Send(&value, 1, MPI_INT, rank, 4, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Wait(&array[0], MPI_STATUS_IGNORE));
  CHECK(got == 5, "receive after a failed Waitall got %d", got);

  /* Garbage. */
  for (size_t i = 0; i < sizeof kGarbage / sizeof kGarbage[0]; ++i) {
    MPI_Request garbage = (MPI_Request)kGarbage[i];
    CHECK_ERROR_CLASS(MPI_Wait(&garbage, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_ERROR_CLASS(MPI_Request_free(&garbage), MPI_ERR_REQUEST);
  }
  MPI_Request null_request = MPI_REQUEST_NULL;
  CHECK_ERROR_CLASS(MPI_Request_free(&null_request), MPI_ERR_REQUEST);
}

static void stale_communicators(void) {
  MPI_Comm dup, copy;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  copy = dup;
  MPI_CHECK(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL, "Comm_free did not null the handle");
  int value = 1, size;
  CHECK_ERROR_CLASS(MPI_Send(&value, 1, MPI_INT, 0, 0, copy), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_size(copy, &size), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_free(&copy), MPI_ERR_COMM); /* double free */
  CHECK_ERROR_CLASS(MPI_Barrier(copy), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Comm_size(MPI_COMM_NULL, &size), MPI_ERR_COMM);
  for (size_t i = 0; i < sizeof kGarbage / sizeof kGarbage[0]; ++i) {
    CHECK_ERROR_CLASS(MPI_Comm_size((MPI_Comm)kGarbage[i], &size), MPI_ERR_COMM);
    CHECK_ERROR_CLASS(MPI_Send(&value, 1, MPI_INT, 0, 0, (MPI_Comm)kGarbage[i]),
                 MPI_ERR_COMM);
  }
  /* A communicator freed while a nonblocking collective on it is pending:
   * the collective still completes. */
  MPI_Request request;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  int sum = 0, one = 1;
  MPI_CHECK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup, &request));
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(sum == size, "allreduce on a freed communicator gave %d", sum);
}

static void stale_ops_and_others(void) {
  MPI_Op op, copy;
  MPI_CHECK(MPI_Op_create((MPI_User_function*)0x1, 1, &op)); /* never called */
  copy = op;
  MPI_CHECK(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL, "Op_free did not null the handle");
  CHECK_ERROR_CLASS(MPI_Op_free(&copy), MPI_ERR_OP);
  int commute;
  CHECK_ERROR_CLASS(MPI_Op_commutative(copy, &commute), MPI_ERR_OP);
  int in = 1, inout = 2;
  CHECK_ERROR_CLASS(MPI_Reduce_local(&in, &inout, 1, MPI_INT, copy), MPI_ERR_OP);
  CHECK_ERROR_CLASS(MPI_Allreduce(&in, &inout, 1, MPI_INT, copy, MPI_COMM_WORLD),
               MPI_ERR_OP);
  for (size_t i = 0; i < sizeof kGarbage / sizeof kGarbage[0]; ++i) {
    CHECK_ERROR_CLASS(MPI_Op_commutative((MPI_Op)kGarbage[i], &commute),
                 MPI_ERR_OP);
    CHECK_ERROR_CLASS(MPI_Send(&in, 1, (MPI_Datatype)kGarbage[i], 0, 0,
                          MPI_COMM_WORLD),
                 MPI_ERR_TYPE);
    MPI_Errhandler garbage = (MPI_Errhandler)kGarbage[i];
    CHECK_ERROR_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, garbage),
                 MPI_ERR_ARG);
  }

  /* A matched-probe message can be received once. */
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_CHECK(MPI_Send(&in, 1, MPI_INT, rank, 9, MPI_COMM_WORLD));
  MPI_Message message, message_copy;
  MPI_CHECK(MPI_Mprobe(rank, 9, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE));
  message_copy = message;
  MPI_CHECK(MPI_Mrecv(&inout, 1, MPI_INT, &message, MPI_STATUS_IGNORE));
  CHECK(message == MPI_MESSAGE_NULL && inout == 1, "Mrecv failed");
  CHECK_ERROR_CLASS(MPI_Mrecv(&inout, 1, MPI_INT, &message_copy, MPI_STATUS_IGNORE),
               MPI_ERR_REQUEST);
  MPI_Message null_message = MPI_MESSAGE_NULL;
  CHECK_ERROR_CLASS(MPI_Mrecv(&inout, 1, MPI_INT, &null_message, MPI_STATUS_IGNORE),
               MPI_ERR_REQUEST);
}

/* Errors with no valid communicator go to MPI_COMM_WORLD's handler when the
 * program set only that one, and the code's string is specific. */
static void world_handler_and_strings(void) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int value = 3;
  const int code = MPI_Send(&value, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
  CHECK(test_error_class(code) == MPI_ERR_RANK, "bad rank gave class %d",
        test_error_class(code));
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_CHECK(MPI_Error_string(code, text, &length));
  char expected[64];
  snprintf(expected, sizeof expected, "invalid destination %d", size + 5);
  CHECK(strstr(text, "MPI_Send") != NULL && strstr(text, expected) != NULL &&
            (int)strlen(text) == length,
        "Error_string of the code says '%s' (length %d): it should name "
        "MPI_Send and '%s'",
        text, length, expected);
  /* The class itself still has the standard's words. */
  MPI_CHECK(MPI_Error_string(MPI_ERR_RANK, text, &length));
  CHECK(strstr(text, "invalid rank") != NULL, "class string is '%s'", text);
  /* Invalid codes. */
  int error_class;
  CHECK_ERROR_CLASS(MPI_Error_class(-5, &error_class), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPI_Error_class(0x3ffe, &error_class), MPI_ERR_ARG);
}

static int handler_calls = 0;
static int handler_last_class = -1;
static MPI_Comm handler_last_comm = MPI_COMM_NULL;
static void record_error(MPI_Comm* comm, int* code, ...) {
  ++handler_calls;
  handler_last_comm = *comm;
  MPI_Error_class(*code, &handler_last_class);
}

static void user_handlers_and_classes(void) {
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Errhandler handler, got;
  MPI_CHECK(MPI_Comm_create_errhandler(record_error, &handler));
  MPI_CHECK(MPI_Comm_set_errhandler(dup, handler));
  /* Freed by the program but still attached: it keeps working. */
  MPI_CHECK(MPI_Errhandler_free(&handler));
  CHECK(handler == MPI_ERRHANDLER_NULL, "Errhandler_free did not null it");
  int value = 1;
  const int code = MPI_Send(&value, 1, MPI_INT, 0, -4, dup);
  CHECK(test_error_class(code) == MPI_ERR_TAG && handler_calls == 1 &&
            handler_last_class == MPI_ERR_TAG && handler_last_comm == dup,
        "user handler: %d calls, class %d, code class %d", handler_calls,
        handler_last_class, test_error_class(code));
  MPI_CHECK(MPI_Comm_get_errhandler(dup, &got));
  MPI_CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_last_class == MPI_ERR_OTHER,
        "Comm_call_errhandler: %d calls, class %d", handler_calls,
        handler_last_class);
  /* A communicator made from dup inherits the handler. */
  MPI_Comm child;
  MPI_CHECK(MPI_Comm_dup(dup, &child));
  (void)MPI_Send(&value, -1, MPI_INT, 0, 0, child);
  CHECK(handler_calls == 3 && handler_last_class == MPI_ERR_COUNT &&
            handler_last_comm == child,
        "inherited handler: %d calls, class %d", handler_calls,
        handler_last_class);
  MPI_CHECK(MPI_Comm_free(&child));
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Errhandler_free(&got));  /* the last reference */
  CHECK_ERROR_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, got), MPI_ERR_ARG);

  /* Classes, codes and strings a program adds (and removes). */
  int new_class, new_code, error_class, length;
  char text[MPI_MAX_ERROR_STRING];
  MPI_CHECK(MPI_Add_error_class(&new_class));
  MPI_CHECK(MPI_Add_error_code(new_class, &new_code));
  MPI_CHECK(MPI_Add_error_string(new_code, "the flux capacitor is empty"));
  MPI_CHECK(MPI_Error_class(new_code, &error_class));
  CHECK(error_class == new_class, "class of a new code: %d, expected %d",
        error_class, new_class);
  MPI_CHECK(MPI_Error_string(new_code, text, &length));
  CHECK(strcmp(text, "the flux capacitor is empty") == 0, "new string: '%s'",
        text);
  MPI_CHECK(MPI_Error_string(new_class, text, &length));
  CHECK(length == 0, "a class with no string has '%s'", text);
  CHECK_ERROR_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "mine now"), MPI_ERR_ARG);
  /* What a program adds lies above MPI_ERR_LASTCODE (MPI-4.1 9.5), and
   * MPI_LASTUSEDCODE on MPI_COMM_WORLD is the largest of it. */
  CHECK(new_class > MPI_ERR_LASTCODE && new_code > MPI_ERR_LASTCODE,
        "added class %d and code %d, not above MPI_ERR_LASTCODE %d", new_class,
        new_code, MPI_ERR_LASTCODE);
  CHECK(new_code != new_class, "the added code %d is its class", new_code);
  MPI_CHECK(MPI_Error_class(new_class, &error_class));
  CHECK(error_class == new_class, "class of an added class: %d, expected %d",
        error_class, new_class);
  int* last_used = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last_used,
                              &flag));
  const int largest = new_code > new_class ? new_code : new_class;
  CHECK(flag && *last_used == largest,
        "MPI_LASTUSEDCODE %d after adding class %d and code %d, expected %d",
        flag ? *last_used : -1, new_class, new_code, largest);
  /* A code of a predefined class, with a string of its own. */
  int arg_code;
  MPI_CHECK(MPI_Add_error_code(MPI_ERR_ARG, &arg_code));
  CHECK(arg_code > MPI_ERR_LASTCODE, "added code %d of MPI_ERR_ARG is not "
        "above MPI_ERR_LASTCODE", arg_code);
  MPI_CHECK(MPI_Error_class(arg_code, &error_class));
  CHECK(error_class == MPI_ERR_ARG, "class of an added MPI_ERR_ARG code: %d",
        error_class);
  MPI_CHECK(MPI_Add_error_string(arg_code, "a bad argument of our own"));
  MPI_CHECK(MPI_Error_string(arg_code, text, &length));
  CHECK(strcmp(text, "a bad argument of our own") == 0 &&
            length == (int)strlen(text),
        "string of an added MPI_ERR_ARG code: '%s' (%d)", text, length);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last_used,
                              &flag));
  const int largest_now = arg_code > largest ? arg_code : largest;
  CHECK(flag && *last_used == largest_now,
        "MPI_LASTUSEDCODE %d after adding code %d, expected %d", *last_used,
        arg_code, largest_now);
  /* A user handler is handed the code, and the call returns it. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, new_code) == MPI_SUCCESS,
        "MPI_Comm_call_errhandler with an added code");
  MPI_CHECK(MPI_Remove_error_string(arg_code));
  MPI_CHECK(MPI_Remove_error_code(arg_code));
  CHECK_ERROR_CLASS(MPI_Remove_error_class(new_class), MPI_ERR_ARG); /* has code */
  MPI_CHECK(MPI_Remove_error_string(new_code));
  MPI_CHECK(MPI_Remove_error_code(new_code));
  MPI_CHECK(MPI_Remove_error_class(new_class));
  CHECK_ERROR_CLASS(MPI_Error_class(new_code, &error_class), MPI_ERR_ARG);
  int again;
  MPI_CHECK(MPI_Add_error_class(&again));
  CHECK(again == new_class, "a removed class is not reused (%d, %d)", again,
        new_class);
  MPI_CHECK(MPI_Remove_error_class(again));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  /* Only MPI_COMM_WORLD is told to return errors. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  world_handler_and_strings();
  real_traffic(1);
  stale_requests();
  real_traffic(2);
  stale_communicators();
  real_traffic(3);
  stale_ops_and_others();
  real_traffic(4);
  user_handlers_and_classes();
  real_traffic(5);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("handles", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
