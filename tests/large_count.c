/* Large counts (MPI-4.0's _c forms) at 2 ranks:
 *   (a) one MPI_Send_c / MPI_Recv_c of 2^31 + 4096 bytes (more than an int
 *       counts), every 8-byte word checked; MPI_Get_count says
 *       MPI_UNDEFINED and MPI_Get_count_c the count;
 *   (b) a derived type whose extent passes 2^31 (two blocks 2^31 + 8 KiB
 *       apart), sent from and received into it, blocks and gap checked;
 *   (c) every point-to-point _c call, buffered sends and their buffer
 *       calls, MPI_Op_create_c / MPI_Reduce_local_c and
 *       MPI_Status_set_elements_c with small counts, byte for byte;
 *   (d) errors: a negative MPI_Count is MPI_ERR_COUNT, and so is a count
 *       past INT_MAX for an operation whose function takes an int length.
 * Memory: about 2 GiB per rank for (a), freed before (b), whose buffers are
 * mapped lazily and touched only where the blocks lie. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi.h"

static int failures = 0;
static int rank;

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* A word's value depends on its position and the message, so a shifted,
 * repeated or stale word shows. */
static uint64_t Pattern(uint64_t index, uint64_t seed) {
  uint64_t x = (index + 1) * 0x9E3779B97F4A7C15ull ^ seed;
  x ^= x >> 29;
  return x;
}

static void* MapZeroed(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "rank %d: mmap of %zu bytes failed\n", rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* (a) More than 2 GiB in one message. */
static void BigMessage(void) {
  const MPI_Count count = (MPI_Count)1 << 31 | 4096; /* bytes */
  const size_t words = (size_t)count / 8;
  const uint64_t seed = 0x5eed;
  uint64_t* data = MapZeroed((size_t)count);
  if (rank == 0) {
    for (size_t i = 0; i < words; ++i) data[i] = Pattern(i, seed);
    CHECK(
        MPI_Send_c(data, count, MPI_BYTE, 1, 7, MPI_COMM_WORLD) == MPI_SUCCESS,
        "MPI_Send_c of %lld bytes", (long long)count);
  } else {
    MPI_Status status;
    CHECK(MPI_Recv_c(data, count, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &status) ==
              MPI_SUCCESS,
          "MPI_Recv_c");
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < words; ++i) {
      if (data[i] != Pattern(i, seed)) {
        if (bad++ == 0) first_bad = i;
      }
    }
    CHECK(bad == 0, "%zu of %zu words differ, first at byte %zu", bad, words,
          first_bad * 8);
    int small_count = 0;
    MPI_Count large_count = 0, elements = 0;
    MPI_Get_count(&status, MPI_CHAR, &small_count);
    MPI_Get_count_c(&status, MPI_CHAR, &large_count);
    MPI_Get_elements_c(&status, MPI_BYTE, &elements);
    CHECK(small_count == MPI_UNDEFINED, "MPI_Get_count gave %d", small_count);
    CHECK(large_count == count, "MPI_Get_count_c gave %lld",
          (long long)large_count);
    CHECK(elements == count, "MPI_Get_elements_c gave %lld",
          (long long)elements);
    CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == 7, "status %d/%d",
          status.MPI_SOURCE, status.MPI_TAG);
  }
  munmap(data, (size_t)count);
}

/* (b) A type whose extent passes 2^31: two 4 KiB blocks 2^31 + 8 KiB
 * apart. */
static void HugeExtent(void) {
  const MPI_Count block = 4096;
  const MPI_Count stride = ((MPI_Count)1 << 31) + 8192;
  const size_t span = (size_t)(stride + block);
  MPI_Datatype sparse;
  MPI_Type_create_hvector_c(2, block, stride, MPI_BYTE, &sparse);
  MPI_Type_commit(&sparse);
  MPI_Count lb = -1, extent = 0, size = 0;
  MPI_Type_get_extent_c(sparse, &lb, &extent);
  MPI_Type_size_c(sparse, &size);
  CHECK(lb == 0 && extent == (MPI_Count)span, "extent %lld (lb %lld)",
        (long long)extent, (long long)lb);
  CHECK(size == 2 * block, "size %lld", (long long)size);

  unsigned char* wide = MapZeroed(span);
  unsigned char packed[8192];
  if (rank == 0) {
    for (MPI_Count i = 0; i < block; ++i) {
      wide[i] = (unsigned char)(i * 7 + 1);
      wide[stride + i] = (unsigned char)(i * 13 + 5);
    }
    /* From the sparse layout to a contiguous receive... */
    MPI_Send_c(wide, 1, sparse, 1, 11, MPI_COMM_WORLD);
    /* ...and from contiguous bytes into the sparse layout. */
    for (int i = 0; i < 8192; ++i) packed[i] = (unsigned char)(i * 3 + 11);
    MPI_Send_c(packed, 8192, MPI_BYTE, 1, 12, MPI_COMM_WORLD);
  } else {
    MPI_Status status;
    MPI_Recv_c(packed, 8192, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &status);
    int bad = 0;
    for (int i = 0; i < 4096; ++i) {
      bad += packed[i] != (unsigned char)(i * 7 + 1);
      bad += packed[4096 + i] != (unsigned char)(i * 13 + 5);
    }
    CHECK(bad == 0, "%d bytes of the sparse send differ", bad);
    MPI_Recv_c(wide, 1, sparse, 0, 12, MPI_COMM_WORLD, &status);
    bad = 0;
    for (int i = 0; i < 4096; ++i) {
      bad += wide[i] != (unsigned char)(i * 3 + 11);
      bad += wide[stride + i] != (unsigned char)((4096 + i) * 3 + 11);
    }
    /* The gap stays untouched: its edges, and pages across it. */
    for (MPI_Count at = block; at < stride; at += (MPI_Count)1 << 24) {
      bad += wide[at] != 0;
    }
    bad += wide[stride - 1] != 0;
    CHECK(bad == 0, "%d bytes of the sparse receive differ", bad);
    MPI_Count elements = 0;
    MPI_Get_count_c(&status, sparse, &elements);
    CHECK(elements == 1, "MPI_Get_count_c of the sparse type gave %lld",
          (long long)elements);
  }
  munmap(wide, span);
  MPI_Type_free(&sparse);
}

/* (c) Each _c call with a small count. Rank 0 sends message k, rank 1
 * receives and checks it. */
enum { kItems = 37 };

static void Fill(int* items, int message) {
  for (int i = 0; i < kItems; ++i) items[i] = message * 1000 + i;
}

static void Expect(const int* items, int message, const char* what) {
  int bad = 0;
  for (int i = 0; i < kItems; ++i) bad += items[i] != message * 1000 + i;
  CHECK(bad == 0, "%s: %d items differ", what, bad);
}

static void CheckStatus(const MPI_Status* status, int tag, const char* what) {
  MPI_Count count = -1;
  MPI_Get_count_c(status, MPI_INT, &count);
  CHECK(status->MPI_SOURCE == 0 && status->MPI_TAG == tag && count == kItems,
        "%s: status source %d tag %d count %lld", what, status->MPI_SOURCE,
        status->MPI_TAG, (long long)count);
}

static void LongSum(void* in, void* inout, MPI_Count* len, MPI_Datatype* type) {
  (void)type;
  for (MPI_Count i = 0; i < *len; ++i) {
    ((long*)inout)[i] += ((long*)in)[i] * 2;
  }
}

static void IntSum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static void SmallCounts(void) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const MPI_Count n = kItems;
  int items[kItems];
  MPI_Status status;
  MPI_Request request;
  int tag = 100;

  /* Buffered sends go through a buffer attached with the _c call. */
  const MPI_Count buffer_bytes = 4 * (kItems * 4 + MPI_BSEND_OVERHEAD);
  void* attached = malloc((size_t)buffer_bytes);
  MPI_Buffer_attach_c(attached, buffer_bytes);

  if (rank == 0) {
    const char* names[] = {
        "MPI_Send_c",      "MPI_Bsend_c",      "MPI_Ssend_c",
        "MPI_Isend_c",     "MPI_Ibsend_c",     "MPI_Issend_c",
        "MPI_Send_init_c", "MPI_Bsend_init_c", "MPI_Ssend_init_c"};
    for (int k = 0; k < 9; ++k) {
      Fill(items, k);
      switch (k) {
        case 0:
          MPI_Send_c(items, n, MPI_INT, 1, tag + k, comm);
          break;
        case 1:
          MPI_Bsend_c(items, n, MPI_INT, 1, tag + k, comm);
          break;
        case 2:
          MPI_Ssend_c(items, n, MPI_INT, 1, tag + k, comm);
          break;
        case 3:
          MPI_Isend_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
        case 4:
          MPI_Ibsend_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
        case 5:
          MPI_Issend_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
        case 6:
          MPI_Send_init_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
        case 7:
          MPI_Bsend_init_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
        case 8:
          MPI_Ssend_init_c(items, n, MPI_INT, 1, tag + k, comm, &request);
          break;
      }
      if (k >= 6) MPI_Start(&request);
      if (k >= 3) MPI_Wait(&request, MPI_STATUS_IGNORE);
      if (k >= 6) MPI_Request_free(&request);
      (void)names;
    }
  } else {
    const char* names[] = {
        "MPI_Send_c",      "MPI_Bsend_c",      "MPI_Ssend_c",
        "MPI_Isend_c",     "MPI_Ibsend_c",     "MPI_Issend_c",
        "MPI_Send_init_c", "MPI_Bsend_init_c", "MPI_Ssend_init_c"};
    for (int k = 0; k < 9; ++k) {
      memset(items, 0, sizeof(items));
      /* The receives take turns among the _c forms. */
      switch (k % 5) {
        case 0:
          MPI_Recv_c(items, n, MPI_INT, 0, tag + k, comm, &status);
          break;
        case 1:
          MPI_Irecv_c(items, n, MPI_INT, 0, tag + k, comm, &request);
          MPI_Wait(&request, &status);
          break;
        case 2:
          MPI_Recv_init_c(items, n, MPI_INT, 0, tag + k, comm, &request);
          MPI_Start(&request);
          MPI_Wait(&request, &status);
          MPI_Request_free(&request);
          break;
        case 3: {
          MPI_Message message;
          MPI_Mprobe(0, tag + k, comm, &message, &status);
          MPI_Mrecv_c(items, n, MPI_INT, &message, &status);
          break;
        }
        case 4: {
          MPI_Message message;
          int flag = 0;
          while (!flag) MPI_Improbe(0, tag + k, comm, &flag, &message, &status);
          MPI_Imrecv_c(items, n, MPI_INT, &message, &request);
          MPI_Wait(&request, &status);
          break;
        }
      }
      Expect(items, k, names[k]);
      CheckStatus(&status, tag + k, names[k]);
    }
  }
  tag += 20;

  /* Ready sends: the receive is posted before the sender learns so. */
  for (int k = 0; k < 3; ++k) {
    if (rank == 1) {
      memset(items, 0, sizeof(items));
      MPI_Irecv_c(items, n, MPI_INT, 0, tag + k, comm, &request);
    }
    MPI_Barrier(comm);
    if (rank == 0) {
      MPI_Request send;
      Fill(items, 20 + k);
      if (k == 0) MPI_Rsend_c(items, n, MPI_INT, 1, tag + k, comm);
      if (k == 1) {
        MPI_Irsend_c(items, n, MPI_INT, 1, tag + k, comm, &send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
      }
      if (k == 2) {
        MPI_Rsend_init_c(items, n, MPI_INT, 1, tag + k, comm, &send);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        MPI_Request_free(&send);
      }
    } else {
      MPI_Wait(&request, &status);
      Expect(items, 20 + k, "a ready send (_c)");
      CheckStatus(&status, tag + k, "a ready send (_c)");
    }
  }
  tag += 10;

  /* The send-receive calls: both ranks exchange. */
  {
    const int peer = 1 - rank;
    int out[kItems], in[kItems];
    for (int k = 0; k < 4; ++k) {
      const int message = 40 + k;
      /* Each rank sends message * 1000 + i, offset by its rank * 500. */
      for (int i = 0; i < kItems; ++i) out[i] = message * 1000 + i + rank * 500;
      memset(in, 0, sizeof(in));
      switch (k) {
        case 0:
          MPI_Sendrecv_c(out, n, MPI_INT, peer, tag, in, n, MPI_INT, peer, tag,
                         comm, &status);
          break;
        case 1:
          memcpy(in, out, sizeof(in));
          MPI_Sendrecv_replace_c(in, n, MPI_INT, peer, tag, peer, tag, comm,
                                 &status);
          break;
        case 2:
          MPI_Isendrecv_c(out, n, MPI_INT, peer, tag, in, n, MPI_INT, peer, tag,
                          comm, &request);
          MPI_Wait(&request, &status);
          break;
        case 3:
          memcpy(in, out, sizeof(in));
          MPI_Isendrecv_replace_c(in, n, MPI_INT, peer, tag, peer, tag, comm,
                                  &request);
          MPI_Wait(&request, &status);
          break;
      }
      int bad = 0;
      for (int i = 0; i < kItems; ++i) {
        bad += in[i] != message * 1000 + i + peer * 500;
      }
      CHECK(bad == 0, "send-receive _c form %d: %d items differ", k, bad);
      MPI_Count count = -1;
      MPI_Get_count_c(&status, MPI_INT, &count);
      CHECK(status.MPI_SOURCE == peer && count == kItems,
            "send-receive _c form %d: source %d count %lld", k,
            status.MPI_SOURCE, (long long)count);
    }
  }

  void* detached = NULL;
  MPI_Count detached_size = -1;
  MPI_Buffer_detach_c(&detached, &detached_size);
  CHECK(detached == attached && detached_size == buffer_bytes,
        "MPI_Buffer_detach_c gave %p / %lld, attached %p / %lld", detached,
        (long long)detached_size, attached, (long long)buffer_bytes);
  free(attached);

  /* Local reductions with a large-count user function. */
  {
    MPI_Op op;
    long in[kItems], inout[kItems];
    for (int i = 0; i < kItems; ++i) in[i] = i, inout[i] = 1000 * i;
    MPI_Op_create_c(LongSum, 1, &op);
    MPI_Reduce_local_c(in, inout, n, MPI_LONG, op);
    int bad = 0;
    for (int i = 0; i < kItems; ++i) bad += inout[i] != 1000 * i + 2 * i;
    CHECK(bad == 0, "MPI_Reduce_local_c with an MPI_Op_create_c op");
    MPI_Op_free(&op);
    for (int i = 0; i < kItems; ++i) inout[i] = 5;
    MPI_Reduce_local_c(in, inout, n, MPI_LONG, MPI_SUM);
    bad = 0;
    for (int i = 0; i < kItems; ++i) bad += inout[i] != 5 + i;
    CHECK(bad == 0, "MPI_Reduce_local_c with MPI_SUM");
  }

  /* Status setters. */
  {
    MPI_Status made;
    MPI_Count elements = 0;
    const MPI_Count many = (MPI_Count)3 << 31;
    MPI_Status_set_elements_c(&made, MPI_INT, many);
    MPI_Get_elements_c(&made, MPI_INT, &elements);
    CHECK(elements == many, "MPI_Status_set_elements_c: %lld",
          (long long)elements);
    int small = 0;
    MPI_Get_count(&made, MPI_INT, &small);
    CHECK(small == MPI_UNDEFINED, "MPI_Get_count past INT_MAX gave %d", small);
  }
}

/* (d) Errors under MPI_ERRORS_RETURN. */
static void Errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int dummy[4] = {0};
  int error_class = MPI_SUCCESS;
  MPI_Request request;
  MPI_Error_class(MPI_Send_c(dummy, -1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD),
                  &error_class);
  CHECK(error_class == MPI_ERR_COUNT, "MPI_Send_c count -1: class %d",
        error_class);
  MPI_Error_class(
      MPI_Irecv_c(dummy, -5, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, &request),
      &error_class);
  CHECK(error_class == MPI_ERR_COUNT, "MPI_Irecv_c count -5: class %d",
        error_class);
  MPI_Error_class(MPI_Bsend_c(dummy, (MPI_Count)-1 << 40, MPI_INT, 1 - rank, 0,
                              MPI_COMM_WORLD),
                  &error_class);
  CHECK(error_class == MPI_ERR_COUNT, "MPI_Bsend_c count -2^40: class %d",
        error_class);
  MPI_Op op;
  MPI_Op_create(IntSum, 1, &op);
  /* Past INT_MAX an int function gets the items in pieces (mpi/op_test.cc
   * checks where each piece starts); a negative count is still refused. */
  MPI_Error_class(MPI_Reduce_local_c(dummy, dummy, -1, MPI_INT, op),
                  &error_class);
  CHECK(error_class == MPI_ERR_COUNT,
        "MPI_Reduce_local_c count -1 with an int function: class %d",
        error_class);
  int ints[3] = {1, 2, 3}, sums[3] = {10, 20, 30};
  MPI_Reduce_local_c(ints, sums, 3, MPI_INT, op);
  CHECK(sums[0] == 11 && sums[1] == 22 && sums[2] == 33,
        "MPI_Reduce_local_c with an MPI_Op_create op");
  MPI_Op_free(&op);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "large_count runs at 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int skip_big = argc > 1 && strcmp(argv[1], "--small") == 0;
  if (!skip_big) BigMessage();
  MPI_Barrier(MPI_COMM_WORLD);
  if (!skip_big) HugeExtent();
  MPI_Barrier(MPI_COMM_WORLD);
  SmallCounts();
  MPI_Barrier(MPI_COMM_WORLD);
  Errors();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf(total == 0 ? "large_count: ok\n" : "large_count: %d failures\n",
           total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
