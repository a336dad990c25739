/* MPI_Comm_call_errhandler and MPI_Win_call_errhandler hand a user handler
 * exactly the code they were called with: a predefined class (MPICH's
 * rma/wincall calls with MPI_ERR_OTHER and checks for it), a code and a class
 * from MPI_Add_error_code / MPI_Add_error_class; the handler gets the
 * communicator or window it was called on, and the call returns MPI_SUCCESS
 * when the handler returns, as it does under MPI_ERRORS_RETURN.
 *
 * Also the strings of what a program adds: MPI_Error_string of a new class or
 * code is "" (length 0) until MPI_Add_error_string names that very class or
 * code; a code does not borrow its class's string, and removing a string
 * brings "" back. */
#include "test_util.h"

static int comm_calls = 0;
static int comm_last_code = -1;
static MPI_Comm comm_expected = MPI_COMM_NULL;

static void comm_handler(MPI_Comm* comm, int* code, ...) {
  ++comm_calls;
  comm_last_code = *code;
  CHECK(*comm == comm_expected,
        "communicator handler called with another communicator");
}

static int win_calls = 0;
static int win_last_code = -1;
static MPI_Win win_expected = MPI_WIN_NULL;

static void win_handler(MPI_Win* win, int* code, ...) {
  ++win_calls;
  win_last_code = *code;
  CHECK(*win == win_expected, "window handler called with another window");
}

static void check_string(int code, const char* expected, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = -1;
  memset(text, 'x', sizeof text);
  text[sizeof text - 1] = '\0';
  MPI_CHECK(MPI_Error_string(code, text, &length));
  CHECK(strcmp(text, expected) == 0 && length == (int)strlen(expected),
        "MPI_Error_string of %s (%d) is '%s' (length %d), expected '%s'", what,
        code, text, length, expected);
}

static void check_added_strings(void) {
  int new_class, code_of_new, code_of_other, error_class;
  MPI_CHECK(MPI_Add_error_class(&new_class));
  MPI_CHECK(MPI_Add_error_code(new_class, &code_of_new));
  MPI_CHECK(MPI_Add_error_code(MPI_ERR_OTHER, &code_of_other));
  MPI_CHECK(MPI_Error_class(code_of_other, &error_class));
  CHECK(error_class == MPI_ERR_OTHER,
        "class of an added MPI_ERR_OTHER code: %d", error_class);

  check_string(new_class, "", "a new class");
  check_string(code_of_new, "", "a new code of a new class");
  check_string(code_of_other, "", "a new code of MPI_ERR_OTHER");

  /* The class's string is the class's alone. */
  MPI_CHECK(MPI_Add_error_string(new_class, "the class of ours"));
  check_string(new_class, "the class of ours", "a new class with a string");
  check_string(code_of_new, "", "a new code whose class has a string");
  MPI_CHECK(MPI_Add_error_string(code_of_new, "the code of ours"));
  check_string(code_of_new, "the code of ours", "a new code with a string");
  check_string(new_class, "the class of ours",
               "the class after its code got a string");
  MPI_CHECK(MPI_Add_error_string(code_of_new, "replaced"));
  check_string(code_of_new, "replaced", "a new code whose string was replaced");

  /* MPI-4.1's removal brings the empty string back. */
  MPI_CHECK(MPI_Remove_error_string(code_of_new));
  check_string(code_of_new, "", "a new code whose string was removed");

  /* Predefined classes keep the standard's words. */
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_CHECK(MPI_Error_string(MPI_ERR_OTHER, text, &length));
  CHECK(length > 0, "MPI_ERR_OTHER has an empty string");

  MPI_CHECK(MPI_Remove_error_code(code_of_other));
  MPI_CHECK(MPI_Remove_error_code(code_of_new));
  MPI_CHECK(MPI_Remove_error_class(new_class));
}

/* Calls `comm`'s user handler with each code; each must arrive unchanged. */
static void check_comm_codes(MPI_Comm comm, const int* codes, int count) {
  MPI_Errhandler handler;
  MPI_CHECK(MPI_Comm_create_errhandler(comm_handler, &handler));
  MPI_CHECK(MPI_Comm_set_errhandler(comm, handler));
  MPI_CHECK(MPI_Errhandler_free(&handler));
  comm_expected = comm;
  for (int i = 0; i < count; ++i) {
    const int before = comm_calls;
    comm_last_code = -1;
    const int rc = MPI_Comm_call_errhandler(comm, codes[i]);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler(%d) returned %d",
          codes[i], rc);
    CHECK(comm_calls == before + 1,
          "the communicator's handler ran %d times for code %d",
          comm_calls - before, codes[i]);
    CHECK(comm_last_code == codes[i],
          "the communicator's handler got code %d, called with %d",
          comm_last_code, codes[i]);
  }
  /* Under MPI_ERRORS_RETURN the call returns MPI_SUCCESS (MPICH does). */
  MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  for (int i = 0; i < count; ++i) {
    const int rc = MPI_Comm_call_errhandler(comm, codes[i]);
    CHECK(rc == MPI_SUCCESS,
          "MPI_Comm_call_errhandler(%d) under MPI_ERRORS_RETURN returned %d",
          codes[i], rc);
  }
}

static void check_win_codes(MPI_Comm comm, const int* codes, int count) {
  int buffer[2] = {0, 0};
  MPI_Win win;
  MPI_CHECK(MPI_Win_create(buffer, sizeof buffer, sizeof(int), MPI_INFO_NULL,
                           comm, &win));
  MPI_Errhandler handler;
  MPI_CHECK(MPI_Win_create_errhandler(win_handler, &handler));
  MPI_CHECK(MPI_Win_set_errhandler(win, handler));
  MPI_CHECK(MPI_Errhandler_free(&handler));
  win_expected = win;
  for (int i = 0; i < count; ++i) {
    const int before = win_calls;
    win_last_code = -1;
    const int rc = MPI_Win_call_errhandler(win, codes[i]);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_call_errhandler(%d) returned %d",
          codes[i], rc);
    CHECK(win_calls == before + 1,
          "the window's handler ran %d times for code %d", win_calls - before,
          codes[i]);
    CHECK(win_last_code == codes[i],
          "the window's handler got code %d, called with %d", win_last_code,
          codes[i]);
  }
  MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < count; ++i) {
    const int rc = MPI_Win_call_errhandler(win, codes[i]);
    CHECK(rc == MPI_SUCCESS,
          "MPI_Win_call_errhandler(%d) under MPI_ERRORS_RETURN returned %d",
          codes[i], rc);
  }
  MPI_CHECK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int user_class, user_code, other_code;
  MPI_CHECK(MPI_Add_error_class(&user_class));
  MPI_CHECK(MPI_Add_error_code(user_class, &user_code));
  MPI_CHECK(MPI_Add_error_code(MPI_ERR_OTHER, &other_code));
  const int codes[] = {MPI_ERR_OTHER,    MPI_ERR_ARG, MPI_ERR_WIN,
                       MPI_ERR_RMA_SYNC, user_class,  user_code,
                       other_code};
  const int count = (int)(sizeof codes / sizeof codes[0]);

  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  check_comm_codes(dup, codes, count);
  MPI_CHECK(MPI_Comm_free(&dup));
  check_win_codes(MPI_COMM_WORLD, codes, count);
  check_added_strings();

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("errhandler_codes", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
