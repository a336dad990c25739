/* The optional Fortran-sized datatypes mpi4py and MPICH's tests probe:
 * MPI_LOGICAL1/2/4/8/16 and MPI_INTEGER1/2/4/8/16 are supported (size, name,
 * messages, the reductions the standard allows on logicals and integers);
 * MPI_REAL2 and MPI_COMPLEX4 (half precision) keep the MPI-5 standard
 * ABI's values, so a program built for that ABI links, but minimpi cannot
 * do their arithmetic: every call given one answers MPI_ERR_TYPE. Handle
 * values are the standard ABI's. */
#include "test_util.h"

typedef struct {
  MPI_Datatype type;
  const char* name;
  int size;
  uintptr_t abi_value;
} NamedType;

static const NamedType kLogicals[] = {
    {MPI_LOGICAL1, "MPI_LOGICAL1", 1, 0x2c0},
    {MPI_LOGICAL2, "MPI_LOGICAL2", 2, 0x2c8},
    {MPI_LOGICAL4, "MPI_LOGICAL4", 4, 0x2d0},
    {MPI_LOGICAL8, "MPI_LOGICAL8", 8, 0x2d8},
    {MPI_LOGICAL16, "MPI_LOGICAL16", 16, 0x2e0},
};
static const NamedType kIntegers[] = {
    {MPI_INTEGER1, "MPI_INTEGER1", 1, 0x2c1},
    {MPI_INTEGER2, "MPI_INTEGER2", 2, 0x2c9},
    {MPI_INTEGER4, "MPI_INTEGER4", 4, 0x2d1},
    {MPI_INTEGER8, "MPI_INTEGER8", 8, 0x2d9},
    {MPI_INTEGER16, "MPI_INTEGER16", 16, 0x2e1},
};
enum { kTypes = 5, kItems = 6 };

static void check_named(const NamedType* t) {
  CHECK((uintptr_t)t->type == t->abi_value,
        "%s is %#lx, the standard ABI says %#lx", t->name,
        (unsigned long)(uintptr_t)t->type, (unsigned long)t->abi_value);
  int size = -1;
  MPI_CHECK(MPI_Type_size(t->type, &size));
  CHECK(size == t->size, "MPI_Type_size(%s) = %d, expected %d", t->name, size,
        t->size);
  MPI_Aint lb = -1, extent = -1;
  MPI_CHECK(MPI_Type_get_extent(t->type, &lb, &extent));
  CHECK(lb == 0 && extent == t->size, "%s: lb %ld extent %ld", t->name,
        (long)lb, (long)extent);
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  MPI_CHECK(MPI_Type_get_name(t->type, name, &length));
  CHECK(strcmp(name, t->name) == 0, "MPI_Type_get_name(%s) = '%s'", t->name,
        name);
  int num_integers, num_addresses, num_datatypes, combiner;
  MPI_CHECK(MPI_Type_get_envelope(t->type, &num_integers, &num_addresses,
                                  &num_datatypes, &combiner));
  CHECK(combiner == MPI_COMBINER_NAMED, "%s is not a named type (combiner %d)",
        t->name, combiner);
}

/* Item i of a buffer of `size`-byte little-endian numbers. */
static void set_item(unsigned char* buffer, int size, int i, long long value) {
  unsigned char* item = buffer + (size_t)i * size;
  for (int b = 0; b < size; ++b) {
    item[b] = b < 8 ? (unsigned char)((unsigned long long)value >> (8 * b))
                    : (value < 0 ? 0xff : 0);
  }
}

static long long get_item(const unsigned char* buffer, int size, int i) {
  const unsigned char* item = buffer + (size_t)i * size;
  const int bytes = size < 8 ? size : 8;
  unsigned long long value = 0;
  for (int b = 0; b < bytes; ++b)
    value |= (unsigned long long)item[b] << (8 * b);
  if (bytes < 8 && (item[bytes - 1] & 0x80)) value |= ~0ull << (8 * bytes);
  for (int b = 8; b < size; ++b) {
    CHECK(item[b] == (value >> 63 ? 0xff : 0),
          "high byte %d of a %d-byte item is %#x", b, size, item[b]);
  }
  return (long long)value;
}

/* Whether rank r's item i is true: a pattern with all-true, all-false and
 * mixed items across ranks (a true value is not always 1). */
static int truth(int r, int i) {
  switch (i) {
    case 0:
      return 1;
    case 1:
      return 0;
    case 2:
      return r == 0;
    case 3:
      return r % 2;
    case 4:
      return r != 1;
    default:
      return (r + i) % 3 == 0;
  }
}

static void check_logical_reductions(const NamedType* t, int rank, int size) {
  unsigned char in[kItems * 16], out[kItems * 16];
  const MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
  const char* op_names[] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
  for (int o = 0; o < 3; ++o) {
    for (int i = 0; i < kItems; ++i)
      set_item(in, t->size, i, truth(rank, i) ? 1 + i % 2 : 0);
    memset(out, 0x5a, sizeof out);
    MPI_CHECK(MPI_Allreduce(in, out, kItems, t->type, ops[o], MPI_COMM_WORLD));
    for (int i = 0; i < kItems; ++i) {
      int trues = 0;
      for (int r = 0; r < size; ++r) trues += truth(r, i);
      const int expected = o == 0   ? trues == size
                           : o == 1 ? trues > 0
                                    : trues % 2;
      const long long got = get_item(out, t->size, i);
      CHECK((got != 0) == expected, "%s on %s item %d: %lld, expected %s",
            op_names[o], t->name, i, got, expected ? "true" : "false");
    }
  }
  /* Arithmetic is not defined on logicals. */
  for (int i = 0; i < kItems; ++i) set_item(in, t->size, i, 1);
  CHECK_ERROR_CLASS(
      MPI_Allreduce(in, out, kItems, t->type, MPI_SUM, MPI_COMM_WORLD),
      MPI_ERR_OP);
}

static void check_integer_reductions(const NamedType* t, int rank, int size) {
  unsigned char in[kItems * 16], out[kItems * 16];
  for (int i = 0; i < kItems; ++i)
    set_item(in, t->size, i, (rank + 1) * (i - 2));
  MPI_CHECK(MPI_Allreduce(in, out, kItems, t->type, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < kItems; ++i) {
    const long long expected = (long long)size * (size + 1) / 2 * (i - 2);
    const long long got = get_item(out, t->size, i);
    CHECK(got == expected, "MPI_SUM on %s item %d: %lld, expected %lld",
          t->name, i, got, expected);
  }
  MPI_CHECK(MPI_Allreduce(in, out, kItems, t->type, MPI_MAX, MPI_COMM_WORLD));
  for (int i = 0; i < kItems; ++i) {
    const long long expected = i >= 2 ? (long long)size * (i - 2) : (i - 2);
    const long long got = get_item(out, t->size, i);
    CHECK(got == expected, "MPI_MAX on %s item %d: %lld, expected %lld",
          t->name, i, got, expected);
  }
}

/* A ring of messages of each type: the receiver sees every byte. */
static void check_messages(const NamedType* t, int rank, int size) {
  unsigned char out[kItems * 16], in[kItems * 16];
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  test_fill(out, (size_t)kItems * t->size, rank, t->size);
  memset(in, 0, sizeof in);
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(out, kItems, t->type, next, t->size, in, kItems,
                         t->type, previous, t->size, MPI_COMM_WORLD, &status));
  CHECK_STATUS(status, previous, t->size, t->type, kItems, t->name);
  CHECK_PATTERN(in, (size_t)kItems * t->size, previous, t->size, t->name);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Half precision is not supported: the names have the standard ABI's
   * values, and calls refuse them with MPI_ERR_TYPE. */
  CHECK((uintptr_t)MPI_REAL2 == 0x2ca && (uintptr_t)MPI_COMPLEX4 == 0x2d3,
        "MPI_REAL2 %#lx, MPI_COMPLEX4 %#lx (standard ABI: 0x2ca, 0x2d3)",
        (unsigned long)(uintptr_t)MPI_REAL2,
        (unsigned long)(uintptr_t)MPI_COMPLEX4);
  {
    const MPI_Datatype half[] = {MPI_REAL2, MPI_COMPLEX4};
    for (int i = 0; i < 2; ++i) {
      int half_size = -1, error_class = MPI_SUCCESS;
      MPI_Error_class(MPI_Type_size(half[i], &half_size), &error_class);
      CHECK(error_class == MPI_ERR_TYPE && half_size == -1,
            "MPI_Type_size(half precision %d): class %d, size %d", i,
            error_class, half_size);
      char byte = 0;
      MPI_Error_class(MPI_Send(&byte, 1, half[i], rank, 0, MPI_COMM_WORLD),
                      &error_class);
      CHECK(error_class == MPI_ERR_TYPE,
            "MPI_Send(half precision %d): class %d, not MPI_ERR_TYPE", i,
            error_class);
    }
  }
  /* The other Fortran-sized types keep the standard ABI's values, and the
   * default-kind ones too. */
  CHECK((uintptr_t)MPI_REAL4 == 0x2d2 && (uintptr_t)MPI_REAL8 == 0x2da &&
            (uintptr_t)MPI_REAL16 == 0x2e2 &&
            (uintptr_t)MPI_COMPLEX8 == 0x2db &&
            (uintptr_t)MPI_COMPLEX16 == 0x2e3 &&
            (uintptr_t)MPI_COMPLEX32 == 0x2eb,
        "a REAL*n or COMPLEX*n handle is not the standard ABI's value");
  CHECK((uintptr_t)MPI_LOGICAL == 0x218 && (uintptr_t)MPI_INTEGER == 0x219 &&
            (uintptr_t)MPI_CHARACTER == 0x21e,
        "MPI_LOGICAL %#lx, MPI_INTEGER %#lx, MPI_CHARACTER %#lx: not the "
        "standard ABI's",
        (unsigned long)(uintptr_t)MPI_LOGICAL,
        (unsigned long)(uintptr_t)MPI_INTEGER,
        (unsigned long)(uintptr_t)MPI_CHARACTER);

  for (int k = 0; k < kTypes; ++k) {
    check_named(&kLogicals[k]);
    check_named(&kIntegers[k]);
    check_logical_reductions(&kLogicals[k], rank, size);
    check_integer_reductions(&kIntegers[k], rank, size);
    check_messages(&kLogicals[k], rank, size);
    check_messages(&kIntegers[k], rank, size);
  }

  /* MPI_Type_match_size finds the integers by size, and the logicals by
   * the standard ABI's MPIX_TYPECLASS_LOGICAL: each the very type. */
  for (int k = 0; k < kTypes; ++k) {
    MPI_Datatype matched = MPI_DATATYPE_NULL;
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, kIntegers[k].size,
                                  &matched));
    int matched_size = 0;
    MPI_CHECK(MPI_Type_size(matched, &matched_size));
    CHECK(matched_size == kIntegers[k].size,
          "MPI_Type_match_size(INTEGER, %d) has size %d", kIntegers[k].size,
          matched_size);
    MPI_CHECK(MPI_Type_match_size(MPIX_TYPECLASS_LOGICAL, kLogicals[k].size,
                                  &matched));
    CHECK(matched == kLogicals[k].type,
          "MPI_Type_match_size(LOGICAL, %d) is not %s", kLogicals[k].size,
          kLogicals[k].name);
  }

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("optional_types", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
