/* A lattice QCD Dslash proxy: the halo exchange of a multithreaded
 * Wilson-Dslash, driven from OpenMP threads in four ways.
 *
 * After Sridharan, Dinan and Kalamkar, "Enabling efficient multithreaded MPI
 * communication through a library-based implementation of MPI endpoints"
 * (SC14). Their Listings 2 and 3 give every thread that owns a halo face an
 * endpoint of its own; their Table I splits the Dslash time into compute,
 * pack+post, wait+unpack and total. This program measures those columns.
 *
 * Plain C11, MPI and OpenMP, so the same source builds against any MPI
 * library: apps/dslash/dslash_compare.sh builds it with minimpi, MPICH and
 * Open MPI. A mode a library cannot run (endpoints outside minimpi,
 * partitioned before MPI 4, thread modes without MPI_THREAD_MULTIPLE) is
 * reported unavailable, which is not an error.
 *
 * The operator. A 4-D periodic lattice X x Y x Z x T carries gauge links
 * U_mu(x) (3x3 complex, direction mu = 0..3 for X, Y, Z, T) and a spinor
 * field psi(x) (4 spins x 3 colours). Even-odd preconditioning: the hopping
 * term maps the even sites' psi to the odd sites,
 *   out(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu)
 *                   + (1 + gamma_mu) U_mu(x-mu)^dagger psi(x-mu) ]
 * for every odd x, with the gamma matrices of the DeGrand-Rossi basis.
 * 1 -/+ gamma_mu has rank 2: a spinor projected with it is determined by
 * two of its spins (a half-spinor, 2 x 3 complex), and that is what goes
 * over the wire. Links and psi are not physical (U need not be unitary):
 * each number is a hash of its GLOBAL site, field and component, so any
 * rank can compute any site's value, and every mode and rank count computes
 * the same result.
 *
 * Decomposition. Ranks form a 1 x 1 x Pz x Pt grid (Pz the largest divisor
 * of the rank count not above its square root: 1 -> 1x1, 2 -> 1x2,
 * 4 -> 2x2, 8 -> 2x4), so each rank owns X x Y x Z/Pz x T/Pt sites.
 * A rank has 8 faces, f = 2*mu for +mu (the slice x_mu = L_mu - 1) and
 * f = 2*mu + 1 for -mu (x_mu = 0), and exchanges all 8 through MPI in
 * every mode, even where the neighbour across a face is the rank itself
 * (X and Y always, Z and T with one rank there): 8 sends and 8 receives
 * per rank and iteration at any rank count. Face f sends what the
 * neighbour across it needs and receives what its own odd sites need:
 *   +mu sends U_mu(y)^dagger (1 + gamma_mu) psi(y) of its even sites y (the
 *       neighbour's backward term, the link applied by its owner, as real
 *       codes do) and receives (1 - gamma_mu) psi from the neighbour's -mu
 *       face, which unpacking multiplies by U_mu(x) and expands to 4 spins;
 *   -mu sends (1 - gamma_mu) psi(y) and receives the neighbour's +mu
 *       message, which unpacking expands to 4 spins.
 * A message from face f lands on face f^1 of the neighbour, with tag f^1
 * (the receiving face); a face's sites are numbered (its "slots") by their
 * other three coordinates, the same on both sides.
 *
 * One iteration, in every mode, is four phases, each ended by a barrier of
 * the rank's threads, where thread 0 takes the time (the Table I columns):
 *   pack+post     pack the 8 faces' half-spinors, post sends and receives
 *   interior      compute the odd sites that need no halo
 *   wait+unpack   complete the messages and unpack the received faces
 *   boundary      compute the odd sites on a face
 * compute = interior + boundary, comm = pack+post + wait+unpack, total =
 * all four. The modes differ in who calls MPI and on which communicator:
 *   master       all threads pack; the master thread posts all 16
 *                MPI_Isend/MPI_Irecv on MPI_COMM_WORLD; after the interior
 *                it MPI_Waitalls them; all threads unpack (the classic
 *                funneled baseline)
 *   threads      face f belongs to thread f mod T (T = OpenMP threads; with
 *                more than 8, the others only compute): the owner packs
 *                its face, posts its own send and receive on the shared
 *                MPI_COMM_WORLD, waits for them itself and unpacks
 *   endpoints    like threads, but face f's messages go through handle f of
 *                an endpoints communicator made once by
 *                MPIX_Comm_create_endpoints(MPI_COMM_WORLD, 8, ...) (a
 *                minimpi extension): endpoint f of rank r is rank 8*r + f,
 *                and sends to / receives from endpoint f^1 of the neighbour
 *   partitioned  one MPI_Psend_init/MPI_Precv_init pair per face, made once,
 *                with one partition per thread: MPI_Startall, then thread p
 *                packs slice p of every face and marks it with MPI_Pready;
 *                after the interior it polls MPI_Parrived for slice p of
 *                every face and unpacks it; then the master thread
 *                completes all 16 requests with MPI_Waitall
 *
 * The check. Each rank also computes out(x) for its odd sites directly from
 * the global fields (full 4x4 gamma matrices, global periodic indexing, no
 * halos, no MPI) and compares every iteration of every mode with it, site
 * by site: the largest difference of a real or imaginary part over the
 * largest part of the reference (max_rel_diff) must stay below 1e-12.
 * Before each iteration (untimed) the receive buffers, unpacked halos and
 * out are set to NaN, so a message that never came cannot hide behind the
 * previous iteration's data; then the ranks meet in an MPI_Barrier.
 * The checksum is the sum over all odd sites of
 * (1 + global site index mod 4) * |out(x)|^2, each site's term rounded to
 * a multiple of 2^-24 and added as an integer: integer addition does not
 * depend on order, so the checksum is the same bit for bit at every rank
 * count, in every mode and with every library (built with one compiler and
 * the same flags). The distributed and the reference checksums may differ
 * by one unit (2^-24) per site at most.
 *
 *   usage: dslash [options]       (threads: OMP_NUM_THREADS)
 *     --mode LIST       master, threads, endpoints, partitioned, comma
 *                       separated, or all (default all)
 *     --lattice XxYxZxT global lattice (default 8x8x8x16); every extent
 *                       and every local extent must be even
 *     --iters N         timed iterations per mode (default 3)
 *     --warmup N        untimed iterations before them (default 1)
 *
 * Output (rank 0): '#' header lines; one line per mode,
 *   mode=M status=PASS|FAIL checksum=%.15e reference=%.15e max_rel_diff=%.3e
 *   mode=M status=unavailable reason=R
 * then a markdown table, times in microseconds per iteration (each rank's
 * mean over the timed iterations, then the maximum over ranks, column by
 * column),
 *   | mode | compute_us | pack_post_us | wait_unpack_us | comm_us | total_us |
 * then, when several modes ran, one line per mode against the first,
 *   ratio mode=M base=B comm=%.3f total=%.3f
 * and last PASS, or FAIL and the failed modes (exit status 1). Bad options
 * or a lattice the ranks cannot split exit with status 2.
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex Complex;
/* A gauge link U_mu(x): [colour][colour]. */
typedef struct {
  Complex c[3][3];
} Link;
/* [spin][colour] */
typedef struct {
  Complex s[4][3];
} Spinor;
/* A projected spinor: its spins 0 and 1 (see Project). */
typedef struct {
  Complex s[2][3];
} HalfSpinor;
enum { kHalfSpinorDoubles = sizeof(HalfSpinor) / sizeof(double) };

enum { kDims = 4, kFaces = 8 };
static const char kDimName[kDims] = {'X', 'Y', 'Z', 'T'};

enum Mode { kMaster, kThreads, kEndpoints, kPartitioned, kModes };
static const char* const kModeNames[kModes] = {"master", "threads", "endpoints",
                                               "partitioned"};

/* The Table I columns, as printed. */
enum Column { kCompute, kPackPost, kWaitUnpack, kComm, kTotal, kColumns };
static const char* const kColumnNames[kColumns] = {
    "compute_us", "pack_post_us", "wait_unpack_us", "comm_us", "total_us"};

static const double kMaxRelDiff = 1e-12;
static const double kChecksumUnit = 0x1.0p-24;

/* gamma_mu in the DeGrand-Rossi basis (MILC, Chroma, QUDA), mu = X, Y, Z, T. */
static const Complex kGamma[kDims][4][4] = {
    {{0, 0, 0, I}, {0, 0, I, 0}, {0, -I, 0, 0}, {-I, 0, 0, 0}},
    {{0, 0, 0, -1}, {0, 0, 1, 0}, {0, 1, 0, 0}, {-1, 0, 0, 0}},
    {{0, 0, I, 0}, {0, 0, 0, -I}, {-I, 0, 0, 0}, {0, I, 0, 0}},
    {{0, 0, 1, 0}, {0, 0, 0, 1}, {1, 0, 0, 0}, {0, 1, 0, 0}},
};
/* Each row of each gamma_mu has one nonzero entry, kGamma[mu][a][gamma_col
 * [mu][a]] = gamma_phase[mu][a], and it pairs spins 0,1 with spins 2,3:
 * what the half-spinor code uses (filled from kGamma by InitGamma). */
static int gamma_col[kDims][4];
static Complex gamma_phase[kDims][4];

/* One face of the local lattice: its slots, its messages, its halo. */
typedef struct {
  int slots;        /* sites of one parity on the face */
  int part_slots;   /* slots per partition: ceil(slots / threads) */
  int* send_site;   /* slot -> even site packed into the message */
  int* recv_site;   /* slot -> odd site the received data belongs to */
  HalfSpinor* send; /* outgoing message, part_slots * threads slots */
  HalfSpinor* recv; /* incoming message, as long */
  Spinor* halo;     /* unpacked: the term each recv_site gets */
} Face;

/* This rank's part of the lattice. Sites are numbered x = x0 + L0*(x1 +
 * L1*(x2 + L2*x3)) in local coordinates; since L0 is even, x/2 numbers the
 * sites of one parity, which is how psi (even) and out (odd) are stored. */
typedef struct {
  int global[kDims], local[kDims], origin[kDims]; /* extents, first site */
  int grid[kDims];                                /* ranks per dimension */
  int stride[kDims];                              /* site index strides */
  int volume;                                     /* local sites */
  int neighbour[kFaces];                          /* rank across each face */
  int threads;                                    /* OpenMP threads */
  Link* link[kDims];                              /* U_mu at every local site */
  Spinor* psi;                                    /* input, even sites */
  Spinor* out;                                    /* result, odd sites */
  int *interior, interior_sites; /* odd sites that need no halo */
  int *boundary, boundary_sites; /* odd sites on at least one face */
  Face face[kFaces];
} Domain;

typedef struct {
  int global[kDims];
  int iters, warmup;
  int run[kModes]; /* which modes --mode asked for */
} Options;

/* ---- small helpers ---- */

static void* Allocate(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size);
  if (!p) {
    fprintf(stderr, "dslash: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

static void FillNaN(void* p, size_t bytes) {
  double* d = p;
  for (size_t i = 0; i < bytes / sizeof(double); ++i) d[i] = NAN;
}

static void InitGamma(void) {
  for (int mu = 0; mu < kDims; ++mu) {
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        if (kGamma[mu][a][b] != 0) {
          gamma_col[mu][a] = b;
          gamma_phase[mu][a] = kGamma[mu][a][b];
        }
      }
    }
  }
}

/* ---- the deterministic fields ---- */

static uint64_t Mix(uint64_t z) { /* splitmix64's finaliser */
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Global site g's number in the global lattice, x fastest. */
static int GlobalIndex(const int global[kDims], const int g[kDims]) {
  return g[0] + global[0] * (g[1] + global[1] * (g[2] + global[2] * g[3]));
}

/* A number in [-1, 1) for component `component` of field `field` (0..3:
 * U_mu, 4: psi) at global site g. */
static double FieldValue(const int global[kDims], const int g[kDims], int field,
                         int component) {
  uint64_t site = (uint64_t)GlobalIndex(global, g);
  uint64_t h = Mix(Mix(site * 8 + (uint64_t)field) + (uint64_t)component);
  return (double)(h >> 11) * 0x1.0p-52 - 1.0;
}

static void GaugeLink(const int global[kDims], const int g[kDims], int mu,
                      Link* u) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      int k = 2 * (3 * i + j);
      u->c[i][j] =
          FieldValue(global, g, mu, k) + I * FieldValue(global, g, mu, k + 1);
    }
  }
}

static void SpinorField(const int global[kDims], const int g[kDims],
                        Spinor* psi) {
  for (int s = 0; s < 4; ++s) {
    for (int c = 0; c < 3; ++c) {
      int k = 2 * (3 * s + c);
      psi->s[s][c] =
          FieldValue(global, g, 4, k) + I * FieldValue(global, g, 4, k + 1);
    }
  }
}

/* ---- the distributed operator ---- */

static void Coords(const Domain* d, int x, int c[kDims]) {
  for (int mu = 0; mu < kDims; ++mu) {
    c[mu] = x % d->local[mu];
    x /= d->local[mu];
  }
}

static void GlobalCoords(const Domain* d, int x, int g[kDims]) {
  Coords(d, x, g);
  for (int mu = 0; mu < kDims; ++mu) g[mu] += d->origin[mu];
}

/* Parity is that of the global coordinates. */
static int IsOdd(const Domain* d, int x) {
  int g[kDims];
  GlobalCoords(d, x, g);
  return (g[0] + g[1] + g[2] + g[3]) & 1;
}

/* The local coordinate of face f's slice in its dimension. */
static int FaceSlice(const Domain* d, int f) {
  return f % 2 == 0 ? d->local[f / 2] - 1 : 0;
}

/* A site's slot on a face of dimension mu: its other three coordinates,
 * lexicographically (the lowest first), halved, since the first of them
 * has an even extent and a slot holds one parity. */
static int Slot(const Domain* d, const int c[kDims], int mu) {
  int s = 0;
  for (int nu = kDims - 1; nu >= 0; --nu) {
    if (nu != mu) s = s * d->local[nu] + c[nu];
  }
  return s / 2;
}

/* (1 + sign * gamma_mu) psi, as its spins 0 and 1 (which determine the
 * other two, see Reconstruct). */
static void Project(const Spinor* psi, int mu, int sign, HalfSpinor* h) {
  for (int a = 0; a < 2; ++a) {
    Complex phase = sign * gamma_phase[mu][a];
    for (int c = 0; c < 3; ++c) {
      h->s[a][c] = psi->s[a][c] + phase * psi->s[gamma_col[mu][a]][c];
    }
  }
}

/* The full spinor (1 + sign * gamma_mu) v from its spins 0 and 1 in h: spin
 * b = 2, 3 of it is sign * gamma_phase[mu][b] times spin gamma_col[mu][b],
 * because gamma_mu squares to 1. */
static void Reconstruct(const HalfSpinor* h, int mu, int sign, Spinor* out) {
  for (int c = 0; c < 3; ++c) {
    out->s[0][c] = h->s[0][c];
    out->s[1][c] = h->s[1][c];
  }
  for (int b = 2; b < 4; ++b) {
    Complex phase = sign * gamma_phase[mu][b];
    for (int c = 0; c < 3; ++c) {
      out->s[b][c] = phase * h->s[gamma_col[mu][b]][c];
    }
  }
}

static void LinkTimes(const Link* u, const HalfSpinor* in, HalfSpinor* out) {
  for (int a = 0; a < 2; ++a) {
    for (int i = 0; i < 3; ++i) {
      out->s[a][i] = u->c[i][0] * in->s[a][0] + u->c[i][1] * in->s[a][1] +
                     u->c[i][2] * in->s[a][2];
    }
  }
}

static void LinkDaggerTimes(const Link* u, const HalfSpinor* in,
                            HalfSpinor* out) {
  for (int a = 0; a < 2; ++a) {
    for (int i = 0; i < 3; ++i) {
      out->s[a][i] = conj(u->c[0][i]) * in->s[a][0] +
                     conj(u->c[1][i]) * in->s[a][1] +
                     conj(u->c[2][i]) * in->s[a][2];
    }
  }
}

/* What even site y sends across face f (see the header): on a -mu face
 * (1 - gamma_mu) psi(y), on a +mu face U_mu(y)^dagger (1 + gamma_mu) psi(y). */
static void SendHalfSpinor(const Domain* d, int f, int y, HalfSpinor* h) {
  const int mu = f / 2;
  if (f % 2 == 1) {
    Project(&d->psi[y / 2], mu, -1, h);
  } else {
    HalfSpinor projected;
    Project(&d->psi[y / 2], mu, +1, &projected);
    LinkDaggerTimes(&d->link[mu][y], &projected, h);
  }
}

/* The term odd site x gets from the half-spinor h that came across its face
 * f: through +mu, (1 - gamma_mu) U_mu(x) h; through -mu, (1 + gamma_mu) h. */
static void ReceivedTerm(const Domain* d, int f, int x, const HalfSpinor* h,
                         Spinor* term) {
  const int mu = f / 2;
  if (f % 2 == 0) {
    HalfSpinor linked;
    LinkTimes(&d->link[mu][x], h, &linked);
    Reconstruct(&linked, mu, -1, term);
  } else {
    Reconstruct(h, mu, +1, term);
  }
}

/* out(x) for odd site x, summing the 8 hops in face order (the hop in
 * direction f leads across face f). A neighbour y on this rank gives its
 * term through the same two functions a message goes through (y sends
 * across its face f^1, which faces x), so a site computes the same bits
 * whichever way its neighbours are placed. */
static void DslashSite(Domain* d, int x) {
  int c[kDims];
  Coords(d, x, c);
  Spinor sum = {0};
  for (int f = 0; f < kFaces; ++f) {
    const int mu = f / 2;
    Spinor local_term;
    const Spinor* term = &local_term;
    if (c[mu] == FaceSlice(d, f)) {
      term = &d->face[f].halo[Slot(d, c, mu)];
    } else {
      HalfSpinor h;
      SendHalfSpinor(d, f ^ 1, x + (f % 2 == 0 ? 1 : -1) * d->stride[mu], &h);
      ReceivedTerm(d, f, x, &h, &local_term);
    }
    for (int s = 0; s < 4; ++s) {
      for (int k = 0; k < 3; ++k) sum.s[s][k] += term->s[s][k];
    }
  }
  d->out[x / 2] = sum;
}

static void PackSlot(Domain* d, int f, int k) {
  Face* face = &d->face[f];
  SendHalfSpinor(d, f, face->send_site[k], &face->send[k]);
}

static void UnpackSlot(Domain* d, int f, int k) {
  Face* face = &d->face[f];
  ReceivedTerm(d, f, face->recv_site[k], &face->recv[k], &face->halo[k]);
}

/* ---- the four modes: one iteration each ---- */

/* Ends a phase: the rank's threads meet, then thread 0 takes the time. */
static void EndPhase(double* stamp) {
#pragma omp barrier
#pragma omp master
  *stamp = omp_get_wtime();
}

static void ComputeSites(Domain* d, const int* sites, int count) {
#pragma omp for schedule(static) nowait
  for (int i = 0; i < count; ++i) DslashSite(d, sites[i]);
}

/* Posts face f's receive and send: req[0] receives, req[1] sends. */
static void PostFace(Domain* d, int f, MPI_Comm comm, int peer,
                     MPI_Request req[2]) {
  Face* face = &d->face[f];
  int count = face->slots * kHalfSpinorDoubles;
  MPI_Irecv(face->recv, count, MPI_DOUBLE, peer, f, comm, &req[0]);
  MPI_Isend(face->send, count, MPI_DOUBLE, peer, f ^ 1, comm, &req[1]);
}

static void IterateMaster(Domain* d, double stamp[5]) {
  MPI_Request req[2 * kFaces];
#pragma omp parallel num_threads(d->threads)
  {
    EndPhase(&stamp[0]);
    for (int f = 0; f < kFaces; ++f) {
#pragma omp for schedule(static) nowait
      for (int k = 0; k < d->face[f].slots; ++k) PackSlot(d, f, k);
    }
#pragma omp barrier
#pragma omp master
    for (int f = 0; f < kFaces; ++f) {
      PostFace(d, f, MPI_COMM_WORLD, d->neighbour[f], &req[2 * f]);
    }
    EndPhase(&stamp[1]);
    ComputeSites(d, d->interior, d->interior_sites);
    EndPhase(&stamp[2]);
#pragma omp master
    MPI_Waitall(2 * kFaces, req, MPI_STATUSES_IGNORE);
#pragma omp barrier
    for (int f = 0; f < kFaces; ++f) {
#pragma omp for schedule(static) nowait
      for (int k = 0; k < d->face[f].slots; ++k) UnpackSlot(d, f, k);
    }
    EndPhase(&stamp[3]);
    ComputeSites(d, d->boundary, d->boundary_sites);
    EndPhase(&stamp[4]);
  }
}

/* The threads and endpoints modes: face f's owner thread sends and receives
 * it on comm[f] to and from rank peer[f] of that communicator. */
static void IteratePerFace(Domain* d, const MPI_Comm comm[kFaces],
                           const int peer[kFaces], double stamp[5]) {
#pragma omp parallel num_threads(d->threads)
  {
    const int self = omp_get_thread_num();
    MPI_Request req[2 * kFaces];
    int requests = 0;
    EndPhase(&stamp[0]);
    for (int f = self; f < kFaces; f += d->threads) {
      for (int k = 0; k < d->face[f].slots; ++k) PackSlot(d, f, k);
      PostFace(d, f, comm[f], peer[f], &req[requests]);
      requests += 2;
    }
    EndPhase(&stamp[1]);
    ComputeSites(d, d->interior, d->interior_sites);
    EndPhase(&stamp[2]);
    MPI_Waitall(requests, req, MPI_STATUSES_IGNORE);
    for (int f = self; f < kFaces; f += d->threads) {
      for (int k = 0; k < d->face[f].slots; ++k) UnpackSlot(d, f, k);
    }
    EndPhase(&stamp[3]);
    ComputeSites(d, d->boundary, d->boundary_sites);
    EndPhase(&stamp[4]);
  }
}

#if MPI_VERSION >= 4
/* req[2f] receives face f, req[2f+1] sends it; partition p is thread p's. */
static void IteratePartitioned(Domain* d, MPI_Request req[2 * kFaces],
                               double stamp[5]) {
#pragma omp parallel num_threads(d->threads)
  {
    const int p = omp_get_thread_num();
    EndPhase(&stamp[0]);
#pragma omp master
    MPI_Startall(2 * kFaces, req);
#pragma omp barrier
    for (int f = 0; f < kFaces; ++f) {
      const Face* face = &d->face[f];
      int end = (p + 1) * face->part_slots;
      if (end > face->slots) end = face->slots;
      for (int k = p * face->part_slots; k < end; ++k) PackSlot(d, f, k);
      MPI_Pready(p, req[2 * f + 1]);
    }
    EndPhase(&stamp[1]);
    ComputeSites(d, d->interior, d->interior_sites);
    EndPhase(&stamp[2]);
    for (int f = 0; f < kFaces; ++f) {
      const Face* face = &d->face[f];
      int arrived = 0;
      while (!arrived) MPI_Parrived(req[2 * f], p, &arrived);
      int end = (p + 1) * face->part_slots;
      if (end > face->slots) end = face->slots;
      for (int k = p * face->part_slots; k < end; ++k) UnpackSlot(d, f, k);
    }
#pragma omp barrier
#pragma omp master
    MPI_Waitall(2 * kFaces, req, MPI_STATUSES_IGNORE);
    EndPhase(&stamp[3]);
    ComputeSites(d, d->boundary, d->boundary_sites);
    EndPhase(&stamp[4]);
  }
}
#endif

/* ---- setup ---- */

/* Fills everything but the fields' values: extents, neighbours, site lists
 * and faces. Returns 0, or -1 (after rank 0 said why) when the lattice does
 * not fit the rank grid. */
static int SetupDomain(Domain* d, const int global[kDims], int rank, int size,
                       int threads) {
  memset(d, 0, sizeof *d);
  int pz = 1;
  for (int p = 1; p * p <= size; ++p) {
    if (size % p == 0) pz = p;
  }
  const int grid[kDims] = {1, 1, pz, size / pz};
  const int my[kDims] = {0, 0, rank % pz, rank / pz};
  d->volume = 1;
  for (int mu = 0; mu < kDims; ++mu) {
    d->global[mu] = global[mu];
    d->grid[mu] = grid[mu];
    d->local[mu] = global[mu] / grid[mu];
    d->origin[mu] = my[mu] * d->local[mu];
    d->stride[mu] = d->volume;
    d->volume *= d->local[mu];
    if (global[mu] % grid[mu] != 0 || d->local[mu] < 2 ||
        d->local[mu] % 2 != 0) {
      if (rank == 0) {
        fprintf(stderr,
                "dslash: %c extent %d over %d ranks: every local extent must "
                "be even and at least 2\n",
                kDimName[mu], global[mu], grid[mu]);
      }
      return -1;
    }
  }
  for (int f = 0; f < kFaces; ++f) {
    int c[kDims];
    memcpy(c, my, sizeof c);
    const int mu = f / 2;
    c[mu] = (c[mu] + (f % 2 == 0 ? 1 : -1) + grid[mu]) % grid[mu];
    d->neighbour[f] = c[2] + pz * c[3];
  }
  d->threads = threads;

  /* Odd sites, interior or boundary. */
  d->interior = Allocate((size_t)d->volume / 2, sizeof(int));
  d->boundary = Allocate((size_t)d->volume / 2, sizeof(int));
  for (int x = 0; x < d->volume; ++x) {
    int c[kDims];
    Coords(d, x, c);
    if (!IsOdd(d, x)) continue;
    int on_face = 0;
    for (int f = 0; f < kFaces; ++f) on_face |= c[f / 2] == FaceSlice(d, f);
    if (on_face) {
      d->boundary[d->boundary_sites++] = x;
    } else {
      d->interior[d->interior_sites++] = x;
    }
  }

  /* Faces: slots, message buffers padded to whole partitions, halos. */
  for (int f = 0; f < kFaces; ++f) {
    Face* face = &d->face[f];
    const int mu = f / 2;
    face->slots = d->volume / d->local[mu] / 2;
    face->part_slots = (face->slots + threads - 1) / threads;
    size_t padded = (size_t)face->part_slots * threads;
    face->send_site = Allocate((size_t)face->slots, sizeof(int));
    face->recv_site = Allocate((size_t)face->slots, sizeof(int));
    face->send = Allocate(padded, sizeof(HalfSpinor));
    face->recv = Allocate(padded, sizeof(HalfSpinor));
    face->halo = Allocate((size_t)face->slots, sizeof(Spinor));
    for (int x = 0; x < d->volume; ++x) {
      int c[kDims];
      Coords(d, x, c);
      if (c[mu] != FaceSlice(d, f)) continue;
      if (IsOdd(d, x)) {
        face->recv_site[Slot(d, c, mu)] = x;
      } else {
        face->send_site[Slot(d, c, mu)] = x;
      }
    }
  }
  return 0;
}

static void FillFields(Domain* d) {
  for (int mu = 0; mu < kDims; ++mu) {
    d->link[mu] = Allocate((size_t)d->volume, sizeof(Link));
  }
  d->psi = Allocate((size_t)d->volume / 2, sizeof(Spinor));
  d->out = Allocate((size_t)d->volume / 2, sizeof(Spinor));
#pragma omp parallel for num_threads(d->threads) schedule(static)
  for (int x = 0; x < d->volume; ++x) {
    int g[kDims];
    GlobalCoords(d, x, g);
    for (int mu = 0; mu < kDims; ++mu) {
      GaugeLink(d->global, g, mu, &d->link[mu][x]);
    }
    if (!IsOdd(d, x)) SpinorField(d->global, g, &d->psi[x / 2]);
  }
}

static void FreeDomain(Domain* d) {
  for (int mu = 0; mu < kDims; ++mu) free(d->link[mu]);
  free(d->psi);
  free(d->out);
  free(d->interior);
  free(d->boundary);
  for (int f = 0; f < kFaces; ++f) {
    free(d->face[f].send_site);
    free(d->face[f].recv_site);
    free(d->face[f].send);
    free(d->face[f].recv);
    free(d->face[f].halo);
  }
}

/* ---- the serial reference and the check ---- */

/* out(g) for odd global site g from the global fields alone: U applied to
 * all four spins, then the full 4x4 matrix 1 -/+ gamma_mu. */
static void ReferenceSite(const int global[kDims], const int g[kDims],
                          Spinor* out) {
  memset(out, 0, sizeof *out);
  for (int mu = 0; mu < kDims; ++mu) {
    for (int forward = 1; forward >= 0; --forward) {
      int n[kDims];
      memcpy(n, g, sizeof n);
      n[mu] = (g[mu] + (forward ? 1 : -1) + global[mu]) % global[mu];
      Link u;
      GaugeLink(global, forward ? g : n, mu, &u);
      Spinor psi, v;
      SpinorField(global, n, &psi);
      for (int s = 0; s < 4; ++s) {
        for (int i = 0; i < 3; ++i) {
          v.s[s][i] = 0;
          for (int j = 0; j < 3; ++j) {
            v.s[s][i] += forward ? u.c[i][j] * psi.s[s][j]
                                 : conj(u.c[j][i]) * psi.s[s][j];
          }
        }
      }
      const int sign = forward ? -1 : +1;
      for (int a = 0; a < 4; ++a) {
        for (int i = 0; i < 3; ++i) {
          Complex gv = 0;
          for (int b = 0; b < 4; ++b) gv += kGamma[mu][a][b] * v.s[b][i];
          out->s[a][i] += v.s[a][i] + sign * gv;
        }
      }
    }
  }
}

/* The reference for this rank's odd sites, stored like d->out. */
static Spinor* ComputeReference(const Domain* d) {
  Spinor* ref = Allocate((size_t)d->volume / 2, sizeof(Spinor));
#pragma omp parallel for num_threads(d->threads) schedule(static)
  for (int x = 0; x < d->volume; ++x) {
    int g[kDims];
    GlobalCoords(d, x, g);
    if (IsOdd(d, x)) ReferenceSite(d->global, g, &ref[x / 2]);
  }
  return ref;
}

/* The largest difference of a real or imaginary part of a and b over this
 * rank's odd sites (infinite where one is NaN); b == NULL stands for zero. */
static double MaxDiff(const Domain* d, const Spinor* a, const Spinor* b) {
  double largest = 0;
#pragma omp parallel for num_threads(d->threads) reduction(max : largest)
  for (int i = 0; i < d->volume / 2; ++i) {
    for (int s = 0; s < 4; ++s) {
      for (int c = 0; c < 3; ++c) {
        Complex diff = a[i].s[s][c] - (b ? b[i].s[s][c] : 0);
        const double parts[2] = {fabs(creal(diff)), fabs(cimag(diff))};
        for (int k = 0; k < 2; ++k) {
          if (!(parts[k] <= largest)) {
            largest = isnan(parts[k]) ? INFINITY : parts[k];
          }
        }
      }
    }
  }
  return largest;
}

/* The checksum of the header comment, in units of kChecksumUnit, summed
 * over all ranks. */
static int64_t Checksum(const Domain* d, const Spinor* field) {
  int64_t sum = 0;
  for (int x = 0; x < d->volume; ++x) {
    if (!IsOdd(d, x)) continue;
    int g[kDims];
    GlobalCoords(d, x, g);
    double norm = 0;
    for (int s = 0; s < 4; ++s) {
      for (int c = 0; c < 3; ++c) {
        norm += creal(field[x / 2].s[s][c] * conj(field[x / 2].s[s][c]));
      }
    }
    int weight = 1 + GlobalIndex(d->global, g) % 4;
    sum += (int64_t)(weight * norm / kChecksumUnit + 0.5); /* rounded */
  }
  int64_t total;
  MPI_Allreduce(&sum, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

/* ---- running a mode ---- */

static const char* ThreadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "SINGLE";
    case MPI_THREAD_FUNNELED:
      return "FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MULTIPLE";
  }
  return "unknown";
}

/* Why `mode` cannot run here, or NULL when it can. */
static const char* Unavailable(enum Mode mode, int provided) {
  int needed = mode == kMaster ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE;
#ifndef MINIMPI_HAS_ENDPOINTS
  if (mode == kEndpoints) return "no_MPIX_Comm_create_endpoints";
#endif
#if MPI_VERSION < 4
  if (mode == kPartitioned) return "no_MPI-4_partitioned_communication";
#endif
  if (provided < needed) {
    return needed == MPI_THREAD_FUNNELED ? "needs_MPI_THREAD_FUNNELED"
                                         : "needs_MPI_THREAD_MULTIPLE";
  }
  return NULL;
}

typedef struct {
  double time_us[kColumns]; /* max over ranks */
  double max_rel_diff;
  int64_t checksum;
  int passed;
} Result;

/* Runs warm-up and timed iterations of one mode, checking each against
 * `reference`. Collective. */
static void RunMode(Domain* d, enum Mode mode, const Options* opt,
                    const Spinor* reference, double max_reference,
                    int64_t reference_checksum, Result* result) {
  MPI_Comm comm[kFaces];
  int peer[kFaces];
  if (mode == kThreads) {
    for (int f = 0; f < kFaces; ++f) {
      comm[f] = MPI_COMM_WORLD;
      peer[f] = d->neighbour[f];
    }
  }
#ifdef MINIMPI_HAS_ENDPOINTS
  if (mode == kEndpoints) {
    MPIX_Comm_create_endpoints(MPI_COMM_WORLD, kFaces, MPI_INFO_NULL, comm);
    for (int f = 0; f < kFaces; ++f) {
      peer[f] = d->neighbour[f] * kFaces + (f ^ 1);
    }
  }
#endif
#if MPI_VERSION >= 4
  MPI_Request req[2 * kFaces];
  if (mode == kPartitioned) {
    for (int f = 0; f < kFaces; ++f) {
      Face* face = &d->face[f];
      MPI_Count count = (MPI_Count)face->part_slots * kHalfSpinorDoubles;
      MPI_Precv_init(face->recv, d->threads, count, MPI_DOUBLE, d->neighbour[f],
                     f, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2 * f]);
      MPI_Psend_init(face->send, d->threads, count, MPI_DOUBLE, d->neighbour[f],
                     f ^ 1, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2 * f + 1]);
    }
  }
#endif

  double phase_sum[4] = {0}, total_sum = 0, max_diff = 0;
  for (int it = 0; it < opt->warmup + opt->iters; ++it) {
    FillNaN(d->out, d->volume / 2 * sizeof(Spinor));
    for (int f = 0; f < kFaces; ++f) {
      FillNaN(d->face[f].recv,
              (size_t)d->face[f].part_slots * d->threads * sizeof(HalfSpinor));
      FillNaN(d->face[f].halo, d->face[f].slots * sizeof(Spinor));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double stamp[5];
    switch (mode) {
      case kMaster:
        IterateMaster(d, stamp);
        break;
#if MPI_VERSION >= 4
      case kPartitioned:
        IteratePartitioned(d, req, stamp);
        break;
#endif
      default: /* threads, endpoints */
        IteratePerFace(d, comm, peer, stamp);
    }
    if (it >= opt->warmup) {
      for (int p = 0; p < 4; ++p) phase_sum[p] += stamp[p + 1] - stamp[p];
      total_sum += stamp[4] - stamp[0];
    }
    double diff = MaxDiff(d, d->out, reference);
    if (!(diff <= max_diff)) max_diff = diff;
  }

#ifdef MINIMPI_HAS_ENDPOINTS
  /* Freeing is collective over the endpoints communicator's ranks, which
   * are the handles: all 8 are freed at once, by a thread each. */
  if (mode == kEndpoints) {
#pragma omp parallel num_threads(kFaces)
    MPI_Comm_free(&comm[omp_get_thread_num()]);
  }
#endif
#if MPI_VERSION >= 4
  if (mode == kPartitioned) {
    for (int r = 0; r < 2 * kFaces; ++r) MPI_Request_free(&req[r]);
  }
#endif

  /* Phases: pack+post, interior, wait+unpack, boundary. */
  const double us = 1e6 / opt->iters; /* seconds in total -> us each */
  double mine[kColumns];
  mine[kCompute] = (phase_sum[1] + phase_sum[3]) * us;
  mine[kPackPost] = phase_sum[0] * us;
  mine[kWaitUnpack] = phase_sum[2] * us;
  mine[kComm] = (phase_sum[0] + phase_sum[2]) * us;
  mine[kTotal] = total_sum * us;
  MPI_Allreduce(mine, result->time_us, kColumns, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  double global_diff;
  MPI_Allreduce(&max_diff, &global_diff, 1, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  result->max_rel_diff = global_diff / max_reference;
  result->checksum = Checksum(d, d->out);
  /* Each site's term may round differently by one unit. */
  int64_t odd_sites = (int64_t)d->volume * d->grid[2] * d->grid[3] / 2;
  result->passed = result->max_rel_diff < kMaxRelDiff &&
                   llabs(result->checksum - reference_checksum) <= odd_sites;
}

/* ---- options and main ---- */

static void Usage(void) {
  fprintf(stderr,
          "usage: dslash [--mode master,threads,endpoints,partitioned|all]\n"
          "              [--lattice XxYxZxT] [--iters N] [--warmup N]\n"
          "  threads: OMP_NUM_THREADS; see the header of dslash.c\n");
}

static int ParseCount(const char* text, int min, int* value) {
  char* end;
  long v = strtol(text, &end, 10);
  if (end == text || *end != 0 || v < min || v > 1000000000) return -1;
  *value = (int)v;
  return 0;
}

static int ParseModes(char* list, int run[kModes]) {
  memset(run, 0, kModes * sizeof *run);
  for (char* word = strtok(list, ","); word; word = strtok(NULL, ",")) {
    int known = 0;
    for (int m = 0; m < kModes; ++m) {
      if (strcmp(word, "all") == 0 || strcmp(word, kModeNames[m]) == 0) {
        run[m] = known = 1;
      }
    }
    if (!known) return -1;
  }
  return 0;
}

static int ParseLattice(const char* text, int global[kDims]) {
  const char* p = text;
  for (int mu = 0; mu < kDims; ++mu) {
    char* end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 2 || v > 1024 || v % 2 != 0) return -1;
    if (*end != (mu < kDims - 1 ? 'x' : 0)) return -1;
    global[mu] = (int)v;
    p = end + 1;
  }
  /* Site numbers are ints. */
  if ((int64_t)global[0] * global[1] * global[2] * global[3] > 1 << 30) {
    return -1;
  }
  return 0;
}

static int ParseOptions(int argc, char** argv, Options* opt) {
  const int default_global[kDims] = {8, 8, 8, 16};
  memcpy(opt->global, default_global, sizeof opt->global);
  opt->iters = 3;
  opt->warmup = 1;
  for (int m = 0; m < kModes; ++m) opt->run[m] = 1;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) return -1;
    const char* flag = argv[i];
    char* value = argv[++i];
    int bad;
    if (strcmp(flag, "--mode") == 0) {
      bad = ParseModes(value, opt->run);
    } else if (strcmp(flag, "--lattice") == 0) {
      bad = ParseLattice(value, opt->global);
    } else if (strcmp(flag, "--iters") == 0) {
      bad = ParseCount(value, 1, &opt->iters);
    } else if (strcmp(flag, "--warmup") == 0) {
      bad = ParseCount(value, 0, &opt->warmup);
    } else {
      bad = -1;
    }
    if (bad) return -1;
  }
  return 0;
}

static void PrintHeader(const Domain* d, const Options* opt, int size,
                        int provided) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length;
  MPI_Get_library_version(library, &length);
  char* newline = strchr(library, '\n');
  if (newline) *newline = 0;
  for (char* p = library; *p; ++p) {
    if (*p == '\t') *p = ' ';
  }
  printf("# library: %.120s\n", library);
  printf(
      "# lattice=%dx%dx%dx%d ranks=%d grid=%dx%dx%dx%d local=%dx%dx%dx%d "
      "threads=%d iters=%d warmup=%d thread_level=%s\n",
      d->global[0], d->global[1], d->global[2], d->global[3], size, d->grid[0],
      d->grid[1], d->grid[2], d->grid[3], d->local[0], d->local[1], d->local[2],
      d->local[3], d->threads, opt->iters, opt->warmup,
      ThreadLevelName(provided));
  printf("# message bytes per face:");
  for (int mu = 0; mu < kDims; ++mu) {
    printf(" %c=%zu", kDimName[mu], d->face[2 * mu].slots * sizeof(HalfSpinor));
  }
  printf(" (16 messages per rank per iteration)\n");
  fflush(stdout);
}

int main(int argc, char** argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  InitGamma();
  omp_set_dynamic(0);

  Options opt;
  Domain d;
  if (ParseOptions(argc, argv, &opt) != 0) {
    if (rank == 0) Usage();
    MPI_Finalize();
    return 2;
  }
  if (SetupDomain(&d, opt.global, rank, size, omp_get_max_threads()) != 0) {
    MPI_Finalize();
    return 2;
  }
  FillFields(&d);
  if (rank == 0) PrintHeader(&d, &opt, size, provided);

  Spinor* reference = ComputeReference(&d);
  double mine = MaxDiff(&d, reference, NULL), max_reference;
  MPI_Allreduce(&mine, &max_reference, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int64_t reference_checksum = Checksum(&d, reference);

  Result result[kModes];
  int ran[kModes] = {0}, failed = 0;
  for (int m = 0; m < kModes; ++m) {
    if (!opt.run[m]) continue;
    const char* reason = Unavailable((enum Mode)m, provided);
    if (reason) {
      if (rank == 0) {
        printf("mode=%s status=unavailable reason=%s\n", kModeNames[m], reason);
      }
      continue;
    }
    RunMode(&d, (enum Mode)m, &opt, reference, max_reference,
            reference_checksum, &result[m]);
    ran[m] = 1;
    failed += !result[m].passed;
    if (rank == 0) {
      printf(
          "mode=%s status=%s checksum=%.15e reference=%.15e "
          "max_rel_diff=%.3e\n",
          kModeNames[m], result[m].passed ? "PASS" : "FAIL",
          result[m].checksum * kChecksumUnit,
          reference_checksum * kChecksumUnit, result[m].max_rel_diff);
      fflush(stdout);
    }
  }

  if (rank == 0) {
    printf("\n| mode |");
    for (int c = 0; c < kColumns; ++c) printf(" %s |", kColumnNames[c]);
    printf("\n|---|");
    for (int c = 0; c < kColumns; ++c) printf("---:|");
    printf("\n");
    int base = -1;
    for (int m = 0; m < kModes; ++m) {
      if (!ran[m]) continue;
      if (base < 0) base = m;
      printf("| %s |", kModeNames[m]);
      for (int c = 0; c < kColumns; ++c) {
        printf(" %.1f |", result[m].time_us[c]);
      }
      printf("\n");
    }
    printf("\n");
    for (int m = base + 1; base >= 0 && m < kModes; ++m) {
      if (!ran[m]) continue;
      printf("ratio mode=%s base=%s comm=%.3f total=%.3f\n", kModeNames[m],
             kModeNames[base],
             result[m].time_us[kComm] / result[base].time_us[kComm],
             result[m].time_us[kTotal] / result[base].time_us[kTotal]);
    }
    if (failed) {
      printf("FAIL:");
      for (int m = 0; m < kModes; ++m) {
        if (ran[m] && !result[m].passed) printf(" %s", kModeNames[m]);
      }
      printf("\n");
    } else {
      printf("PASS\n");
    }
    fflush(stdout);
  }
  free(reference);
  FreeDomain(&d);
  MPI_Finalize();
  return failed ? 1 : 0;
}
