/* The MPI-1 calls MPI-3.0 removed, against their MPI-2 replacements:
 *
 *   - MPI_Type_hvector, MPI_Type_hindexed and MPI_Type_struct build the
 *     same types as MPI_Type_create_hvector, _hindexed and _struct: same
 *     size, bounds, envelope and contents, the same packed bytes, and the
 *     same bytes on the wire (sent with one, received with the other, every
 *     byte against a reference computed here);
 *   - MPI_Address is MPI_Get_address;
 *   - MPI_Type_extent, MPI_Type_lb and MPI_Type_ub give the extent, the
 *     lower bound and lb + extent, resized types included;
 *   - MPI_Errhandler_create, _set and _get behave as the MPI_Comm_ forms:
 *     the handler runs on an error, and _get returns it;
 *   - bad arguments give the same classes, under the old names.
 * With argument "fatal", MPI_Type_hvector with a negative count under the
 * default handler must end the job with one line naming MPI_Type_hvector. */
#include "test_util.h"

static int g_rank, g_size;

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

/* Two types must agree in every property MPI lets a program see. */
static void expect_same_type(MPI_Datatype old_form, MPI_Datatype new_form,
                             const char* what) {
  int size_a, size_b;
  MPI_Aint lb_a, extent_a, lb_b, extent_b, tlb_a, textent_a, tlb_b, textent_b;
  MPI_CHECK(MPI_Type_size(old_form, &size_a));
  MPI_CHECK(MPI_Type_size(new_form, &size_b));
  MPI_CHECK(MPI_Type_get_extent(old_form, &lb_a, &extent_a));
  MPI_CHECK(MPI_Type_get_extent(new_form, &lb_b, &extent_b));
  MPI_CHECK(MPI_Type_get_true_extent(old_form, &tlb_a, &textent_a));
  MPI_CHECK(MPI_Type_get_true_extent(new_form, &tlb_b, &textent_b));
  CHECK(size_a == size_b && lb_a == lb_b && extent_a == extent_b &&
            tlb_a == tlb_b && textent_a == textent_b,
        "%s: size %d/%d lb %ld/%ld extent %ld/%ld true lb %ld/%ld true "
        "extent %ld/%ld",
        what, size_a, size_b, (long)lb_a, (long)lb_b, (long)extent_a,
        (long)extent_b, (long)tlb_a, (long)tlb_b, (long)textent_a,
        (long)textent_b);
  int ni_a, na_a, nd_a, comb_a, ni_b, na_b, nd_b, comb_b;
  MPI_CHECK(MPI_Type_get_envelope(old_form, &ni_a, &na_a, &nd_a, &comb_a));
  MPI_CHECK(MPI_Type_get_envelope(new_form, &ni_b, &na_b, &nd_b, &comb_b));
  CHECK(ni_a == ni_b && na_a == na_b && nd_a == nd_b && comb_a == comb_b,
        "%s: envelopes differ (combiner %d vs %d)", what, comb_a, comb_b);
  int ints_a[64], ints_b[64];
  MPI_Aint addrs_a[64], addrs_b[64];
  MPI_Datatype types_a[64], types_b[64];
  CHECK(ni_a <= 64 && na_a <= 64 && nd_a <= 64, "%s: envelope too big", what);
  MPI_CHECK(MPI_Type_get_contents(old_form, ni_a, na_a, nd_a, ints_a, addrs_a,
                                  types_a));
  MPI_CHECK(MPI_Type_get_contents(new_form, ni_b, na_b, nd_b, ints_b, addrs_b,
                                  types_b));
  CHECK(memcmp(ints_a, ints_b, sizeof(int) * (size_t)ni_a) == 0 &&
            memcmp(addrs_a, addrs_b, sizeof(MPI_Aint) * (size_t)na_a) == 0,
        "%s: contents differ", what);
  for (int i = 0; i < nd_a; ++i) {
    CHECK(types_a[i] == types_b[i], "%s: contents type %d differs", what, i);
  }
  /* Both pack the same bytes from one patterned buffer. */
  enum { kBuffer = 4096 };
  unsigned char data[kBuffer], packed_a[kBuffer], packed_b[kBuffer];
  test_fill(data, kBuffer, 7, 7);
  int position_a = 0, position_b = 0;
  CHECK(size_a * 2 <= kBuffer && lb_a >= 0 && lb_a + 2 * extent_a <= kBuffer,
        "%s: test buffer too small", what);
  MPI_CHECK(MPI_Pack(data, 2, old_form, packed_a, kBuffer, &position_a,
                     MPI_COMM_WORLD));
  MPI_CHECK(MPI_Pack(data, 2, new_form, packed_b, kBuffer, &position_b,
                     MPI_COMM_WORLD));
  CHECK(position_a == position_b && position_a == 2 * size_a &&
            memcmp(packed_a, packed_b, (size_t)position_a) == 0,
        "%s: packed bytes differ", what);
}

/* The type's byte map, for a reference: which bytes one item covers, in
 * order. Returns the number of bytes. */
struct Block {
  MPI_Aint offset;
  int length;
};

static void check_transfer(MPI_Datatype send_type, MPI_Datatype receive_type,
                           const struct Block* blocks, int block_count,
                           MPI_Aint extent, int count, const char* what) {
  if (g_size < 2) return;
  const int peer = g_rank ^ 1;
  if (peer >= g_size) return;
  const size_t span = (size_t)(extent * count + 64);
  unsigned char* out = test_malloc(span);
  unsigned char* in = test_malloc(span);
  unsigned char* expected = test_malloc(span);
  test_fill(out, span, g_rank, 11);
  memset(in, 0xEE, span);
  /* What the peer sends, laid out in our buffer the same way. */
  unsigned char* peer_data = test_malloc(span);
  test_fill(peer_data, span, peer, 11);
  memset(expected, 0xEE, span);
  for (int item = 0; item < count; ++item) {
    for (int b = 0; b < block_count; ++b) {
      const size_t at = (size_t)(item * extent + blocks[b].offset);
      memcpy(expected + at, peer_data + at, (size_t)blocks[b].length);
    }
  }
  MPI_CHECK(MPI_Sendrecv(out, count, send_type, peer, 21, in, count,
                         receive_type, peer, 21, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
  for (size_t i = 0; i < span; ++i) {
    CHECK(in[i] == expected[i], "%s: byte %zu is 0x%02x, expected 0x%02x", what,
          i, in[i], expected[i]);
  }
  free(out);
  free(in);
  free(expected);
  free(peer_data);
}

static void hvector(void) {
  MPI_Datatype old_form, new_form;
  MPI_CHECK(MPI_Type_hvector(5, 3, 20, MPI_INT, &old_form));
  MPI_CHECK(MPI_Type_create_hvector(5, 3, 20, MPI_INT, &new_form));
  MPI_CHECK(MPI_Type_commit(&old_form));
  MPI_CHECK(MPI_Type_commit(&new_form));
  int ni, na, nd, combiner;
  MPI_CHECK(MPI_Type_get_envelope(old_form, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_HVECTOR, "MPI_Type_hvector's combiner %d",
        combiner);
  expect_same_type(old_form, new_form, "MPI_Type_hvector");
  struct Block blocks[5];
  for (int i = 0; i < 5; ++i) blocks[i] = (struct Block){20 * i, 12};
  MPI_Aint lb, extent;
  MPI_CHECK(MPI_Type_get_extent(new_form, &lb, &extent));
  check_transfer(old_form, new_form, blocks, 5, extent, 3,
                 "MPI_Type_hvector to MPI_Type_create_hvector");
  MPI_CHECK(MPI_Type_free(&old_form));
  MPI_CHECK(MPI_Type_free(&new_form));
}

static void hindexed(void) {
  int lengths[4] = {2, 0, 5, 1};
  MPI_Aint displacements[4] = {40, 8, 0, 100};
  MPI_Datatype old_form, new_form;
  MPI_CHECK(MPI_Type_hindexed(4, lengths, displacements, MPI_SHORT, &old_form));
  MPI_CHECK(MPI_Type_create_hindexed(4, lengths, displacements, MPI_SHORT,
                                     &new_form));
  MPI_CHECK(MPI_Type_commit(&old_form));
  MPI_CHECK(MPI_Type_commit(&new_form));
  int ni, na, nd, combiner;
  MPI_CHECK(MPI_Type_get_envelope(old_form, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_HINDEXED, "MPI_Type_hindexed's combiner %d",
        combiner);
  expect_same_type(old_form, new_form, "MPI_Type_hindexed");
  struct Block blocks[3] = {{40, 4}, {0, 10}, {100, 2}};
  MPI_Aint lb, extent;
  MPI_CHECK(MPI_Type_get_extent(new_form, &lb, &extent));
  check_transfer(new_form, old_form, blocks, 3, extent, 2,
                 "MPI_Type_create_hindexed to MPI_Type_hindexed");
  MPI_CHECK(MPI_Type_free(&old_form));
  MPI_CHECK(MPI_Type_free(&new_form));
}

static void structs(void) {
  struct Record {
    int id;
    double values[3];
    char tag[5];
  } records[2];
  MPI_Aint base, at_values, at_tag, at_id;
  MPI_CHECK(MPI_Address(&records[0], &base));
  MPI_CHECK(MPI_Address(&records[0].id, &at_id));
  MPI_CHECK(MPI_Address(records[0].values, &at_values));
  MPI_CHECK(MPI_Address(records[0].tag, &at_tag));
  MPI_Aint check;
  MPI_CHECK(MPI_Get_address(records[0].tag, &check));
  CHECK(check == at_tag, "MPI_Address %ld, MPI_Get_address %ld", (long)at_tag,
        (long)check);
  int lengths[3] = {1, 3, 5};
  MPI_Aint displacements[3] = {at_id - base, at_values - base, at_tag - base};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype old_form, new_form, old_resized, new_resized;
  MPI_CHECK(MPI_Type_struct(3, lengths, displacements, types, &old_form));
  MPI_CHECK(
      MPI_Type_create_struct(3, lengths, displacements, types, &new_form));
  MPI_CHECK(MPI_Type_commit(&old_form));
  MPI_CHECK(MPI_Type_commit(&new_form));
  int ni, na, nd, combiner;
  MPI_CHECK(MPI_Type_get_envelope(old_form, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_STRUCT, "MPI_Type_struct's combiner %d",
        combiner);
  expect_same_type(old_form, new_form, "MPI_Type_struct");
  /* The bounds MPI_UB used to set come from MPI_Type_create_resized. */
  MPI_CHECK(MPI_Type_create_resized(old_form, 0, sizeof(struct Record),
                                    &old_resized));
  MPI_CHECK(MPI_Type_create_resized(new_form, 0, sizeof(struct Record),
                                    &new_resized));
  MPI_CHECK(MPI_Type_commit(&old_resized));
  MPI_CHECK(MPI_Type_commit(&new_resized));
  struct Block blocks[3] = {{displacements[0], (int)sizeof(int)},
                            {displacements[1], 3 * (int)sizeof(double)},
                            {displacements[2], 5}};
  check_transfer(old_resized, new_resized, blocks, 3, sizeof(struct Record), 4,
                 "MPI_Type_struct to MPI_Type_create_struct");
  MPI_Datatype all[4] = {old_form, new_form, old_resized, new_resized};
  for (int i = 0; i < 4; ++i) MPI_CHECK(MPI_Type_free(&all[i]));
}

static void bounds(void) {
  MPI_Datatype vector, resized;
  MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vector));
  MPI_CHECK(MPI_Type_create_resized(vector, -16, 200, &resized));
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE_INT, vector, resized};
  for (int i = 0; i < 4; ++i) {
    MPI_Aint lb, extent, old_extent, old_lb, old_ub;
    MPI_CHECK(MPI_Type_get_extent(types[i], &lb, &extent));
    MPI_CHECK(MPI_Type_extent(types[i], &old_extent));
    MPI_CHECK(MPI_Type_lb(types[i], &old_lb));
    MPI_CHECK(MPI_Type_ub(types[i], &old_ub));
    CHECK(old_extent == extent && old_lb == lb && old_ub == lb + extent,
          "type %d: MPI_Type_extent %ld lb %ld ub %ld; MPI_Type_get_extent "
          "lb %ld extent %ld",
          i, (long)old_extent, (long)old_lb, (long)old_ub, (long)lb,
          (long)extent);
  }
  MPI_Aint lb;
  MPI_CHECK(MPI_Type_lb(resized, &lb));
  CHECK(lb == -16, "MPI_Type_lb of the resized type %ld", (long)lb);
  MPI_Aint ub;
  MPI_CHECK(MPI_Type_ub(resized, &ub));
  CHECK(ub == 184, "MPI_Type_ub of the resized type %ld", (long)ub);
  MPI_CHECK(MPI_Type_free(&resized));
  MPI_CHECK(MPI_Type_free(&vector));
}

static int g_handler_calls, g_handler_class;
static MPI_Comm g_handler_comm;

static void record_error(MPI_Comm* comm, int* code, ...) {
  ++g_handler_calls;
  g_handler_comm = *comm;
  MPI_Error_class(*code, &g_handler_class);
}

static void errhandlers(void) {
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
  MPI_CHECK(MPI_Errhandler_create(record_error, &handler));
  MPI_CHECK(MPI_Errhandler_set(comm, handler));
  MPI_CHECK(MPI_Errhandler_get(comm, &got));
  CHECK(got == handler, "MPI_Errhandler_get returned another handler");
  MPI_CHECK(MPI_Errhandler_free(&got));
  int value = 0;
  const int rc = MPI_Send(&value, 1, MPI_INT, g_size, 0, comm);
  CHECK(g_handler_calls == 1 && g_handler_comm == comm &&
            g_handler_class == MPI_ERR_RANK,
        "the MPI-1 handler: %d calls, class %d", g_handler_calls,
        g_handler_class);
  CHECK(rc != MPI_SUCCESS, "the failing send returned MPI_SUCCESS");
  MPI_CHECK(MPI_Errhandler_free(&handler));
  MPI_CHECK(MPI_Errhandler_set(comm, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Errhandler_get(comm, &got));
  CHECK(got == MPI_ERRORS_RETURN,
        "MPI_Errhandler_get after setting "
        "MPI_ERRORS_RETURN");
  MPI_CHECK(MPI_Comm_free(&comm));
}

static void bad_arguments(void) {
  MPI_Datatype type;
  int lengths[1] = {1};
  MPI_Aint displacements[1] = {0};
  MPI_Datatype types[1] = {MPI_INT};
  MPI_Aint value;
  MPI_Errhandler handler;
  expect_class(MPI_Type_hvector(-1, 1, 8, MPI_INT, &type), MPI_ERR_COUNT,
               "MPI_Type_hvector with count -1");
  expect_class(MPI_Type_hvector(1, 1, 8, MPI_DATATYPE_NULL, &type),
               MPI_ERR_TYPE, "MPI_Type_hvector of MPI_DATATYPE_NULL");
  expect_class(MPI_Type_hindexed(1, NULL, displacements, MPI_INT, &type),
               MPI_ERR_ARG, "MPI_Type_hindexed with null blocklengths");
  expect_class(MPI_Type_struct(1, lengths, displacements, types, NULL),
               MPI_ERR_ARG, "MPI_Type_struct with a null newtype");
  expect_class(MPI_Type_extent(MPI_DATATYPE_NULL, &value), MPI_ERR_TYPE,
               "MPI_Type_extent of MPI_DATATYPE_NULL");
  expect_class(MPI_Type_lb(MPI_INT, NULL), MPI_ERR_ARG,
               "MPI_Type_lb with a null output");
  expect_class(MPI_Address(&value, NULL), MPI_ERR_ARG,
               "MPI_Address with a null output");
  expect_class(MPI_Errhandler_set(MPI_COMM_NULL, MPI_ERRORS_RETURN),
               MPI_ERR_COMM, "MPI_Errhandler_set on MPI_COMM_NULL");
  expect_class(MPI_Errhandler_get(MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
               "MPI_Errhandler_get with a null output");
  expect_class(MPI_Errhandler_create(NULL, &handler), MPI_ERR_ARG,
               "MPI_Errhandler_create with a null function");
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    MPI_Datatype type;
    MPI_Type_hvector(-1, 1, 8, MPI_INT, &type);
    CHECK(0, "MPI_Type_hvector returned under MPI_ERRORS_ARE_FATAL");
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  hvector();
  hindexed();
  structs();
  bounds();
  errhandlers();
  bad_arguments();
  test_report_pass("removed_mpi1", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
