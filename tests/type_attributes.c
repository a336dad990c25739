/* Attribute caching on datatypes (MPI_Type_create_keyval, _free_keyval,
 * MPI_Type_set_attr, _get_attr, _delete_attr).
 *
 *   - recording callbacks: which copy and delete callbacks run, with which
 *     datatype handle and value, in which order: MPI_Type_dup copies in the
 *     order the attributes were set, MPI_Type_free deletes the most recently
 *     set first, replacing a value and MPI_Type_delete_attr delete it;
 *     MPI_TYPE_NULL_COPY_FN / MPI_TYPE_DUP_FN / MPI_TYPE_NULL_DELETE_FN;
 *   - predefined types carry attributes too, and MPI_Type_dup of one copies
 *     them;
 *   - attributes belong to the type, not the handle: a second handle from
 *     MPI_Type_get_contents sees them, freeing it runs no delete callback,
 *     freeing the program's last handle does;
 *   - failing callbacks: a failed copy makes MPI_Type_dup fail with the
 *     callback's code and MPI_DATATYPE_NULL (what was copied is deleted
 *     again), a failed delete keeps the attribute, and a failed delete in
 *     MPI_Type_free keeps the type usable;
 *   - a keyval freed while an attribute uses it keeps working;
 *   - error classes: keyvals of another kind, freed or made-up keyvals,
 *     MPI_DATATYPE_NULL and freed types, null output pointers;
 *   - a duplicated type with attributes still moves every byte right. */
#include "test_util.h"

static int g_rank, g_size;

/* ---- Recording callbacks ------------------------------------------------ */

enum { kMaxEvents = 128 };
struct Event {
  char kind; /* 'c' copy, 'd' delete */
  int key;   /* test-local number of the keyval (its extra_state) */
  MPI_Datatype type;
  intptr_t value;
};
static struct Event g_events[kMaxEvents];
static int g_event_count;
static int g_fail_copy_of = -1, g_fail_delete_of = -1;

static void record(char kind, int key, MPI_Datatype type, void* value) {
  CHECK(g_event_count < kMaxEvents, "too many callback events");
  g_events[g_event_count++] = (struct Event){kind, key, type, (intptr_t)value};
}

static int copy_callback(MPI_Datatype old, int keyval, void* extra, void* in,
                         void* out, int* flag) {
  (void)keyval;
  const int key = (int)(intptr_t)extra;
  record('c', key, old, in);
  if (key == g_fail_copy_of) return MPI_ERR_OTHER;
  *(void**)out = (void*)((intptr_t)in + 1000); /* the copy's value */
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_callback(MPI_Datatype type, int keyval, void* value,
                           void* extra) {
  (void)keyval;
  const int key = (int)(intptr_t)extra;
  record('d', key, type, value);
  return key == g_fail_delete_of ? MPI_ERR_ARG : MPI_SUCCESS;
}

/* Expects exactly `count` events, as "c1:5" (copy of key 1 with value 5) or
 * "d2:7", in order, each on `type`. */
static void expect_events(const char* what, MPI_Datatype type, int count,
                          const char* const expected[]) {
  char got[1024] = "", want[1024] = "";
  size_t used = 0;
  for (int i = 0; i < g_event_count; ++i) {
    used += (size_t)snprintf(got + used, sizeof got - used, "%s%c%d:%ld",
                             i ? " " : "", g_events[i].kind, g_events[i].key,
                             (long)g_events[i].value);
  }
  used = 0;
  for (int i = 0; i < count; ++i) {
    used += (size_t)snprintf(want + used, sizeof want - used, "%s%s",
                             i ? " " : "", expected[i]);
  }
  CHECK(strcmp(got, want) == 0, "%s: callbacks [%s], expected [%s]", what, got,
        want);
  for (int i = 0; i < g_event_count; ++i) {
    CHECK(g_events[i].type == type,
          "%s: callback %d ran on the wrong datatype handle", what, i);
  }
  g_event_count = 0;
}

static int make_keyval(int key) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_CHECK(MPI_Type_create_keyval(copy_callback, delete_callback, &keyval,
                                   (void*)(intptr_t)key));
  CHECK(keyval != MPI_KEYVAL_INVALID, "no keyval made");
  return keyval;
}

static void expect_attr(MPI_Datatype type, int keyval, int present,
                        intptr_t value, const char* what) {
  void* got = NULL;
  int flag = -1;
  MPI_CHECK(MPI_Type_get_attr(type, keyval, &got, &flag));
  CHECK(flag == present, "%s: flag %d, expected %d", what, flag, present);
  if (present) {
    CHECK((intptr_t)got == value, "%s: value %ld, expected %ld", what,
          (long)(intptr_t)got, (long)value);
  }
}

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

/* ---- Scenarios ------------------------------------------------------------
 */

static void dup_and_free_run_callbacks_in_order(void) {
  const int k0 = make_keyval(0), k1 = make_keyval(1), k2 = make_keyval(2);
  int dup_key = MPI_KEYVAL_INVALID, none_key = MPI_KEYVAL_INVALID;
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN,
                                   &dup_key, NULL));
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN,
                                   MPI_TYPE_NULL_DELETE_FN, &none_key, NULL));
  MPI_Datatype type;
  MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  MPI_CHECK(MPI_Type_set_attr(type, k2, (void*)20));
  MPI_CHECK(MPI_Type_set_attr(type, none_key, (void*)77));
  MPI_CHECK(MPI_Type_set_attr(type, k0, (void*)5));
  MPI_CHECK(MPI_Type_set_attr(type, dup_key, (void*)88));
  MPI_CHECK(MPI_Type_set_attr(type, k1, (void*)10));
  expect_events("setting new attributes", type, 0, NULL);
  /* Setting again deletes the old value; the attribute is now the most
   * recently set. */
  MPI_CHECK(MPI_Type_set_attr(type, k0, (void*)6));
  expect_events("replacing k0", type, 1, (const char* const[]){"d0:5"});
  expect_attr(type, k0, 1, 6, "k0 after replacing");

  MPI_Datatype dup;
  MPI_CHECK(MPI_Type_dup(type, &dup));
  expect_events("MPI_Type_dup", type, 3,
                (const char* const[]){"c2:20", "c1:10", "c0:6"});
  expect_attr(dup, k2, 1, 1020, "k2 on the duplicate");
  expect_attr(dup, k0, 1, 1006, "k0 on the duplicate");
  expect_attr(dup, dup_key, 1, 88, "MPI_TYPE_DUP_FN keyval on the duplicate");
  expect_attr(dup, none_key, 0, 0,
              "MPI_TYPE_NULL_COPY_FN keyval on the duplicate");
  expect_attr(type, k1, 1, 10, "the original keeps its attributes");

  MPI_CHECK(MPI_Type_delete_attr(dup, k2));
  expect_events("MPI_Type_delete_attr", dup, 1,
                (const char* const[]){"d2:1020"});
  expect_attr(dup, k2, 0, 0, "k2 after deleting it");
  MPI_CHECK(MPI_Type_delete_attr(dup, k2)); /* not set: no callback */
  expect_events("deleting an absent attribute", dup, 0, NULL);

  /* Freeing deletes the most recently set first (the copies keep the
   * original's order: k1 was copied before k0). */
  MPI_Datatype dup_handle = dup;
  MPI_CHECK(MPI_Type_free(&dup));
  CHECK(dup == MPI_DATATYPE_NULL, "MPI_Type_free left the handle set");
  expect_events("MPI_Type_free of the duplicate", dup_handle, 2,
                (const char* const[]){"d0:1006", "d1:1010"});

  /* A keyval freed while the attribute uses it still works. */
  int freed = k2;
  MPI_CHECK(MPI_Type_free_keyval(&freed));
  CHECK(freed == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval left the keyval");
  MPI_Datatype handle = type;
  MPI_CHECK(MPI_Type_free(&type));
  expect_events("MPI_Type_free of the original", handle, 3,
                (const char* const[]){"d0:6", "d1:10", "d2:20"});
  int keys[] = {k0, k1, dup_key, none_key};
  for (int i = 0; i < 4; ++i) MPI_CHECK(MPI_Type_free_keyval(&keys[i]));
}

static void predefined_types_carry_attributes(void) {
  const int k0 = make_keyval(0);
  MPI_CHECK(MPI_Type_set_attr(MPI_INT, k0, (void*)3));
  MPI_CHECK(MPI_Type_set_attr(MPI_DOUBLE, k0, (void*)4));
  expect_attr(MPI_INT, k0, 1, 3, "attribute on MPI_INT");
  expect_attr(MPI_DOUBLE, k0, 1, 4, "attribute on MPI_DOUBLE");
  expect_attr(MPI_FLOAT, k0, 0, 0, "no attribute on MPI_FLOAT");
  MPI_Datatype dup;
  MPI_CHECK(MPI_Type_dup(MPI_INT, &dup));
  expect_events("MPI_Type_dup(MPI_INT)", MPI_INT, 1,
                (const char* const[]){"c0:3"});
  expect_attr(dup, k0, 1, 1003, "attribute on the duplicate of MPI_INT");
  MPI_Datatype dup_handle = dup;
  MPI_CHECK(MPI_Type_free(&dup));
  expect_events("freeing the duplicate", dup_handle, 1,
                (const char* const[]){"d0:1003"});
  MPI_CHECK(MPI_Type_delete_attr(MPI_INT, k0));
  expect_events("deleting from MPI_INT", MPI_INT, 1,
                (const char* const[]){"d0:3"});
  MPI_CHECK(MPI_Type_delete_attr(MPI_DOUBLE, k0));
  expect_events("deleting from MPI_DOUBLE", MPI_DOUBLE, 1,
                (const char* const[]){"d0:4"});
  int key = k0;
  MPI_CHECK(MPI_Type_free_keyval(&key));
}

/* A second handle to the same type (from MPI_Type_get_contents) sees its
 * attributes; only the last handle's free deletes them. */
static void attributes_belong_to_the_type(void) {
  const int k0 = make_keyval(0);
  MPI_Datatype inner, outer;
  MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_SHORT, &inner));
  MPI_CHECK(MPI_Type_contiguous(4, inner, &outer));
  MPI_CHECK(MPI_Type_set_attr(inner, k0, (void*)9));
  int integers[1];
  MPI_Aint addresses[1];
  MPI_Datatype types[1];
  MPI_CHECK(MPI_Type_get_contents(outer, 1, 0, 1, integers, addresses, types));
  MPI_Datatype second = types[0];
  expect_attr(second, k0, 1, 9, "attribute through the get_contents handle");
  MPI_CHECK(MPI_Type_set_attr(second, k0, (void*)11));
  expect_events("replacing through the second handle", second, 1,
                (const char* const[]){"d0:9"});
  expect_attr(inner, k0, 1, 11, "value set through the other handle");
  if (second != inner) { /* minimpi: a handle of its own */
    MPI_CHECK(MPI_Type_free(&second));
    expect_events("freeing the second handle", inner, 0, NULL);
    expect_attr(inner, k0, 1, 11, "attribute after freeing the other handle");
  } else { /* an MPI that hands out the same handle counts references */
    MPI_CHECK(MPI_Type_free(&second));
  }
  MPI_Datatype handle = inner;
  MPI_CHECK(MPI_Type_free(&inner));
  expect_events("freeing the last handle", handle, 1,
                (const char* const[]){"d0:11"});
  MPI_CHECK(MPI_Type_free(&outer));
  int key = k0;
  MPI_CHECK(MPI_Type_free_keyval(&key));
}

static void failing_callbacks(void) {
  const int k0 = make_keyval(0), k1 = make_keyval(1), k2 = make_keyval(2);
  MPI_Datatype type;
  MPI_CHECK(MPI_Type_contiguous(2, MPI_DOUBLE, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  MPI_CHECK(MPI_Type_set_attr(type, k0, (void*)1));
  MPI_CHECK(MPI_Type_set_attr(type, k1, (void*)2));
  MPI_CHECK(MPI_Type_set_attr(type, k2, (void*)3));

  /* The second copy fails: the dup fails with the callback's code, and the
   * first copy is deleted again from the half-made duplicate. */
  g_fail_copy_of = 1;
  MPI_Datatype dup = MPI_INT;
  int rc = MPI_Type_dup(type, &dup);
  g_fail_copy_of = -1;
  expect_class(rc, MPI_ERR_OTHER, "MPI_Type_dup with a failing copy callback");
  CHECK(dup == MPI_DATATYPE_NULL, "failed MPI_Type_dup left newtype set");
  CHECK(g_event_count == 3 && g_events[0].kind == 'c' && g_events[0].key == 0 &&
            g_events[1].kind == 'c' && g_events[1].key == 1 &&
            g_events[2].kind == 'd' && g_events[2].key == 0 &&
            g_events[2].value == 1001,
        "failed dup: expected copy k0, copy k1 (failing), delete of k0's "
        "copy; saw %d events",
        g_event_count);
  g_event_count = 0;

  /* A failing delete keeps the old value, on replacement and on delete. */
  g_fail_delete_of = 1;
  expect_class(MPI_Type_set_attr(type, k1, (void*)20), MPI_ERR_ARG,
               "replacing with a failing delete callback");
  expect_attr(type, k1, 1, 2, "value after a failed replacement");
  expect_class(MPI_Type_delete_attr(type, k1), MPI_ERR_ARG,
               "MPI_Type_delete_attr with a failing delete callback");
  expect_attr(type, k1, 1, 2, "value after a failed delete");
  g_event_count = 0;

  /* MPI_Type_free: k2 is deleted, k1 fails, so the type stays, with k0 and
   * k1, and still works. */
  MPI_Datatype kept = type;
  expect_class(MPI_Type_free(&type), MPI_ERR_ARG,
               "MPI_Type_free with a failing delete callback");
  CHECK(type == kept, "a failed MPI_Type_free changed the handle");
  expect_events("the failed free", kept, 2,
                (const char* const[]){"d2:3", "d1:2"});
  expect_attr(type, k0, 1, 1, "k0 after the failed free");
  expect_attr(type, k1, 1, 2, "k1 after the failed free");
  expect_attr(type, k2, 0, 0, "k2 after the failed free");
  int size = 0;
  MPI_CHECK(MPI_Type_size(type, &size));
  CHECK(size == 2 * (int)sizeof(double), "type size %d after a failed free",
        size);
  g_fail_delete_of = -1;
  MPI_CHECK(MPI_Type_free(&type));
  expect_events("the second free", kept, 2,
                (const char* const[]){"d1:2", "d0:1"});
  int keys[] = {k0, k1, k2};
  for (int i = 0; i < 3; ++i) MPI_CHECK(MPI_Type_free_keyval(&keys[i]));
}

static int ignore_copy(MPI_Comm comm, int keyval, void* extra, void* in,
                       void* out, int* flag) {
  (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}

static void bad_arguments(void) {
  const int k0 = make_keyval(0);
  int comm_key = MPI_KEYVAL_INVALID;
  MPI_CHECK(MPI_Comm_create_keyval(ignore_copy, MPI_COMM_NULL_DELETE_FN,
                                   &comm_key, NULL));
  void* value = NULL;
  int flag = 0;
  expect_class(MPI_Type_set_attr(MPI_INT, comm_key, (void*)1), MPI_ERR_KEYVAL,
               "a communicator keyval on a datatype");
  expect_class(MPI_Type_get_attr(MPI_INT, comm_key, &value, &flag),
               MPI_ERR_KEYVAL, "getting with a communicator keyval");
  expect_class(MPI_Comm_set_attr(MPI_COMM_WORLD, k0, (void*)1), MPI_ERR_KEYVAL,
               "a datatype keyval on a communicator");
  int copy = comm_key;
  expect_class(MPI_Type_free_keyval(&copy), MPI_ERR_KEYVAL,
               "MPI_Type_free_keyval of a communicator keyval");
  expect_class(MPI_Type_set_attr(MPI_INT, 987654, (void*)1), MPI_ERR_KEYVAL,
               "a made-up keyval");
  expect_class(MPI_Type_delete_attr(MPI_INT, MPI_KEYVAL_INVALID),
               MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID");
  expect_class(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &value, &flag),
               MPI_ERR_KEYVAL, "a predefined communicator attribute key");
  expect_class(MPI_Type_set_attr(MPI_DATATYPE_NULL, k0, (void*)1), MPI_ERR_TYPE,
               "MPI_DATATYPE_NULL");
  MPI_Datatype type, stale;
  MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &type));
  stale = type;
  MPI_CHECK(MPI_Type_free(&type));
  expect_class(MPI_Type_get_attr(stale, k0, &value, &flag), MPI_ERR_TYPE,
               "a freed datatype");
  expect_class(
      MPI_Type_get_attr((MPI_Datatype)(intptr_t)0x7777, k0, &value, &flag),
      MPI_ERR_TYPE, "a made-up datatype handle");
  expect_class(MPI_Type_get_attr(MPI_INT, k0, &value, NULL), MPI_ERR_ARG,
               "a null flag");
  expect_class(MPI_Type_get_attr(MPI_INT, k0, NULL, &flag), MPI_ERR_ARG,
               "a null attribute_val");
  expect_class(
      MPI_Type_create_keyval(copy_callback, delete_callback, NULL, NULL),
      MPI_ERR_ARG, "a null keyval pointer");
  int key = k0;
  MPI_CHECK(MPI_Type_free_keyval(&key));
  key = k0;
  expect_class(MPI_Type_free_keyval(&key), MPI_ERR_KEYVAL,
               "freeing a keyval twice");
  expect_class(MPI_Type_set_attr(MPI_INT, k0, (void*)1), MPI_ERR_KEYVAL,
               "a freed keyval");
  MPI_CHECK(MPI_Comm_free_keyval(&comm_key));
  g_event_count = 0;
}

/* A duplicate with attributes is the same layout: every byte of a strided
 * message arrives where the reference says. */
static void duplicate_still_communicates(void) {
  if (g_size < 2) return;
  const int k0 = make_keyval(0);
  MPI_Datatype vector, dup;
  MPI_CHECK(MPI_Type_vector(16, 3, 5, MPI_INT, &vector));
  MPI_CHECK(MPI_Type_set_attr(vector, k0, (void*)1));
  MPI_CHECK(MPI_Type_commit(&vector));
  MPI_CHECK(MPI_Type_dup(vector, &dup)); /* committed, as the original is */
  g_event_count = 0;
  enum { kInts = 16 * 5 };
  int data[kInts], expected[kInts];
  const int peer = g_rank ^ 1;
  if (peer < g_size) {
    for (int i = 0; i < kInts; ++i) data[i] = g_rank * 100000 + i;
    for (int i = 0; i < kInts; ++i) {
      expected[i] = (i % 5 < 3) ? peer * 100000 + i : -1;
    }
    int received[kInts];
    for (int i = 0; i < kInts; ++i) received[i] = -1;
    MPI_CHECK(MPI_Sendrecv(data, 1, dup, peer, 3, received, 1, vector, peer, 3,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kInts; ++i) {
      CHECK(received[i] == expected[i], "int %d: got %d, expected %d", i,
            received[i], expected[i]);
    }
  }
  MPI_CHECK(MPI_Type_free(&dup));
  MPI_CHECK(MPI_Type_free(&vector));
  g_event_count = 0;
  int key = k0;
  MPI_CHECK(MPI_Type_free_keyval(&key));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  dup_and_free_run_callbacks_in_order();
  predefined_types_carry_attributes();
  attributes_belong_to_the_type();
  failing_callbacks();
  bad_arguments();
  duplicate_still_communicates();
  test_report_pass("type_attributes", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
