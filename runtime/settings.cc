#include "runtime/settings.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace minimpi::runtime {
namespace {

// Values MPI_T_cvar_write gave before MPI_Init (SetSettingOverride); they
// win over the environment, which is never changed.
std::mutex override_mutex;
std::map<std::string, std::string>& Overrides() {
  static auto* overrides = new std::map<std::string, std::string>;
  return *overrides;
}

const char* Env(const char* name) {
  {
    std::lock_guard<std::mutex> lock(override_mutex);
    auto it = Overrides().find(name);
    // A node of the map stays put: the pointer lives until the next
    // override of the same name, which only a tool makes before MPI_Init.
    if (it != Overrides().end()) return it->second.c_str();
  }
  const char* value = std::getenv(name);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

absl::Status ReadChoice(const char* name,
                        const std::vector<std::string>& choices,
                        std::string& out) {
  const char* value = Env(name);
  if (value == nullptr) return absl::OkStatus();
  for (const std::string& choice : choices) {
    if (value == choice) {
      out = value;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      name, "=", value, " is not one of: ", absl::StrJoin(choices, ", ")));
}

std::vector<std::string> Names(const std::vector<Choice>& choices) {
  std::vector<std::string> names;
  names.reserve(choices.size());
  for (const Choice& choice : choices) names.push_back(choice.name);
  return names;
}

// A choice whose values an owner's table gives (ChoiceLists); an empty list
// takes any value unchecked.
absl::Status ReadListedChoice(const char* name,
                              const std::vector<Choice>& choices,
                              std::string& out) {
  if (choices.empty()) {
    if (const char* value = Env(name)) out = value;
    return absl::OkStatus();
  }
  return ReadChoice(name, Names(choices), out);
}

// "a, b, c": the values of a choice, for its description.
std::string JoinNames(const std::vector<Choice>& choices) {
  return absl::StrJoin(Names(choices), ", ");
}

// "a (what a is), b (what b is)": the values with their descriptions, for a
// choice whose descriptions are short enough to give inline.
std::string JoinNamesWithDescriptions(const std::vector<Choice>& choices) {
  return absl::StrJoin(choices, ", ", [](std::string* out, const Choice& c) {
    absl::StrAppend(out, c.name, " (", c.description, ")");
  });
}

template <typename Int>
absl::Status ReadInt(const char* name, Int min, Int max, Int& out) {
  const char* value = Env(name);
  if (value == nullptr) return absl::OkStatus();
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < static_cast<int64_t>(min) ||
      parsed > static_cast<int64_t>(max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "=", value, " must be an integer in [", min, ", ", max, "]"));
  }
  out = static_cast<Int>(parsed);
  return absl::OkStatus();
}

// An integer setting that may also be "auto" (kept as -1).
absl::Status ReadIntOrAuto(const char* name, int min, int max, int& out) {
  const char* value = Env(name);
  if (value != nullptr && std::string(value) == "auto") {
    out = -1;
    return absl::OkStatus();
  }
  return ReadInt(name, min, max, out);
}

std::string SpinText(int spin_us) {
  return spin_us < 0 ? "auto" : absl::StrCat(spin_us);
}

}  // namespace

absl::StatusOr<Settings> Settings::FromEnvironment(const ChoiceLists& choices) {
  Settings s;
  absl::Status status;
  status.Update(
      ReadListedChoice("MINIMPI_TRANSPORT", choices.transports, s.transport));
  status.Update(ReadInt("MINIMPI_NODE_SPLIT", 1, 1 << 16, s.node_split));
  if (const char* interface = Env("MINIMPI_TCP_IF")) {
    s.tcp_interface = interface;
  }
  status.Update(ReadInt("MINIMPI_TCP_CONNECT_TIMEOUT_MS", 1, 3'600'000,
                        s.tcp_connect_timeout_ms));
  status.Update(
      ReadInt("MINIMPI_TCP_PROGRESS_US", 0, 10'000'000, s.tcp_progress_us));
  if (const char* congestion = Env("MINIMPI_TCP_CONGESTION")) {
    s.tcp_congestion = congestion;
    // The kernel's names are at most 15 characters (TCP_CA_NAME_MAX).
    if (s.tcp_congestion.size() > 15) {
      status.Update(absl::InvalidArgumentError(absl::StrCat(
          "MINIMPI_TCP_CONGESTION=", s.tcp_congestion,
          " is longer than any congestion control's name (reno, cubic, "
          "bbr, ...; or system)")));
    }
  }
  if (const char* device = Env("MINIMPI_IB_DEVICE")) s.ib_device = device;
  status.Update(ReadInt("MINIMPI_IB_PORT", 0, 255, s.ib_port));
  status.Update(
      ReadIntOrAuto("MINIMPI_IB_GID_INDEX", 0, 1 << 16, s.ib_gid_index));
  status.Update(ReadInt("MINIMPI_IB_CREDITS", 1, 4096, s.ib_credits));
  status.Update(
      ReadInt("MINIMPI_IB_RECEIVE_BUFFERS", 1, 1 << 20, s.ib_receive_buffers));
  status.Update(ReadInt("MINIMPI_IB_SEND_QUEUE", 4, 1 << 16, s.ib_send_queue));
  if (const char* library = Env("MINIMPI_IB_TEST_DEVICE")) {
    s.ib_test_device = library;
  }
  std::string verbose = s.verbose ? "1" : "0";
  status.Update(ReadChoice("MINIMPI_VERBOSE", {"0", "1"}, verbose));
  s.verbose = verbose == "1";
  status.Update(ReadInt("MINIMPI_NUM_VCIS", 1, 64, s.num_vcis));
  status.Update(ReadInt("MINIMPI_EP_VCIS", 0, 960, s.endpoint_vcis));
  status.Update(ReadChoice("MINIMPI_EP_PROGRESS", {"own", "process"},
                           s.endpoint_progress));
  status.Update(ReadInt<size_t>("MINIMPI_EAGER_MAX", 0, 1 << 20, s.eager_max));
  int tcp_eager_max = -1;
  status.Update(
      ReadIntOrAuto("MINIMPI_TCP_EAGER_MAX", 0, 1 << 20, tcp_eager_max));
  s.tcp_eager_max = tcp_eager_max >= 0
                        ? static_cast<size_t>(tcp_eager_max)
                        : std::min<size_t>(8 * s.eager_max, 1 << 20);
  status.Update(ReadInt<size_t>("MINIMPI_RNDV_SPLIT_MIN", 0, size_t{1} << 40,
                                s.rendezvous_split_min));
  status.Update(ReadInt<size_t>("MINIMPI_NET_READ_PIECE", 0, size_t{1} << 40,
                                s.network_read_piece));
  if (s.network_read_piece > 0 && s.network_read_piece < kMinNetworkReadPiece) {
    // Every piece is a posted read (and a queued copy while the VCI has
    // too many outstanding): tiny pieces would make millions of them.
    status.Update(absl::InvalidArgumentError(
        absl::StrCat("MINIMPI_NET_READ_PIECE=", s.network_read_piece,
                     " must be 0 or at least ", kMinNetworkReadPiece)));
  }
  status.Update(ReadInt<size_t>("MINIMPI_GATHER_MIN_PIECE", 0, size_t{1} << 40,
                                s.gather_min_piece));
  status.Update(ReadInt<size_t>("MINIMPI_SHM_RING_BYTES", 4096, size_t{1} << 30,
                                s.shm_ring_bytes));
  status.Update(ReadInt<size_t>("MINIMPI_SHM_PULL_MIN", 0, size_t{1} << 40,
                                s.shm_pull_min));
  status.Update(ReadChoice("MINIMPI_WAIT_POLICY",
                           {"auto", "sleep", "yield", "spin"}, s.wait_policy));
  status.Update(
      ReadIntOrAuto("MINIMPI_WAIT_SPIN_US", 0, 10'000'000, s.wait_spin_us));
  status.Update(ReadInt("MINIMPI_WAIT_QUIET_SPIN_US", 0, 10'000'000,
                        s.wait_quiet_spin_us));
  status.Update(
      ReadIntOrAuto("MINIMPI_WAIT_YIELD_US", 0, 10'000'000, s.wait_yield_us));
  status.Update(
      ReadInt("MINIMPI_WAIT_SLEEP_MAX_US", 1, 10'000'000, s.wait_sleep_max_us));
  std::string wait_move = s.wait_move ? "1" : "0";
  status.Update(ReadChoice("MINIMPI_WAIT_MOVE", {"0", "1"}, wait_move));
  s.wait_move = wait_move == "1";
  status.Update(
      ReadListedChoice("MINIMPI_MATCH", choices.match_engines, s.match));
  status.Update(ReadInt("MINIMPI_MATCH_THETA", 1, 1 << 30, s.match_theta));
  status.Update(ReadInt("MINIMPI_MATCH_KC", 0, 1 << 16, s.match_kc));
  status.Update(ReadInt("MINIMPI_MATCH_KP", 0, 1 << 16, s.match_kp));
  std::string match_stats = s.match_stats ? "1" : "0";
  status.Update(ReadChoice("MINIMPI_MATCH_STATS", {"0", "1"}, match_stats));
  s.match_stats = match_stats == "1";
  status.Update(
      ReadChoice("MINIMPI_BIND_TO", {"auto", "none", "core"}, s.bind_to));
  std::string check = s.collective_check ? "1" : "0";
  status.Update(ReadChoice("MINIMPI_COLL_CHECK", {"0", "1"}, check));
  s.collective_check = check == "1";
  status.Update(ReadInt<size_t>("MINIMPI_COLL_SHM_CELL", 0, size_t{1} << 26,
                                s.coll_shm_cell));
  status.Update(ReadInt<size_t>("MINIMPI_COLL_SHM_MAX", 0, size_t{1} << 40,
                                s.coll_shm_max));
  status.Update(ReadInt<size_t>("MINIMPI_COLL_SHM_DIRECT", 0, size_t{1} << 40,
                                s.coll_shm_direct));
  status.Update(ReadInt<size_t>("MINIMPI_COLL_SHM_SLOT", 0, size_t{1} << 20,
                                s.coll_shm_slot));
  status.Update(ReadListedChoice("MINIMPI_PART_AGGR", choices.part_aggregators,
                                 s.part_aggregator));
  status.Update(ReadInt<size_t>("MINIMPI_PART_AGGR_SIZE", 1, size_t{1} << 40,
                                s.part_aggregation_size));
  if (const char* table = Env("MINIMPI_PART_TABLE")) s.part_table = table;
  if (const char* loggp = Env("MINIMPI_PART_LOGGP")) s.part_loggp = loggp;
  status.Update(
      ReadInt("MINIMPI_PART_DELTA_US", 0, 10'000'000, s.part_delta_us));
  status.Update(
      ReadInt("MINIMPI_PART_DELAY_US", 0, 100'000'000, s.part_delay_us));
  status.Update(
      ReadInt("MINIMPI_PART_MODEL_SLACK", 0, 1000, s.part_model_slack_percent));
  std::string part_stats = s.part_stats ? "1" : "0";
  status.Update(ReadChoice("MINIMPI_PART_STATS", {"0", "1"}, part_stats));
  s.part_stats = part_stats == "1";
  if (const char* profile = Env("MINIMPI_PART_PROFILE")) {
    s.part_profile = profile;
  }
  status.Update(ReadListedChoice("MINIMPI_PART_BACKEND", choices.part_backends,
                                 s.part_backend));
  status.Update(ReadInt<int64_t>("MINIMPI_PART_AUTO_PERSIST_MAX", 0,
                                 int64_t{1} << 40, s.part_auto_persist_max));
  if (const char* table = Env("MINIMPI_PART_BACKEND_TABLE")) {
    s.part_backend_table = table;
  }
  status.Update(
      ReadChoice("MINIMPI_RMA_PROGRESS", {"thread", "none"}, s.rma_progress));
  status.Update(
      ReadInt("MINIMPI_RMA_PROGRESS_US", 1, 10'000'000, s.rma_progress_us));
  status.Update(
      ReadInt("MINIMPI_CONNECT_TIMEOUT", 0, 1'000'000, s.connect_timeout_s));
  status.Update(
      ReadInt("MINIMPI_MPIT_EVENT_QUEUE", 1, 1 << 24, s.mpit_event_queue));
  for (const char* collective : kCollectiveNames) {
    std::string variable =
        absl::AsciiStrToUpper(absl::StrCat("MINIMPI_COLL_", collective));
    if (const char* value = Env(variable.c_str())) {
      s.collective_algorithms[collective] = value;
    }
  }
  if (!status.ok()) return status;
  return s;
}

std::vector<SettingInfo> DescribeSettings(const Settings& s,
                                          const ChoiceLists& choices) {
  const Settings d;
  std::vector<SettingInfo> described = {
      {"MINIMPI_TRANSPORT", s.transport, d.transport,
       absl::StrCat("transport for every pair of ranks: ",
                    JoinNamesWithDescriptions(choices.transports))},
      {"MINIMPI_NODE_SPLIT", absl::StrCat(s.node_split),
       absl::StrCat(d.node_split),
       "splits each node's ranks into this many pretend nodes (contiguous "
       "blocks), to exercise cross-node paths on one machine"},
      {"MINIMPI_TCP_IF", s.tcp_interface.empty() ? "auto" : s.tcp_interface,
       "auto",
       "net/tcp: interface name or IPv4 address to listen on; auto: the "
       "first non-loopback interface that is up"},
      {"MINIMPI_TCP_CONNECT_TIMEOUT_MS", absl::StrCat(s.tcp_connect_timeout_ms),
       absl::StrCat(d.tcp_connect_timeout_ms),
       "net/tcp: milliseconds a connection may take before the job ends"},
      {"MINIMPI_TCP_PROGRESS_US", absl::StrCat(s.tcp_progress_us),
       absl::StrCat(d.tcp_progress_us),
       "net/tcp: a helper thread moves RDMA data for VCIs not polled for "
       "this many microseconds (as a NIC would); 0: no helper thread"},
      {"MINIMPI_TCP_CONGESTION", s.tcp_congestion, d.tcp_congestion,
       "net/tcp: congestion control of minimpi's sockets (a kernel name: "
       "reno, cubic, bbr, ...); system: the kernel's default"},
      {"MINIMPI_IB_DEVICE", s.ib_device.empty() ? "auto" : s.ib_device, "auto",
       "net/ib: RDMA device by name (e.g. mlx5_0); auto: the first with an "
       "active port"},
      {"MINIMPI_IB_PORT", absl::StrCat(s.ib_port), absl::StrCat(d.ib_port),
       "net/ib: port number; 0: the device's first active port"},
      {"MINIMPI_IB_GID_INDEX", SpinText(s.ib_gid_index), "auto",
       "net/ib: GID table index (RoCE); auto: RoCE v2 with an IPv4 "
       "address, else RoCE v2, else the first valid entry"},
      {"MINIMPI_IB_CREDITS", absl::StrCat(s.ib_credits),
       absl::StrCat(d.ib_credits),
       "net/ib: receive buffers per connection: messages a peer may have in "
       "flight before it waits for credits"},
      {"MINIMPI_IB_RECEIVE_BUFFERS", absl::StrCat(s.ib_receive_buffers),
       absl::StrCat(d.ib_receive_buffers),
       "net/ib: most receive buffers per VCI; connections past it share "
       "the posted ones (credits overcommitted, hardware retries cover)"},
      {"MINIMPI_IB_SEND_QUEUE", absl::StrCat(s.ib_send_queue),
       absl::StrCat(d.ib_send_queue),
       "net/ib: work requests a queue pair may have outstanding"},
      {"MINIMPI_IB_TEST_DEVICE",
       s.ib_test_device.empty() ? "none" : s.ib_test_device, "none",
       "net/ib: for tests, a shared library implementing verbs in software "
       "(libminimpi_softib.so) instead of libibverbs"},
      {"MINIMPI_VERBOSE", s.verbose ? "1" : "0", "0",
       "1: rank 0 says what setup decided (a transport falling back); "
       "mpiexec -v sets it"},
      {"MINIMPI_NUM_VCIS", absl::StrCat(s.num_vcis), absl::StrCat(d.num_vcis),
       "virtual communication interfaces per process (1-64); communicators "
       "are spread over them"},
      {"MINIMPI_EP_VCIS", absl::StrCat(s.endpoint_vcis),
       absl::StrCat(d.endpoint_vcis),
       "VCIs a process keeps for endpoints (0-960): the most endpoints it "
       "may hold at once (MPIX_Comm_create_endpoints)"},
      {"MINIMPI_EP_PROGRESS", s.endpoint_progress, d.endpoint_progress,
       "what a thread waiting on an endpoint progresses: own (its endpoint's "
       "VCI only) or process (also the process's other VCIs when idle)"},
      {"MINIMPI_EAGER_MAX", absl::StrCat(s.eager_max),
       absl::StrCat(d.eager_max),
       "largest message (bytes) sent eagerly; larger ones use single-copy "
       "rendezvous"},
      {"MINIMPI_TCP_EAGER_MAX", absl::StrCat(s.tcp_eager_max),
       "auto (8 x MINIMPI_EAGER_MAX)",
       "net/tcp: largest message (bytes) sent eagerly between nodes; larger "
       "ones use rendezvous (a read request answered with the data)"},
      {"MINIMPI_RNDV_SPLIT_MIN", absl::StrCat(s.rendezvous_split_min),
       absl::StrCat(d.rendezvous_split_min),
       "rendezvous messages (bytes) at least this large are copied by "
       "sender and receiver at once, half each, between ranks of one node; "
       "0 turns it off"},
      {"MINIMPI_NET_READ_PIECE", absl::StrCat(s.network_read_piece),
       absl::StrCat(d.network_read_piece),
       "a rendezvous read between nodes goes as pieces of this many bytes "
       "(at least 4096), all posted at once; 0: one read"},
      {"MINIMPI_GATHER_MIN_PIECE", absl::StrCat(s.gather_min_piece),
       absl::StrCat(d.gather_min_piece),
       "non-contiguous rendezvous data in pieces smaller than this (bytes, "
       "on average) is staged in a contiguous copy; larger pieces move in "
       "place; 0: always in place"},
      {"MINIMPI_SHM_RING_BYTES", absl::StrCat(s.shm_ring_bytes),
       absl::StrCat(d.shm_ring_bytes),
       "bytes per shared-memory ring (one per pair of VCIs that talk, made "
       "on first use; a small message takes 64); at least the eager limit "
       "plus 2 KiB"},
      {"MINIMPI_SHM_PULL_MIN", absl::StrCat(s.shm_pull_min),
       absl::StrCat(d.shm_pull_min),
       "net/shm: contiguous writes with immediate (partitioned) of at least "
       "this many bytes are copied by the receiver when it takes the "
       "notification, not by the sending thread; 0: never"},
      {"MINIMPI_WAIT_POLICY", s.wait_policy, d.wait_policy,
       "how a blocked call waits: auto or sleep (poll, then sleep until a "
       "peer rings the doorbell), yield (poll, then sched_yield), spin "
       "(poll until done)"},
      {"MINIMPI_WAIT_SPIN_US", SpinText(s.wait_spin_us),
       SpinText(d.wait_spin_us),
       "microseconds a blocked call polls before it yields or sleeps; auto: "
       "100, or 0 when ranks x threads (OMP_NUM_THREADS) outnumber cores"},
      {"MINIMPI_WAIT_QUIET_SPIN_US", absl::StrCat(s.wait_quiet_spin_us),
       absl::StrCat(d.wait_quiet_spin_us),
       "microseconds a blocked call keeps polling past MINIMPI_WAIT_SPIN_US "
       "while its thread sees no other task wanting its core (no "
       "involuntary context switch lately); 0: never"},
      {"MINIMPI_WAIT_YIELD_US", SpinText(s.wait_yield_us),
       SpinText(d.wait_yield_us),
       "sleep policy: microseconds a blocked call then yields between polls "
       "before it sleeps; auto: 50 when ranks x threads outnumber cores, "
       "else 0"},
      {"MINIMPI_WAIT_SLEEP_MAX_US", absl::StrCat(s.wait_sleep_max_us),
       absl::StrCat(d.wait_sleep_max_us),
       "longest single sleep of a blocked call (microseconds); a safety net, "
       "every event that ends a wait rings the doorbell"},
      {"MINIMPI_WAIT_MOVE", s.wait_move ? "1" : "0", d.wait_move ? "1" : "0",
       "1: a waiter that finds an awake rank of its node on its own core "
       "moves to another core (the later rank of the two); 0: it only "
       "skips its spin"},
      {"MINIMPI_MATCH", s.match, d.match,
       absl::StrCat("matching engine: ", JoinNames(choices.match_engines),
                    " (minimpi_info describes them)")},
      {"MINIMPI_MATCH_THETA", absl::StrCat(s.match_theta),
       absl::StrCat(d.match_theta),
       "PNP: length of a shared point-to-point queue that promotes its heavy "
       "senders to partners"},
      {"MINIMPI_MATCH_KC", absl::StrCat(s.match_kc), absl::StrCat(d.match_kc),
       "COL: at most KC * sqrt(ranks) dedicated collective queues"},
      {"MINIMPI_MATCH_KP", absl::StrCat(s.match_kp), absl::StrCat(d.match_kp),
       "PNP: at most KP * sqrt(ranks) partner queues"},
      {"MINIMPI_MATCH_STATS", s.match_stats ? "1" : "0",
       d.match_stats ? "1" : "0",
       "1: time queue searches and print matching statistics per rank at "
       "MPI_Finalize"},
      {"MINIMPI_BIND_TO", s.bind_to, d.bind_to,
       "rank binding: core, none, or auto (core when 2 or more ranks fit on "
       "the node's cores, OMP_NUM_THREADS is unset or 1, the program did "
       "not ask for MPI_THREAD_MULTIPLE, and srun did not start it); mpiexec "
       "--bind-to sets it"},
      {"MINIMPI_COLL_CHECK", s.collective_check ? "1" : "0",
       d.collective_check ? "1" : "0",
       "1: before each blocking collective, check that all ranks passed the "
       "same root and data size (reported on every rank; for debugging)"},
      {"MINIMPI_COLL_SHM_CELL", absl::StrCat(s.coll_shm_cell),
       absl::StrCat(d.coll_shm_cell),
       "node path: bytes of each of a rank's two cells in a communicator's "
       "shared-memory region (blocking barrier, bcast, reduce, allreduce, "
       "gather, scatter, allgather inside one node); 0: no node path"},
      {"MINIMPI_COLL_SHM_SLOT", absl::StrCat(s.coll_shm_slot),
       absl::StrCat(d.coll_shm_slot),
       "node path: calls with at most this many bytes per rank take one of "
       "64 slots per rank, so a root or sender runs up to 64 calls ahead of "
       "its readers; 0: they use the cells"},
      {"MINIMPI_COLL_SHM_MAX", absl::StrCat(s.coll_shm_max),
       absl::StrCat(d.coll_shm_max),
       "node path: the automatic choice takes it for size classes starting at "
       "or below this many bytes per rank or alltoall block (twice that "
       "for reduce, allreduce and alltoall; MINIMPI_COLL_<NAME>=shm: any "
       "size)"},
      {"MINIMPI_COLL_SHM_DIRECT", absl::StrCat(s.coll_shm_direct),
       absl::StrCat(d.coll_shm_direct),
       "node path: allgather, alltoall, allreduce and (above 2 ranks) bcast "
       "data of at least this many bytes per block is read straight from "
       "the writer's buffer (one cross-memory copy, any size); 0: never"},
      {"MINIMPI_PART_AGGR", s.part_aggregator, d.part_aggregator,
       absl::StrCat(
           "partitioned aggregator: ", JoinNames(choices.part_aggregators),
           " (MPI_Info key minimpi_part_aggr overrides it per "
           "request)")},
      {"MINIMPI_PART_AGGR_SIZE", absl::StrCat(s.part_aggregation_size),
       absl::StrCat(d.part_aggregation_size),
       "size aggregator: gcd(send, receive partitions) writes merged up to "
       "this many bytes"},
      {"MINIMPI_PART_TABLE", s.part_table, d.part_table,
       "table aggregator: tuning table file (part_tune writes one); empty: "
       "built-in defaults"},
      {"MINIMPI_PART_LOGGP", s.part_loggp, d.part_loggp,
       "LogGP parameters of the ploggp/timer/adaptive aggregators: a file "
       "(loggp_probe writes one), probe (measure at the first partitioned "
       "init), empty: built-in defaults"},
      {"MINIMPI_PART_DELTA_US", absl::StrCat(s.part_delta_us),
       absl::StrCat(d.part_delta_us),
       "timer aggregator: microseconds the first thread of a transport "
       "partition waits before sending what is ready"},
      {"MINIMPI_PART_DELAY_US", absl::StrCat(s.part_delay_us),
       absl::StrCat(d.part_delay_us),
       "ploggp/timer aggregators: laggard delay (microseconds) the PLogGP "
       "model plans for"},
      {"MINIMPI_PART_MODEL_SLACK", absl::StrCat(s.part_model_slack_percent),
       absl::StrCat(d.part_model_slack_percent),
       "ploggp/timer/adaptive: the fewest writes whose predicted time is "
       "within this many percent of the PLogGP model's best"},
      {"MINIMPI_PART_STATS", s.part_stats ? "1" : "0", d.part_stats ? "1" : "0",
       "1: print each partitioned request's statistics (writes per round, "
       "partitions per write, model prediction) when it is freed"},
      {"MINIMPI_PART_PROFILE", s.part_profile, d.part_profile,
       "FILE: record partitioned rounds (starts, readies, writes) to "
       "FILE.<rank> for tools/part_profile"},
      {"MINIMPI_PART_BACKEND", s.part_backend, d.part_backend,
       absl::StrCat("partitioned: how transport partitions travel: ",
                    JoinNamesWithDescriptions(choices.part_backends),
                    "; info key minimpi_part_backend overrides it")},
      {"MINIMPI_PART_AUTO_PERSIST_MAX", absl::StrCat(s.part_auto_persist_max),
       absl::StrCat(d.part_auto_persist_max),
       "partitioned auto backend: inside a node, requests whose partitions "
       "hold at most this many bytes go as messages (persist), others as "
       "writes with immediate (native)"},
      {"MINIMPI_PART_BACKEND_TABLE", s.part_backend_table, d.part_backend_table,
       "partitioned auto backend: the machine's calibration file "
       "(tools/part_tune/backend_tune.sh writes one), thresholds inside a "
       "node and between nodes; empty: MINIMPI_PART_AUTO_PERSIST_MAX inside, "
       "native between"},
      {"MINIMPI_RMA_PROGRESS", s.rma_progress, d.rma_progress,
       "one-sided: thread: a helper thread answers accumulates and locks for "
       "a target busy outside MPI (puts and gets are RDMA and need none); "
       "none: only the target's MPI calls do"},
      {"MINIMPI_RMA_PROGRESS_US", absl::StrCat(s.rma_progress_us),
       absl::StrCat(d.rma_progress_us),
       "one-sided: microseconds between the helper thread's looks at the "
       "VCIs that carry windows (16x that while it finds nothing)"},
      {"MINIMPI_CONNECT_TIMEOUT", absl::StrCat(s.connect_timeout_s),
       absl::StrCat(d.connect_timeout_s),
       "dynamic processes: seconds MPI_Comm_connect waits for an "
       "MPI_Comm_accept on an open port before MPI_ERR_PORT (0: for ever)"},
      {"MINIMPI_MPIT_EVENT_QUEUE", absl::StrCat(s.mpit_event_queue),
       absl::StrCat(d.mpit_event_queue),
       "MPI_T: event instances queued per registration for callbacks that "
       "run outside locks; more are dropped and counted"},
  };
  for (const char* collective : kCollectiveNames) {
    auto chosen = s.collective_algorithms.find(collective);
    described.push_back(
        {absl::AsciiStrToUpper(absl::StrCat("MINIMPI_COLL_", collective)),
         chosen == s.collective_algorithms.end() ? "auto" : chosen->second,
         "auto",
         absl::StrCat("algorithm of MPI_",
                      std::string(1, absl::ascii_toupper(collective[0])),
                      collective + 1,
                      " and its nonblocking form; minimpi_info lists them")});
  }
  return described;
}

void SetSettingOverride(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(override_mutex);
  Overrides()[name] = value;
}

void ClearSettingOverride(const std::string& name) {
  std::lock_guard<std::mutex> lock(override_mutex);
  Overrides().erase(name);
}

}  // namespace minimpi::runtime
