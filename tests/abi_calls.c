/* The MPI-5 standard ABI's own calls and the values a program built for
 * that ABI relies on at run time (issue 43):
 *  - MPI_Abi_get_version is 1.0; MPI_Abi_get_info names the sizes of
 *    MPI_Aint, MPI_Count and MPI_Offset; MPI_Abi_get_fortran_info gives
 *    MPI_INFO_NULL (no Fortran bindings); Fortran booleans set for one
 *    LOGICAL size read back byte for byte, other sizes stay unset;
 *    MPI_Abi_set_fortran_info answers MPI_ERR_ABI (62), which has its text.
 *  - MPI_<Handle>_toint gives a predefined handle its ABI value and
 *    MPI_<Handle>_fromint turns it back; a created handle round-trips and
 *    agrees with c2f.
 *  - The thread level provided for MPI_THREAD_MULTIPLE is 4096; the
 *    predefined attribute keys 501 (MPI_TAG_UB) and 505 (MPI_UNIVERSE_SIZE)
 *    answer; a created keyval is neither 0 (MPI_KEYVAL_INVALID) nor a
 *    predefined key; a message received with MPI_ANY_TAG (-2) reports its
 *    sender's tag, MPI_PROC_NULL (-3) gives source -3 and tag -2. */
#include "test_util.h"

static void check_info_value(MPI_Info info, const char* key, size_t size) {
  char value[MPI_MAX_INFO_VAL];
  int buflen = sizeof value, flag = 0;
  MPI_CHECK(MPI_Info_get_string(info, key, &buflen, value, &flag));
  char expected[32];
  snprintf(expected, sizeof expected, "%zu", size);
  CHECK(flag && strcmp(value, expected) == 0,
        "MPI_Abi_get_info %s: flag %d, \"%s\" (expected \"%s\")", key, flag,
        flag ? value : "", expected);
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == 4096 && provided == MPI_THREAD_MULTIPLE,
        "provided %d, expected MPI_THREAD_MULTIPLE (4096)", provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int major = -1, minor = -1;
  MPI_CHECK(MPI_Abi_get_version(&major, &minor));
  CHECK(major == 1 && minor == 0, "MPI_Abi_get_version %d.%d", major, minor);

  MPI_Info info = MPI_INFO_NULL;
  MPI_CHECK(MPI_Abi_get_info(&info));
  CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_info gave MPI_INFO_NULL");
  check_info_value(info, "mpi_aint_size", sizeof(MPI_Aint));
  check_info_value(info, "mpi_count_size", sizeof(MPI_Count));
  check_info_value(info, "mpi_offset_size", sizeof(MPI_Offset));
  MPI_CHECK(MPI_Info_free(&info));
  MPI_Info fortran = MPI_INFO_ENV;
  MPI_CHECK(MPI_Abi_get_fortran_info(&fortran));
  CHECK(fortran == MPI_INFO_NULL, "MPI_Abi_get_fortran_info gave an info");

  /* Fortran booleans: 4-byte LOGICALs set, 1-byte ones untouched. */
  int is_set = -1;
  MPI_CHECK(MPI_Abi_get_fortran_booleans(4, NULL, NULL, &is_set));
  CHECK(is_set == 0, "booleans of size 4 set before any set (%d)", is_set);
  int32_t truth = -1, falsity = 0;
  MPI_CHECK(MPI_Abi_set_fortran_booleans(4, &truth, &falsity));
  int32_t got_true = 7, got_false = 7;
  MPI_CHECK(MPI_Abi_get_fortran_booleans(4, &got_true, &got_false, &is_set));
  CHECK(is_set == 1 && got_true == -1 && got_false == 0,
        "booleans of size 4: set %d, true %d, false %d", is_set, got_true,
        got_false);
  MPI_CHECK(MPI_Abi_get_fortran_booleans(1, NULL, NULL, &is_set));
  CHECK(is_set == 0, "booleans of size 1 set by setting size 4");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_ERROR_CLASS(MPI_Abi_set_fortran_booleans(3, &truth, &falsity),
                    MPI_ERR_ARG);
  /* No Fortran to configure: the ABI's own error class, 62, with its text. */
  CHECK_ERROR_CLASS(MPI_Abi_set_fortran_info(MPI_INFO_NULL), MPI_ERR_ABI);
  char text[MPI_MAX_ERROR_STRING];
  int text_length = 0;
  MPI_CHECK(MPI_Error_string(62, text, &text_length));
  CHECK(MPI_ERR_ABI == 62 && strncmp(text, "MPI_ERR_ABI", 11) == 0,
        "MPI_Error_string(62): \"%s\"", text);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  /* Predefined handles convert to their ABI values and back. */
  CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101 &&
            MPI_Comm_fromint(0x101) == MPI_COMM_WORLD,
        "MPI_COMM_WORLD <-> %#x", MPI_Comm_toint(MPI_COMM_WORLD));
  CHECK(MPI_Type_toint(MPI_INT) == 0x209 && MPI_Type_fromint(0x209) == MPI_INT,
        "MPI_INT <-> %#x", MPI_Type_toint(MPI_INT));
  CHECK(MPI_Op_toint(MPI_SUM) == 0x21 &&
            MPI_Request_toint(MPI_REQUEST_NULL) == 0x180,
        "MPI_SUM %#x, MPI_REQUEST_NULL %#x", MPI_Op_toint(MPI_SUM),
        MPI_Request_toint(MPI_REQUEST_NULL));
  CHECK(MPI_File_toint(MPI_FILE_NULL) == 0x118 &&
            MPI_File_fromint(0x118) == MPI_FILE_NULL,
        "MPI_FILE_NULL <-> %#x", MPI_File_toint(MPI_FILE_NULL));
  CHECK(MPI_Errhandler_toint(MPI_ERRORS_RETURN) == 0x142 &&
            MPI_Info_toint(MPI_INFO_ENV) == 0x131 &&
            MPI_Group_toint(MPI_GROUP_EMPTY) == 0x109 &&
            MPI_Win_toint(MPI_WIN_NULL) == 0x110 &&
            MPI_Session_toint(MPI_SESSION_NULL) == 0x120 &&
            MPI_Message_toint(MPI_MESSAGE_NO_PROC) == 0x129,
        "a predefined handle's integer is not its ABI value");
  /* A created handle: toint agrees with c2f and fromint gives it back. */
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  const int dup_int = MPI_Comm_toint(dup);
  CHECK(dup_int == MPI_Comm_c2f(dup) && MPI_Comm_fromint(dup_int) == dup,
        "MPI_Comm_toint(dup) %d, c2f %d", dup_int, MPI_Comm_c2f(dup));

  /* Predefined attribute keys by their ABI numbers. */
  int* value = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, 501, &value, &flag));
  CHECK(flag && *value >= 32767, "MPI_TAG_UB (501): flag %d", flag);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, 505, &value, &flag));
  CHECK(flag && *value >= size, "MPI_UNIVERSE_SIZE (505): flag %d", flag);
  int keyval = MPI_KEYVAL_INVALID;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                   MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
  CHECK(keyval != 0 && (keyval < 501 || keyval > 507) &&
            (keyval < 601 || keyval > 605),
        "created keyval %d collides with the ABI's", keyval);
  MPI_CHECK(MPI_Comm_free_keyval(&keyval));
  CHECK(keyval == 0, "freed keyval is %d, not MPI_KEYVAL_INVALID (0)", keyval);

  /* Wildcards and MPI_PROC_NULL by the ABI's values. */
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const int sent = 1000 + rank;
  int received = -1;
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(&sent, 1, MPI_INT, right, 40 + rank, &received, 1,
                         MPI_INT, -1 /* MPI_ANY_SOURCE */, -2 /* MPI_ANY_TAG */,
                         dup, &status));
  CHECK(received == 1000 + left && status.MPI_SOURCE == left &&
            status.MPI_TAG == 40 + left,
        "received %d from %d tag %d (expected %d from %d tag %d)", received,
        status.MPI_SOURCE, status.MPI_TAG, 1000 + left, left, 40 + left);
  MPI_CHECK(
      MPI_Recv(&received, 1, MPI_INT, -3 /* MPI_PROC_NULL */, 0, dup, &status));
  CHECK(status.MPI_SOURCE == -3 && status.MPI_TAG == -2,
        "MPI_PROC_NULL receive: source %d tag %d", status.MPI_SOURCE,
        status.MPI_TAG);
  MPI_CHECK(MPI_Comm_free(&dup));

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("abi_calls: all checks passed at %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
