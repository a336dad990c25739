/* Process topologies and the neighbourhood collectives.
 *
 * Cartesian grids of 1 to 3 dimensions, periodic and not, with dimensions
 * of size 1 and 2 (where one process is a neighbour twice, or is its own
 * neighbour): Cart_get/coords/rank/shift/map/sub and Topo_test against a
 * row-major reference computed here; ranks beyond the grid get
 * MPI_COMM_NULL. A graph (MPI_Graph_create) with repeated edges and self
 * loops; distributed graphs, adjacent and general, weighted and not, with
 * repeated edges specified by other processes.
 *
 * On each topology, every neighbourhood collective (allgather, allgatherv,
 * alltoall, alltoallv, alltoallw), blocking and then all five nonblocking
 * at once, against a reference: receive block i must hold the block its
 * source sent to this process -- for Cartesian grids the block the source
 * sent in the opposite direction (MPI-4.1 8.6), for graphs the k-th block
 * the source sent here matching the k-th time the source is listed.
 * Every byte is checked; blocks of MPI_PROC_NULL neighbours and the gaps
 * between blocks must stay untouched. Derived datatypes too: strided
 * vectors against contiguous items, and per-neighbour types in
 * alltoallw; and alltoallw from and into MPI_BOTTOM with each block at its
 * absolute address (MPI_Get_address), in memory of its own. */
#include "test_util.h"

#ifdef MINIMPI_TAG_UB
#define MINIMPI_ONLY 1
#else
#define MINIMPI_ONLY 0
#endif

enum { kGuard = 0xA5, kMaxDims = 4 };

static int g_rank, g_size;

/* ---- Neighbourhood collectives against a reference ---------------------- */

/* The neighbours of this process as the topology lists them, and for each
 * receive block the block of its source that must arrive there. */
struct Neighbors {
  int in, out;
  int* sources;
  int* destinations;
  int* source_block; /* per receive block: index into the source's sends */
};

/* The pairing of repeated neighbours on graphs: receive block i from q is
 * the k-th block from q (k = earlier blocks from q), which q sent as the
 * k-th block addressed to us. `all_destinations` holds every process's
 * destination list (offsets[p] .. offsets[p + 1]). */
static void pair_by_occurrence(struct Neighbors* n, int me,
                               const int* all_destinations,
                               const int* offsets) {
  for (int i = 0; i < n->in; ++i) {
    const int q = n->sources[i];
    n->source_block[i] = -1;
    if (q == MPI_PROC_NULL) continue;
    int k = 0;
    for (int e = 0; e < i; ++e)
      if (n->sources[e] == q) ++k;
    for (int j = 0; j < offsets[q + 1] - offsets[q]; ++j) {
      if (all_destinations[offsets[q] + j] == me && k-- == 0) {
        n->source_block[i] = j;
        break;
      }
    }
    CHECK(n->source_block[i] >= 0,
          "rank %d lists %d as a source more often than %d sends to it", me, q,
          q);
  }
}

/* Everyone's destination lists, gathered on `comm`. */
static int* gather_destinations(MPI_Comm comm, const struct Neighbors* n,
                                int** offsets_out) {
  int size;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  int* counts = (int*)test_malloc(sizeof(int) * (size_t)size);
  int* offsets = (int*)test_malloc(sizeof(int) * (size_t)(size + 1));
  MPI_CHECK(MPI_Allgather(&n->out, 1, MPI_INT, counts, 1, MPI_INT, comm));
  offsets[0] = 0;
  for (int p = 0; p < size; ++p) offsets[p + 1] = offsets[p] + counts[p];
  int* all = (int*)test_malloc(sizeof(int) * (size_t)(offsets[size] + 1));
  MPI_CHECK(MPI_Allgatherv(n->destinations, n->out, MPI_INT, all, counts,
                           offsets, MPI_INT, comm));
  free(counts);
  *offsets_out = offsets;
  return all;
}

/* What travels from `sender`'s send block j: its size depends on both, so
 * mismatched pairings show up as truncation or wrong counts too. */
static int block_count(int sender, int j, int base) {
  return base + (sender * 7 + j * 3) % 5;
}
static int block_key(int j, int round) { return 1000 * round + j; }
static MPI_Datatype block_type(int sender, int j) {
  switch ((sender + j) % 3) {
    case 0:
      return MPI_INT;
    case 1:
      return MPI_DOUBLE;
    default:
      return MPI_CHAR;
  }
}
static int type_size(MPI_Datatype type) {
  int size;
  MPI_CHECK(MPI_Type_size(type, &size));
  return size;
}

static void check_untouched(const unsigned char* buffer, size_t from, size_t to,
                            const char* what, int block) {
  for (size_t b = from; b < to; ++b)
    CHECK(buffer[b] == kGuard,
          "%s: byte %zu (near block %d) was written but should not be", what, b,
          block);
}

/* Runs every neighbourhood collective on `comm` and checks the results.
 * `base` sets the block sizes (a large base sends rendezvous messages). */
static void check_collectives(MPI_Comm comm, const struct Neighbors* n, int me,
                              int base, const char* topology,
                              int blocking_only) {
#if defined(MPICH)
  /* MPICH 4.0 pairs the blocks of repeated graph edges in another order
   * than the one MPI_Graph_neighbors / MPI_Dist_graph_neighbors list them
   * in; only minimpi is held to it on graphs with repeated edges. */
  for (int i = 0; i < n->in; ++i)
    for (int k = 0; k < i; ++k)
      if (n->sources[i] == n->sources[k] && n->sources[i] != MPI_PROC_NULL)
        return;
#endif
  char what[160];
  const int in = n->in, out = n->out;
  const int stride = (base + 8) * 8; /* bytes per receive slot, with a gap */
  const size_t receive_bytes = (size_t)(in + 1) * (size_t)stride + 64;
  const size_t send_bytes = (size_t)(out + 1) * (size_t)stride + 64;
  unsigned char* receive[5];
  unsigned char* send[5];
  for (int c = 0; c < 5; ++c) {
    receive[c] = (unsigned char*)test_malloc(receive_bytes);
    send[c] = (unsigned char*)test_malloc(send_bytes);
  }
  int* recvcounts = (int*)test_malloc(sizeof(int) * (size_t)(in + 1));
  int* rdispls = (int*)test_malloc(sizeof(int) * (size_t)(in + 1));
  int* sendcounts = (int*)test_malloc(sizeof(int) * (size_t)(out + 1));
  int* sdispls = (int*)test_malloc(sizeof(int) * (size_t)(out + 1));
  MPI_Aint* rdispls_w =
      (MPI_Aint*)test_malloc(sizeof(MPI_Aint) * (size_t)(in + 1));
  MPI_Aint* sdispls_w =
      (MPI_Aint*)test_malloc(sizeof(MPI_Aint) * (size_t)(out + 1));
  MPI_Datatype* rtypes =
      (MPI_Datatype*)test_malloc(sizeof(MPI_Datatype) * (size_t)(in + 1));
  MPI_Datatype* stypes =
      (MPI_Datatype*)test_malloc(sizeof(MPI_Datatype) * (size_t)(out + 1));

  for (int round = 0; round < (blocking_only ? 1 : 2); ++round) {
    const int nonblocking = round == 1;
    for (int c = 0; c < 5; ++c) {
      memset(receive[c], kGuard, receive_bytes);
      memset(send[c], 0, send_bytes);
    }
    /* 0 allgather: one block of `base` ints, the same for everyone. */
    test_fill(send[0], (size_t)base * 4, me, block_key(999, round));
    /* 1 allgatherv: `block_count(me, 0)` ints; slots at stride offsets. */
    const int my_v = block_count(me, 0, base);
    test_fill(send[1], (size_t)my_v * 4, me, block_key(998, round));
    for (int i = 0; i < in; ++i) {
      recvcounts[i] = n->sources[i] == MPI_PROC_NULL
                          ? 0
                          : block_count(n->sources[i], 0, base);
      rdispls[i] = i * stride / 4;
    }
    /* 2 alltoall: block j of `base` ints for destination j. */
    for (int j = 0; j < out; ++j)
      test_fill(send[2] + (size_t)j * base * 4, (size_t)base * 4, me,
                block_key(j, round));
    /* 3 alltoallv and 4 alltoallw: block j of block_count(me, j) items. */
    for (int j = 0; j < out; ++j) {
      sendcounts[j] = block_count(me, j, base);
      sdispls[j] = j * stride / 4;
      test_fill(send[3] + sdispls[j] * 4, (size_t)sendcounts[j] * 4, me,
                block_key(100 + j, round));
      stypes[j] = block_type(me, j);
      sdispls_w[j] = (MPI_Aint)j * stride;
      test_fill(send[4] + sdispls_w[j],
                (size_t)sendcounts[j] * (size_t)type_size(stypes[j]), me,
                block_key(200 + j, round));
    }
    int* vcounts = (int*)test_malloc(sizeof(int) * (size_t)(in + 1));
    int* vdispls = (int*)test_malloc(sizeof(int) * (size_t)(in + 1));
    for (int i = 0; i < in; ++i) {
      const int q = n->sources[i];
      const int j = n->source_block[i];
      vcounts[i] = q == MPI_PROC_NULL ? 0 : block_count(q, j, base);
      vdispls[i] = i * stride / 4;
      rtypes[i] = q == MPI_PROC_NULL ? MPI_INT : block_type(q, j);
      rdispls_w[i] = (MPI_Aint)i * stride;
    }
    /* A PROC_NULL neighbour still gets a count; nothing moves for it. */
    for (int i = 0; i < in; ++i)
      if (n->sources[i] == MPI_PROC_NULL) recvcounts[i] = vcounts[i] = 3;

    if (!nonblocking) {
      MPI_CHECK(MPI_Neighbor_allgather(send[0], base, MPI_INT, receive[0], base,
                                       MPI_INT, comm));
      MPI_CHECK(MPI_Neighbor_allgatherv(send[1], my_v, MPI_INT, receive[1],
                                        recvcounts, rdispls, MPI_INT, comm));
      MPI_CHECK(MPI_Neighbor_alltoall(send[2], base, MPI_INT, receive[2], base,
                                      MPI_INT, comm));
      MPI_CHECK(MPI_Neighbor_alltoallv(send[3], sendcounts, sdispls, MPI_INT,
                                       receive[3], vcounts, vdispls, MPI_INT,
                                       comm));
      MPI_CHECK(MPI_Neighbor_alltoallw(send[4], sendcounts, sdispls_w, stypes,
                                       receive[4], vcounts, rdispls_w, rtypes,
                                       comm));
    } else {
      MPI_Request requests[5];
      MPI_CHECK(MPI_Ineighbor_allgather(send[0], base, MPI_INT, receive[0],
                                        base, MPI_INT, comm, &requests[0]));
      MPI_CHECK(MPI_Ineighbor_allgatherv(send[1], my_v, MPI_INT, receive[1],
                                         recvcounts, rdispls, MPI_INT, comm,
                                         &requests[1]));
      MPI_CHECK(MPI_Ineighbor_alltoall(send[2], base, MPI_INT, receive[2], base,
                                       MPI_INT, comm, &requests[2]));
      MPI_CHECK(MPI_Ineighbor_alltoallv(send[3], sendcounts, sdispls, MPI_INT,
                                        receive[3], vcounts, vdispls, MPI_INT,
                                        comm, &requests[3]));
      MPI_CHECK(MPI_Ineighbor_alltoallw(send[4], sendcounts, sdispls_w, stypes,
                                        receive[4], vcounts, rdispls_w, rtypes,
                                        comm, &requests[4]));
      MPI_CHECK(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));
    }

    const char* mode = nonblocking ? "nonblocking" : "blocking";
    for (int i = 0; i < in; ++i) {
      const int q = n->sources[i];
      const int j = n->source_block[i];
      size_t bytes[5];
      size_t at[5];
      at[0] = (size_t)i * base * 4;
      at[1] = (size_t)rdispls[i] * 4;
      at[2] = (size_t)i * base * 4;
      at[3] = (size_t)vdispls[i] * 4;
      at[4] = (size_t)rdispls_w[i];
      if (q == MPI_PROC_NULL) {
        /* Untouched: nothing came from an edge of a non-periodic grid. */
        bytes[0] = bytes[2] = (size_t)base * 4;
        bytes[1] = bytes[3] = 12;
        bytes[4] = 12;
        for (int c = 0; c < 5; ++c) {
          snprintf(what, sizeof what, "%s %s collective %d, PROC_NULL block %d",
                   topology, mode, c, i);
          check_untouched(receive[c], at[c], at[c] + bytes[c], what, i);
        }
        continue;
      }
      snprintf(what, sizeof what, "%s %s allgather block %d from %d", topology,
               mode, i, q);
      CHECK_PATTERN(receive[0] + at[0], (size_t)base * 4, q,
                    block_key(999, round), what);
      snprintf(what, sizeof what, "%s %s allgatherv block %d from %d", topology,
               mode, i, q);
      bytes[1] = (size_t)recvcounts[i] * 4;
      CHECK_PATTERN(receive[1] + at[1], bytes[1], q, block_key(998, round),
                    what);
      check_untouched(receive[1], at[1] + bytes[1], at[1] + stride, what, i);
      snprintf(what, sizeof what,
               "%s %s alltoall block %d from %d (its block %d)", topology, mode,
               i, q, j);
      CHECK_PATTERN(receive[2] + at[2], (size_t)base * 4, q,
                    block_key(j, round), what);
      snprintf(what, sizeof what,
               "%s %s alltoallv block %d from %d (its block %d)", topology,
               mode, i, q, j);
      bytes[3] = (size_t)vcounts[i] * 4;
      CHECK_PATTERN(receive[3] + at[3], bytes[3], q, block_key(100 + j, round),
                    what);
      check_untouched(receive[3], at[3] + bytes[3], at[3] + stride, what, i);
      snprintf(what, sizeof what,
               "%s %s alltoallw block %d from %d (its block %d)", topology,
               mode, i, q, j);
      bytes[4] = (size_t)vcounts[i] * (size_t)type_size(rtypes[i]);
      CHECK_PATTERN(receive[4] + at[4], bytes[4], q, block_key(200 + j, round),
                    what);
      check_untouched(receive[4], at[4] + bytes[4], at[4] + stride, what, i);
    }
    /* Nothing beyond the last block. */
    snprintf(what, sizeof what, "%s %s, past the last block", topology, mode);
    check_untouched(receive[1], (size_t)in * stride, receive_bytes, what, in);
    check_untouched(receive[0], (size_t)in * base * 4, receive_bytes, what, in);
    free(vcounts);
    free(vdispls);
  }
  for (int c = 0; c < 5; ++c) {
    free(receive[c]);
    free(send[c]);
  }
  free(recvcounts);
  free(rdispls);
  free(sendcounts);
  free(sdispls);
  free(rdispls_w);
  free(sdispls_w);
  free(rtypes);
  free(stypes);
}

/* ---- Cartesian grids ---------------------------------------------------- */

struct Grid {
  int ndims;
  int dims[kMaxDims];
  int periods[kMaxDims];
};

static int grid_size(const struct Grid* g) {
  int size = 1;
  for (int d = 0; d < g->ndims; ++d) size *= g->dims[d];
  return size;
}

/* Row-major reference: the last dimension varies fastest. */
static void reference_coords(const struct Grid* g, int rank, int* coords) {
  for (int d = g->ndims - 1; d >= 0; --d) {
    coords[d] = rank % g->dims[d];
    rank /= g->dims[d];
  }
}
static int reference_rank(const struct Grid* g, const int* coords) {
  int rank = 0;
  for (int d = 0; d < g->ndims; ++d) {
    int c = coords[d];
    if (g->periods[d]) {
      c = ((c % g->dims[d]) + g->dims[d]) % g->dims[d];
    } else if (c < 0 || c >= g->dims[d]) {
      return MPI_PROC_NULL;
    }
    rank = rank * g->dims[d] + c;
  }
  return rank;
}
static int reference_neighbor(const struct Grid* g, int rank, int d, int disp) {
  int coords[kMaxDims];
  reference_coords(g, rank, coords);
  coords[d] += disp;
  return reference_rank(g, coords);
}

static void check_cart_sub(MPI_Comm cart, const struct Grid* g, int me) {
  for (int mask = 0; mask < (1 << g->ndims); ++mask) {
    int remain[kMaxDims];
    for (int d = 0; d < g->ndims; ++d) remain[d] = (mask >> d) & 1;
    MPI_Comm sub;
    MPI_CHECK(MPI_Cart_sub(cart, remain, &sub));
#if defined(MPICH)
    /* MPICH 4.0 gives the zero-dimensional result to rank 0 only (fixed in
     * later MPICH: pmodels/mpich#7832); every process gets its own. */
    if (mask == 0 && sub == MPI_COMM_NULL) continue;
#endif
    CHECK(sub != MPI_COMM_NULL, "Cart_sub(mask %d) gave MPI_COMM_NULL", mask);
    /* Reference: ranks whose dropped coordinates equal ours, in rank order
     * (row-major order of the kept coordinates). */
    int mine[kMaxDims], other[kMaxDims], expected[64], n = 0;
    reference_coords(g, me, mine);
    for (int r = 0; r < grid_size(g); ++r) {
      reference_coords(g, r, other);
      int same = 1;
      for (int d = 0; d < g->ndims; ++d)
        if (!remain[d] && other[d] != mine[d]) same = 0;
      if (same) expected[n++] = r;
    }
    int size, rank, gathered[64];
    MPI_CHECK(MPI_Comm_size(sub, &size));
    MPI_CHECK(MPI_Comm_rank(sub, &rank));
    CHECK(size == n, "Cart_sub(mask %d): size %d, expected %d", mask, size, n);
    MPI_CHECK(MPI_Allgather(&me, 1, MPI_INT, gathered, 1, MPI_INT, sub));
    for (int i = 0; i < n; ++i)
      CHECK(gathered[i] == expected[i],
            "Cart_sub(mask %d): rank %d is grid rank %d, expected %d", mask, i,
            gathered[i], expected[i]);
    int status, ndims = -1, dims[kMaxDims], periods[kMaxDims], coords[kMaxDims];
    MPI_CHECK(MPI_Topo_test(sub, &status));
    CHECK(status == MPI_CART, "Cart_sub result is not Cartesian (%d)", status);
    MPI_CHECK(MPI_Cartdim_get(sub, &ndims));
    MPI_CHECK(MPI_Cart_get(sub, kMaxDims, dims, periods, coords));
    int k = 0;
    for (int d = 0; d < g->ndims; ++d) {
      if (!remain[d]) continue;
      CHECK(dims[k] == g->dims[d] && periods[k] == g->periods[d] &&
                coords[k] == mine[d],
            "Cart_sub(mask %d) dimension %d: dims %d periods %d coords %d",
            mask, k, dims[k], periods[k], coords[k]);
      ++k;
    }
    CHECK(ndims == k, "Cart_sub(mask %d): %d dimensions, expected %d", mask,
          ndims, k);
    MPI_CHECK(MPI_Comm_free(&sub));
  }
}

static void check_grid(const struct Grid* g, const char* name) {
  MPI_Comm cart;
  MPI_CHECK(
      MPI_Cart_create(MPI_COMM_WORLD, g->ndims, g->dims, g->periods, 1, &cart));
  const int size = grid_size(g);
  int map_rank = -5;
  MPI_CHECK(
      MPI_Cart_map(MPI_COMM_WORLD, g->ndims, g->dims, g->periods, &map_rank));
  if (g_rank >= size) {
    CHECK(cart == MPI_COMM_NULL,
          "%s: world rank %d beyond the grid got a communicator", name, g_rank);
#if !defined(OPEN_MPI) /* Open MPI 4.1 answers the rank itself */
    CHECK(map_rank == MPI_UNDEFINED, "%s: Cart_map gave %d beyond the grid",
          name, map_rank);
#endif
    return;
  }
  CHECK(cart != MPI_COMM_NULL, "%s: world rank %d got MPI_COMM_NULL", name,
        g_rank);
  CHECK(map_rank == g_rank, "%s: Cart_map gave %d, expected %d (no reordering)",
        name, map_rank, g_rank);
  int me, status, ndims;
  MPI_CHECK(MPI_Comm_rank(cart, &me));
  CHECK(me == g_rank, "%s: grid rank %d for world rank %d", name, me, g_rank);
  MPI_CHECK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "%s: Topo_test gave %d", name, status);
  MPI_CHECK(MPI_Cartdim_get(cart, &ndims));
  CHECK(ndims == g->ndims, "%s: Cartdim_get gave %d", name, ndims);
  int dims[kMaxDims], periods[kMaxDims], coords[kMaxDims], expected[kMaxDims];
  MPI_CHECK(MPI_Cart_get(cart, kMaxDims, dims, periods, coords));
  reference_coords(g, me, expected);
  for (int d = 0; d < g->ndims; ++d)
    CHECK(dims[d] == g->dims[d] && !periods[d] == !g->periods[d] &&
              coords[d] == expected[d],
          "%s: Cart_get dimension %d: %d %d %d", name, d, dims[d], periods[d],
          coords[d]);
  for (int r = 0; r < size; ++r) {
    MPI_CHECK(MPI_Cart_coords(cart, r, kMaxDims, coords));
    reference_coords(g, r, expected);
    for (int d = 0; d < g->ndims; ++d)
      CHECK(coords[d] == expected[d],
            "%s: Cart_coords(%d)[%d] = %d, expected %d", name, r, d, coords[d],
            expected[d]);
    int back = -1;
    MPI_CHECK(MPI_Cart_rank(cart, coords, &back));
    CHECK(back == r, "%s: Cart_rank(Cart_coords(%d)) = %d", name, r, back);
    /* Periodic dimensions wrap any coordinate. */
    for (int d = 0; d < g->ndims; ++d) {
      if (!g->periods[d]) continue;
      coords[d] += 3 * g->dims[d];
      MPI_CHECK(MPI_Cart_rank(cart, coords, &back));
      CHECK(back == r, "%s: wrapped Cart_rank = %d, expected %d", name, back,
            r);
      coords[d] -= 5 * g->dims[d];
      MPI_CHECK(MPI_Cart_rank(cart, coords, &back));
      CHECK(back == r, "%s: wrapped Cart_rank = %d, expected %d", name, back,
            r);
      coords[d] += 2 * g->dims[d];
    }
  }
  for (int d = 0; d < g->ndims; ++d) {
    for (int disp = -3; disp <= 3; ++disp) {
      int source = -5, dest = -5;
      MPI_CHECK(MPI_Cart_shift(cart, d, disp, &source, &dest));
      CHECK(source == reference_neighbor(g, me, d, -disp) &&
                dest == reference_neighbor(g, me, d, disp),
            "%s: Cart_shift(%d, %d) = (%d, %d), expected (%d, %d)", name, d,
            disp, source, dest, reference_neighbor(g, me, d, -disp),
            reference_neighbor(g, me, d, disp));
    }
  }
  check_cart_sub(cart, g, me);

  /* Neighbours: dimension by dimension, negative then positive; the block
   * sent one way arrives in the receiver's block for the other way. */
  struct Neighbors n;
  n.in = n.out = 2 * g->ndims;
  n.sources = (int*)test_malloc(sizeof(int) * (size_t)(n.in + 1));
  n.destinations = (int*)test_malloc(sizeof(int) * (size_t)(n.in + 1));
  n.source_block = (int*)test_malloc(sizeof(int) * (size_t)(n.in + 1));
  for (int d = 0; d < g->ndims; ++d) {
    n.sources[2 * d] = n.destinations[2 * d] = reference_neighbor(g, me, d, -1);
    n.sources[2 * d + 1] = n.destinations[2 * d + 1] =
        reference_neighbor(g, me, d, 1);
    n.source_block[2 * d] = 2 * d + 1;
    n.source_block[2 * d + 1] = 2 * d;
  }
  /* MPICH 4.0 (alltoallv, alltoallw) and Open MPI 4.1 (the nonblocking
   * forms) pair the blocks of a neighbour met in both directions (a
   * periodic dimension of size 1 or 2) the wrong way round; MPICH's own
   * ring_neighbor_alltoall test is about this. Only minimpi is held to it
   * there. */
  int doubled_neighbors = 0;
  for (int d = 0; d < g->ndims; ++d)
    if (g->periods[d] && g->dims[d] <= 2) doubled_neighbors = 1;
  const int reference_bug = !MINIMPI_ONLY && doubled_neighbors;
  char what[96];
  for (int base = 1; base <= 3001 && !reference_bug; base += 3000) {
    snprintf(what, sizeof what, "%s (base %d)", name, base);
    check_collectives(cart, &n, me, base, what, 0);
  }
  free(n.sources);
  free(n.destinations);
  free(n.source_block);

  /* A duplicate keeps the topology. */
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(cart, &dup));
  MPI_CHECK(MPI_Topo_test(dup, &status));
  CHECK(status == MPI_CART, "%s: dup lost the topology (%d)", name, status);
  MPI_CHECK(MPI_Cartdim_get(dup, &ndims));
  CHECK(ndims == g->ndims, "%s: dup has %d dimensions", name, ndims);
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Comm_free(&cart));
}

static void check_grids(void) {
  struct Grid grids[8];
  const char* names[8];
  int count = 0;
  grids[count] = (struct Grid){1, {g_size}, {1}};
  names[count++] = "1-D periodic ring";
  grids[count] = (struct Grid){1, {g_size}, {0}};
  names[count++] = "1-D open line";
  struct Grid planar = {2, {0, 0}, {1, 0}};
  MPI_CHECK(MPI_Dims_create(g_size, 2, planar.dims));
  grids[count] = planar;
  names[count++] = "2-D grid from Dims_create (periodic x open)";
  const int two = g_size >= 2 ? 2 : 1;
  grids[count] = (struct Grid){3, {two, 1, g_size / two}, {1, 1, 0}};
  names[count++] = "3-D grid with sizes 2 and 1, periodic";
  grids[count] = (struct Grid){2, {1, 1}, {1, 0}};
  names[count++] = "1x1 grid (its own neighbour)";
  if (g_size > 2) {
    grids[count] = (struct Grid){2, {2, (g_size - 1) / 2}, {1, 1}};
    names[count++] = "2-D periodic grid smaller than the job";
  }
  for (int i = 0; i < count; ++i) check_grid(&grids[i], names[i]);

  /* Zero dimensions: one process, a zero-dimensional grid. */
  MPI_Comm zero;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &zero));
  if (g_rank == 0) {
    int size = -1, ndims = -1, rank = -1;
    MPI_CHECK(MPI_Comm_size(zero, &size));
    MPI_CHECK(MPI_Cartdim_get(zero, &ndims));
    MPI_CHECK(MPI_Cart_rank(zero, NULL, &rank));
    CHECK(size == 1 && ndims == 0 && rank == 0,
          "0-D grid: size %d ndims %d rank %d", size, ndims, rank);
    MPI_CHECK(MPI_Comm_free(&zero));
  } else {
    CHECK(zero == MPI_COMM_NULL, "0-D grid: world rank %d got a communicator",
          g_rank);
  }
}

static void check_dims_create(void) {
  /* The standard's examples. */
  int dims[3] = {0, 0, 0};
  MPI_CHECK(MPI_Dims_create(6, 2, dims));
  CHECK(dims[0] == 3 && dims[1] == 2, "Dims_create(6, 2) = %d x %d", dims[0],
        dims[1]);
  dims[0] = dims[1] = 0;
  MPI_CHECK(MPI_Dims_create(7, 2, dims));
  CHECK(dims[0] == 7 && dims[1] == 1, "Dims_create(7, 2) = %d x %d", dims[0],
        dims[1]);
  dims[0] = 0, dims[1] = 3, dims[2] = 0;
  MPI_CHECK(MPI_Dims_create(6, 3, dims));
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 1,
        "Dims_create(6, (0,3,0)) = %d %d %d", dims[0], dims[1], dims[2]);
  /* Any size: the product is right and the free entries do not increase. */
  for (int n = 1; n <= 400; ++n) {
    for (int k = 1; k <= 4; ++k) {
      int d[4] = {0, 0, 0, 0};
      MPI_CHECK(MPI_Dims_create(n, k, d));
      int product = 1;
      for (int i = 0; i < k; ++i) {
        product *= d[i];
        CHECK(i == 0 || d[i] <= d[i - 1], "Dims_create(%d, %d) increases at %d",
              n, k, i);
      }
      CHECK(product == n, "Dims_create(%d, %d): product %d", n, k, product);
    }
  }
#if MINIMPI_ONLY || defined(MPICH)
  /* The balance MPICH computes (and minimpi matches). */
  int five[5] = {0, 0, 0, 0, 0};
  MPI_CHECK(MPI_Dims_create(712656, 5, five));
  CHECK(five[0] == 101 && five[1] == 14 && five[2] == 9 && five[3] == 8 &&
            five[4] == 7,
        "Dims_create(712656, 5) = %d %d %d %d %d", five[0], five[1], five[2],
        five[3], five[4]);
#endif
}

/* ---- Graphs ------------------------------------------------------------- */

static void check_graph(void) {
  /* Node i: i+1 twice, i-1 twice, itself once (a symmetric multigraph). */
  const int n = g_size;
  int* index = (int*)test_malloc(sizeof(int) * (size_t)n);
  int* edges = (int*)test_malloc(sizeof(int) * (size_t)(5 * n));
  int e = 0;
  for (int i = 0; i < n; ++i) {
    edges[e++] = (i + 1) % n;
    edges[e++] = (i + n - 1) % n;
    edges[e++] = i;
    edges[e++] = (i + 1) % n;
    edges[e++] = (i + n - 1) % n;
    index[i] = e;
  }
  MPI_Comm graph;
  MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
  int status, nnodes, nedges, count, me, map_rank;
  MPI_CHECK(MPI_Comm_rank(graph, &me));
  MPI_CHECK(MPI_Topo_test(graph, &status));
  CHECK(status == MPI_GRAPH, "Graph_create: Topo_test gave %d", status);
  MPI_CHECK(MPI_Graphdims_get(graph, &nnodes, &nedges));
  CHECK(nnodes == n && nedges == 5 * n, "Graphdims_get: %d nodes %d edges",
        nnodes, nedges);
  int* got_index = (int*)test_malloc(sizeof(int) * (size_t)n);
  int* got_edges = (int*)test_malloc(sizeof(int) * (size_t)(5 * n));
  MPI_CHECK(MPI_Graph_get(graph, n, 5 * n, got_index, got_edges));
  for (int i = 0; i < n; ++i)
    CHECK(got_index[i] == index[i], "Graph_get index[%d]", i);
  for (int i = 0; i < 5 * n; ++i)
    CHECK(got_edges[i] == edges[i], "Graph_get edges[%d]", i);
  for (int node = 0; node < n; ++node) {
    int neighbors[5];
    MPI_CHECK(MPI_Graph_neighbors_count(graph, node, &count));
    CHECK(count == 5, "Graph_neighbors_count(%d) = %d", node, count);
    MPI_CHECK(MPI_Graph_neighbors(graph, node, 5, neighbors));
    for (int k = 0; k < 5; ++k)
      CHECK(neighbors[k] == edges[5 * node + k], "Graph_neighbors(%d)[%d] = %d",
            node, k, neighbors[k]);
  }
  MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &map_rank));
  CHECK(map_rank == g_rank, "Graph_map gave %d", map_rank);

  struct Neighbors nb;
  nb.in = nb.out = 5;
  nb.sources = edges + 5 * me;
  nb.destinations = edges + 5 * me;
  nb.source_block = (int*)test_malloc(sizeof(int) * 5);
  int* offsets;
  int* all = gather_destinations(graph, &nb, &offsets);
  pair_by_occurrence(&nb, me, all, offsets);
  check_collectives(graph, &nb, me, 2, "graph with repeated edges", 0);
  check_collectives(graph, &nb, me, 2500, "graph with repeated edges", 0);
  free(all);
  free(offsets);
  free(nb.source_block);

  /* A graph on fewer nodes: the rest get MPI_COMM_NULL. */
  if (n > 1) {
    MPI_Comm small;
    int small_index[1] = {1}, small_edges[1] = {0};
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, small_index, small_edges, 0,
                               &small));
    CHECK((g_rank == 0) == (small != MPI_COMM_NULL),
          "1-node graph: world rank %d", g_rank);
    if (small != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&small));
  }
  MPI_CHECK(MPI_Comm_free(&graph));
  free(got_index);
  free(got_edges);
  free(index);
  free(edges);
}

/* Sorts (rank, weight) pairs, to compare neighbour lists as multisets. */
static void sort_pairs(int* ranks, int* weights, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i;
         j > 0 && (ranks[j - 1] > ranks[j] ||
                   (ranks[j - 1] == ranks[j] && weights[j - 1] > weights[j]));
         --j) {
      int t = ranks[j];
      ranks[j] = ranks[j - 1];
      ranks[j - 1] = t;
      t = weights[j];
      weights[j] = weights[j - 1];
      weights[j - 1] = t;
    }
}

/* Checks a distributed graph's neighbours and runs the collectives on it.
 * `expected_*` list this process's edges (any order when `any_order`). */
static void check_dist_graph(MPI_Comm comm, int weighted,
                             const int* expected_sources,
                             const int* expected_sweights, int in,
                             const int* expected_dests,
                             const int* expected_dweights, int out,
                             int any_order, const char* name) {
  int status, indegree, outdegree, is_weighted, me;
  MPI_CHECK(MPI_Comm_rank(comm, &me));
  MPI_CHECK(MPI_Topo_test(comm, &status));
  CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test gave %d", name, status);
  MPI_CHECK(MPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree,
                                           &is_weighted));
  CHECK(indegree == in && outdegree == out && !is_weighted == !weighted,
        "%s: degrees %d/%d weighted %d, expected %d/%d %d", name, indegree,
        outdegree, is_weighted, in, out, weighted);
  int sources[64], sweights[64], dests[64], dweights[64];
  MPI_CHECK(MPI_Dist_graph_neighbors(
      comm, in, sources, weighted ? sweights : MPI_UNWEIGHTED, out, dests,
      weighted ? dweights : MPI_UNWEIGHTED));
  int want_s[64], want_sw[64], want_d[64], want_dw[64], got_s[64], got_sw[64],
      got_d[64], got_dw[64];
  for (int i = 0; i < in; ++i) {
    want_s[i] = expected_sources[i];
    want_sw[i] = weighted ? expected_sweights[i] : 0;
    got_s[i] = sources[i];
    got_sw[i] = weighted ? sweights[i] : 0;
  }
  for (int i = 0; i < out; ++i) {
    want_d[i] = expected_dests[i];
    want_dw[i] = weighted ? expected_dweights[i] : 0;
    got_d[i] = dests[i];
    got_dw[i] = weighted ? dweights[i] : 0;
  }
  if (any_order) {
    sort_pairs(want_s, want_sw, in);
    sort_pairs(got_s, got_sw, in);
    sort_pairs(want_d, want_dw, out);
    sort_pairs(got_d, got_dw, out);
  }
  for (int i = 0; i < in; ++i)
    CHECK(got_s[i] == want_s[i] && got_sw[i] == want_sw[i],
          "%s: source %d is %d (weight %d), expected %d (weight %d)", name, i,
          got_s[i], got_sw[i], want_s[i], want_sw[i]);
  for (int i = 0; i < out; ++i)
    CHECK(got_d[i] == want_d[i] && got_dw[i] == want_dw[i],
          "%s: destination %d is %d (weight %d), expected %d (weight %d)", name,
          i, got_d[i], got_dw[i], want_d[i], want_dw[i]);

  /* The collectives follow the order Dist_graph_neighbors reports. */
  struct Neighbors nb;
  nb.in = in;
  nb.out = out;
  nb.sources = sources;
  nb.destinations = dests;
  nb.source_block = (int*)test_malloc(sizeof(int) * (size_t)(in + 1));
  int* offsets;
  int* all = gather_destinations(comm, &nb, &offsets);
  pair_by_occurrence(&nb, me, all, offsets);
  check_collectives(comm, &nb, me, 3, name, 0);
  check_collectives(comm, &nb, me, 2100, name, 0);
  free(all);
  free(offsets);
  free(nb.source_block);
}

static void check_dist_graphs(void) {
  const int n = g_size, r = g_rank;
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  /* Adjacent: from the left twice and the right once; to the right twice
   * and the left once (so each pair agrees on the count). Weights name the
   * edge. */
  {
    int sources[3] = {left, left, right},
        sweights[3] = {left * 10 + r, left * 10 + r + 1, right * 10 + r};
    int dests[3] = {right, right, left},
        dweights[3] = {r * 10 + right, r * 10 + right + 1, r * 10 + left};
    MPI_Comm comm;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources,
                                             sweights, 3, dests, dweights,
                                             MPI_INFO_NULL, 0, &comm));
    check_dist_graph(comm, 1, sources, sweights, 3, dests, dweights, 3, 0,
                     "adjacent weighted ring");
    MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Dist_graph_create_adjacent(
        MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, dests, MPI_UNWEIGHTED,
        MPI_INFO_NULL, 0, &comm));
    check_dist_graph(comm, 0, sources, NULL, 3, dests, NULL, 3, 0,
                     "adjacent unweighted ring");
    MPI_CHECK(MPI_Comm_free(&comm));
    /* No edges at all. */
    MPI_CHECK(MPI_Dist_graph_create_adjacent(
        MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
        MPI_INFO_NULL, 0, &comm));
    check_dist_graph(comm, 1, NULL, NULL, 0, NULL, NULL, 0, 0,
                     "adjacent, no edges");
    MPI_CHECK(MPI_Comm_free(&comm));
  }
  /* General: process p specifies edge (p+1 -> p) and edge (p -> p+2)
   * twice, on behalf of others too; process 0 adds a self loop for
   * everyone. Everyone can list every edge, so each knows its own. */
  for (int weighted = 0; weighted < 2; ++weighted) {
    int sources[4], degrees[4], dests[64], weights[64], k = 0, e = 0;
    sources[k] = (r + 1) % n;
    degrees[k++] = 1;
    dests[e] = r;
    weights[e++] = 1000 + r;
    sources[k] = r;
    degrees[k++] = 2;
    dests[e] = (r + 2) % n;
    weights[e++] = 2000 + r;
    dests[e] = (r + 2) % n;
    weights[e++] = 3000 + r;
    int self_sources[64], self_degrees[64];
    MPI_Comm comm;
    if (r == 0) {
      /* Self loops in a second call's worth of edges: merged here. */
      for (int p = 0; p < n && p < 60; ++p) {
        self_sources[p] = p;
        self_degrees[p] = 1;
      }
    }
    int all_sources[70], all_degrees[70], all_dests[128], all_weights[128],
        ns = 0, nd = 0;
    for (int i = 0; i < k; ++i) {
      all_sources[ns] = sources[i];
      all_degrees[ns++] = degrees[i];
    }
    for (int i = 0; i < e; ++i) {
      all_dests[nd] = dests[i];
      all_weights[nd++] = weights[i];
    }
    if (r == 0) {
      for (int p = 0; p < n && p < 60; ++p) {
        all_sources[ns] = self_sources[p];
        all_degrees[ns++] = self_degrees[p];
        all_dests[nd] = p;
        all_weights[nd++] = 4000 + p;
      }
    }
    MPI_CHECK(MPI_Dist_graph_create(
        MPI_COMM_WORLD, ns, all_sources, all_degrees, all_dests,
        weighted ? all_weights : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm));
    /* Reference: every edge any process specified, kept where it touches
     * this process. */
    int in_s[64], in_w[64], out_d[64], out_w[64], in = 0, out = 0;
    for (int p = 0; p < n; ++p) {
      const int edge_src[3] = {(p + 1) % n, p, p};
      const int edge_dst[3] = {p, (p + 2) % n, (p + 2) % n};
      const int edge_w[3] = {1000 + p, 2000 + p, 3000 + p};
      for (int x = 0; x < 3; ++x) {
        if (edge_dst[x] == r) {
          in_s[in] = edge_src[x];
          in_w[in++] = edge_w[x];
        }
        if (edge_src[x] == r) {
          out_d[out] = edge_dst[x];
          out_w[out++] = edge_w[x];
        }
      }
    }
    in_s[in] = r;
    in_w[in++] = 4000 + r;
    out_d[out] = r;
    out_w[out++] = 4000 + r;
    check_dist_graph(
        comm, weighted, in_s, in_w, in, out_d, out_w, out, 1,
        weighted ? "general weighted graph" : "general unweighted graph");
    MPI_CHECK(MPI_Comm_free(&comm));
  }
}

/* Derived datatypes in neighbourhood collectives, on an open line: blocks
 * sent as a strided vector arrive in contiguous doubles and in the same
 * vector (whose gaps must stay untouched), blocking and nonblocking, and
 * in alltoallw with a different datatype per neighbour. */
static double line_value(int sender, int block, int k) {
  return sender * 1000.0 + block * 100.0 + k + 0.25;
}

static void check_derived_datatypes(void) {
  int dims[1] = {g_size}, periods[1] = {0};
  MPI_Comm line;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line));
  int left, right;
  MPI_CHECK(MPI_Cart_shift(line, 0, 1, &left, &right));
  const int neighbors[2] = {left, right};
  /* Three doubles, every other one: extent five doubles. */
  MPI_Datatype strided;
  MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided));
  MPI_CHECK(MPI_Type_commit(&strided));
  double send[10], contiguous[6], vectors[10], mixed[8];
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < 5; ++k)
      send[5 * j + k] = k % 2 ? -1.0 : line_value(g_rank, j, k / 2);
  const double kSentinel = -777.0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 10; ++i) vectors[i] = kSentinel;
    for (int i = 0; i < 6; ++i) contiguous[i] = kSentinel;
    for (int i = 0; i < 8; ++i) mixed[i] = kSentinel;
    /* alltoallw: to the left a vector, to the right three doubles; the
     * receiver takes what comes from the left as doubles and from the
     * right as a vector, so each pair's signatures match. */
    int wcounts[2] = {1, 3};
    MPI_Aint sdispls[2] = {0, 5 * (MPI_Aint)sizeof(double)};
    MPI_Datatype stypes[2] = {strided, MPI_DOUBLE};
    int rcounts[2] = {3, 1};
    MPI_Aint rdispls[2] = {0, 3 * (MPI_Aint)sizeof(double)};
    MPI_Datatype rtypes[2] = {MPI_DOUBLE, strided};
    /* The right block of the send buffer as three contiguous doubles. */
    double send_w[8];
    for (int k = 0; k < 5; ++k) send_w[k] = send[k];
    for (int k = 0; k < 3; ++k) send_w[5 + k] = line_value(g_rank, 1, k);
    if (round == 0) {
      MPI_CHECK(MPI_Neighbor_alltoall(send, 1, strided, contiguous, 3,
                                      MPI_DOUBLE, line));
      MPI_CHECK(
          MPI_Neighbor_alltoall(send, 1, strided, vectors, 1, strided, line));
      MPI_CHECK(MPI_Neighbor_alltoallw(send_w, wcounts, sdispls, stypes, mixed,
                                       rcounts, rdispls, rtypes, line));
    } else {
      MPI_Request requests[3];
      MPI_CHECK(MPI_Ineighbor_alltoall(send, 1, strided, contiguous, 3,
                                       MPI_DOUBLE, line, &requests[0]));
      MPI_CHECK(MPI_Ineighbor_alltoall(send, 1, strided, vectors, 1, strided,
                                       line, &requests[1]));
      MPI_CHECK(MPI_Ineighbor_alltoallw(send_w, wcounts, sdispls, stypes, mixed,
                                        rcounts, rdispls, rtypes, line,
                                        &requests[2]));
      MPI_CHECK(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
    }
    for (int i = 0; i < 2; ++i) {
      const int q = neighbors[i];
      /* Our block i came from q's block in the opposite direction. */
      const int j = 1 - i;
      for (int k = 0; k < 3; ++k) {
        const double want =
            q == MPI_PROC_NULL ? kSentinel : line_value(q, j, k);
        CHECK(contiguous[3 * i + k] == want,
              "vector into doubles, round %d, block %d item %d: %g, expected "
              "%g",
              round, i, k, contiguous[3 * i + k], want);
        CHECK(vectors[5 * i + 2 * k] == want,
              "vector into vector, round %d, block %d item %d: %g, expected %g",
              round, i, k, vectors[5 * i + 2 * k], want);
      }
      CHECK(vectors[5 * i + 1] == kSentinel && vectors[5 * i + 3] == kSentinel,
            "vector into vector wrote into the gaps of block %d", i);
    }
    /* alltoallw: from the left (sent to its right: three doubles of its
     * block 1) into doubles at 0..2; from the right (its vector, block 0)
     * into a vector at 3, 5, 7. */
    for (int k = 0; k < 3; ++k) {
      const double from_left =
          left == MPI_PROC_NULL ? kSentinel : line_value(left, 1, k);
      const double from_right =
          right == MPI_PROC_NULL ? kSentinel : line_value(right, 0, k);
      CHECK(mixed[k] == from_left && mixed[3 + 2 * k] == from_right,
            "alltoallw with derived types, round %d, item %d: %g %g, expected "
            "%g %g",
            round, k, mixed[k], mixed[3 + 2 * k], from_left, from_right);
    }
    CHECK(mixed[4] == kSentinel && mixed[6] == kSentinel,
          "alltoallw wrote into the gaps of the vector block");
  }
  MPI_CHECK(MPI_Type_free(&strided));
  MPI_CHECK(MPI_Comm_free(&line));
}

/* MPI_BOTTOM with absolute addresses as displacements, the standard's way
 * to name scattered memory, on a periodic ring: to the left 5 ints, to the
 * right 3 doubles, each block (and each receive block) a separate
 * allocation with guard bytes after it; every byte is checked. */
static int bottom_int(int sender, int k) { return sender * 7919 + k * 31 + 5; }
static double bottom_double(int sender, int k) { return sender * 10.0 + k + 0.125; }

static void check_bottom_alltoallw(void) {
  enum { kInts = 5, kDoubles = 3, kTail = 16 };
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Comm ring;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  int left, right;
  MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
  int* to_left = test_malloc(kInts * sizeof(int));
  double* to_right = test_malloc(kDoubles * sizeof(double));
  unsigned char* from_left = test_malloc(kDoubles * sizeof(double) + kTail);
  unsigned char* from_right = test_malloc(kInts * sizeof(int) + kTail);
  for (int k = 0; k < kInts; ++k) to_left[k] = bottom_int(g_rank, k);
  for (int k = 0; k < kDoubles; ++k) to_right[k] = bottom_double(g_rank, k);
  /* What must arrive, as bytes: the left neighbour's doubles (it sent them
   * to its right) and the right neighbour's ints. */
  double want_doubles[kDoubles];
  int want_ints[kInts];
  for (int k = 0; k < kDoubles; ++k) want_doubles[k] = bottom_double(left, k);
  for (int k = 0; k < kInts; ++k) want_ints[k] = bottom_int(right, k);
  int scounts[2] = {kInts, kDoubles}, rcounts[2] = {kDoubles, kInts};
  MPI_Datatype stypes[2] = {MPI_INT, MPI_DOUBLE}, rtypes[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Aint sdispls[2], rdispls[2];
  MPI_CHECK(MPI_Get_address(to_left, &sdispls[0]));
  MPI_CHECK(MPI_Get_address(to_right, &sdispls[1]));
  MPI_CHECK(MPI_Get_address(from_left, &rdispls[0]));
  MPI_CHECK(MPI_Get_address(from_right, &rdispls[1]));
  for (int round = 0; round < 2; ++round) {
    memset(from_left, kGuard, kDoubles * sizeof(double) + kTail);
    memset(from_right, kGuard, kInts * sizeof(int) + kTail);
    if (round == 0) {
      MPI_CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM,
                                       rcounts, rdispls, rtypes, ring));
    } else {
      MPI_Request request;
      MPI_CHECK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM,
                                        rcounts, rdispls, rtypes, ring, &request));
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    const char* call = round == 0 ? "Neighbor_alltoallw" : "Ineighbor_alltoallw";
    const unsigned char* want_left = (const unsigned char*)want_doubles;
    for (size_t b = 0; b < kDoubles * sizeof(double); ++b)
      CHECK(from_left[b] == want_left[b],
            "%s from MPI_BOTTOM: byte %zu from the left (rank %d) is 0x%02x, expected 0x%02x",
            call, b, left, from_left[b], want_left[b]);
    const unsigned char* want_right = (const unsigned char*)want_ints;
    for (size_t b = 0; b < kInts * sizeof(int); ++b)
      CHECK(from_right[b] == want_right[b],
            "%s from MPI_BOTTOM: byte %zu from the right (rank %d) is 0x%02x, expected 0x%02x",
            call, b, right, from_right[b], want_right[b]);
    check_untouched(from_left, kDoubles * sizeof(double), kDoubles * sizeof(double) + kTail,
                    "after the block from the left (MPI_BOTTOM)", 0);
    check_untouched(from_right, kInts * sizeof(int), kInts * sizeof(int) + kTail,
                    "after the block from the right (MPI_BOTTOM)", 1);
  }
  free(to_left);
  free(to_right);
  free(from_left);
  free(from_right);
  MPI_CHECK(MPI_Comm_free(&ring));
}

/* Without a topology, neighbourhood collectives are MPI_ERR_TOPOLOGY. */
static void check_no_topology(void) {
  MPI_Comm plain;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &plain));
  MPI_CHECK(MPI_Comm_set_errhandler(plain, MPI_ERRORS_RETURN));
#if defined(OPEN_MPI) /* Open MPI 4.1 raises it on MPI_COMM_WORLD's handler */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
#endif
  int status = -1, x = 0, error_class = -1;
  MPI_CHECK(MPI_Topo_test(plain, &status));
  CHECK(status == MPI_UNDEFINED, "Topo_test without a topology gave %d",
        status);
  int rc = MPI_Neighbor_allgather(&x, 1, MPI_INT, &x, 1, MPI_INT, plain);
  MPI_Error_class(rc, &error_class);
#if defined(OPEN_MPI) /* which returns MPI_ERR_INTERN after raising it */
  CHECK(rc != MPI_SUCCESS, "Neighbor_allgather without a topology succeeded");
#else
  CHECK(error_class == MPI_ERR_TOPOLOGY,
        "Neighbor_allgather without a topology: class %d", error_class);
#endif
#if defined(OPEN_MPI)
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
#endif
  MPI_CHECK(MPI_Comm_free(&plain));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  CHECK(g_size <= 60, "at most 60 ranks");
  check_dims_create();
  check_grids();
  check_graph();
  check_dist_graphs();
  check_derived_datatypes();
  check_bottom_alltoallw();
  check_no_topology();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("topology", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
