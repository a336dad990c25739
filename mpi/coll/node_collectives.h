// Collectives through a node's shared-memory region (node_region.h), and the
// path that decides, per blocking call, whether a call takes them.
//
//   barrier    every rank posts, then waits for every post (one flag each;
//              above 16 ranks rank 0 gathers the posts and releases all);
//   bcast      the root copies into its cells, the others copy out;
//   reduce,    every rank copies its data into its cell; then each rank
//   allreduce  reduces its slice of the items over all cells into the
//              result cell (medium sizes), or, for small ones, every rank
//              that needs the result reduces all cells itself. Always in
//              rank order, x0 op x1 op ... op x(n-1): any operation, even a
//              non-commutative one, and every rank gets the same bits;
//   gather,    blocks go through the senders' (scatter: the receivers')
//   scatter    cells, the root copying each block once; a small scatter
//              goes through the root's slot, which holds every block;
//   allgather  every rank copies its block in, then all blocks out;
//   alltoall   every rank copies a chunk of each destination's block into
//              its cell per step, each reader takes its chunk from every
//              cell.
//
// Data larger than a cell takes several steps, double-buffered, so the
// writer fills one cell while the readers empty the other. From
// MINIMPI_COLL_SHM_DIRECT bytes (per block), allgather, alltoall, allreduce
// and (on more than 2 ranks) bcast skip the cells: every rank posts where
// its data lies and the others read it from there with one cross-memory
// copy (process_vm_readv), as single-copy messages do; a rank leaves once
// every rank has read its data. The direct allreduce is a reduce-scatter
// (rank r reduces slice r, reading the other inputs' slices) followed by
// an allgather of the slices.
//
// When ranks pass counts that disagree (an erroneous program), every rank
// still returns: readers follow the writer's count, never write past their
// own buffer, and report MPI_ERR_TRUNCATE when the writer had more.
//
// Owned by: mpi/coll. Called by: the bindings' RunCollective.
#ifndef MINIMPI_MPI_COLL_NODE_COLLECTIVES_H_
#define MINIMPI_MPI_COLL_NODE_COLLECTIVES_H_

#include "mpi/coll/algorithms.h"
#include "mpi/coll/node_region.h"
#include "mpi/objects/comm.h"

namespace minimpi::coll {

enum class NodeOutcome {
  kNotRun,     // the call is not for the node path: run its schedule
  kDone,       // completed through the region
  kTruncated,  // completed, but another rank had more data than fitted
};

// The algorithm name of the node path (MINIMPI_COLL_<NAME>=shm).
inline constexpr char kNodeAlgorithmName[] = "shm";

// Up to this many ranks every rank of a barrier waits for every post;
// above, rank 0 gathers the posts and releases the others.
inline constexpr int kFlatBarrierMax = 16;

// Whether the region can run `collective` with these arguments at all (the
// call fits in NodeRegion::kMaxSteps steps, an item fits in a cell). The
// answer is the same on every rank of a correct program.
bool RegionServes(const NodeRegion& region, Collective collective,
                  const Arguments& arguments);

// Runs one call through `region` (every rank of the region calls it for
// the same collective, in the same order). Only for the collectives the
// node path has: barrier, bcast, reduce, allreduce, gather, scatter,
// allgather, alltoall; `arguments` as RunCollective passes them (dense data).
NodeOutcome RunThroughRegion(NodeRegion& region, Collective collective,
                             const Arguments& arguments);

// The node path of a blocking call on `comm`: runs it through comm's region
// when the algorithm in force for `collective` is "shm", or is automatic
// and chooses shm for this communicator and size class; makes the region
// on first use (collective over comm, through point-to-point). kNotRun
// when the call is not for it: an intercommunicator, ranks on more than
// one node, a transport other than shared memory between them, or too
// much data.
NodeOutcome RunOnNode(Collective collective, Communicator& comm,
                      const Arguments& arguments);

// The region RunOnNode would run this call through on `comm` when all of
// comm's ranks are on one node; nullptr when it would not (the call takes
// point-to-point, or comm spans nodes). Makes the region on first use.
NodeRegion* SingleNodeRegionFor(Collective collective, Communicator& comm,
                                const Arguments& arguments);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_NODE_COLLECTIVES_H_
