/* MPI_Alloc_mem / MPI_Free_mem, and the status setters a layered library
 * uses to fill in statuses (MPI_Status_set_elements(_x),
 * MPI_Status_set_cancelled, and MPI-4.1's set/get of source, tag and
 * error), read back through MPI_Get_count, MPI_Get_elements and
 * MPI_Test_cancelled. Memory from MPI_Alloc_mem also carries real
 * traffic. Calls that return one status leave its MPI_ERROR field alone
 * (MPI-4.1 section 3.2.5); Waitall sets it. */
#include "test_util.h"

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define HAVE_MPI_4_1 1
#else
#define HAVE_MPI_4_1 0
#endif

static void check_alloc_mem(int rank, int size) {
  const MPI_Aint sizes[] = {0, 1, 7, 4096, 1 << 20};
  for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); ++i) {
    unsigned char* memory = NULL;
    MPI_CHECK(MPI_Alloc_mem(sizes[i], MPI_INFO_NULL, &memory));
    CHECK(memory != NULL || sizes[i] == 0, "Alloc_mem(%ld) gave NULL",
          (long)sizes[i]);
    test_fill(memory, (size_t)sizes[i], rank, i);
    CHECK_PATTERN(memory, (size_t)sizes[i], rank, i,
                  "memory from MPI_Alloc_mem");
    MPI_CHECK(MPI_Free_mem(memory));
  }
  /* With an info object, and used as message buffers. */
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  enum { kBytes = 70000 };
  unsigned char *out = NULL, *in = NULL;
  MPI_CHECK(MPI_Alloc_mem(kBytes, info, &out));
  MPI_CHECK(MPI_Alloc_mem(kBytes, MPI_INFO_NULL, &in));
  MPI_CHECK(MPI_Info_free(&info));
  test_fill(out, kBytes, rank, 5);
  MPI_CHECK(MPI_Sendrecv(out, kBytes, MPI_BYTE, (rank + 1) % size, 5, in,
                         kBytes, MPI_BYTE, (rank + size - 1) % size, 5,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_PATTERN(in, kBytes, (rank + size - 1) % size, 5,
                "message through Alloc_mem buffers");
  MPI_CHECK(MPI_Free_mem(out));
  MPI_CHECK(MPI_Free_mem(in));
}

static void expect_count(const MPI_Status* status, MPI_Datatype type, int count,
                         int elements, const char* what) {
  int got_count = -5, got_elements = -5;
  MPI_CHECK(MPI_Get_count(status, type, &got_count));
  MPI_CHECK(MPI_Get_elements(status, type, &got_elements));
  CHECK(got_count == count && got_elements == elements,
        "%s: Get_count %d Get_elements %d, expected %d and %d", what, got_count,
        got_elements, count, elements);
}

static void check_status_setters(void) {
  MPI_Status status;
  memset(&status, 0, sizeof status);
  MPI_CHECK(MPI_Status_set_elements(&status, MPI_INT, 5));
  expect_count(&status, MPI_INT, 5, 5, "5 MPI_INT");
  expect_count(&status, MPI_BYTE, 5 * (int)sizeof(int), 5 * (int)sizeof(int),
               "as bytes");
  MPI_CHECK(MPI_Status_set_elements(&status, MPI_DOUBLE, 0));
  expect_count(&status, MPI_DOUBLE, 0, 0, "0 MPI_DOUBLE");
  /* Pair types count two basic elements per pair; an odd count ends on a
   * value without its index. MPI-4.1 13.3: afterwards MPI_Get_elements
   * returns exactly `count`. (MPICH 4.0 and Open MPI 4.1 take `count` as
   * whole pairs instead.) */
#if !defined(MPICH) && !defined(OPEN_MPI)
  MPI_CHECK(MPI_Status_set_elements(&status, MPI_2INT, 4));
  expect_count(&status, MPI_2INT, 2, 4, "4 elements of MPI_2INT");
  MPI_CHECK(MPI_Status_set_elements(&status, MPI_2INT, 3));
  expect_count(&status, MPI_2INT, MPI_UNDEFINED, 3, "3 elements of MPI_2INT");
  MPI_CHECK(MPI_Status_set_elements(&status, MPI_DOUBLE_INT, 6));
  expect_count(&status, MPI_DOUBLE_INT, 3, 6, "6 elements of MPI_DOUBLE_INT");
#endif
  MPI_CHECK(MPI_Status_set_elements_x(&status, MPI_CHAR, (MPI_Count)100000));
  expect_count(&status, MPI_CHAR, 100000, 100000,
               "100000 MPI_CHAR (set_elements_x)");

#if !defined(MPICH) && !defined(OPEN_MPI)
  /* Derived datatypes: the bytes of `count` basic elements of their items,
   * whole items first, a partial item by its type signature. */
  MPI_Datatype strided, pairs;
  MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided));
  MPI_CHECK(MPI_Type_commit(&strided));
  MPI_CHECK(MPI_Type_contiguous(2, MPI_2INT, &pairs));
  MPI_CHECK(MPI_Type_commit(&pairs));
  MPI_CHECK(MPI_Status_set_elements(&status, strided, 6));
  expect_count(&status, strided, 2, 6, "6 elements of a 3-double vector");
  MPI_CHECK(MPI_Status_set_elements(&status, strided, 4));
  expect_count(&status, strided, MPI_UNDEFINED, 4,
               "4 elements of a 3-double vector");
  expect_count(&status, MPI_DOUBLE, 4, 4, "the same bytes as doubles");
  MPI_CHECK(MPI_Status_set_elements(&status, pairs, 5));
  expect_count(&status, pairs, MPI_UNDEFINED, 5,
               "5 elements of two MPI_2INT pairs");
  expect_count(&status, MPI_INT, 5, 5, "the same bytes as ints");
  MPI_CHECK(MPI_Type_free(&strided));
  MPI_CHECK(MPI_Type_free(&pairs));
  MPI_CHECK(MPI_Status_set_elements_x(&status, MPI_CHAR, (MPI_Count)100000));
#endif

  int flag = -1;
  MPI_CHECK(MPI_Status_set_cancelled(&status, 1));
  MPI_CHECK(MPI_Test_cancelled(&status, &flag));
  CHECK(flag, "Status_set_cancelled(1) not seen by Test_cancelled");
  MPI_CHECK(MPI_Status_set_cancelled(&status, 0));
  MPI_CHECK(MPI_Test_cancelled(&status, &flag));
  CHECK(!flag, "Status_set_cancelled(0) not seen by Test_cancelled");
  /* The setters leave the other fields alone. */
  expect_count(&status, MPI_CHAR, 100000, 100000, "count after set_cancelled");

#if HAVE_MPI_4_1
  MPI_CHECK(MPI_Status_set_source(&status, 3));
  MPI_CHECK(MPI_Status_set_tag(&status, 77));
  MPI_CHECK(MPI_Status_set_error(&status, MPI_ERR_TRUNCATE));
  int source = -1, tag = -1, error = -1;
  MPI_CHECK(MPI_Status_get_source(&status, &source));
  MPI_CHECK(MPI_Status_get_tag(&status, &tag));
  MPI_CHECK(MPI_Status_get_error(&status, &error));
  CHECK(source == 3 && tag == 77 && error == MPI_ERR_TRUNCATE,
        "Status get/set: source %d tag %d error %d", source, tag, error);
  CHECK(status.MPI_SOURCE == 3 && status.MPI_TAG == 77 &&
            status.MPI_ERROR == MPI_ERR_TRUNCATE,
        "Status fields: %d %d %d", status.MPI_SOURCE, status.MPI_TAG,
        status.MPI_ERROR);
  expect_count(&status, MPI_CHAR, 100000, 100000,
               "count after source/tag/error");
#endif
}

/* Each single-status call, on a real message and on MPI_PROC_NULL, must
 * fill source and tag but keep the MPI_ERROR the program left there. */
static void check_error_field_untouched(int rank, int size) {
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const int kMarker = MPI_ERR_DIMS;
  int out = 1000 + rank, in = -1;
  for (int peer_is_null = 0; peer_is_null <= 1; ++peer_is_null) {
    const int to = peer_is_null ? MPI_PROC_NULL : next;
    const int from = peer_is_null ? MPI_PROC_NULL : previous;
    const int expected_source = from;
    MPI_Status status;
    MPI_Request request;
    int flag = 0;
    /* MPI_Recv */
    status.MPI_ERROR = kMarker;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, to, 11, &in, 1, MPI_INT, from,
                           11, MPI_COMM_WORLD, &status));
    CHECK(status.MPI_SOURCE == expected_source && status.MPI_ERROR == kMarker,
          "Sendrecv (null peer %d): source %d, MPI_ERROR %d changed",
          peer_is_null, status.MPI_SOURCE, status.MPI_ERROR);
    /* MPI_Probe, then MPI_Recv */
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, to, 12, MPI_COMM_WORLD, &request));
    status.MPI_ERROR = kMarker;
    MPI_CHECK(MPI_Probe(from, 12, MPI_COMM_WORLD, &status));
    CHECK(status.MPI_ERROR == kMarker, "Probe changed MPI_ERROR to %d",
          status.MPI_ERROR);
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, from, 12, MPI_COMM_WORLD, &status));
    CHECK(status.MPI_ERROR == kMarker, "Recv changed MPI_ERROR to %d",
          status.MPI_ERROR);
    status.MPI_ERROR = kMarker;
    MPI_CHECK(MPI_Wait(&request, &status));
    CHECK(status.MPI_ERROR == kMarker, "Wait changed MPI_ERROR to %d",
          status.MPI_ERROR);
    /* MPI_Mprobe + MPI_Mrecv, MPI_Irecv + MPI_Test */
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, to, 13, MPI_COMM_WORLD, &request));
    MPI_Message message;
    status.MPI_ERROR = kMarker;
    MPI_CHECK(MPI_Mprobe(from, 13, MPI_COMM_WORLD, &message, &status));
    CHECK(status.MPI_ERROR == kMarker, "Mprobe changed MPI_ERROR to %d",
          status.MPI_ERROR);
    MPI_CHECK(MPI_Mrecv(&in, 1, MPI_INT, &message, &status));
    CHECK(status.MPI_ERROR == kMarker && status.MPI_SOURCE == expected_source,
          "Mrecv: source %d, MPI_ERROR %d", status.MPI_SOURCE,
          status.MPI_ERROR);
    CHECK(peer_is_null || in == 1000 + previous, "Mrecv delivered %d", in);
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    MPI_Request receive;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, from, 14, MPI_COMM_WORLD, &receive));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, to, 14, MPI_COMM_WORLD));
    status.MPI_ERROR = kMarker;
    while (!flag) MPI_CHECK(MPI_Test(&receive, &flag, &status));
    CHECK(status.MPI_ERROR == kMarker && status.MPI_SOURCE == expected_source,
          "Test: source %d, MPI_ERROR %d", status.MPI_SOURCE,
          status.MPI_ERROR);
    /* MPI_Waitall returns several statuses: it sets MPI_ERROR. */
    MPI_Request pair[2];
    MPI_Status statuses[2];
    statuses[0].MPI_ERROR = statuses[1].MPI_ERROR = kMarker;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, from, 15, MPI_COMM_WORLD, &pair[0]));
    MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, to, 15, MPI_COMM_WORLD, &pair[1]));
    MPI_CHECK(MPI_Waitall(2, pair, statuses));
    CHECK(statuses[0].MPI_ERROR == MPI_SUCCESS &&
              statuses[1].MPI_ERROR == MPI_SUCCESS,
          "Waitall left MPI_ERROR %d, %d", statuses[0].MPI_ERROR,
          statuses[1].MPI_ERROR);
  }
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  check_alloc_mem(rank, size);
  check_status_setters();
  check_error_field_untouched(rank, size);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("status_memory", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
