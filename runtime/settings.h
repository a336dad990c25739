// Every tunable of minimpi is a MINIMPI_* environment variable, read once at
// MPI_Init into Settings and never re-read on a hot path. The registry below
// is the single list of them: minimpi_info prints it and the README mirrors it.
//
// Owned by: runtime/. Called by: everything that has a choice to make.
#ifndef MINIMPI_RUNTIME_SETTINGS_H_
#define MINIMPI_RUNTIME_SETTINGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace minimpi::runtime {

// One value a MINIMPI_* choice accepts, and what it means (one line).
struct Choice {
  std::string name;
  std::string description;
};

// The values of the MINIMPI_* variables that pick an implementation. Each
// list comes from the table of the package that owns the choice (net's
// transports, mpi/match's engines, mpi/part's aggregators and backends);
// runtime is the bottom layer and cannot see those packages, so whoever
// assembles the library (mpi/instance/choice_lists.h) hands the lists to
// FromEnvironment and DescribeSettings. An empty list leaves its variable
// unchecked, for a caller that only reads other settings.
struct ChoiceLists {
  std::vector<Choice> transports;        // MINIMPI_TRANSPORT
  std::vector<Choice> match_engines;     // MINIMPI_MATCH
  std::vector<Choice> part_aggregators;  // MINIMPI_PART_AGGR
  std::vector<Choice> part_backends;     // MINIMPI_PART_BACKEND
};

struct Settings {
  // Which transport carries traffic, by a name of net/transport.cc's
  // table: "auto" (shm between ranks of one node, tcp or ib between nodes),
  // "shm", "tcp" (every pair, even inside a node: for testing) or "ib".
  std::string transport = "auto";
  // Splits each node's ranks into this many pretend nodes (contiguous
  // blocks of its local ranks, as MPICH's MPIR_CVAR_NUM_CLIQUES does), so
  // plain mpiexec exercises the cross-node paths on one machine.
  int node_split = 1;
  // net/tcp: the network interface (e.g. "eth0") or IPv4 address to listen
  // on and advertise; "" picks the first non-loopback interface that is
  // up, or loopback when there is none.
  std::string tcp_interface;
  // net/tcp: a connection not established within this many milliseconds
  // ends the job.
  int tcp_connect_timeout_ms = 10000;
  // net/tcp: a helper thread moves RDMA data (lands writes, answers reads)
  // on VCIs whose owner has not polled for this many microseconds, as a
  // NIC would without the target's CPU; 0: no helper thread (RDMA to a rank
  // then moves only while it polls).
  int tcp_progress_us = 1000;
  // net/tcp: the congestion control of minimpi's sockets, by the kernel's
  // name for it; "system" keeps the kernel's default. Reno by default: a
  // rendezvous answer leaves as one burst of up to 512 KiB after an idle
  // moment, and a loss-based window lets the kernel send all of it inside
  // the writev, while BBR (a common default) keeps its window near the
  // measured bandwidth-delay product and leaves part of each burst to go
  // out as acknowledgements return (docs/benchmarks.md, "Across the
  // simulated nodes, fourth stop"). Every Linux lets any user choose reno.
  std::string tcp_congestion = "reno";
  // net/ib: the RDMA device to use by name (e.g. "mlx5_0"); "" picks the
  // first device that has an active port.
  std::string ib_device;
  // net/ib: the port (1-based); 0 picks the device's first active port.
  int ib_port = 0;
  // net/ib: the GID table index for RoCE (and global routes on
  // InfiniBand); -1 picks a RoCE v2 IPv4-mapped entry, else RoCE v2, else
  // the first valid one.
  int ib_gid_index = -1;
  // net/ib: receive buffers each connection gets in its VCI's shared
  // receive queue, which are the messages (and writes with immediate) a
  // peer may have in flight to it before it must wait for credits.
  int ib_credits = 16;
  // net/ib: the most receive buffers one VCI's shared receive queue holds
  // (the device's max_srq_wr permitting). Connections past it add none:
  // their credits share the buffers already posted (overcommitted), and
  // the hardware's receiver-not-ready retry covers the moment when every
  // peer sends at once.
  int ib_receive_buffers = 4096;
  // net/ib: work requests each queue pair may have outstanding; beyond
  // them posting answers kRetry.
  int ib_send_queue = 128;
  // net/ib: a shared library implementing the verbs layer in software
  // (net/ib/testing), used instead of libibverbs; for tests only.
  std::string ib_test_device;
  // Setup decisions a user may want to know (a transport falling back to
  // another) are printed on stderr by rank 0; mpiexec -v sets it.
  bool verbose = false;
  // Virtual communication interfaces per process; communicators are spread
  // over them so threads on different communicators never share a lock.
  int num_vcis = 4;
  // VCIs a process keeps for endpoints (MPIX_Comm_create_endpoints), beyond
  // num_vcis: each endpoint alive owns one, so this is the most endpoints a
  // process may hold at once.
  int endpoint_vcis = 32;
  // What a thread waiting on an endpoint progresses: "own" (its endpoint's
  // VCI only, as the endpoints proposal allows) or "process" (also the
  // process's other VCIs when its own is idle, so a peer's handshake to a
  // busy thread's endpoint moves on: a knob for research on attentiveness).
  std::string endpoint_progress = "own";
  // Messages up to this many bytes go eagerly through the shared-memory
  // rings; larger ones use the single-copy rendezvous.
  size_t eager_max = 8192;
  // The same between nodes over net/tcp (and for every pair when the
  // transport is tcp). A rendezvous costs two more trips through the
  // network stacks, far more than a copy of a few KiB, so it is larger:
  // by default 8 x eager_max (64 KiB, Open MPI's TCP eager limit), at
  // most 1 MiB.
  size_t tcp_eager_max = 65536;
  // Rendezvous messages at least this large are copied by both sides at
  // once (receiver reads one half, sender writes the other); 0 turns the
  // split off.
  size_t rendezvous_split_min = 32768;
  // A rendezvous read between nodes (net/tcp, net/ib) goes as pieces of
  // this many bytes, all posted at once; 0: one read. On the simulated
  // cluster 512 KiB pieces moved 1-8 MiB 1.4-1.9x faster than one read
  // (over tcp a single answer larger than that streams slowly).
  size_t network_read_piece = 524288;
  static constexpr size_t kMinNetworkReadPiece = 4096;  // or 0
  // Non-contiguous rendezvous data whose pieces average fewer bytes than
  // this is packed into (sender) or read through (receiver) a contiguous
  // staging buffer, because one cross-memory or RDMA segment per tiny piece
  // costs far more than a memcpy; larger pieces move in place, with no
  // intermediate copy. 0: always in place.
  size_t gather_min_piece = 512;
  // net/shm: contiguous writes with immediate at least this large are
  // pulled by the receiver when it takes the notification (the sender's
  // thread does not copy, as with a NIC); smaller ones, and every write
  // without immediate, are copied by the sender. 0: never pull.
  size_t shm_pull_min = 65536;
  // Bytes of each shared-memory ring (one ring per pair of VCIs that talk,
  // made on first use); a small message takes 64 of them.
  size_t shm_ring_bytes = 65536;
  // How a blocked call waits (mpi/vci/wait_policy.h): "auto" (poll a
  // while, then sleep until a peer rings the doorbell; no polling at all
  // when ranks x threads outnumber cores), "sleep" (the same), "yield"
  // (poll, then sched_yield between polls) or "spin" (poll until done).
  std::string wait_policy = "auto";
  // Microseconds a blocked call polls before it yields or sleeps; -1
  // ("auto"): 100, or 0 when ranks x threads outnumber cores.
  int wait_spin_us = -1;
  // Microseconds a blocked call keeps polling past wait_spin_us while its
  // thread has seen no sign that another task wants its core (no
  // involuntary context switch lately, no descheduling in this wait); 0:
  // never past wait_spin_us. A sleep and its wakeup cost a virtual
  // machine's idle vCPU tens of microseconds, so on a quiet machine only a
  // long wait is worth sleeping through.
  int wait_quiet_spin_us = 10'000;
  // Microseconds a blocked call then yields between polls before it
  // sleeps (policy sleep); -1 ("auto"): 50 when ranks x threads outnumber
  // cores, else 0.
  int wait_yield_us = -1;
  // The longest single sleep, microseconds: a safety net, since every
  // event that ends a wait rings the sleeper's doorbell.
  int wait_sleep_max_us = 1000;
  // A waiter that finds an awake rank of its node on its own core moves to
  // another core (the later rank of the two), instead of only skipping its
  // spin.
  bool wait_move = true;
  // Matching engine, by a name of mpi/match/match_engine.cc's table.
  std::string match = "colpnp";
  // PNP: a shared point-to-point queue this long promotes heavy senders to
  // partners with queues of their own.
  int match_theta = 100;
  // Dedicated queues are capped at (kc + kp) * sqrt(ranks): kc * sqrt(ranks)
  // for collectives (COL), kp * sqrt(ranks) for partners (PNP).
  int match_kc = 8;
  int match_kp = 8;
  // Time every queue search and print the engine's statistics per rank at
  // MPI_Finalize.
  bool match_stats = false;
  // Binding of each rank: "core" (each rank to its own core; mpiexec
  // --bind-to core), "none" (mpiexec --bind-to none), or "auto": "core"
  // when two or more ranks share the node and fit on its cores,
  // OMP_NUM_THREADS is unset or 1, the program did not ask for
  // MPI_THREAD_MULTIPLE (a rank's threads would all inherit its one core),
  // and srun did not start it (Slurm's --cpu-bind decides there).
  std::string bind_to = "auto";
  // Before every blocking collective, check that all ranks passed the same
  // root and data size (an allgather), so a mismatch is reported on every
  // rank before any data moves instead of truncating or hanging. For
  // debugging: it doubles the latency of small collectives.
  bool collective_check = false;
  // MINIMPI_COLL_<NAME>=<algorithm> for the collectives named in
  // kCollectiveNames: collective name -> algorithm ("auto" when unset).
  // mpi/coll checks the algorithm names, since it owns them.
  std::map<std::string, std::string> collective_algorithms;
  // The node path (mpi/coll/node_collectives.h): blocking barrier, bcast,
  // reduce, allreduce, gather, scatter and allgather on a communicator
  // inside one node go through a shared-memory region of two cells of this
  // many bytes per rank (0: no node path, every collective takes
  // point-to-point) ...
  size_t coll_shm_cell = 32768;
  // ... and, for small calls (at most this many bytes per rank), 64 slots
  // of this many bytes per rank, so that a rank can run calls ahead of its
  // readers (0: small calls use the cells too) ...
  size_t coll_shm_slot = 1024;
  // ... when the automatic choice is in force, for calls whose data per
  // rank is at most this many bytes; allgather, alltoall, allreduce and
  // (above 2 ranks) bcast data of at least coll_shm_direct bytes per block
  // (0: never) is read straight from the writer's buffer with one
  // cross-memory copy, at any size.
  size_t coll_shm_max = 32768;
  size_t coll_shm_direct = 65536;

  // Partitioned communication (mpi/part). How user partitions are grouped
  // into transport partitions (one RDMA write each), by a name of
  // mpi/part/aggregator.cc's table; an MPI_Info key ("minimpi_part_aggr")
  // overrides it per request.
  std::string part_aggregator = "adaptive";
  // "size": writes are merged up to this many bytes.
  size_t part_aggregation_size = 65536;
  // "table": the tuning table file ("" = built-in defaults).
  std::string part_table;
  // LogGP parameters for "ploggp", "timer" and "adaptive": "" (built-in
  // defaults), "probe" (measured at the first partitioned init) or a file
  // written by loggp_probe.
  std::string part_loggp;
  // "timer": how long (microseconds) the first thread of a transport
  // partition waits for the others before sending what is ready.
  int part_delta_us = 20;
  // "ploggp"/"timer": the laggard's delay (microseconds) the model plans for.
  int part_delay_us = 50;
  // "ploggp"/"timer"/"adaptive": take the fewest writes whose predicted time
  // is within this many percent of the model's best.
  int part_model_slack_percent = 10;
  // Print per-request statistics when a partitioned request is freed.
  bool part_stats = false;
  // Record every round's starts, readies and writes to FILE.<rank>.
  std::string part_profile;
  // How transport partitions travel, by a name of
  // mpi/part/backend_choice.cc's table: "native" (RDMA write with
  // immediate), "persist", "rma" or "auto".
  std::string part_backend = "native";
  // "auto": inside a node, transport partitions of at most this many bytes
  // go as messages (persist), larger ones as writes with immediate.
  int64_t part_auto_persist_max = 4096;
  // "auto": the machine's calibration (tools/part_tune/backend_tune.sh
  // writes one): thresholds inside a node and between nodes. Empty: the
  // threshold above inside a node, native between nodes.
  std::string part_backend_table;

  // One-sided communication: what answers accumulates and lock requests
  // for a target that is computing without calling MPI. "thread": a helper
  // thread progresses the VCIs that carry windows every rma_progress_us
  // (a try-lock: it never holds up the owner); "none": only the target's own
  // MPI calls do. Puts and gets need neither (they are RDMA).
  std::string rma_progress = "thread";
  int rma_progress_us = 200;

  // Dynamic processes: seconds MPI_Comm_connect waits for an
  // MPI_Comm_accept on a port that exists (MPI-4.1 11.8.2 lets it time out;
  // MPICH waits 180 s too); 0 waits for ever.
  int connect_timeout_s = 180;
  // MPI_T: event instances kept per registration for callbacks that asked
  // for a context without locks (delivered at the next MPI_T call or
  // blocking call); past it they are counted and reported to the dropped
  // handler. Read at MPI_T_init_thread; writable through MPI_T while running.
  int mpit_event_queue = 4096;

  // Reads the MINIMPI_* environment; an unknown value is an error that names
  // the variable and lists the accepted values (for the choices, those of
  // `choices`).
  static absl::StatusOr<Settings> FromEnvironment(const ChoiceLists& choices);
};

// The collectives whose algorithm a MINIMPI_COLL_<NAME> variable chooses
// (NAME is the upper-cased entry).
inline constexpr const char* kCollectiveNames[] = {
    "barrier",        "bcast",
    "reduce",         "allreduce",
    "gather",         "gatherv",
    "scatter",        "scatterv",
    "allgather",      "allgatherv",
    "alltoall",       "alltoallv",
    "reduce_scatter", "reduce_scatter_block",
    "scan",           "exscan"};

struct SettingInfo {
  std::string name;   // MINIMPI_...
  std::string value;  // the value in force
  std::string default_value;
  std::string description;  // one line
};

// One entry per MINIMPI_* variable, in a stable order; the choices'
// descriptions list the values of `choices`.
std::vector<SettingInfo> DescribeSettings(const Settings& settings,
                                          const ChoiceLists& choices);

// A value for a MINIMPI_* variable that Settings::FromEnvironment takes
// instead of the environment's: how MPI_T_cvar_write before MPI_Init is
// honoured by MPI_Init (the environment itself is never changed).
void SetSettingOverride(const std::string& name, const std::string& value);
void ClearSettingOverride(const std::string& name);

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_SETTINGS_H_
