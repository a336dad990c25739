/* A handle freed and then used again, after the library has made a new
 * object of the same kind (MPICH's datatype/indexed_misc keeps a freed
 * indexed type in an array and builds a struct type from it after creating
 * a hindexed type): the stale handle must never name the new object, and
 * every call given it returns the kind's error class under
 * MPI_ERRORS_RETURN. Handles carry their slot's generation, so the slot the
 * free released is reused under another handle value.
 *
 * Also that what was built from the freed type keeps working (a struct type
 * holds its own reference), and the same for communicators and operations.
 * Rank 0 sends to the last rank, so the types also cross processes. */
#include "test_util.h"

static void pack_unpack(void* buffer, MPI_Datatype type, int bytes,
                        const char* what) {
  int pack_size = 0, position = 0;
  MPI_CHECK(MPI_Pack_size(1, type, MPI_COMM_SELF, &pack_size));
  char* packed = (char*)test_malloc((size_t)pack_size);
  MPI_CHECK(
      MPI_Pack(buffer, 1, type, packed, pack_size, &position, MPI_COMM_SELF));
  memset(buffer, 0, (size_t)bytes);
  int unpacked = 0;
  MPI_CHECK(
      MPI_Unpack(packed, pack_size, &unpacked, buffer, 1, type, MPI_COMM_SELF));
  CHECK(unpacked == position, "%s: unpacked %d bytes, packed %d", what,
        unpacked, position);
  free(packed);
}

/* Ints 1..10; after a pack and unpack through `type` only those it
 * describes are left (`kept` says which). */
static void check_kept(MPI_Datatype type, const int* kept, const char* what) {
  int buffer[10];
  for (int i = 0; i < 10; ++i) buffer[i] = i + 1;
  pack_unpack(buffer, type, (int)sizeof buffer, what);
  for (int i = 0; i < 10; ++i) {
    const int expected = kept[i] ? i + 1 : 0;
    CHECK(buffer[i] == expected, "%s: int %d is %d, expected %d", what, i,
          buffer[i], expected);
  }
}

static void check_stale_type(MPI_Datatype stale, MPI_Datatype live) {
  CHECK(stale != live, "a new datatype got the freed one's handle (%p)",
        (void*)stale);
  int size, value[10] = {0};
  MPI_Aint lb, extent;
  CHECK_ERROR_CLASS(MPI_Type_size(stale, &size), MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Type_get_extent(stale, &lb, &extent), MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Type_commit(&stale), MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Send(value, 1, stale, 0, 0, MPI_COMM_SELF),
                    MPI_ERR_TYPE);
  int position = 0;
  char packed[64];
  CHECK_ERROR_CLASS(MPI_Pack(value, 1, stale, packed, sizeof packed, &position,
                             MPI_COMM_SELF),
                    MPI_ERR_TYPE);
  MPI_Datatype copy = stale;
  CHECK_ERROR_CLASS(MPI_Type_free(&copy), MPI_ERR_TYPE); /* double free */
  int lengths[2] = {1, 1};
  MPI_Aint displacements[2] = {0, 8 * sizeof(int)};
  MPI_Datatype types[2] = {stale, MPI_INT};
  MPI_Datatype made = MPI_DATATYPE_NULL;
  CHECK_ERROR_CLASS(
      MPI_Type_create_struct(2, lengths, displacements, types, &made),
      MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Type_contiguous(2, stale, &made), MPI_ERR_TYPE);
}

static void indexed_misc_pattern(int rank, int size) {
  /* An indexed type: ints 2..5 of 10 (leading and trailing zero blocks). */
  int lengths[3] = {0, 4, 0};
  int displacements[3] = {0, 2, 0};
  MPI_Datatype type, struct_type, types[2];
  MPI_CHECK(MPI_Type_indexed(3, lengths, displacements, MPI_INT, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  const MPI_Fint freed_integer = MPI_Type_c2f(type);
  static const int kIndexed[10] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 0};
  static const int kStruct[10] = {0, 0, 1, 1, 1, 1, 0, 0, 1, 0};
  check_kept(type, kIndexed, "indexed type");

  /* A struct of it and one more int (layout xx0123xx4x). */
  int struct_lengths[2] = {1, 1};
  MPI_Aint struct_displacements[2] = {0, 8 * sizeof(int)};
  types[0] = type;
  types[1] = MPI_INT;
  MPI_CHECK(MPI_Type_create_struct(2, struct_lengths, struct_displacements,
                                   types, &struct_type));
  MPI_CHECK(MPI_Type_commit(&struct_type));
  MPI_CHECK(MPI_Type_free(&type));
  CHECK(type == MPI_DATATYPE_NULL, "MPI_Type_free did not null the handle");
  /* The struct holds its own reference to the freed indexed type. */
  check_kept(struct_type, kStruct, "struct of a freed indexed type");
  MPI_CHECK(MPI_Type_free(&struct_type));

  /* A new type of the same layout, as indexed_misc makes next; types[0]
   * still holds the freed handle. */
  MPI_Aint hindexed_displacements[3] = {0, 2 * sizeof(int), 0};
  MPI_CHECK(MPI_Type_create_hindexed(3, lengths, hindexed_displacements,
                                     MPI_INT, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  check_stale_type(types[0], type);
  CHECK(MPI_Type_f2c(freed_integer) != type,
        "the freed type's Fortran integer names the new type");
  int size_of;
  CHECK_ERROR_CLASS(MPI_Type_size(MPI_Type_f2c(freed_integer), &size_of),
                    MPI_ERR_TYPE);

  /* The new type works, here and across processes. */
  check_kept(type, kIndexed, "hindexed type made after the free");
  types[0] = type;
  MPI_CHECK(MPI_Type_create_struct(2, struct_lengths, struct_displacements,
                                   types, &struct_type));
  MPI_CHECK(MPI_Type_commit(&struct_type));
  check_kept(struct_type, kStruct, "struct of the new hindexed type");
  int buffer[10];
  const int last = size - 1;
  if (rank == 0 || rank == last) {
    for (int i = 0; i < 10; ++i) buffer[i] = rank == 0 ? 100 + i : -1;
    if (rank == 0 && last != 0) {
      MPI_CHECK(MPI_Send(buffer, 1, struct_type, last, 5, MPI_COMM_WORLD));
    } else if (rank == last && last != 0) {
      MPI_CHECK(MPI_Recv(buffer, 1, struct_type, 0, 5, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      for (int i = 0; i < 10; ++i) {
        const int expected = kStruct[i] ? 100 + i : -1;
        CHECK(buffer[i] == expected, "received int %d is %d, expected %d", i,
              buffer[i], expected);
      }
    }
  }
  MPI_CHECK(MPI_Type_free(&struct_type));
  MPI_CHECK(MPI_Type_free(&type));
}

/* Many frees and creations in a row: no stale handle ever resolves. */
static void churn(void) {
  enum { kRounds = 200 };
  MPI_Datatype previous = MPI_DATATYPE_NULL;
  for (int i = 0; i < kRounds; ++i) {
    MPI_Datatype type;
    MPI_CHECK(MPI_Type_contiguous(i % 7 + 1, MPI_INT, &type));
    if (previous != MPI_DATATYPE_NULL) {
      int size;
      CHECK(previous != type,
            "round %d: the new type has the freed one's handle", i);
      CHECK_ERROR_CLASS(MPI_Type_size(previous, &size), MPI_ERR_TYPE);
    }
    int size = 0;
    MPI_CHECK(MPI_Type_size(type, &size));
    CHECK(size == (i % 7 + 1) * (int)sizeof(int), "round %d: size %d", i, size);
    previous = type;
    MPI_CHECK(MPI_Type_free(&type));
  }
}

static void stale_comm_and_op(void) {
  MPI_Comm comm, stale_comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  stale_comm = comm;
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  CHECK(comm != stale_comm, "a new communicator got the freed one's handle");
  int size;
  CHECK_ERROR_CLASS(MPI_Comm_size(stale_comm, &size), MPI_ERR_COMM);
  CHECK_ERROR_CLASS(MPI_Barrier(stale_comm), MPI_ERR_COMM);
  MPI_CHECK(MPI_Barrier(comm));
  MPI_CHECK(MPI_Comm_free(&comm));

  MPI_Op op, stale_op;
  MPI_CHECK(MPI_Op_create((MPI_User_function*)0x1, 1, &op)); /* never called */
  stale_op = op;
  MPI_CHECK(MPI_Op_free(&op));
  MPI_CHECK(MPI_Op_create((MPI_User_function*)0x2, 0, &op)); /* never called */
  CHECK(op != stale_op, "a new operation got the freed one's handle");
  int commute = -1;
  CHECK_ERROR_CLASS(MPI_Op_commutative(stale_op, &commute), MPI_ERR_OP);
  MPI_CHECK(MPI_Op_commutative(op, &commute));
  CHECK(commute == 0, "the new operation says commutative %d", commute);
  MPI_CHECK(MPI_Op_free(&op));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  indexed_misc_pattern(rank, size);
  churn();
  stale_comm_and_op();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("stale_datatypes", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
