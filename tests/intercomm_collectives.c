/* Collectives on intercommunicators (MPI-4.1 6.2.2), blocking and
 * nonblocking, over halves of MPI_COMM_WORLD split evenly and unevenly:
 * barrier, bcast, gather(v), scatter(v), allgather(v), alltoall(v,w),
 * reduce, allreduce and reduce_scatter(_block), each with every root.
 * Every value is checked against what the test computes itself from the
 * world ranks of the remote group; reductions use a non-commutative
 * operation too, so the order of the remote group's contributions is
 * checked. Calls MPI does not define on an intercommunicator (scan, in
 * place) must fail with the right class. */
#include <unistd.h>

#include "test_util.h"

static int world_rank, world_size;
static int left, split, local_rank, local_size, remote_size;

static int group_size(int is_left) {
  return is_left ? split : world_size - split;
}
/* World rank of rank r of the left or right group. */
static int world_of(int is_left, int r) { return is_left ? r : split + r; }
static int remote_world(int r) { return world_of(!left, r); }

/* Item i of what the process with world rank w contributes. */
static int value(int w, int i) { return w * 1000 + i; }

/* The root argument of a rooted collective whose root is rank `root` of
 * the group `root_left`. */
static int root_argument(int root_left, int root) {
  if (left == root_left) return local_rank == root ? MPI_ROOT : MPI_PROC_NULL;
  return root;
}

/* Affine maps x -> a x + b (mod 1000003) composed: not commutative, so a
 * reduction applied out of rank order gives a different answer. */
typedef struct {
  int a, b;
} Affine;
static Affine compose(Affine f, Affine g) { /* f then g: g(f(x)) */
  Affine h;
  h.a = (int)((long long)g.a * f.a % 1000003);
  h.b = (int)(((long long)g.a * f.b + g.b) % 1000003);
  return h;
}
static void affine_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  Affine* x = (Affine*)in;
  Affine* y = (Affine*)inout;
  for (int i = 0; i < *len; ++i) y[i] = compose(x[i], y[i]);
}
static Affine affine_of(int w, int i) {
  Affine f = {2 + (w * 7 + i) % 97, (w * 13 + i * 5) % 101};
  return f;
}

static void test_barrier(MPI_Comm inter) {
  /* The left group's rank 0 arrives late: nobody in the right group may
   * leave before it arrived. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double start = MPI_Wtime();
  if (left && local_rank == 0) usleep(200 * 1000);
  MPI_CHECK(MPI_Barrier(inter));
  const double waited = MPI_Wtime() - start;
  if (!left) {
    CHECK(waited >= 0.15,
          "left the barrier after %.3f s, before the late "
          "process arrived",
          waited);
  }
  MPI_Request request;
  MPI_CHECK(MPI_Ibarrier(inter, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
}

static void test_bcast(MPI_Comm inter, int nonblocking) {
  enum { kCount = 300 };
  int buffer[kCount];
  for (int root_left = 0; root_left < 2; ++root_left) {
    for (int root = 0; root < group_size(root_left); ++root) {
      const int arg = root_argument(root_left, root);
      const int root_world = world_of(root_left, root);
      for (int i = 0; i < kCount; ++i) {
        buffer[i] = arg == MPI_ROOT ? value(root_world, i) : -1;
      }
      if (nonblocking) {
        MPI_Request request;
        MPI_CHECK(MPI_Ibcast(buffer, kCount, MPI_INT, arg, inter, &request));
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      } else {
        MPI_CHECK(MPI_Bcast(buffer, kCount, MPI_INT, arg, inter));
      }
      for (int i = 0; i < kCount; ++i) {
        const int want = arg == MPI_PROC_NULL ? -1 : value(root_world, i);
        CHECK(buffer[i] == want, "bcast root %d/%d: item %d is %d, want %d",
              root_left, root, i, buffer[i], want);
      }
    }
  }
  /* A strided type: every other int of 2 * 50. */
  MPI_Datatype every_other;
  MPI_CHECK(MPI_Type_vector(50, 1, 2, MPI_INT, &every_other));
  MPI_CHECK(MPI_Type_commit(&every_other));
  const int arg = root_argument(1, 0);
  for (int i = 0; i < 100; ++i) {
    buffer[i] = arg == MPI_ROOT ? value(0, i) : -1;
  }
  MPI_CHECK(MPI_Bcast(buffer, 1, every_other, arg, inter));
  for (int i = 0; i < 100; ++i) {
    int want = -1;
    if (arg == MPI_ROOT || (arg != MPI_PROC_NULL && i % 2 == 0)) {
      want = value(0, i);
    }
    CHECK(buffer[i] == want, "strided bcast: item %d is %d, want %d", i,
          buffer[i], want);
  }
  MPI_CHECK(MPI_Type_free(&every_other));
}

/* Gather(v) and Scatter(v) with every root; the v-forms give remote rank r
 * r + 1 items at displacement 2 r (r + 1) / 2 + r (a gap of one). */
static void test_rooted(MPI_Comm inter, int nonblocking) {
  enum { kBlock = 5 };
  const int max_remote = world_size;
  int* many =
      (int*)test_malloc(sizeof(int) * max_remote * (max_remote + 2) * kBlock);
  int* counts = (int*)test_malloc(sizeof(int) * max_remote);
  int* displacements = (int*)test_malloc(sizeof(int) * max_remote);
  int mine[64];
  for (int root_left = 0; root_left < 2; ++root_left) {
    for (int root = 0; root < group_size(root_left); ++root) {
      const int arg = root_argument(root_left, root);
      const int root_world = world_of(root_left, root);
      int span = 0;
      for (int r = 0; r < remote_size; ++r) {
        counts[r] = r + 1;
        displacements[r] = span;
        span += r + 2;
      }
      for (int variable = 0; variable < 2; ++variable) {
        /* Gather. */
        const int my_count = variable ? local_rank + 1 : kBlock;
        for (int i = 0; i < my_count; ++i) mine[i] = value(world_rank, i);
        const int total = variable ? span : kBlock * remote_size;
        for (int i = 0; i < total; ++i) many[i] = -1;
        MPI_Request request = MPI_REQUEST_NULL;
        if (variable) {
          if (nonblocking) {
            MPI_CHECK(MPI_Igatherv(mine, my_count, MPI_INT, many, counts,
                                   displacements, MPI_INT, arg, inter,
                                   &request));
          } else {
            MPI_CHECK(MPI_Gatherv(mine, my_count, MPI_INT, many, counts,
                                  displacements, MPI_INT, arg, inter));
          }
        } else if (nonblocking) {
          MPI_CHECK(MPI_Igather(mine, kBlock, MPI_INT, many, kBlock, MPI_INT,
                                arg, inter, &request));
        } else {
          MPI_CHECK(MPI_Gather(mine, kBlock, MPI_INT, many, kBlock, MPI_INT,
                               arg, inter));
        }
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        if (arg == MPI_ROOT) {
          for (int r = 0; r < remote_size; ++r) {
            const int n = variable ? counts[r] : kBlock;
            const int at = variable ? displacements[r] : r * kBlock;
            for (int i = 0; i < n; ++i) {
              CHECK(many[at + i] == value(remote_world(r), i),
                    "gather%s: item %d from remote %d is %d",
                    variable ? "v" : "", i, r, many[at + i]);
            }
            if (variable) {
              CHECK(many[at + n] == -1, "gatherv wrote into a gap");
            }
          }
        }

        /* Scatter: the root sends remote rank r its block of values. */
        if (arg == MPI_ROOT) {
          for (int r = 0; r < remote_size; ++r) {
            const int n = variable ? counts[r] : kBlock;
            const int at = variable ? displacements[r] : r * kBlock;
            for (int i = 0; i < n; ++i) {
              many[at + i] = value(root_world, 100 * r + i);
            }
          }
        }
        for (int i = 0; i < 64; ++i) mine[i] = -1;
        if (variable) {
          if (nonblocking) {
            MPI_CHECK(MPI_Iscatterv(many, counts, displacements, MPI_INT, mine,
                                    my_count, MPI_INT, arg, inter, &request));
          } else {
            MPI_CHECK(MPI_Scatterv(many, counts, displacements, MPI_INT, mine,
                                   my_count, MPI_INT, arg, inter));
          }
        } else if (nonblocking) {
          MPI_CHECK(MPI_Iscatter(many, kBlock, MPI_INT, mine, kBlock, MPI_INT,
                                 arg, inter, &request));
        } else {
          MPI_CHECK(MPI_Scatter(many, kBlock, MPI_INT, mine, kBlock, MPI_INT,
                                arg, inter));
        }
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        if (left != root_left) {
          for (int i = 0; i < my_count; ++i) {
            CHECK(mine[i] == value(root_world, 100 * local_rank + i),
                  "scatter%s: item %d is %d", variable ? "v" : "", i, mine[i]);
          }
          CHECK(mine[my_count] == -1, "scatter wrote past the block");
        }
      }
    }
  }
  free(many);
  free(counts);
  free(displacements);
}

static void test_all_to_all(MPI_Comm inter, int nonblocking) {
  enum { kBlock = 7 };
  int* send = (int*)test_malloc(sizeof(int) * kBlock * remote_size);
  int* receive = (int*)test_malloc(sizeof(int) * (kBlock + 1) * remote_size);
  int* counts = (int*)test_malloc(sizeof(int) * remote_size);
  int* displacements = (int*)test_malloc(sizeof(int) * remote_size);
  MPI_Request request = MPI_REQUEST_NULL;

  /* Allgather: everyone receives every remote process's block. */
  for (int i = 0; i < kBlock; ++i) send[i] = value(world_rank, i);
  for (int i = 0; i < kBlock * remote_size; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Iallgather(send, kBlock, MPI_INT, receive, kBlock, MPI_INT,
                             inter, &request));
  } else {
    MPI_CHECK(
        MPI_Allgather(send, kBlock, MPI_INT, receive, kBlock, MPI_INT, inter));
  }
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int r = 0; r < remote_size; ++r) {
    for (int i = 0; i < kBlock; ++i) {
      CHECK(receive[r * kBlock + i] == value(remote_world(r), i),
            "allgather: item %d of remote %d is %d", i, r,
            receive[r * kBlock + i]);
    }
  }

  /* Allgatherv: remote rank r sends r % 3 + 1 items, placed backwards. */
  const int my_count = local_rank % 3 + 1;
  int at = 0;
  for (int r = remote_size - 1; r >= 0; --r) {
    counts[r] = r % 3 + 1;
    displacements[r] = at;
    at += counts[r];
  }
  for (int i = 0; i < at; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Iallgatherv(send, my_count, MPI_INT, receive, counts,
                              displacements, MPI_INT, inter, &request));
  } else {
    MPI_CHECK(MPI_Allgatherv(send, my_count, MPI_INT, receive, counts,
                             displacements, MPI_INT, inter));
  }
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int r = 0; r < remote_size; ++r) {
    for (int i = 0; i < counts[r]; ++i) {
      CHECK(receive[displacements[r] + i] == value(remote_world(r), i),
            "allgatherv: item %d of remote %d is %d", i, r,
            receive[displacements[r] + i]);
    }
  }

  /* Alltoall: block r goes to remote rank r. */
  for (int r = 0; r < remote_size; ++r) {
    for (int i = 0; i < kBlock; ++i) {
      send[r * kBlock + i] = value(world_rank, 100 * r + i);
    }
  }
  for (int i = 0; i < kBlock * remote_size; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Ialltoall(send, kBlock, MPI_INT, receive, kBlock, MPI_INT,
                            inter, &request));
  } else {
    MPI_CHECK(
        MPI_Alltoall(send, kBlock, MPI_INT, receive, kBlock, MPI_INT, inter));
  }
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int r = 0; r < remote_size; ++r) {
    for (int i = 0; i < kBlock; ++i) {
      CHECK(receive[r * kBlock + i] ==
                value(remote_world(r), 100 * local_rank + i),
            "alltoall: item %d from remote %d is %d", i, r,
            receive[r * kBlock + i]);
    }
  }

  /* Alltoallv: (sender local rank + receiver local rank) % 4 items. */
  int* send_counts = (int*)test_malloc(sizeof(int) * remote_size);
  int* send_displacements = (int*)test_malloc(sizeof(int) * remote_size);
  int send_at = 0, receive_at = 0;
  for (int r = 0; r < remote_size; ++r) {
    send_counts[r] = (local_rank + r) % 4;
    send_displacements[r] = send_at;
    for (int i = 0; i < send_counts[r]; ++i) {
      send[send_at + i] = value(world_rank, 100 * r + i);
    }
    send_at += send_counts[r];
    counts[r] = (local_rank + r) % 4;
    displacements[r] = receive_at + 1; /* a gap before each block */
    receive_at += counts[r] + 1;
  }
  for (int i = 0; i < receive_at; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Ialltoallv(send, send_counts, send_displacements, MPI_INT,
                             receive, counts, displacements, MPI_INT, inter,
                             &request));
  } else {
    MPI_CHECK(MPI_Alltoallv(send, send_counts, send_displacements, MPI_INT,
                            receive, counts, displacements, MPI_INT, inter));
  }
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int r = 0; r < remote_size; ++r) {
    CHECK(receive[displacements[r] - 1] == -1, "alltoallv wrote into a gap");
    for (int i = 0; i < counts[r]; ++i) {
      CHECK(receive[displacements[r] + i] ==
                value(remote_world(r), 100 * local_rank + i),
            "alltoallv: item %d from remote %d is %d", i, r,
            receive[displacements[r] + i]);
    }
  }

  /* Alltoallw: one int to each remote rank, received as a resized int at
   * byte displacement 8 r. */
  MPI_Datatype* types =
      (MPI_Datatype*)test_malloc(sizeof(MPI_Datatype) * remote_size);
  for (int r = 0; r < remote_size; ++r) {
    send_counts[r] = 1;
    send_displacements[r] = (int)sizeof(int) * r;
    send[r] = value(world_rank, 100 * r);
    counts[r] = 1;
    displacements[r] = 8 * r;
    types[r] = MPI_INT;
  }
  for (int i = 0; i < 2 * remote_size; ++i) receive[i] = -1;
  MPI_CHECK(MPI_Alltoallw(send, send_counts, send_displacements, types, receive,
                          counts, displacements, types, inter));
  for (int r = 0; r < remote_size; ++r) {
    CHECK(receive[2 * r] == value(remote_world(r), 100 * local_rank) &&
              receive[2 * r + 1] == -1,
          "alltoallw: from remote %d got %d, %d", r, receive[2 * r],
          receive[2 * r + 1]);
  }
  free(types);
  free(send_counts);
  free(send_displacements);
  free(send);
  free(receive);
  free(counts);
  free(displacements);
}

/* The reduction of the remote group's contributions of item i. */
static int remote_sum(int i) {
  int sum = 0;
  for (int r = 0; r < remote_size; ++r) sum += value(remote_world(r), i);
  return sum;
}
static Affine remote_affine(int i) {
  Affine f = affine_of(remote_world(0), i);
  for (int r = 1; r < remote_size; ++r) {
    f = compose(f, affine_of(remote_world(r), i));
  }
  return f;
}

static void test_reductions(MPI_Comm inter, int nonblocking, MPI_Op affine,
                            MPI_Datatype affine_type) {
  enum { kCount = 40 };
  int send[kCount * 8], receive[kCount * 8];
  Affine fsend[kCount], freceive[kCount];
  MPI_Request request = MPI_REQUEST_NULL;
  for (int i = 0; i < kCount; ++i) {
    send[i] = value(world_rank, i);
    fsend[i] = affine_of(world_rank, i);
  }

  /* Reduce, with every root. */
  for (int root_left = 0; root_left < 2; ++root_left) {
    for (int root = 0; root < group_size(root_left); ++root) {
      const int arg = root_argument(root_left, root);
      for (int i = 0; i < kCount; ++i) receive[i] = -1;
      if (nonblocking) {
        MPI_CHECK(MPI_Ireduce(send, receive, kCount, MPI_INT, MPI_SUM, arg,
                              inter, &request));
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      } else {
        MPI_CHECK(
            MPI_Reduce(send, receive, kCount, MPI_INT, MPI_SUM, arg, inter));
      }
      MPI_CHECK(
          MPI_Reduce(fsend, freceive, kCount, affine_type, affine, arg, inter));
      if (arg == MPI_ROOT) {
        for (int i = 0; i < kCount; ++i) {
          CHECK(receive[i] == remote_sum(i), "reduce: item %d is %d, want %d",
                i, receive[i], remote_sum(i));
          const Affine want = remote_affine(i);
          CHECK(freceive[i].a == want.a && freceive[i].b == want.b,
                "reduce with a non-commutative op: item %d is (%d, %d), want "
                "(%d, %d)",
                i, freceive[i].a, freceive[i].b, want.a, want.b);
        }
      } else {
        CHECK(receive[0] == -1, "reduce wrote outside the root");
      }
    }
  }

  /* Allreduce. */
  for (int i = 0; i < kCount; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Iallreduce(send, receive, kCount, MPI_INT, MPI_SUM, inter,
                             &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(MPI_Allreduce(send, receive, kCount, MPI_INT, MPI_SUM, inter));
  }
  MPI_CHECK(MPI_Allreduce(fsend, freceive, kCount, affine_type, affine, inter));
  for (int i = 0; i < kCount; ++i) {
    CHECK(receive[i] == remote_sum(i), "allreduce: item %d is %d, want %d", i,
          receive[i], remote_sum(i));
    const Affine want = remote_affine(i);
    CHECK(freceive[i].a == want.a && freceive[i].b == want.b,
          "allreduce with a non-commutative op: item %d out of order", i);
  }

  /* Reduce_scatter_block: both groups reduce 3 * (local size) * ... items;
   * the vectors must be equally long, so each group's block is sized to
   * make 6 * world_size items in all (divisible by either group size when
   * the block is 6 * world_size / local_size; pick sizes that divide). */
  const int total = local_size * remote_size * 2;
  for (int i = 0; i < total; ++i) send[i] = value(world_rank, i);
  const int block = total / local_size;
  for (int i = 0; i < kCount * 8; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Ireduce_scatter_block(send, receive, block, MPI_INT, MPI_SUM,
                                        inter, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(MPI_Reduce_scatter_block(send, receive, block, MPI_INT, MPI_SUM,
                                       inter));
  }
  for (int i = 0; i < block; ++i) {
    CHECK(receive[i] == remote_sum(local_rank * block + i),
          "reduce_scatter_block: item %d is %d, want %d", i, receive[i],
          remote_sum(local_rank * block + i));
  }
  CHECK(receive[block] == -1, "reduce_scatter_block wrote past its block");

  /* Reduce_scatter: uneven blocks, growing with the rank (rank 0's may be
   * empty): rank r gets items [total r^2 / n^2, total (r+1)^2 / n^2). */
  int counts[64];
  for (int r = 0; r < local_size; ++r) {
    const int n2 = local_size * local_size;
    counts[r] = total * (r + 1) * (r + 1) / n2 - total * r * r / n2;
  }
  int first = 0;
  for (int r = 0; r < local_rank; ++r) first += counts[r];
  for (int i = 0; i < kCount * 8; ++i) receive[i] = -1;
  if (nonblocking) {
    MPI_CHECK(MPI_Ireduce_scatter(send, receive, counts, MPI_INT, MPI_SUM,
                                  inter, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(
        MPI_Reduce_scatter(send, receive, counts, MPI_INT, MPI_SUM, inter));
  }
  for (int i = 0; i < counts[local_rank]; ++i) {
    CHECK(receive[i] == remote_sum(first + i),
          "reduce_scatter: item %d is %d, want %d", i, receive[i],
          remote_sum(first + i));
  }
  CHECK(receive[counts[local_rank]] == -1,
        "reduce_scatter wrote past its block");
}

/* Several nonblocking collectives in flight at once, completed together,
 * with point-to-point traffic across the intercommunicator completed
 * before them. */
static void test_overlap(MPI_Comm inter) {
  enum { kCount = 64 };
  int bcast[kCount], sum[kCount], send[kCount], gathered[kCount * 16];
  for (int i = 0; i < kCount; ++i) {
    bcast[i] = left && local_rank == 0 ? value(world_rank, i) : -1;
    send[i] = value(world_rank, i);
  }
  MPI_Request requests[4];
  const int bcast_root = root_argument(1, 0);
  MPI_CHECK(
      MPI_Ibcast(bcast, kCount, MPI_INT, bcast_root, inter, &requests[0]));
  MPI_CHECK(
      MPI_Iallreduce(send, sum, kCount, MPI_INT, MPI_SUM, inter, &requests[1]));
  MPI_CHECK(MPI_Iallgather(send, 1, MPI_INT, gathered, 1, MPI_INT, inter,
                           &requests[2]));
  MPI_CHECK(MPI_Ibarrier(inter, &requests[3]));
  /* Remote rank r sends to local rank r % local_size: receive from each. */
  int token = world_rank, heard[64];
  MPI_Request pair[65];
  int expected = 0;
  for (int r = 0; r < remote_size; ++r) {
    if (r % local_size == local_rank) {
      MPI_CHECK(MPI_Irecv(&heard[expected], 1, MPI_INT, r, 3, inter,
                          &pair[expected]));
      ++expected;
    }
  }
  MPI_CHECK(MPI_Isend(&token, 1, MPI_INT, local_rank % remote_size, 3, inter,
                      &pair[expected]));
  MPI_CHECK(MPI_Waitall(expected + 1, pair, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE));
  for (int k = 0, r = 0; r < remote_size; ++r) {
    if (r % local_size == local_rank) {
      CHECK(heard[k] == remote_world(r), "p2p token %d from remote %d",
            heard[k], r);
      ++k;
    }
  }
  for (int i = 0; i < kCount; ++i) {
    if (!left) {
      CHECK(bcast[i] == value(0, i), "overlapped bcast: item %d is %d", i,
            bcast[i]);
    }
    CHECK(sum[i] == remote_sum(i), "overlapped allreduce: item %d", i);
  }
  for (int r = 0; r < remote_size; ++r) {
    CHECK(gathered[r] == value(remote_world(r), 0),
          "overlapped allgather: remote %d", r);
  }
}

static void test_errors(MPI_Comm inter) {
  MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
  int a = 1, b = 0;
  CHECK(test_error_class(MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_COMM,
        "MPI_Scan on an intercommunicator did not fail with MPI_ERR_COMM");
  CHECK(test_error_class(MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, inter)) ==
            MPI_ERR_BUFFER,
        "MPI_IN_PLACE on an intercommunicator did not fail");
  CHECK(test_error_class(MPI_Bcast(&a, 1, MPI_INT, remote_size, inter)) == MPI_ERR_ROOT,
        "a root beyond the remote group did not fail with MPI_ERR_ROOT");
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
}

static void run(int split_at, MPI_Op affine, MPI_Datatype affine_type) {
  split = split_at;
  left = world_rank < split;
  MPI_Comm local, inter;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, left, world_rank, &local));
  MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? split : 0, 42,
                                 &inter));
  MPI_CHECK(MPI_Comm_rank(inter, &local_rank));
  MPI_CHECK(MPI_Comm_size(inter, &local_size));
  MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));
  test_barrier(inter);
  for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
    test_bcast(inter, nonblocking);
    test_rooted(inter, nonblocking);
    test_all_to_all(inter, nonblocking);
    test_reductions(inter, nonblocking, affine, affine_type);
  }
  test_overlap(inter);
  test_errors(inter);
  /* A duplicate carries collectives of its own. */
  MPI_Comm copy;
  MPI_CHECK(MPI_Comm_dup(inter, &copy));
  test_reductions(copy, 0, affine, affine_type);
  MPI_CHECK(MPI_Comm_free(&copy));
  MPI_CHECK(MPI_Comm_free(&inter));
  MPI_CHECK(MPI_Comm_free(&local));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Op affine;
  MPI_Datatype affine_type;
  MPI_CHECK(MPI_Op_create(affine_op, /*commute=*/0, &affine));
  MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &affine_type));
  MPI_CHECK(MPI_Type_commit(&affine_type));
  if (world_size >= 2) {
    run(world_size / 2, affine, affine_type);
    if (world_size >= 3) run(1, affine, affine_type);
  }
  MPI_CHECK(MPI_Type_free(&affine_type));
  MPI_CHECK(MPI_Op_free(&affine));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("intercomm_collectives", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
