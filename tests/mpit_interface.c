/* The MPI_T interface call by call (MPI-4.1 chapter 15), at 2 ranks:
 * initialization counted and usable before MPI_Init and after
 * MPI_Finalize; control variables listed, read and written (a write before
 * MPI_Init is honoured by it: MINIMPI_EAGER_MAX=0 makes a 64-byte send a
 * rendezvous that cannot complete before its receive is posted; after
 * MPI_Init the write is refused, except for MINIMPI_COLL_<NAME>, whose
 * write the next collective call follows); categories; performance-variable
 * sessions with the library's own mpit_sessions_live and mpit_pvar_reads,
 * whose values are exact; event sources, and the registration lifecycle of
 * an event; and the error class of bad indices, names, handles and
 * sessions. MPI_T calls return their class directly. */
#define _POSIX_C_SOURCE 200809L

#include <time.h>
#include <unistd.h>

#include "test_util.h"

/* Checks that an MPI_T call returns exactly `expected`. */
#define CHECK_T(call, expected)                                          \
  do {                                                                   \
    const int check_t_rc_ = (call);                                      \
    CHECK(check_t_rc_ == (expected), "%s returned %d, expected %s (%d)", \
          #call, check_t_rc_, #expected, (expected));                    \
  } while (0)

static int cvar_index(const char* name) {
  int index = -1;
  CHECK_T(MPI_T_cvar_get_index(name, &index), MPI_SUCCESS);
  return index;
}

static int cvar_read_int(MPI_T_cvar_handle handle) {
  int value = -12345;
  CHECK_T(MPI_T_cvar_read(handle, &value), MPI_SUCCESS);
  return value;
}

static unsigned long long pvar_read(MPI_T_pvar_session session,
                                    MPI_T_pvar_handle handle) {
  unsigned long long value = 0xdeadbeef;
  CHECK_T(MPI_T_pvar_read(session, handle, &value), MPI_SUCCESS);
  return value;
}

static void sleep_ms(int ms) {
  struct timespec pause = {0, ms * 1000000L};
  nanosleep(&pause, NULL);
}

static void check_initialization(void) {
  int num = -1, provided = -1;
  CHECK_T(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_T(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_T(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  CHECK_T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
  /* Two inits, one finalize: still initialized. */
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
  CHECK(num > 10, "%d control variables", num);
}

/* Lists every control variable and checks the listing's shape. */
static void check_cvar_listing(void) {
  int num = 0;
  CHECK_T(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
  for (int i = 0; i < num; ++i) {
    char name[128], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1,
        bind = -1, scope = -1;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = (MPI_T_enum)0x77;
    CHECK_T(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type,
                                &enumtype, desc, &desc_len, &bind, &scope),
            MPI_SUCCESS);
    CHECK(strncmp(name, "MINIMPI_", 8) == 0, "cvar %d is %s", i, name);
    CHECK(name_len == (int)strlen(name) + 1, "%s: name_len %d", name, name_len);
    CHECK(desc_len > 1 && desc_len == (int)strlen(desc) + 1, "%s: desc_len %d",
          name, desc_len);
    CHECK(type == MPI_INT || type == MPI_CHAR, "%s: datatype", name);
    CHECK(enumtype == MPI_T_ENUM_NULL, "%s: enumtype", name);
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
    CHECK(scope == MPI_T_SCOPE_LOCAL || scope == MPI_T_SCOPE_ALL_EQ,
          "%s: scope %d", name, scope);
    CHECK(verbosity == MPI_T_VERBOSITY_USER_BASIC ||
              verbosity == MPI_T_VERBOSITY_TUNER_DETAIL,
          "%s: verbosity %d", name, verbosity);
    int index = -1;
    CHECK_T(MPI_T_cvar_get_index(name, &index), MPI_SUCCESS);
    CHECK(index == i, "%s: index %d, listed at %d", name, index, i);
    /* The length alone, with no buffer. */
    int needed = 0;
    CHECK_T(MPI_T_cvar_get_info(i, NULL, &needed, NULL, NULL, NULL, NULL, NULL,
                                NULL, NULL),
            MPI_SUCCESS);
    CHECK(needed == (int)strlen(name) + 1, "%s: needed %d", name, needed);
  }
  /* A short buffer gets a truncated, terminated name. */
  char shortname[5];
  int short_len = sizeof shortname;
  CHECK_T(MPI_T_cvar_get_info(0, shortname, &short_len, NULL, NULL, NULL, NULL,
                              NULL, NULL, NULL),
          MPI_SUCCESS);
  CHECK(strcmp(shortname, "MINI") == 0 && short_len == 5, "short name '%s' %d",
        shortname, short_len);
  int index = 0, count = 0;
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  CHECK_T(MPI_T_cvar_get_index("MINIMPI_NO_SUCH_SETTING", &index),
          MPI_T_ERR_INVALID_NAME);
  CHECK_T(MPI_T_cvar_get_index(NULL, &index), MPI_ERR_ARG);
  CHECK_T(MPI_T_cvar_get_index("MINIMPI_MATCH", NULL), MPI_ERR_ARG);
  CHECK_T(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_cvar_handle_alloc(num, NULL, &handle, &count),
          MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_cvar_handle_alloc(0, NULL, NULL, &count), MPI_ERR_ARG);
  CHECK_T(MPI_T_cvar_get_num(NULL), MPI_ERR_ARG);
}

/* Before MPI_Init: reads and writes, a refused value, bad handles. Leaves
 * MINIMPI_EAGER_MAX written to 0 for MPI_Init; returns its handle. */
static MPI_T_cvar_handle write_before_init(void) {
  int count = 0;
  MPI_T_cvar_handle eager = MPI_T_CVAR_HANDLE_NULL;
  CHECK_T(MPI_T_cvar_handle_alloc(cvar_index("MINIMPI_EAGER_MAX"), NULL, &eager,
                                  &count),
          MPI_SUCCESS);
  CHECK(count == 1, "MINIMPI_EAGER_MAX count %d", count);
  CHECK(cvar_read_int(eager) == 8192, "MINIMPI_EAGER_MAX reads %d",
        cvar_read_int(eager));
  const int zero = 0;
  CHECK_T(MPI_T_cvar_write(eager, &zero), MPI_SUCCESS);
  CHECK(cvar_read_int(eager) == 0, "after the write: %d", cvar_read_int(eager));
  /* Out of MINIMPI_EAGER_MAX's range (at most 1 MiB): refused, unchanged. */
  const int too_large = 1 << 30;
  CHECK_T(MPI_T_cvar_write(eager, &too_large), MPI_ERR_ARG);
  CHECK(cvar_read_int(eager) == 0, "after a refused write: %d",
        cvar_read_int(eager));

  /* A string variable: MINIMPI_MATCH. */
  MPI_T_cvar_handle match = MPI_T_CVAR_HANDLE_NULL;
  CHECK_T(MPI_T_cvar_handle_alloc(cvar_index("MINIMPI_MATCH"), NULL, &match,
                                  &count),
          MPI_SUCCESS);
  CHECK(count >= 16, "MINIMPI_MATCH count %d", count);
  char text[256];
  CHECK_T(MPI_T_cvar_read(match, text), MPI_SUCCESS);
  CHECK(strcmp(text, "colpnp") == 0, "MINIMPI_MATCH reads '%s'", text);
  CHECK_T(MPI_T_cvar_write(match, "no_such_engine"), MPI_ERR_ARG);
  CHECK_T(MPI_T_cvar_read(match, text), MPI_SUCCESS);
  CHECK(strcmp(text, "colpnp") == 0, "MINIMPI_MATCH reads '%s'", text);
  CHECK_T(MPI_T_cvar_read(match, NULL), MPI_ERR_ARG);

  /* Freed, stale and garbage handles. */
  MPI_T_cvar_handle stale = match;
  CHECK_T(MPI_T_cvar_handle_free(&match), MPI_SUCCESS);
  CHECK(match == MPI_T_CVAR_HANDLE_NULL, "freed handle not nulled");
  CHECK_T(MPI_T_cvar_read(stale, text), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_write(stale, "ll"), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
  MPI_T_cvar_handle garbage = (MPI_T_cvar_handle)(uintptr_t)0x12345678;
  CHECK_T(MPI_T_cvar_read(garbage, text), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, text),
          MPI_T_ERR_INVALID_HANDLE);
  return eager;
}

/* After MPI_Init: the written MINIMPI_EAGER_MAX is in force. A 64-byte
 * send is then a rendezvous: it cannot complete until rank 1 posts its
 * receive, which rank 1 does only after rank 0 says so. */
static void check_write_honoured(MPI_T_cvar_handle eager, int rank) {
  CHECK(cvar_read_int(eager) == 0, "MPI_Init read MINIMPI_EAGER_MAX %d",
        cvar_read_int(eager));
  const int again = 4096;
  CHECK_T(MPI_T_cvar_write(eager, &again), MPI_T_ERR_CVAR_SET_NOT_NOW);
  CHECK(cvar_read_int(eager) == 0, "refused write changed it");
  unsigned char data[64];
  if (rank == 0) {
    test_fill(data, sizeof data, 0, 1);
    MPI_Request request;
    MPI_CHECK(
        MPI_Isend(data, sizeof data, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &request));
    int done = 0;
    for (int i = 0; i < 50 && !done; ++i) {
      MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      sleep_ms(2);
    }
    CHECK(!done,
          "a 64-byte send completed before its receive was posted: "
          "MINIMPI_EAGER_MAX=0 written before MPI_Init was not honoured");
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else if (rank == 1) {
    MPI_CHECK(
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    memset(data, 0, sizeof data);
    MPI_CHECK(MPI_Recv(data, sizeof data, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    CHECK_PATTERN(data, sizeof data, 0, 1, "the rendezvous message");
  }
}

/* The value of element `element` of a STATE variable as the name of its
 * enumeration's item. */
static void state_item_name(MPI_T_enum enumtype, int value, char* name,
                            int name_size) {
  int items = 0;
  CHECK_T(MPI_T_enum_get_info(enumtype, &items, NULL, NULL), MPI_SUCCESS);
  name[0] = '\0';
  for (int i = 0; i < items; ++i) {
    int item_value = -1, name_len = name_size;
    CHECK_T(MPI_T_enum_get_item(enumtype, i, &item_value, name, &name_len),
            MPI_SUCCESS);
    if (item_value == value) return;
  }
  name[0] = '\0';
}

/* MINIMPI_COLL_BCAST may be written while running: the next MPI_Bcast runs
 * the algorithm written, as coll_algorithm (bound to the communicator, one
 * element per collective kind, bcast second) shows. */
static void check_writable_while_running(void) {
  int count = 0;
  MPI_T_cvar_handle bcast;
  CHECK_T(MPI_T_cvar_handle_alloc(cvar_index("MINIMPI_COLL_BCAST"), NULL,
                                  &bcast, &count),
          MPI_SUCCESS);
  char text[256];
  CHECK_T(MPI_T_cvar_read(bcast, text), MPI_SUCCESS);
  CHECK(strcmp(text, "auto") == 0, "MINIMPI_COLL_BCAST reads '%s'", text);
  CHECK_T(MPI_T_cvar_write(bcast, "no_such_algorithm"), MPI_ERR_ARG);
  int algorithm = -1;
  const int found = MPI_T_pvar_get_index("coll_algorithm",
                                         MPI_T_PVAR_CLASS_STATE, &algorithm);
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  MPI_Comm world = MPI_COMM_WORLD;
  if (found == MPI_SUCCESS) {
    CHECK_T(MPI_T_pvar_get_info(algorithm, NULL, NULL, NULL, NULL, NULL,
                                &enumtype, NULL, NULL, NULL, NULL, NULL, NULL),
            MPI_SUCCESS);
    CHECK_T(MPI_T_pvar_session_create(&session), MPI_SUCCESS);
    CHECK_T(
        MPI_T_pvar_handle_alloc(session, algorithm, &world, &handle, &count),
        MPI_SUCCESS);
    CHECK(count >= 2, "coll_algorithm has %d elements", count);
  }
  const char* choices[] = {"binomial", "scatter_allgather", "binomial"};
  for (int round = 0; round < 3; ++round) {
    CHECK_T(MPI_T_cvar_write(bcast, choices[round]), MPI_SUCCESS);
    CHECK_T(MPI_T_cvar_read(bcast, text), MPI_SUCCESS);
    CHECK(strcmp(text, choices[round]) == 0, "reads '%s' after writing %s",
          text, choices[round]);
    int data[16];
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int i = 0; i < 16; ++i) data[i] = rank == 0 ? 1000 * round + i : -1;
    MPI_CHECK(MPI_Bcast(data, 16, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 16; ++i) {
      CHECK(data[i] == 1000 * round + i, "bcast element %d: %d", i, data[i]);
    }
    if (found != MPI_SUCCESS) continue;
    int values[64];
    CHECK(count <= 64, "coll_algorithm count %d", count);
    CHECK_T(MPI_T_pvar_read(session, handle, values), MPI_SUCCESS);
    char name[64];
    state_item_name(enumtype, values[1], name, sizeof name);
    CHECK(strcmp(name, choices[round]) == 0,
          "MPI_Bcast ran '%s' after MINIMPI_COLL_BCAST=%s was written", name,
          choices[round]);
  }
  CHECK_T(MPI_T_cvar_write(bcast, "auto"), MPI_SUCCESS);
  if (found == MPI_SUCCESS) {
    CHECK_T(MPI_T_pvar_session_free(&session), MPI_SUCCESS);
  }
  CHECK_T(MPI_T_cvar_handle_free(&bcast), MPI_SUCCESS);
}

static void check_categories(int num_cvars) {
  int num = 0, index = -1;
  CHECK_T(MPI_T_category_get_num(&num), MPI_SUCCESS);
  CHECK(num >= 2, "%d categories", num);
  CHECK_T(MPI_T_category_get_index("settings", &index), MPI_SUCCESS);
  int cvars = -1, pvars = -1, subcategories = -1, events = -1;
  char name[64];
  int name_len = sizeof name;
  CHECK_T(MPI_T_category_get_info(index, name, &name_len, NULL, NULL, &cvars,
                                  &pvars, &subcategories),
          MPI_SUCCESS);
  CHECK(strcmp(name, "settings") == 0, "category '%s'", name);
  CHECK(cvars == num_cvars && pvars == 0 && subcategories == 0,
        "settings: %d cvars (of %d), %d pvars, %d categories", cvars, num_cvars,
        pvars, subcategories);
  int* indices = (int*)test_malloc(sizeof(int) * cvars);
  CHECK_T(MPI_T_category_get_cvars(index, cvars, indices), MPI_SUCCESS);
  for (int i = 0; i < cvars; ++i) {
    CHECK(indices[i] == i, "settings' cvar %d is %d", i, indices[i]);
  }
  free(indices);
  CHECK_T(MPI_T_category_get_categories(index, 0, NULL), MPI_SUCCESS);
  CHECK_T(MPI_T_category_get_num_events(index, &events), MPI_SUCCESS);
  CHECK(events == 0, "settings has %d events", events);

  CHECK_T(MPI_T_category_get_index("mpit", &index), MPI_SUCCESS);
  CHECK_T(MPI_T_category_get_info(index, NULL, NULL, NULL, NULL, &cvars, &pvars,
                                  NULL),
          MPI_SUCCESS);
  CHECK(cvars == 0 && pvars == 2, "mpit: %d cvars, %d pvars", cvars, pvars);
  int pvar_indices[2] = {-1, -1}, live = -1, reads = -1;
  CHECK_T(MPI_T_category_get_pvars(index, 2, pvar_indices), MPI_SUCCESS);
  CHECK_T(
      MPI_T_pvar_get_index("mpit_sessions_live", MPI_T_PVAR_CLASS_LEVEL, &live),
      MPI_SUCCESS);
  CHECK_T(
      MPI_T_pvar_get_index("mpit_pvar_reads", MPI_T_PVAR_CLASS_COUNTER, &reads),
      MPI_SUCCESS);
  CHECK(pvar_indices[0] == live && pvar_indices[1] == reads,
        "mpit's pvars %d %d, expected %d %d", pvar_indices[0], pvar_indices[1],
        live, reads);

  int stamp = -1;
  CHECK_T(MPI_T_category_changed(&stamp), MPI_SUCCESS);
  CHECK(stamp > 0, "category stamp %d", stamp);
  CHECK_T(
      MPI_T_category_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_index("no_such_category", &index),
          MPI_T_ERR_INVALID_NAME);
  CHECK_T(MPI_T_category_changed(NULL), MPI_ERR_ARG);
}

static void check_pvars(void) {
  int num = 0, live = -1, reads = -1, count = -1;
  CHECK_T(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
  CHECK(num >= 2, "%d performance variables", num);
  CHECK_T(
      MPI_T_pvar_get_index("mpit_sessions_live", MPI_T_PVAR_CLASS_LEVEL, &live),
      MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_get_index("mpit_sessions_live", MPI_T_PVAR_CLASS_COUNTER,
                               &live),
          MPI_T_ERR_INVALID_NAME);
  CHECK_T(
      MPI_T_pvar_get_index("mpit_pvar_reads", MPI_T_PVAR_CLASS_COUNTER, &reads),
      MPI_SUCCESS);
  int var_class = -1, bind = -1, readonly = -1, continuous = -1, atomic = -1;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  CHECK_T(
      MPI_T_pvar_get_info(reads, NULL, NULL, NULL, &var_class, &type, NULL,
                          NULL, NULL, &bind, &readonly, &continuous, &atomic),
      MPI_SUCCESS);
  CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER &&
            type == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_NO_OBJECT &&
            readonly == 0 && continuous == 0 && atomic == 1,
        "mpit_pvar_reads: class %d bind %d readonly %d continuous %d "
        "atomic %d",
        var_class, bind, readonly, continuous, atomic);
  CHECK_T(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);

  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL, other;
  CHECK_T(MPI_T_pvar_session_create(&session), MPI_SUCCESS);
  MPI_T_pvar_handle live_handle, reads_handle;
  CHECK_T(MPI_T_pvar_handle_alloc(session, live, NULL, &live_handle, &count),
          MPI_SUCCESS);
  CHECK(count == 1, "mpit_sessions_live count %d", count);
  CHECK(pvar_read(session, live_handle) == 1, "one session live");
  CHECK_T(MPI_T_pvar_session_create(&other), MPI_SUCCESS);
  CHECK(pvar_read(session, live_handle) == 2, "two sessions live");

  /* mpit_pvar_reads counts successful reads, the one being made not
   * included: relative to its handle's start, it reads exactly. */
  CHECK_T(MPI_T_pvar_handle_alloc(session, reads, NULL, &reads_handle, &count),
          MPI_SUCCESS);
  CHECK(pvar_read(session, reads_handle) == 0, "never started: 0");
  CHECK_T(MPI_T_pvar_start(session, reads_handle), MPI_SUCCESS);
  CHECK(pvar_read(session, reads_handle) == 0, "just started");
  for (int i = 0; i < 3; ++i) pvar_read(session, live_handle);
  /* 1 read of reads_handle + 3 of live_handle since the start. */
  unsigned long long value = pvar_read(session, reads_handle);
  CHECK(value == 4, "mpit_pvar_reads %llu, expected 4", value);
  CHECK_T(MPI_T_pvar_stop(session, reads_handle), MPI_SUCCESS);
  for (int i = 0; i < 2; ++i) pvar_read(session, live_handle);
  value = pvar_read(session, reads_handle);
  CHECK(value == 5, "stopped: %llu, expected 5 (the value at stop)", value);
  const unsigned long long hundred = 100;
  CHECK_T(MPI_T_pvar_write(session, reads_handle, &hundred), MPI_SUCCESS);
  CHECK(pvar_read(session, reads_handle) == 100, "after a write");
  CHECK_T(MPI_T_pvar_readreset(session, reads_handle, &value), MPI_SUCCESS);
  CHECK(value == 100, "readreset read %llu", value);
  CHECK(pvar_read(session, reads_handle) == 0, "after readreset");
  /* MPI_T_PVAR_ALL_HANDLES starts what can start and skips the rest. */
  CHECK_T(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  pvar_read(session, live_handle);
  value = pvar_read(session, reads_handle);
  CHECK(value == 1, "after a start of all handles: %llu", value);
  CHECK_T(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  CHECK(pvar_read(session, reads_handle) == 0, "after a reset of all");
  CHECK_T(MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);

  /* What the continuous, read-only level refuses. */
  CHECK_T(MPI_T_pvar_start(session, live_handle), MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK_T(MPI_T_pvar_stop(session, live_handle), MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK_T(MPI_T_pvar_write(session, live_handle, &hundred),
          MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_T(MPI_T_pvar_reset(session, live_handle), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_T(MPI_T_pvar_readreset(session, live_handle, &value),
          MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_T(MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, &value),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_read(session, live_handle, NULL), MPI_ERR_ARG);

  /* Handles belong to their session; freed ones and garbage are refused. */
  CHECK_T(MPI_T_pvar_read(other, live_handle, &value),
          MPI_T_ERR_INVALID_HANDLE);
  MPI_T_pvar_session garbage_session = (MPI_T_pvar_session)(uintptr_t)0x7777000;
  CHECK_T(MPI_T_pvar_read(garbage_session, live_handle, &value),
          MPI_T_ERR_INVALID_SESSION);
  CHECK_T(MPI_T_pvar_handle_alloc(session, num, NULL, &live_handle, &count),
          MPI_T_ERR_INVALID_INDEX);
  MPI_T_pvar_session stale_session = other;
  CHECK_T(MPI_T_pvar_session_free(&other), MPI_SUCCESS);
  CHECK(other == MPI_T_PVAR_SESSION_NULL, "freed session not nulled");
  CHECK(pvar_read(session, live_handle) == 1, "one session live again");
  CHECK_T(MPI_T_pvar_session_free(&stale_session), MPI_T_ERR_INVALID_SESSION);
  CHECK_T(MPI_T_pvar_start(stale_session, MPI_T_PVAR_ALL_HANDLES),
          MPI_T_ERR_INVALID_SESSION);
  MPI_T_pvar_handle stale_handle = reads_handle;
  CHECK_T(MPI_T_pvar_handle_free(session, &reads_handle), MPI_SUCCESS);
  CHECK(reads_handle == MPI_T_PVAR_HANDLE_NULL, "freed handle not nulled");
  CHECK_T(MPI_T_pvar_read(session, stale_handle, &value),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_free(session, &stale_handle),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(
      MPI_T_pvar_read(session, (MPI_T_pvar_handle)(uintptr_t)0x5555000, &value),
      MPI_T_ERR_INVALID_HANDLE);

  /* A variable bound to communicators, if the library has one: a live
   * communicator is accepted, a freed one refused. */
  for (int i = 0; i < num; ++i) {
    CHECK_T(MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                NULL, &bind, NULL, NULL, NULL),
            MPI_SUCCESS);
    if (bind != MPI_T_BIND_MPI_COMM) continue;
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_T_pvar_handle bound;
    CHECK_T(MPI_T_pvar_handle_alloc(session, i, &dup, &bound, &count),
            MPI_SUCCESS);
    CHECK(count >= 0 && count <= 64, "bound count %d", count);
    unsigned long long bound_values[64];
    CHECK_T(MPI_T_pvar_read(session, bound, bound_values), MPI_SUCCESS);
    MPI_Comm freed = dup;
    MPI_CHECK(MPI_Comm_free(&dup));
    /* The handle outlives its communicator: refused, not read. */
    CHECK_T(MPI_T_pvar_read(session, bound, bound_values),
            MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_pvar_reset(session, bound), MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_pvar_handle_free(session, &bound), MPI_SUCCESS);
    CHECK_T(MPI_T_pvar_handle_alloc(session, i, &freed, &bound, &count),
            MPI_T_ERR_INVALID_HANDLE);
    MPI_Comm null_comm = MPI_COMM_NULL;
    CHECK_T(MPI_T_pvar_handle_alloc(session, i, &null_comm, &bound, &count),
            MPI_T_ERR_INVALID_HANDLE);
    break;
  }
  /* Enumerations of state variables, if any. */
  for (int i = 0; i < num; ++i) {
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    CHECK_T(MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, &enumtype,
                                NULL, NULL, NULL, NULL, NULL, NULL),
            MPI_SUCCESS);
    if (enumtype == MPI_T_ENUM_NULL) continue;
    int items = 0, item_value = 0;
    CHECK_T(MPI_T_enum_get_info(enumtype, &items, NULL, NULL), MPI_SUCCESS);
    CHECK(items > 0, "enum with %d items", items);
    CHECK_T(MPI_T_enum_get_item(enumtype, 0, &item_value, NULL, NULL),
            MPI_SUCCESS);
    CHECK_T(MPI_T_enum_get_item(enumtype, items, &item_value, NULL, NULL),
            MPI_T_ERR_INVALID_INDEX);
    break;
  }
  int items = 0;
  CHECK_T(
      MPI_T_enum_get_info((MPI_T_enum)(uintptr_t)0x4444000, &items, NULL, NULL),
      MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &items, NULL, NULL),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_session_free(&session), MPI_SUCCESS);
}

static int callbacks_freed = 0;
static void on_event(MPI_T_event_instance instance,
                     MPI_T_event_registration registration,
                     MPI_T_cb_safety safety, void* user_data) {
  (void)instance, (void)registration, (void)safety, (void)user_data;
}
static void on_free(MPI_T_event_registration registration,
                    MPI_T_cb_safety safety, void* user_data) {
  (void)registration;
  CHECK(safety == MPI_T_CB_REQUIRE_NONE, "free callback safety %d", safety);
  CHECK(user_data == &callbacks_freed, "free callback user_data");
  ++callbacks_freed;
}
static void on_dropped(MPI_Count count, MPI_T_event_registration registration,
                       int source, MPI_T_cb_safety safety, void* user_data) {
  (void)count, (void)registration, (void)source, (void)safety, (void)user_data;
}

static void check_events(void) {
  int sources = 0;
  CHECK_T(MPI_T_source_get_num(&sources), MPI_SUCCESS);
  CHECK(sources == 1, "%d sources", sources);
  char name[64];
  int name_len = sizeof name;
  MPI_T_source_order order = MPI_T_SOURCE_UNORDERED;
  MPI_Count ticks = 0, max_ticks = 0, before = 0, after = 0;
  MPI_Info info = MPI_INFO_NULL;
  CHECK_T(MPI_T_source_get_info(0, name, &name_len, NULL, NULL, &order, &ticks,
                                &max_ticks, &info),
          MPI_SUCCESS);
  CHECK(order == MPI_T_SOURCE_ORDERED && ticks == 1000000000 && max_ticks > 0,
        "source %s: order %d ticks %lld", name, (int)order, (long long)ticks);
  CHECK_T(MPI_T_source_get_timestamp(0, &before), MPI_SUCCESS);
  sleep_ms(1);
  CHECK_T(MPI_T_source_get_timestamp(0, &after), MPI_SUCCESS);
  CHECK(after - before >= 1000000, "1 ms took %lld ticks",
        (long long)(after - before));
  CHECK_T(MPI_T_source_get_timestamp(1, &after), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(
      MPI_T_source_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      MPI_T_ERR_INVALID_INDEX);

  int num = 0, index = -1;
  CHECK_T(MPI_T_event_get_num(&num), MPI_SUCCESS);
  CHECK_T(MPI_T_event_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_event_get_index("no_such_event", &index),
          MPI_T_ERR_INVALID_NAME);
  MPI_T_event_registration registration;
  CHECK_T(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &registration),
          MPI_T_ERR_INVALID_INDEX);
  MPI_T_event_registration garbage =
      (MPI_T_event_registration)(uintptr_t)0x3333000;
  CHECK_T(MPI_T_event_register_callback(garbage, MPI_T_CB_REQUIRE_NONE,
                                        MPI_INFO_NULL, NULL, on_event),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_handle_free(garbage, NULL, NULL),
          MPI_T_ERR_INVALID_HANDLE);
  MPI_T_event_instance no_instance = (MPI_T_event_instance)(uintptr_t)0x2222000;
  int element = 0;
  MPI_Count stamp = 0;
  CHECK_T(MPI_T_event_read(no_instance, 0, &element), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_copy(no_instance, &element), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_get_timestamp(no_instance, &stamp),
          MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_get_source(no_instance, &element),
          MPI_T_ERR_INVALID_HANDLE);
  if (num == 0) return;

  /* The lifecycle of a registration, on the first event type. */
  int bind = -1, elements = 0;
  name_len = sizeof name;
  CHECK_T(MPI_T_event_get_info(0, name, &name_len, NULL, NULL, NULL, &elements,
                               NULL, NULL, NULL, NULL, &bind),
          MPI_SUCCESS);
  CHECK_T(MPI_T_event_get_index(name, &index), MPI_SUCCESS);
  CHECK(index == 0, "event %s: index %d", name, index);
  MPI_Comm world = MPI_COMM_WORLD;
  void* object = bind == MPI_T_BIND_MPI_COMM ? (void*)&world : NULL;
  if (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM) return;
  CHECK_T(MPI_T_event_handle_alloc(0, object, MPI_INFO_NULL, &registration),
          MPI_SUCCESS);
  CHECK_T(MPI_T_event_register_callback(registration, (MPI_T_cb_safety)5,
                                        MPI_INFO_NULL, NULL, on_event),
          MPI_ERR_ARG);
  CHECK_T(MPI_T_event_register_callback(registration, MPI_T_CB_REQUIRE_NONE,
                                        MPI_INFO_NULL, NULL, on_event),
          MPI_SUCCESS);
  CHECK_T(MPI_T_event_callback_set_info(registration, MPI_T_CB_REQUIRE_NONE,
                                        MPI_INFO_NULL),
          MPI_SUCCESS);
  CHECK_T(
      MPI_T_event_callback_get_info(registration, MPI_T_CB_REQUIRE_NONE, &info),
      MPI_SUCCESS);
  MPI_CHECK(MPI_Info_free(&info));
  CHECK_T(MPI_T_event_handle_set_info(registration, MPI_INFO_NULL),
          MPI_SUCCESS);
  CHECK_T(MPI_T_event_handle_get_info(registration, &info), MPI_SUCCESS);
  MPI_CHECK(MPI_Info_free(&info));
  CHECK_T(MPI_T_event_set_dropped_handler(registration, on_dropped),
          MPI_SUCCESS);
  MPI_T_event_registration stale = registration;
  CHECK_T(MPI_T_event_handle_free(registration, &callbacks_freed, on_free),
          MPI_SUCCESS);
  CHECK(callbacks_freed == 1, "free callback ran %d times", callbacks_freed);
  CHECK_T(MPI_T_event_handle_free(stale, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_set_dropped_handler(stale, on_dropped),
          MPI_T_ERR_INVALID_HANDLE);
}

/* What the unexp_message_enqueued callbacks saw of tag 77 on `traffic`. */
typedef struct {
  int calls;
  int wrong; /* payloads or contexts that were not as sent */
  MPI_T_cb_safety expected_safety;
} Seen;

static void on_enqueued(MPI_T_event_instance instance,
                        MPI_T_event_registration registration,
                        MPI_T_cb_safety safety, void* user_data) {
  (void)registration;
  Seen* seen = (Seen*)user_data;
  int source = -1, tag = -1, collective = -1, source_index = -1;
  unsigned long long bytes = 0;
  MPI_Count stamp = 0;
  if (MPI_T_event_read(instance, 4, &collective) != MPI_SUCCESS ||
      MPI_T_event_read(instance, 1, &tag) != MPI_SUCCESS) {
    ++seen->wrong;
    return;
  }
  if (collective != 0 || tag != 77) return;
  ++seen->calls;
  if (MPI_T_event_read(instance, 0, &source) != MPI_SUCCESS ||
      MPI_T_event_read(instance, 2, &bytes) != MPI_SUCCESS ||
      MPI_T_event_get_timestamp(instance, &stamp) != MPI_SUCCESS ||
      MPI_T_event_get_source(instance, &source_index) != MPI_SUCCESS ||
      source != 1 || bytes != 40 || stamp <= 0 || source_index != 0 ||
      safety != seen->expected_safety) {
    ++seen->wrong;
  }
}

static MPI_Count later_dropped = 0;
static void on_later_dropped(MPI_Count count,
                             MPI_T_event_registration registration, int source,
                             MPI_T_cb_safety safety, void* user_data) {
  (void)registration, (void)safety, (void)user_data;
  if (source == 0) later_dropped += count;
}

/* unexp_message_enqueued end to end: rank 1 sends three messages rank 0
 * has not asked for. The callback registered as thread-safe runs as each
 * arrives (inside rank 0's MPI_Iprobe); the one that asked for no lock
 * held is queued and runs when the next blocking receive returns. */
static void check_event_delivery(int rank) {
  int index = -1;
  CHECK_T(MPI_T_event_get_index("unexp_message_enqueued", &index), MPI_SUCCESS);
  MPI_Datatype types[8];
  int elements = 8;
  CHECK_T(MPI_T_event_get_info(index, NULL, NULL, NULL, types, NULL, &elements,
                               NULL, NULL, NULL, NULL, NULL),
          MPI_SUCCESS);
  CHECK(elements == 5 && types[0] == MPI_INT && types[1] == MPI_INT &&
            types[2] == MPI_UNSIGNED_LONG_LONG && types[4] == MPI_INT,
        "unexp_message_enqueued's %d elements are not as this test reads "
        "them",
        elements);
  MPI_Comm traffic;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &traffic));
  Seen now = {0, 0, MPI_T_CB_REQUIRE_THREAD_SAFE};
  Seen later = {0, 0, MPI_T_CB_REQUIRE_NONE};
  MPI_T_event_registration now_registration, later_registration;
  if (rank == 0) {
    CHECK_T(MPI_T_event_handle_alloc(index, &traffic, MPI_INFO_NULL,
                                     &now_registration),
            MPI_SUCCESS);
    CHECK_T(MPI_T_event_register_callback(now_registration,
                                          MPI_T_CB_REQUIRE_THREAD_SAFE,
                                          MPI_INFO_NULL, &now, on_enqueued),
            MPI_SUCCESS);
    CHECK_T(MPI_T_event_handle_alloc(index, &traffic, MPI_INFO_NULL,
                                     &later_registration),
            MPI_SUCCESS);
    CHECK_T(
        MPI_T_event_register_callback(later_registration, MPI_T_CB_REQUIRE_NONE,
                                      MPI_INFO_NULL, &later, on_enqueued),
        MPI_SUCCESS);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  unsigned char data[3][40];
  if (rank == 1) {
    MPI_Request requests[3];
    for (int i = 0; i < 3; ++i) {
      test_fill(data[i], sizeof data[i], 1, 77 + i);
      MPI_CHECK(MPI_Isend(data[i], sizeof data[i], MPI_BYTE, 0, 77, traffic,
                          &requests[i]));
    }
    MPI_CHECK(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
  } else if (rank == 0) {
    const double give_up = MPI_Wtime() + 30;
    while (now.calls < 3 && MPI_Wtime() < give_up) {
      int flag = 0;
      MPI_CHECK(MPI_Iprobe(1, 99, traffic, &flag, MPI_STATUS_IGNORE));
    }
    CHECK(now.calls == 3 && now.wrong == 0,
          "thread-safe callback: %d calls (%d wrong), expected 3", now.calls,
          now.wrong);
    CHECK(later.calls == 0,
          "the queued callback ran %d times before any "
          "MPI_T or blocking call",
          later.calls);
    for (int i = 0; i < 3; ++i) {
      memset(data[i], 0, sizeof data[i]);
      MPI_CHECK(MPI_Recv(data[i], sizeof data[i], MPI_BYTE, 1, 77, traffic,
                         MPI_STATUS_IGNORE));
      CHECK(later.calls == 3 && later.wrong == 0,
            "after MPI_Recv %d: the queued callback ran %d times (%d wrong)", i,
            later.calls, later.wrong);
      CHECK_PATTERN(data[i], sizeof data[i], 1, 77 + i,
                    "an unexpected message");
    }
    CHECK(now.calls == 3, "thread-safe callback: %d calls", now.calls);
  }

  /* With MINIMPI_MPIT_EVENT_QUEUE written to 2 while running, 5 unexpected
   * messages leave 2 queued for the callback and 3 for the dropped
   * handler. */
  int count = 0;
  MPI_T_cvar_handle queue;
  CHECK_T(MPI_T_cvar_handle_alloc(cvar_index("MINIMPI_MPIT_EVENT_QUEUE"), NULL,
                                  &queue, &count),
          MPI_SUCCESS);
  CHECK(cvar_read_int(queue) == 4096, "MINIMPI_MPIT_EVENT_QUEUE reads %d",
        cvar_read_int(queue));
  const int two = 2, zero = 0;
  CHECK_T(MPI_T_cvar_write(queue, &zero), MPI_ERR_ARG);
  CHECK_T(MPI_T_cvar_write(queue, &two), MPI_SUCCESS);
  CHECK(cvar_read_int(queue) == 2, "MINIMPI_MPIT_EVENT_QUEUE reads %d",
        cvar_read_int(queue));
  now.calls = later.calls = 0;
  if (rank == 0) {
    CHECK_T(
        MPI_T_event_set_dropped_handler(later_registration, on_later_dropped),
        MPI_SUCCESS);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    MPI_Request requests[5];
    for (int i = 0; i < 5; ++i) {
      MPI_CHECK(MPI_Isend(data[0], sizeof data[0], MPI_BYTE, 0, 77, traffic,
                          &requests[i]));
    }
    MPI_CHECK(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));
  } else if (rank == 0) {
    const double give_up = MPI_Wtime() + 30;
    while (now.calls < 5 && MPI_Wtime() < give_up) {
      int flag = 0;
      MPI_CHECK(MPI_Iprobe(1, 99, traffic, &flag, MPI_STATUS_IGNORE));
    }
    CHECK(now.calls == 5, "thread-safe callback: %d calls", now.calls);
    MPI_CHECK(MPI_Recv(data[0], sizeof data[0], MPI_BYTE, 1, 77, traffic,
                       MPI_STATUS_IGNORE));
    CHECK(later.calls == 2 && later.wrong == 0 && later_dropped == 3,
          "bounded queue: %d delivered (%d wrong), %lld dropped; expected 2 "
          "and 3",
          later.calls, later.wrong, (long long)later_dropped);
    for (int i = 1; i < 5; ++i) {
      MPI_CHECK(MPI_Recv(data[0], sizeof data[0], MPI_BYTE, 1, 77, traffic,
                         MPI_STATUS_IGNORE));
    }
    CHECK_T(MPI_T_event_handle_free(now_registration, NULL, NULL), MPI_SUCCESS);
    CHECK_T(MPI_T_event_handle_free(later_registration, NULL, NULL),
            MPI_SUCCESS);
  }
  const int standard = 4096;
  CHECK_T(MPI_T_cvar_write(queue, &standard), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_handle_free(&queue), MPI_SUCCESS);
  MPI_CHECK(MPI_Comm_free(&traffic));
}

/* MINIMPI_MATCH_STATS written while running decides whether the runtime
 * prints the matching statistics as it ends (at process exit, after
 * MPI_Finalize): rank 0 turns it on, rank 1 leaves it off, and each reads
 * back what was written on its stderr from an exit handler registered
 * before MPI_Init (so it runs after the runtime's). */
static int stats_rank = -1;
static int stats_file = -1;
static int saved_stderr = -1;
static char stats_path[512];

static void check_match_stats_output(void) {
  if (stats_file < 0) return;
  fflush(stderr);
  dup2(saved_stderr, 2);
  static char text[1 << 16];
  const ssize_t length = pread(stats_file, text, sizeof text - 1, 0);
  close(stats_file);
  unlink(stats_path);
  text[length > 0 ? length : 0] = '\0';
  const int printed = strstr(text, "matching statistics") != NULL;
  if (printed != (stats_rank == 0)) {
    fprintf(stderr,
            "FAIL [rank %d] %s: the runtime %s the matching statistics at "
            "exit\n",
            stats_rank, __FILE__, printed ? "printed" : "did not print");
    fflush(stderr);
    _exit(1);
  }
}

static void finalize_with_match_stats(int rank) {
  int count = 0;
  MPI_T_cvar_handle stats;
  CHECK_T(MPI_T_cvar_handle_alloc(cvar_index("MINIMPI_MATCH_STATS"), NULL,
                                  &stats, &count),
          MPI_SUCCESS);
  CHECK(cvar_read_int(stats) == 0, "MINIMPI_MATCH_STATS reads %d",
        cvar_read_int(stats));
  const int on = 1, bad = 2;
  CHECK_T(MPI_T_cvar_write(stats, &bad), MPI_ERR_ARG);
  if (rank == 0) CHECK_T(MPI_T_cvar_write(stats, &on), MPI_SUCCESS);
  CHECK(cvar_read_int(stats) == (rank == 0), "MINIMPI_MATCH_STATS reads %d",
        cvar_read_int(stats));
  CHECK_T(MPI_T_cvar_handle_free(&stats), MPI_SUCCESS);

  const char* dir = getenv("TEST_TMPDIR");
  snprintf(stats_path, sizeof stats_path, "%s/mpit_interface_XXXXXX",
           dir ? dir : "/tmp");
  stats_file = mkstemp(stats_path);
  CHECK(stats_file >= 0, "mkstemp %s", stats_path);
  stats_rank = rank;
  fflush(stderr);
  saved_stderr = dup(2);
  dup2(stats_file, 2);
  MPI_CHECK(MPI_Finalize());
}

int main(int argc, char** argv) {
  atexit(check_match_stats_output);
  check_initialization();
  check_cvar_listing();
  MPI_T_cvar_handle eager = write_before_init();

  int provided = 0, rank = 0, num_cvars = 0;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  check_write_honoured(eager, rank);
  check_writable_while_running();
  CHECK_T(MPI_T_cvar_get_num(&num_cvars), MPI_SUCCESS);
  check_categories(num_cvars);
  check_pvars();
  check_events();
  check_event_delivery(rank);
  CHECK_T(MPI_T_cvar_handle_free(&eager), MPI_SUCCESS);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("mpit_interface", MPI_COMM_WORLD);
  finalize_with_match_stats(rank);

  /* After MPI_Finalize MPI_T still answers until its last finalize. */
  CHECK_T(MPI_T_cvar_get_num(&num_cvars), MPI_SUCCESS);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_get_num(&num_cvars), MPI_T_ERR_NOT_INITIALIZED);
  return 0;
}
