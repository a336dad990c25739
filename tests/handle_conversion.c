/* Handle conversions (MPI_<Kind>_c2f / _f2c, MPI_Status_c2f / _f2c):
 *
 *   - predefined handles convert to their standard ABI values and back;
 *   - a handle of every kind (communicator, datatype, group, operation,
 *     info, error handler, message, request) round-trips, converts to the
 *     same integer every time, and the handle from the integer works;
 *   - the integer of a freed handle gives an invalid handle, which calls
 *     reject with their error class, also after a new object took the
 *     freed one's slot; so do made-up integers;
 *   - a status survives MPI_Status_c2f / _f2c with its source, tag, error
 *     and count. */
#include "test_util.h"

#ifdef MINIMPI_TAG_UB
#define MINIMPI_ONLY 1
#else
#define MINIMPI_ONLY 0
#endif

static int g_rank, g_size;

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static void user_handler(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
}

static void predefined(void) {
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD &&
            MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF &&
            MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL,
        "predefined communicators do not round-trip");
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE &&
            MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL,
        "predefined datatypes do not round-trip");
  CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY,
        "MPI_GROUP_EMPTY does not round-trip");
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_MAXLOC)) == MPI_MAXLOC,
        "MPI_MAXLOC does not round-trip");
  CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)) == MPI_INFO_ENV &&
            MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL,
        "predefined info handles do not round-trip");
  CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) ==
            MPI_ERRORS_RETURN,
        "MPI_ERRORS_RETURN does not round-trip");
  CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) ==
            MPI_MESSAGE_NO_PROC,
        "MPI_MESSAGE_NO_PROC does not round-trip");
  CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
        "MPI_REQUEST_NULL does not round-trip");
  CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL,
        "MPI_WIN_NULL does not round-trip");
  if (MINIMPI_ONLY) {
    /* The standard ABI's values. */
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == 0x101 &&
              MPI_Type_c2f(MPI_INT) == 0x209 && MPI_Op_c2f(MPI_SUM) == 0x21 &&
              MPI_Request_c2f(MPI_REQUEST_NULL) == 0x180 &&
              MPI_Win_c2f(MPI_WIN_NULL) == 0x110,
          "predefined handles do not convert to their ABI values");
  }
}

/* Converts twice and back; the handle must come back and the integer must
 * not change. */
#define ROUND_TRIP(Kind, handle)                                               \
  do {                                                                         \
    const MPI_Fint first_ = MPI_##Kind##_c2f(handle);                          \
    const MPI_Fint second_ = MPI_##Kind##_c2f(handle);                         \
    CHECK(first_ == second_, #Kind ": c2f gave %d, then %d", first_, second_); \
    CHECK(MPI_##Kind##_f2c(first_) == (handle),                                \
          #Kind ": f2c(c2f(handle)) is another handle (integer %d)", first_);  \
  } while (0)

static void objects(void) {
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  ROUND_TRIP(Comm, comm);
  int size = 0;
  MPI_CHECK(MPI_Comm_size(MPI_Comm_f2c(MPI_Comm_c2f(comm)), &size));
  CHECK(size == g_size, "size through the converted communicator: %d", size);

  MPI_Datatype type;
  MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &type));
  ROUND_TRIP(Type, type);
  int type_size = 0;
  MPI_CHECK(MPI_Type_size(MPI_Type_f2c(MPI_Type_c2f(type)), &type_size));
  CHECK(type_size == 6 * (int)sizeof(int), "converted type size %d", type_size);

  MPI_Group group;
  MPI_CHECK(MPI_Comm_group(comm, &group));
  ROUND_TRIP(Group, group);

  MPI_Op op;
  MPI_CHECK(MPI_Op_create(user_sum, 1, &op));
  ROUND_TRIP(Op, op);
  int in = g_rank + 1, out = 0;
  MPI_CHECK(
      MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_Op_f2c(MPI_Op_c2f(op)), comm));
  CHECK(out == g_size * (g_size + 1) / 2,
        "reduction through the converted "
        "operation: %d",
        out);

  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "key", "value"));
  ROUND_TRIP(Info, info);
  int nkeys = 0;
  MPI_CHECK(MPI_Info_get_nkeys(MPI_Info_f2c(MPI_Info_c2f(info)), &nkeys));
  CHECK(nkeys == 1, "keys through the converted info: %d", nkeys);

  MPI_Errhandler handler;
  MPI_CHECK(MPI_Comm_create_errhandler(user_handler, &handler));
  ROUND_TRIP(Errhandler, handler);

  /* A message from a matched probe, and requests. */
  int value = 77 + g_rank, received = -1;
  MPI_Request send;
  MPI_CHECK(MPI_Isend(&value, 1, MPI_INT, g_rank, 5, comm, &send));
  ROUND_TRIP(Request, send);
  MPI_Message message;
  MPI_CHECK(MPI_Mprobe(g_rank, 5, comm, &message, MPI_STATUS_IGNORE));
  ROUND_TRIP(Message, message);
  MPI_Message converted = MPI_Message_f2c(MPI_Message_c2f(message));
  MPI_CHECK(MPI_Mrecv(&received, 1, MPI_INT, &converted, MPI_STATUS_IGNORE));
  CHECK(received == 77 + g_rank, "received %d through the converted message",
        received);
  MPI_Request converted_send = MPI_Request_f2c(MPI_Request_c2f(send));
  MPI_CHECK(MPI_Wait(&converted_send, MPI_STATUS_IGNORE));

  /* Now free everything and keep the integers: each gives a handle the
   * calls reject. */
  const MPI_Fint comm_int = MPI_Comm_c2f(comm);
  const MPI_Fint type_int = MPI_Type_c2f(type);
  const MPI_Fint group_int = MPI_Group_c2f(group);
  const MPI_Fint op_int = MPI_Op_c2f(op);
  const MPI_Fint info_int = MPI_Info_c2f(info);
  const MPI_Fint handler_int = MPI_Errhandler_c2f(handler);
  const MPI_Fint message_int = MPI_Message_c2f(message);
  const MPI_Fint send_int = MPI_Request_c2f(send);
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Type_free(&type));
  MPI_CHECK(MPI_Group_free(&group));
  MPI_CHECK(MPI_Op_free(&op));
  MPI_CHECK(MPI_Info_free(&info));
  MPI_CHECK(MPI_Errhandler_free(&handler));
  /* New objects of each kind, which may take the freed slots. */
  MPI_Comm comm2;
  MPI_Datatype type2;
  MPI_Op op2;
  MPI_Info info2;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm2));
  MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &type2));
  MPI_CHECK(MPI_Op_create(user_sum, 0, &op2));
  MPI_CHECK(MPI_Info_create(&info2));
  if (MINIMPI_ONLY) {
    CHECK(MPI_Comm_f2c(comm_int) != comm2 && MPI_Type_f2c(type_int) != type2 &&
              MPI_Op_f2c(op_int) != op2 && MPI_Info_f2c(info_int) != info2,
          "a freed handle's integer names the object that took its slot");
  }
  expect_class(MPI_Comm_size(MPI_Comm_f2c(comm_int), &size), MPI_ERR_COMM,
               "a freed communicator's integer");
  expect_class(MPI_Type_size(MPI_Type_f2c(type_int), &size), MPI_ERR_TYPE,
               "a freed datatype's integer");
  expect_class(MPI_Group_size(MPI_Group_f2c(group_int), &size), MPI_ERR_GROUP,
               "a freed group's integer");
  int commute;
  expect_class(MPI_Op_commutative(MPI_Op_f2c(op_int), &commute), MPI_ERR_OP,
               "a freed operation's integer");
  expect_class(MPI_Info_get_nkeys(MPI_Info_f2c(info_int), &nkeys), MPI_ERR_INFO,
               "a freed info's integer");
  MPI_Errhandler stale_handler = MPI_Errhandler_f2c(handler_int);
  expect_class(MPI_Comm_set_errhandler(MPI_COMM_SELF, stale_handler),
               MPI_ERR_ARG, "a freed error handler's integer");
  MPI_Message stale_message = MPI_Message_f2c(message_int);
  expect_class(
      MPI_Mrecv(&received, 1, MPI_INT, &stale_message, MPI_STATUS_IGNORE),
      MPI_ERR_REQUEST, "a received message's integer");
  MPI_Request stale_send = MPI_Request_f2c(send_int);
  expect_class(MPI_Wait(&stale_send, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
               "a completed request's integer");
  MPI_CHECK(MPI_Comm_free(&comm2));
  MPI_CHECK(MPI_Type_free(&type2));
  MPI_CHECK(MPI_Op_free(&op2));
  MPI_CHECK(MPI_Info_free(&info2));
}

static void made_up_integers(void) {
  const MPI_Fint made_up[] = {-1, 0x7fffffff, 0x40000000, 0x4fff1234, 12345};
  for (int i = 0; i < 5; ++i) {
    int size;
    MPI_Request request = MPI_Request_f2c(made_up[i]);
    expect_class(MPI_Comm_size(MPI_Comm_f2c(made_up[i]), &size), MPI_ERR_COMM,
                 "a made-up communicator integer");
    expect_class(MPI_Type_size(MPI_Type_f2c(made_up[i]), &size), MPI_ERR_TYPE,
                 "a made-up datatype integer");
    expect_class(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                 "a made-up request integer");
  }
}

static void statuses(void) {
  enum { kCount = 37 };
  double data[kCount];
  for (int i = 0; i < kCount; ++i) data[i] = i;
  const int peer = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(data, kCount, MPI_DOUBLE, peer, 42, data, kCount,
                         MPI_DOUBLE, from, 42, MPI_COMM_WORLD, &status));
  MPI_Fint f_status[MPI_F_STATUS_SIZE];
  MPI_CHECK(MPI_Status_c2f(&status, f_status));
  CHECK(f_status[MPI_F_SOURCE] == from && f_status[MPI_F_TAG] == 42 &&
            f_status[MPI_F_ERROR] == status.MPI_ERROR,
        "MPI_Status_c2f: source %d tag %d", f_status[MPI_F_SOURCE],
        f_status[MPI_F_TAG]);
  MPI_Status back;
  memset(&back, 0, sizeof back);
  MPI_CHECK(MPI_Status_f2c(f_status, &back));
  CHECK_STATUS(back, from, 42, MPI_DOUBLE, kCount, "converted status");
  expect_class(MPI_Status_c2f(MPI_STATUS_IGNORE, f_status), MPI_ERR_ARG,
               "MPI_Status_c2f of MPI_STATUS_IGNORE");
  expect_class(MPI_Status_f2c(f_status, NULL), MPI_ERR_ARG,
               "MPI_Status_f2c into a null status");
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  predefined();
  objects();
  made_up_integers();
  statuses();
  test_report_pass("handle_conversion", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
