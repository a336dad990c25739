/* Windows' handles and arguments, as a program that gets them wrong sees
 * them (one_sided calls themselves are checked by the rma_* programs):
 *
 *   - MPI_Win_create, _allocate and _allocate_shared check their arguments
 *     (MPI_ERR_COMM, MPI_ERR_SIZE, MPI_ERR_DISP, MPI_ERR_INFO, MPI_ERR_ARG,
 *     MPI_ERR_BUFFER) and then make a window that MPI_Win_free frees; a
 *     freed window's handle, copies included, is MPI_ERR_WIN afterwards;
 *   - so does MPI_Win_create_dynamic;
 *   - every call that takes a window gives MPI_ERR_WIN for MPI_WIN_NULL, a
 *     freed window and made-up handles;
 *   - window keyvals are real: created, kept apart from other kinds, freed
 *     once; the predefined window attribute keys cannot be freed;
 *   - MPI_Win_create_errhandler makes a handler MPI_Errhandler_free frees;
 *   - the library stays usable afterwards.
 * With argument "fatal", MPI_Win_create with disp_unit 0 under the default
 * handler must end the job with one line naming the call and the reason. */
#include "test_util.h"

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

static int copy_fn(MPI_Win win, int keyval, void* extra, void* in, void* out,
                   int* flag) {
  (void)win, (void)keyval, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)keyval, (void)value, (void)extra;
  return MPI_SUCCESS;
}

static void win_handler(MPI_Win* win, int* code, ...) { (void)win, (void)code; }

static void calls_on_windows(MPI_Win win, const char* which);

static void constructors(void) {
  char memory[64];
  MPI_Win win = (MPI_Win)(intptr_t)0x5555;
  void* base = NULL;
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));

  MPI_CHECK(MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win));
  CHECK(win != MPI_WIN_NULL, "MPI_Win_create gave MPI_WIN_NULL");
  const MPI_Fint as_int = MPI_Win_c2f(win);
  CHECK(MPI_Win_f2c(as_int) == win, "MPI_Win_f2c(MPI_Win_c2f(win)) != win");
  MPI_Win stale = win;
  MPI_CHECK(MPI_Win_free(&win));
  calls_on_windows(MPI_Win_f2c(as_int), "MPI_Win_f2c of a freed window's integer");
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
  calls_on_windows(stale, "a freed window");
  MPI_CHECK(
      MPI_Win_create(memory, sizeof memory, 4, info, MPI_COMM_SELF, &win));
  MPI_CHECK(MPI_Win_free(&win));
  MPI_CHECK(
      MPI_Win_allocate(128, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CHECK(base != NULL, "MPI_Win_allocate gave no memory");
  memset(base, 1, 128);
  MPI_CHECK(MPI_Win_free(&win));
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                MPI_INFO_NULL, &node));
  MPI_CHECK(
      MPI_Win_allocate_shared(128, 8, MPI_INFO_NULL, node, &base, &win));
  CHECK(base != NULL, "MPI_Win_allocate_shared gave no memory");
  memset(base, 1, 128);
  MPI_CHECK(MPI_Win_free(&win));
  MPI_CHECK(MPI_Comm_free(&node));
  MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK(win != MPI_WIN_NULL, "MPI_Win_create_dynamic gave MPI_WIN_NULL");
  MPI_CHECK(MPI_Win_free(&win));

  /* Bad arguments are reported as such, before the missing feature. */
  expect_class(MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL,
                              MPI_COMM_NULL, &win),
               MPI_ERR_COMM, "MPI_Win_create on MPI_COMM_NULL");
  expect_class(
      MPI_Win_create(memory, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
      MPI_ERR_SIZE, "MPI_Win_create with size -1");
  expect_class(MPI_Win_create(memory, sizeof memory, 0, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win),
               MPI_ERR_DISP, "MPI_Win_create with disp_unit 0");
  expect_class(MPI_Win_create(NULL, 16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
               MPI_ERR_BUFFER, "MPI_Win_create with a null base");
  expect_class(MPI_Win_create(memory, sizeof memory, 1,
                              (MPI_Info)(intptr_t)0x4444, MPI_COMM_WORLD, &win),
               MPI_ERR_INFO, "MPI_Win_create with a made-up info");
  expect_class(MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL,
                              MPI_COMM_WORLD, NULL),
               MPI_ERR_ARG, "MPI_Win_create with a null win pointer");
  expect_class(
      MPI_Win_allocate(-8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
      MPI_ERR_SIZE, "MPI_Win_allocate with a negative size");
  expect_class(
      MPI_Win_allocate(8, -1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
      MPI_ERR_DISP, "MPI_Win_allocate with disp_unit -1");
  expect_class(
      MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &win),
      MPI_ERR_ARG, "MPI_Win_allocate with a null baseptr");
  expect_class(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_NULL, &win),
               MPI_ERR_COMM, "MPI_Win_create_dynamic on MPI_COMM_NULL");
  MPI_CHECK(MPI_Info_free(&info));
}

static void calls_on_windows(MPI_Win win, const char* which) {
  char what[128];
#define EXPECT_WIN(call)                                   \
  do {                                                     \
    snprintf(what, sizeof what, "%s on %s", #call, which); \
    expect_class(call, MPI_ERR_WIN, what);                 \
  } while (0)
  int value = 0, flag = 0, length = 0;
  char name[MPI_MAX_OBJECT_NAME];
  void* attribute = NULL;
  MPI_Errhandler handler;
  MPI_Win copy = win;
  EXPECT_WIN(MPI_Win_free(&copy));
  EXPECT_WIN(MPI_Win_set_attr(win, MPI_WIN_BASE, &value));
  EXPECT_WIN(MPI_Win_get_attr(win, MPI_WIN_SIZE, &attribute, &flag));
  EXPECT_WIN(MPI_Win_delete_attr(win, MPI_WIN_MODEL));
  EXPECT_WIN(MPI_Win_set_name(win, "w"));
  EXPECT_WIN(MPI_Win_get_name(win, name, &length));
  EXPECT_WIN(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  EXPECT_WIN(MPI_Win_get_errhandler(win, &handler));
  EXPECT_WIN(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  EXPECT_WIN(MPI_Win_fence(0, win));
  EXPECT_WIN(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
  EXPECT_WIN(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, win));
  EXPECT_WIN(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  EXPECT_WIN(MPI_Win_unlock(0, win));
  EXPECT_WIN(MPI_Win_lock_all(0, win));
  EXPECT_WIN(MPI_Win_unlock_all(win));
  EXPECT_WIN(MPI_Win_flush(0, win));
  EXPECT_WIN(MPI_Win_flush_all(win));
  EXPECT_WIN(MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
  EXPECT_WIN(MPI_Get(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
  EXPECT_WIN(
      MPI_Accumulate(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
  EXPECT_WIN(MPI_Get_accumulate(&value, 1, MPI_INT, &flag, 1, MPI_INT, 0, 0, 1,
                                MPI_INT, MPI_SUM, win));
#undef EXPECT_WIN
  expect_class(MPI_Win_free(NULL), MPI_ERR_ARG, "MPI_Win_free(NULL)");
}

static void keyvals_and_handlers(void) {
  int keyval = MPI_KEYVAL_INVALID, dup_keyval = MPI_KEYVAL_INVALID;
  MPI_CHECK(MPI_Win_create_keyval(copy_fn, delete_fn, &keyval, NULL));
  MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN,
                                  &dup_keyval, NULL));
  CHECK(keyval != MPI_KEYVAL_INVALID && dup_keyval != keyval,
        "window keyvals not distinct");
  /* Window keyvals are of their own kind. */
  void* value = NULL;
  int flag = 0, copy = keyval;
  expect_class(MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &value, &flag),
               MPI_ERR_KEYVAL, "a window keyval on a communicator");
  expect_class(MPI_Type_set_attr(MPI_INT, keyval, NULL), MPI_ERR_KEYVAL,
               "a window keyval on a datatype");
  expect_class(MPI_Type_free_keyval(&copy), MPI_ERR_KEYVAL,
               "MPI_Type_free_keyval of a window keyval");
  MPI_CHECK(MPI_Win_free_keyval(&keyval));
  CHECK(keyval == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left the keyval");
  copy = dup_keyval;
  MPI_CHECK(MPI_Win_free_keyval(&dup_keyval));
  expect_class(MPI_Win_free_keyval(&copy), MPI_ERR_KEYVAL,
               "freeing a window keyval twice");
  int predefined = MPI_WIN_BASE;
  expect_class(MPI_Win_free_keyval(&predefined), MPI_ERR_KEYVAL,
               "freeing MPI_WIN_BASE");
  expect_class(MPI_Win_free_keyval(NULL), MPI_ERR_ARG,
               "MPI_Win_free_keyval(NULL)");
  expect_class(MPI_Win_create_keyval(copy_fn, delete_fn, NULL, NULL),
               MPI_ERR_ARG, "MPI_Win_create_keyval with a null keyval");

  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_CHECK(MPI_Win_create_errhandler(win_handler, &handler));
  CHECK(handler != MPI_ERRHANDLER_NULL, "no window error handler made");
  MPI_CHECK(MPI_Errhandler_free(&handler));
  CHECK(handler == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free left the handle");
  expect_class(MPI_Win_create_errhandler(NULL, &handler), MPI_ERR_ARG,
               "MPI_Win_create_errhandler with a null function");

  CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL,
        "MPI_Win_f2c of MPI_WIN_NULL's integer");
  MPI_Win made_up = MPI_Win_f2c(12345);
  CHECK(made_up != MPI_WIN_NULL, "MPI_Win_f2c(12345) gave MPI_WIN_NULL");
  calls_on_windows(made_up, "MPI_Win_f2c(12345)");
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    char memory[8];
    MPI_Win win;
    MPI_Win_create(memory, sizeof memory, 0, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    CHECK(0, "MPI_Win_create returned under MPI_ERRORS_ARE_FATAL");
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  constructors();
  calls_on_windows(MPI_WIN_NULL, "MPI_WIN_NULL");
  calls_on_windows((MPI_Win)(intptr_t)0x0123456789, "a made-up handle");
  keyvals_and_handlers();
  /* Still usable. */
  int sum = 0, one = 1, size = 0;
  MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(sum == size, "allreduce after the window calls: %d, expected %d", sum,
        size);
  test_report_pass("windows", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
