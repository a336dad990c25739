/* MPI_Alloc_mem / MPI_Free_mem, and the status setters a layered library
 * uses to fill in statuses (MPI_Status_set_elements(_x),
 * MPI_Status_set_cancelled, and MPI-4.1's set/get of source, tag and
 * error), read back through MPI_Get_count, MPI_Get_elements and
 * MPI_Test_cancelled. Memory from MPI_Alloc_mem also carries real
 * traffic. */
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

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  check_alloc_mem(rank, size);
  check_status_setters();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("status_memory", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
