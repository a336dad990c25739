#include "net/ib/ib_transport.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "net/tcp/tcp_transport.h"

namespace minimpi::net::ib {
namespace {

constexpr char kAddressKey[] = "minimpi.ib";
// Registered buffers each VCI keeps for sends too large to go inline.
constexpr int kSendBuffers = 32;
// Gathered transfers up to this many pieces build their work requests on
// the stack: no allocation per post in the common case.
constexpr size_t kInlinePieces = 16;
// Sleep slices while a VCI waits for credits: returned credits arrive as
// an RDMA write, which raises no completion here.
constexpr int64_t kCreditWaitSliceNs = 50'000;
constexpr int kReceiveAccess = IBV_ACCESS_LOCAL_WRITE;
constexpr int kRemoteAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

size_t RoundUp(size_t value, size_t to) { return (value + to - 1) / to * to; }

struct FreeDeleter {
  void operator()(char* memory) const { std::free(memory); }
};

int MtuBytes(ibv_mtu mtu) { return 128 << static_cast<int>(mtu); }

bool IsIpv4Mapped(const ibv_gid& gid) {
  static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof(kPrefix)) == 0;
}

bool IsZero(const ibv_gid& gid) {
  for (uint8_t byte : gid.raw) {
    if (byte != 0) return false;
  }
  return true;
}

// Walks a gathered read: one work request per piece of a remote segment
// whose local side fits in `max_sge` entries. Calls `emit(remote address,
// sges, count)` for each; returns how many there are.
template <typename Emit>
int SplitRead(const IoSegment* local, int local_count, const IoSegment* remote,
              int remote_count, int max_sge, Emit emit) {
  int requests = 0;
  int li = 0;
  size_t local_used = 0;  // bytes of local[li] already covered
  absl::InlinedVector<ibv_sge, kInlinePieces> sges;
  for (int ri = 0; ri < remote_count; ++ri) {
    uint64_t remote_address = remote[ri].address;
    size_t remote_left = remote[ri].length;
    while (remote_left > 0) {
      sges.clear();
      const uint64_t request_address = remote_address;
      size_t request_bytes = 0;
      while (remote_left > 0 && static_cast<int>(sges.size()) < max_sge &&
             li < local_count) {
        const size_t take =
            std::min(local[li].length - local_used, remote_left);
        if (take > 0) {
          sges.push_back(
              {local[li].address + local_used, static_cast<uint32_t>(take), 0});
        }
        local_used += take;
        remote_left -= take;
        remote_address += take;
        request_bytes += take;
        if (local_used == local[li].length) {
          ++li;
          local_used = 0;
        }
      }
      if (request_bytes == 0) {
        remote_left = 0;  // local side exhausted: lengths disagreed
        break;
      }
      emit(request_address, sges.data(), static_cast<int>(sges.size()));
      ++requests;
    }
  }
  return requests;
}

}  // namespace

// Everything one VCI owns.
struct IbTransport::Vci {
  std::mutex setup_mutex;
  std::atomic<bool> ready{false};
  VerbsCq* cq = nullptr;
  VerbsSrq* srq = nullptr;

  // Guarded by setup_mutex.
  absl::flat_hash_map<uint64_t, Connection*> by_peer;
  absl::flat_hash_map<uint32_t, Connection*> by_qp_number;
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<std::unique_ptr<char, FreeDeleter>> receive_chunks;
  std::vector<VerbsMr> receive_mrs;
  std::atomic<int> receive_buffers{0};
  int overcommitted = 0;  // connections that added fewer than their credits
  // A receive buffer's bytes are followed by its chunk's local key, so a
  // consumed buffer is reposted with no lookup.
  size_t receive_stride = 0;

  // The owner's (the thread holding the VCI), set up before `ready`.
  absl::flat_hash_map<uint64_t, Connection*> owner_by_peer;
  absl::flat_hash_map<uint32_t, Connection*> owner_by_qp_number;
  std::vector<Op> ops;
  std::vector<uint32_t> free_ops;
  int budget_used = 0;
  std::unique_ptr<char, FreeDeleter> send_pool;
  VerbsMr send_mr;
  std::vector<char*> free_send_buffers;
  std::vector<Connection*> credit_backlog;
  uint64_t credit_waits = 0;
  uint64_t queue_full_waits = 0;
  uint64_t credit_returns = 0;
  std::atomic<bool> starving{false};  // read by sleepers

  // The doorbell (on the first VCI of a group).
  std::mutex doorbell_mutex;
  std::atomic<VerbsChannel*> channel{nullptr};
  int event_fd = -1;
  std::atomic<bool> armed{false};
  std::atomic<uint32_t> rings{0};
  std::atomic<int> sleepers{0};
};

absl::StatusOr<std::unique_ptr<Verbs>> LoadVerbs(
    const runtime::Settings& settings) {
  if (settings.ib_test_device.empty()) return CreateDeviceVerbs();
  // Loaded once and never unloaded: the verbs object's code lives there.
  void* library =
      dlopen(settings.ib_test_device.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("net/ib: MINIMPI_IB_TEST_DEVICE=", settings.ib_test_device,
                     " cannot be loaded: ", dlerror()));
  }
  auto factory = reinterpret_cast<TestDeviceFactory>(
      dlsym(library, kTestDeviceFactorySymbol));
  if (factory == nullptr) {
    return absl::NotFoundError(absl::StrCat("net/ib: ", settings.ib_test_device,
                                            " has no ",
                                            kTestDeviceFactorySymbol));
  }
  return std::unique_ptr<Verbs>(factory());
}

absl::StatusOr<PortChoice> ChoosePort(Verbs& verbs,
                                      const runtime::Settings& settings) {
  const std::vector<std::string> devices = verbs.ListDevices();
  if (devices.empty()) {
    return absl::NotFoundError(absl::StrCat("net/ib: no RDMA device (",
                                            verbs.provider(), " lists none)"));
  }
  std::vector<std::string> candidates = devices;
  if (!settings.ib_device.empty()) {
    if (std::find(devices.begin(), devices.end(), settings.ib_device) ==
        devices.end()) {
      return absl::NotFoundError(absl::StrCat(
          "net/ib: MINIMPI_IB_DEVICE=", settings.ib_device,
          " does not exist (devices: ", absl::StrJoin(devices, ", "), ")"));
    }
    candidates = {settings.ib_device};
  }
  std::vector<std::string> problems;
  for (const std::string& name : candidates) {
    VerbsContext* context = verbs.OpenDevice(name);
    if (context == nullptr) {
      problems.push_back(
          absl::StrCat(name, " cannot be opened: ", std::strerror(errno)));
      continue;
    }
    ibv_device_attr device{};
    if (verbs.QueryDevice(context, &device) != 0) {
      problems.push_back(absl::StrCat(name, ": ibv_query_device failed"));
      verbs.CloseDevice(context);
      continue;
    }
    const int first = settings.ib_port > 0 ? settings.ib_port : 1;
    const int last =
        settings.ib_port > 0 ? settings.ib_port : device.phys_port_cnt;
    for (int port = first; port <= last; ++port) {
      ibv_port_attr attr{};
      if (verbs.QueryPort(context, static_cast<uint8_t>(port), &attr) != 0) {
        problems.push_back(absl::StrCat(name, " has no port ", port));
        continue;
      }
      if (attr.state != IBV_PORT_ACTIVE) {
        problems.push_back(
            absl::StrCat(name, " port ", port, " is not active"));
        continue;
      }
      PortChoice choice;
      choice.device = name;
      choice.port = static_cast<uint8_t>(port);
      choice.ethernet = attr.link_layer == IBV_LINK_LAYER_ETHERNET;
      choice.lid = attr.lid;
      choice.mtu = attr.active_mtu;
      // GIDs: RoCE needs one; InfiniBand uses LIDs (one subnet).
      int best = -1, best_rank = -1;
      ibv_gid best_gid{};
      for (int index = 0; index < attr.gid_tbl_len; ++index) {
        ibv_gid_entry entry{};
        if (verbs.QueryGid(context, static_cast<uint8_t>(port),
                           static_cast<uint32_t>(index), &entry) != 0) {
          continue;
        }
        ibv_gid gid;
        std::memcpy(gid.raw, &entry.gid, sizeof(gid.raw));
        if (IsZero(gid)) continue;
        if (settings.ib_gid_index >= 0) {
          if (index != settings.ib_gid_index) continue;
          best = index;
          best_gid = gid;
          break;
        }
        const bool v2 = entry.gid_type == IBV_GID_TYPE_ROCE_V2;
        const int rank = (v2 ? 2 : 0) + (IsIpv4Mapped(gid) ? 1 : 0);
        if (rank > best_rank) {
          best = index;
          best_rank = rank;
          best_gid = gid;
        }
      }
      if (settings.ib_gid_index >= 0 && best < 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " has no valid GID at "
                                        "MINIMPI_IB_GID_INDEX=",
                                        settings.ib_gid_index));
        continue;
      }
      if (choice.ethernet && best < 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " is Ethernet (RoCE) but has no GID"));
        continue;
      }
      if (!choice.ethernet && choice.lid == 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " has no LID (no subnet manager?)"));
        continue;
      }
      if (choice.ethernet || settings.ib_gid_index >= 0) {
        choice.gid_index = best;
        choice.gid = best_gid;
      }
      verbs.CloseDevice(context);
      return choice;
    }
    verbs.CloseDevice(context);
  }
  return absl::NotFoundError(absl::StrCat("net/ib: no usable RDMA port: ",
                                          absl::StrJoin(problems, "; ")));
}

bool IbUsable(const runtime::Settings& settings, std::string* why) {
  absl::StatusOr<std::unique_ptr<Verbs>> verbs = LoadVerbs(settings);
  if (!verbs.ok()) {
    *why = std::string(verbs.status().message());
    return false;
  }
  absl::StatusOr<PortChoice> port = ChoosePort(**verbs, settings);
  if (!port.ok()) {
    *why = std::string(port.status().message());
    return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Transport>> CreateIbTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<Verbs>> verbs = LoadVerbs(settings);
  if (!verbs.ok()) return verbs.status();
  absl::StatusOr<std::unique_ptr<IbTransport>> transport =
      IbTransport::Create(bootstrap, settings, *std::move(verbs));
  if (!transport.ok()) return transport.status();
  return std::unique_ptr<Transport>(*std::move(transport));
}

IbTransport::IbTransport(runtime::Bootstrap& bootstrap,
                         const runtime::Settings& settings,
                         std::unique_ptr<Verbs> verbs)
    : bootstrap_(&bootstrap),
      verbs_(std::move(verbs)),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      num_vcis_(settings.num_vcis + settings.endpoint_vcis),
      shared_vcis_(settings.num_vcis),
      max_message_(kMaxHeaderBytes + settings.eager_max),
      credits_(settings.ib_credits),
      connect_timeout_ms_(settings.tcp_connect_timeout_ms) {}

absl::StatusOr<std::unique_ptr<IbTransport>> IbTransport::Create(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings,
    std::unique_ptr<Verbs> verbs) {
  if (settings.num_vcis < 1 || settings.endpoint_vcis < 0) {
    return absl::InvalidArgumentError("net/ib: need at least 1 VCI");
  }
  std::unique_ptr<IbTransport> transport(
      new IbTransport(bootstrap, settings, std::move(verbs)));
  absl::Status status = transport->Setup(bootstrap, settings);
  if (!status.ok()) return status;
  return transport;
}

absl::Status IbTransport::Setup(runtime::Bootstrap& bootstrap,
                                const runtime::Settings& settings) {
  absl::StatusOr<PortChoice> port = ChoosePort(*verbs_, settings);
  if (!port.ok()) return port.status();
  port_ = *port;
  context_ = verbs_->OpenDevice(port_.device);
  if (context_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "net/ib: cannot open ", port_.device, ": ", std::strerror(errno)));
  }
  pd_ = verbs_->AllocPd(context_);
  ibv_device_attr device{};
  if (pd_ == nullptr || verbs_->QueryDevice(context_, &device) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "net/ib: cannot set up ", port_.device, ": ", std::strerror(errno)));
  }
  send_queue_depth_ = std::min(settings.ib_send_queue, device.max_qp_wr);
  max_send_sge_ = std::max(1, std::min(device.max_sge, 16));
  receive_queue_capacity_ =
      std::min(device.max_srq_wr, settings.ib_receive_buffers);
  completion_budget_ = 4 * send_queue_depth_;
  cq_entries_ =
      std::min(device.max_cqe, completion_budget_ + receive_queue_capacity_);
  // A CQ must hold every completion that can be outstanding on it.
  if (cq_entries_ < completion_budget_ + receive_queue_capacity_) {
    receive_queue_capacity_ = std::max(0, cq_entries_ - completion_budget_);
  }
  if (receive_queue_capacity_ < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "net/ib: ", port_.device, " leaves no room for receive buffers (",
        device.max_srq_wr, " per shared receive queue, ", device.max_cqe,
        " completions per queue)"));
  }
  max_read_atomic_ = static_cast<uint8_t>(std::clamp(
      std::min(device.max_qp_rd_atom, device.max_qp_init_rd_atom), 1, 16));

  // What inline size the device grants: probe with a throwaway QP.
  {
    VerbsCq* cq = verbs_->CreateCq(context_, 4, nullptr);
    VerbsSrq* srq = verbs_->CreateSrq(pd_, 4, 1);
    if (cq == nullptr || srq == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          "net/ib: cannot create a completion or receive queue on ",
          port_.device, ": ", std::strerror(errno)));
    }
    for (uint32_t want : {256u, 128u, 64u, 0u}) {
      RcQpConfig config;
      config.send_cq = cq;
      config.recv_cq = cq;
      config.srq = srq;
      config.capabilities.max_send_wr =
          static_cast<uint32_t>(send_queue_depth_);
      config.capabilities.max_send_sge = static_cast<uint32_t>(max_send_sge_);
      config.capabilities.max_inline_data = want;
      uint32_t qp_num = 0;
      VerbsQp* qp = verbs_->CreateRcQp(pd_, config, &qp_num);
      if (qp == nullptr) continue;
      max_inline_ =
          std::min<uint32_t>(config.capabilities.max_inline_data, 256);
      verbs_->DestroyQp(qp);
      break;
    }
    verbs_->DestroySrq(srq);
    verbs_->DestroyCq(cq);
  }

  registrations_ = std::make_unique<RegistrationCache>(
      [this](void* address, size_t length, VerbsMr* mr) {
        return verbs_->RegMr(pd_, address, length, kRemoteAccess, mr);
      },
      [this](VerbsMr* mr) { verbs_->DeregMr(mr); }, size_t{64} << 20);

  absl::StatusOr<std::string> address =
      tcp::ListenAddress(settings.tcp_interface);
  if (!address.ok()) return address.status();
  absl::StatusOr<std::unique_ptr<ConnectionManager>> manager =
      ConnectionManager::Listen(*address, rank_, connect_timeout_ms_);
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);

  // One exchange: every rank's connection manager and what must agree.
  const char* link = port_.ethernet ? "roce" : "ib";
  absl::Status status = bootstrap.Put(
      kAddressKey, absl::StrCat(manager_->address(), " ", num_vcis_, " ",
                                max_message_, " ", link));
  if (status.ok()) status = bootstrap.Commit();
  if (status.ok()) status = bootstrap.Fence();
  if (!status.ok()) return status;
  std::vector<std::string> peers(size_);
  for (int peer = 0; peer < size_; ++peer) {
    absl::StatusOr<std::string> text = bootstrap.Get(peer, kAddressKey);
    if (!text.ok()) return text.status();
    std::vector<std::string> fields = absl::StrSplit(*text, ' ');
    int vcis = 0;
    size_t max_message = 0;
    if (fields.size() != 4 || !absl::SimpleAtoi(fields[1], &vcis) ||
        !absl::SimpleAtoi(fields[2], &max_message)) {
      return absl::InternalError(absl::StrCat("net/ib: malformed address of ",
                                              Who(peer), ": '", *text, "'"));
    }
    if (vcis != num_vcis_ || max_message != max_message_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net/ib: ", Who(peer), " uses ", vcis, " VCIs and ", max_message,
          "-byte messages but ", Who(rank_), " uses ", num_vcis_, " and ",
          max_message_, "; every rank must see the same MINIMPI_* settings"));
    }
    if (fields[3] != link) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net/ib: ", Who(peer), " is on ", fields[3], " but ", Who(rank_),
          " on ", link, "; InfiniBand and RoCE ports cannot talk"));
    }
    peers[peer] = fields[0];
  }

  vcis_ = std::make_unique<Vci[]>(num_vcis_);
  for (int v = 0; v < num_vcis_; ++v) {
    if (DoorbellOf(v) != v) continue;
    vcis_[v].event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (vcis_[v].event_fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("net/ib: eventfd failed: ", std::strerror(errno)));
    }
  }
  return manager_->Start(
      std::move(peers),
      [this](const ConnectMessage& message) { OnConnectMessage(message); },
      [this](int, const std::string& what) { Die(what); },
      {verbs_->AsyncEventFd(context_)}, [this](int fd) { OnAsyncEvent(fd); });
}

IbTransport::~IbTransport() {
  // The manager's thread creates and connects QPs and posts through
  // manager_: stop it first, while manager_ still points at it.
  if (manager_ != nullptr) manager_->Stop();
  if (vcis_ != nullptr) {
    for (int v = 0; v < num_vcis_; ++v) {
      Vci& state = vcis_[v];
      for (auto& connection : state.connections) {
        if (connection->qp != nullptr) verbs_->DestroyQp(connection->qp);
        if (connection->credit_word_mr.handle != nullptr) {
          verbs_->DeregMr(&connection->credit_word_mr);
        }
      }
      if (state.srq != nullptr) verbs_->DestroySrq(state.srq);
      if (state.cq != nullptr) verbs_->DestroyCq(state.cq);
      for (VerbsMr& mr : state.receive_mrs) verbs_->DeregMr(&mr);
      if (state.send_mr.handle != nullptr) verbs_->DeregMr(&state.send_mr);
    }
    for (int v = 0; v < num_vcis_; ++v) {
      Vci& state = vcis_[v];
      if (VerbsChannel* channel = state.channel.load()) {
        verbs_->DestroyCompChannel(channel);
      }
      if (state.event_fd >= 0) close(state.event_fd);
    }
  }
  registrations_.reset();
  if (pd_ != nullptr) verbs_->DeallocPd(pd_);
  if (context_ != nullptr) verbs_->CloseDevice(context_);
}

std::string IbTransport::Who(int rank) const {
  return absl::StrCat("rank ", rank, " (", bootstrap_->node_name(rank), ")");
}

void IbTransport::Die(const std::string& what) {
  const std::string line =
      absl::StrCat("minimpi: net/ib: ", Who(rank_), ": ", what);
  // Printed here as well: Slurm's PMIx plugin does not print the message
  // of an abort.
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  bootstrap_->Abort(1, line);
  std::abort();
}

void IbTransport::DieOnCompletion(Vci& state, const ibv_wc& wc) {
  const char* what = "receive";
  Connection* connection = nullptr;
  if (IsOperationWorkId(wc.wr_id)) {
    const uint32_t index = OperationIndex(wc.wr_id);
    if (index < state.ops.size()) {
      what = state.ops[index].what;
      connection = state.ops[index].connection;
    }
  } else {
    connection = ByQpNumber(state, wc.qp_num);
  }
  const std::string peer =
      connection != nullptr
          ? absl::StrCat(Who(connection->peer.rank), " VCI ",
                         connection->peer.vci)
          : absl::StrCat("an unknown peer (QP ", wc.qp_num, ")");
  Die(absl::StrCat(what, " with ", peer,
                   " failed: ", ibv_wc_status_str(wc.status), " (status ",
                   static_cast<int>(wc.status), ", vendor error 0x",
                   absl::Hex(wc.vendor_err), ")"));
}

void IbTransport::OnAsyncEvent(int) {
  AsyncEvent event;
  while (verbs_->GetAsyncEvent(context_, &event)) {
    switch (event.type) {
      case IBV_EVENT_CQ_ERR:
        Die("a completion queue overran (more completions than room)");
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR: {
        std::string peer = absl::StrCat("QP ", event.qp_num);
        for (int v = 0; v < num_vcis_; ++v) {
          std::lock_guard<std::mutex> lock(vcis_[v].setup_mutex);
          auto found = vcis_[v].by_qp_number.find(event.qp_num);
          if (found != vcis_[v].by_qp_number.end()) {
            peer = absl::StrCat(Who(found->second->peer.rank), " VCI ",
                                found->second->peer.vci);
          }
        }
        Die(absl::StrCat("the queue pair to ", peer,
                         " entered the error state (",
                         ibv_event_type_str(event.type), ")"));
      }
      case IBV_EVENT_DEVICE_FATAL:
        Die(absl::StrCat(port_.device, " failed (IBV_EVENT_DEVICE_FATAL)"));
      case IBV_EVENT_PORT_ERR:
        Die(absl::StrCat(port_.device, " port ", int{port_.port},
                         " went down"));
      default:
        break;  // informational (LID change, path migration, ...)
    }
  }
}

IbTransport::Vci& IbTransport::Ready(int vci) {
  Vci& state = vcis_[vci];
  if (state.ready.load(std::memory_order_acquire)) return state;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    if (state.ready.load(std::memory_order_relaxed)) return state;
    Vci& bell = vcis_[DoorbellOf(vci)];
    VerbsChannel* channel = nullptr;
    {
      std::lock_guard<std::mutex> bell_lock(bell.doorbell_mutex);
      channel = bell.channel.load(std::memory_order_relaxed);
      if (channel == nullptr) {
        channel = verbs_->CreateCompChannel(context_);
        if (channel == nullptr) {
          Die(absl::StrCat("cannot create a completion channel: ",
                           std::strerror(errno)));
        }
        bell.channel.store(channel, std::memory_order_release);
      }
    }
    state.cq = verbs_->CreateCq(context_, cq_entries_, channel);
    state.srq = verbs_->CreateSrq(
        pd_, static_cast<uint32_t>(receive_queue_capacity_), 1);
    if (state.cq == nullptr || state.srq == nullptr) {
      Die(absl::StrCat("cannot create the queues of VCI ", vci, ": ",
                       std::strerror(errno)));
    }
    state.receive_stride = RoundUp(max_message_ + sizeof(uint32_t), 64);
    const size_t stride = RoundUp(max_message_, 64);
    state.send_pool.reset(
        static_cast<char*>(std::aligned_alloc(64, stride * kSendBuffers)));
    if (!verbs_->RegMr(pd_, state.send_pool.get(), stride * kSendBuffers,
                       kReceiveAccess, &state.send_mr)) {
      Die(absl::StrCat("cannot register send buffers: ", std::strerror(errno)));
    }
    for (int i = kSendBuffers - 1; i >= 0; --i) {
      state.free_send_buffers.push_back(state.send_pool.get() + i * stride);
    }
    state.ops.resize(completion_budget_);
    for (int i = completion_budget_ - 1; i >= 0; --i) {
      state.free_ops.push_back(static_cast<uint32_t>(i));
    }
    state.ready.store(true, std::memory_order_release);
  }
  // A thread asleep on this doorbell (or, across nodes, on shared
  // memory's) before this VCI had a CQ must look at it now.
  RingDoorbell(vci);
  if (Transport* other = also_ring_.load(std::memory_order_acquire)) {
    other->RingDoorbell(vci);
  }
  return state;
}

IbTransport::Connection* IbTransport::CreateConnectionLocked(Vci& state,
                                                             PeerVci peer) {
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.vci = static_cast<int>(&state - vcis_.get());
  c.peer = peer;
  // The connection's receive buffers, posted to the VCI's shared queue,
  // while it has room (MINIMPI_IB_RECEIVE_BUFFERS). Past that the peer
  // still gets its credits, which then share the buffers already posted:
  // a full queue is met by the hardware's receiver-not-ready retry
  // (rnr_retry 7, unlimited), so nothing is lost, only delayed, and only
  // when more peers than the buffers cover send at the same moment.
  const int room = receive_queue_capacity_ -
                   state.receive_buffers.load(std::memory_order_relaxed);
  const int added = std::clamp(room, 0, credits_);
  if (added > 0) {
    const size_t stride = state.receive_stride;
    std::unique_ptr<char, FreeDeleter> chunk(
        static_cast<char*>(std::aligned_alloc(64, stride * added)));
    VerbsMr chunk_mr;
    if (chunk == nullptr || !verbs_->RegMr(pd_, chunk.get(), stride * added,
                                           kReceiveAccess, &chunk_mr)) {
      Die(absl::StrCat("cannot register receive buffers: ",
                       std::strerror(errno)));
    }
    for (int i = 0; i < added; ++i) {
      char* buffer = chunk.get() + i * stride;
      std::memcpy(buffer + max_message_, &chunk_mr.lkey, sizeof(uint32_t));
      RepostReceive(state, buffer);
    }
    state.receive_mrs.push_back(chunk_mr);
    state.receive_chunks.push_back(std::move(chunk));
    state.receive_buffers.fetch_add(added, std::memory_order_relaxed);
  }
  if (added < credits_) ++state.overcommitted;
  c.granted = static_cast<uint32_t>(credits_);
  c.return_credits = ReturnCredits(c.granted);

  // Word 0: the peer's running total of returned credits, written by it.
  // Word 8: ours for it, the source of our returning writes.
  c.credit_word_storage = std::make_unique<uint32_t[]>(16);
  if (!verbs_->RegMr(pd_, c.credit_word_storage.get(), 16 * sizeof(uint32_t),
                     kRemoteAccess, &c.credit_word_mr)) {
    Die(absl::StrCat("cannot register a credit word: ", std::strerror(errno)));
  }

  RcQpConfig config;
  config.send_cq = state.cq;
  config.recv_cq = state.cq;
  config.srq = state.srq;
  config.capabilities.max_send_wr = static_cast<uint32_t>(send_queue_depth_);
  config.capabilities.max_send_sge = static_cast<uint32_t>(max_send_sge_);
  config.capabilities.max_inline_data = max_inline_;
  c.qp = verbs_->CreateRcQp(pd_, config, &c.qp_num);
  if (c.qp == nullptr) {
    Die(absl::StrCat("cannot create a queue pair for ", Who(peer.rank), ": ",
                     std::strerror(errno)));
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port_.port;
  attr.qp_access_flags =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                           IBV_QP_ACCESS_FLAGS) != 0) {
    Die(absl::StrCat("cannot move the queue pair for ", Who(peer.rank),
                     " to INIT: ", std::strerror(errno)));
  }
  static thread_local std::mt19937 random(std::random_device{}());
  c.psn = random() & 0xffffff;

  Connection* raw = connection.get();
  state.by_peer[uint64_t(peer.rank) * num_vcis_ + peer.vci] = raw;
  state.by_qp_number[c.qp_num] = raw;
  state.connections.push_back(std::move(connection));
  return raw;
}

ConnectMessage IbTransport::Describe(const Connection& connection,
                                     ConnectType type) const {
  ConnectMessage message;
  message.type = type;
  message.mtu = static_cast<uint8_t>(port_.mtu);
  message.lid = port_.lid;
  message.from_rank = rank_;
  message.from_vci = connection.vci;
  message.to_vci = connection.peer.vci;
  message.qp_num = connection.qp_num;
  message.psn = connection.psn;
  message.global = port_.gid_index >= 0 ? 1 : 0;
  std::memcpy(message.gid, port_.gid.raw, sizeof(message.gid));
  message.credits = connection.granted;
  message.credit_address =
      reinterpret_cast<uint64_t>(connection.credit_word_storage.get());
  message.credit_rkey = connection.credit_word_mr.rkey;
  return message;
}

void IbTransport::ConnectLocked(Connection& c, const ConnectMessage& m) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = std::min(port_.mtu, static_cast<ibv_mtu>(m.mtu));
  attr.dest_qp_num = m.qp_num;
  attr.rq_psn = m.psn;
  attr.max_dest_rd_atomic = max_read_atomic_;
  attr.min_rnr_timer = 12;  // 0.64 ms; credits keep receivers from running dry
  attr.ah_attr.port_num = port_.port;
  if (port_.ethernet) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, m.gid, sizeof(m.gid));
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  } else {
    attr.ah_attr.dlid = m.lid;
  }
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) !=
      0) {
    Die(absl::StrCat("cannot connect the queue pair to ", Who(c.peer.rank),
                     " VCI ", c.peer.vci, " (RTR, MTU ",
                     MtuBytes(attr.path_mtu), "): ", std::strerror(errno)));
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;  // 67 ms per transport retry
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;  // never give up on a receiver that is not ready
  attr.sq_psn = c.psn;
  attr.max_rd_atomic = max_read_atomic_;
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                           IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
    Die(absl::StrCat("cannot connect the queue pair to ", Who(c.peer.rank),
                     " VCI ", c.peer.vci, " (RTS): ", std::strerror(errno)));
  }
  c.send_credits = SendCredits(m.credits);
  c.peer_credit_word = {m.credit_address, m.credit_rkey};
}

void IbTransport::OnConnectMessage(const ConnectMessage& m) {
  if (m.from_rank < 0 || m.from_rank >= size_ || m.from_vci < 0 ||
      m.from_vci >= num_vcis_ || m.to_vci < 0 || m.to_vci >= num_vcis_) {
    Die(absl::StrCat("a malformed connection message (from rank ", m.from_rank,
                     " VCI ", m.from_vci, " to VCI ", m.to_vci, ")"));
  }
  Vci& state = Ready(m.to_vci);
  const PeerVci theirs{m.from_rank, m.from_vci};
  const PeerVci mine{rank_, m.to_vci};
  const uint64_t key = uint64_t(theirs.rank) * num_vcis_ + theirs.vci;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    auto found = state.by_peer.find(key);
    Connection* c = found == state.by_peer.end() ? nullptr : found->second;
    const PairState now = c == nullptr
                              ? PairState::kNone
                              : c->state.load(std::memory_order_relaxed);
    switch (m.type) {
      case ConnectType::kRequest: {
        const RequestAction action = DecideOnRequest(now, mine, theirs);
        if (action == RequestAction::kIgnore) return;
        if (action == RequestAction::kCreateAndAccept) {
          c = CreateConnectionLocked(state, theirs);
        }
        ConnectLocked(*c, m);
        // Usable for our sends only once the requester says its QP is
        // connected too (kReady): a packet reaching a QP not yet ready to
        // receive would be dropped and retried by the hardware for tens of
        // milliseconds.
        c->state.store(PairState::kAccepted, std::memory_order_release);
        manager_->Post(theirs.rank, Describe(*c, ConnectType::kAccept));
        return;
      }
      case ConnectType::kAccept: {
        if (c == nullptr || !ShouldConnectOnAccept(now)) return;
        ConnectLocked(*c, m);
        c->state.store(PairState::kConnected, std::memory_order_release);
        manager_->Post(theirs.rank, Describe(*c, ConnectType::kReady));
        break;
      }
      case ConnectType::kReady: {
        if (c == nullptr || now != PairState::kAccepted) return;
        c->state.store(PairState::kConnected, std::memory_order_release);
        break;
      }
    }
  }
  // The owner may be asleep waiting to send on this connection.
  RingDoorbell(m.to_vci);
}

IbTransport::Connection* IbTransport::Connected(Vci& state, PeerVci peer) {
  const uint64_t key = uint64_t(peer.rank) * num_vcis_ + peer.vci;
  auto found = state.owner_by_peer.find(key);
  if (found != state.owner_by_peer.end()) {
    Connection* c = found->second;
    return c->state.load(std::memory_order_acquire) == PairState::kConnected
               ? c
               : nullptr;
  }
  Connection* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    auto shared = state.by_peer.find(key);
    if (shared != state.by_peer.end()) {
      c = shared->second;
    } else {
      c = CreateConnectionLocked(state, peer);
      if (peer.rank == rank_ && peer.vci == c->vci) {
        // A VCI talking to itself: its QP connects to itself.
        ConnectLocked(*c, Describe(*c, ConnectType::kRequest));
        c->state.store(PairState::kConnected, std::memory_order_release);
      } else {
        c->state.store(PairState::kRequested, std::memory_order_release);
        manager_->Post(peer.rank, Describe(*c, ConnectType::kRequest));
      }
    }
  }
  state.owner_by_peer[key] = c;
  state.owner_by_qp_number[c->qp_num] = c;
  return c->state.load(std::memory_order_acquire) == PairState::kConnected
             ? c
             : nullptr;
}

IbTransport::Connection* IbTransport::ByQpNumber(Vci& state, uint32_t qp_num) {
  auto found = state.owner_by_qp_number.find(qp_num);
  if (found != state.owner_by_qp_number.end()) return found->second;
  std::lock_guard<std::mutex> lock(state.setup_mutex);
  auto shared = state.by_qp_number.find(qp_num);
  if (shared == state.by_qp_number.end()) return nullptr;
  state.owner_by_qp_number[qp_num] = shared->second;
  return shared->second;
}

// --- Posting ---------------------------------------------------------------

IbTransport::Op* IbTransport::StartOp(Vci& state, Connection& connection,
                                      int requests, OpKind kind,
                                      const char* what) {
  if (connection.outstanding + requests > send_queue_depth_ ||
      state.budget_used + requests > completion_budget_ ||
      state.free_ops.empty()) {
    ++state.queue_full_waits;
    return nullptr;
  }
  const uint32_t index = state.free_ops.back();
  state.free_ops.pop_back();
  Op& op = state.ops[index];
  op = Op{};
  op.kind = kind;
  op.in_use = true;
  op.what = what;
  op.connection = &connection;
  op.remaining = requests;
  connection.outstanding += requests;
  state.budget_used += requests;
  return &op;
}

void IbTransport::CancelOp(Vci& state, Op* op) {
  op->connection->outstanding -= op->remaining;
  state.budget_used -= op->remaining;
  op->in_use = false;
  state.free_ops.push_back(IndexOf(state, op));
}

uint32_t IbTransport::IndexOf(const Vci& state, const Op* op) const {
  return static_cast<uint32_t>(op - state.ops.data());
}

char* IbTransport::TakeSendBuffer(Vci& state) {
  if (state.free_send_buffers.empty()) return nullptr;
  char* buffer = state.free_send_buffers.back();
  state.free_send_buffers.pop_back();
  return buffer;
}

bool IbTransport::PostOrRetry(Connection& connection, ibv_send_wr* wr,
                              const char* what) {
  ibv_send_wr* bad = nullptr;
  const int error = verbs_->PostSend(connection.qp, wr, &bad);
  if (error == 0) return true;
  // The accounting above mirrors the send queue's; a full queue here means
  // it and the device disagree, which would lose work: say so.
  Die(absl::StrCat("posting a ", what, " to ", Who(connection.peer.rank),
                   " VCI ", connection.peer.vci,
                   " failed: ", std::strerror(error)));
}

PostResult IbTransport::PostSendMessage(
    int vci, PeerVci peer, const void* header, size_t header_length,
    const void* payload, size_t payload_length,
    absl::FunctionRef<void(void*)>* write_payload) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  const size_t total = header_length + payload_length;
  if (total > max_message_) {
    Die(absl::StrCat("a message of ", total, " bytes exceeds the largest (",
                     max_message_, ")"));
  }
  if (c->send_credits.Available(c->CreditsReturned()) == 0) {
    ++state.credit_waits;
    state.starving.store(true, std::memory_order_relaxed);
    return PostResult::kRetry;
  }
  const bool inline_send = total <= max_inline_;
  char* buffer = nullptr;
  if (!inline_send) {
    buffer = TakeSendBuffer(state);
    if (buffer == nullptr) {
      ++state.queue_full_waits;
      return PostResult::kRetry;
    }
  }
  Op* op = StartOp(state, *c, 1, OpKind::kSend, "send");
  if (op == nullptr) {
    if (buffer != nullptr) state.free_send_buffers.push_back(buffer);
    return PostResult::kRetry;
  }
  state.starving.store(false, std::memory_order_relaxed);
  c->send_credits.Take(c->CreditsReturned());

  alignas(8) char packed[256];
  ibv_sge sges[2];
  int count = 0;
  if (inline_send) {
    if (write_payload != nullptr) {
      // Packed data is written once, next to its header, and the device
      // copies both at post.
      std::memcpy(packed, header, header_length);
      (*write_payload)(packed + header_length);
      sges[count++] = {reinterpret_cast<uint64_t>(packed),
                       static_cast<uint32_t>(total), 0};
    } else {
      if (header_length > 0) {
        sges[count++] = {reinterpret_cast<uint64_t>(header),
                         static_cast<uint32_t>(header_length), 0};
      }
      if (payload_length > 0) {
        sges[count++] = {reinterpret_cast<uint64_t>(payload),
                         static_cast<uint32_t>(payload_length), 0};
      }
    }
  } else {
    std::memcpy(buffer, header, header_length);
    if (write_payload != nullptr) {
      (*write_payload)(buffer + header_length);
    } else if (payload_length > 0) {
      std::memcpy(buffer + header_length, payload, payload_length);
    }
    op->send_buffer = buffer;
    sges[count++] = {reinterpret_cast<uint64_t>(buffer),
                     static_cast<uint32_t>(total), state.send_mr.lkey};
  }
  ibv_send_wr wr{};
  wr.wr_id = OperationWorkId(IndexOf(state, op));
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = count > 0 ? sges : nullptr;
  wr.num_sge = count;
  wr.send_flags = IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0);
  PostOrRetry(*c, &wr, "send");
  return PostResult::kOk;
}

PostResult IbTransport::Send(int vci, PeerVci peer, const void* header,
                             size_t header_length, const void* payload,
                             size_t payload_length) {
  return PostSendMessage(vci, peer, header, header_length, payload,
                         payload_length, nullptr);
}

PostResult IbTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  absl::FunctionRef<void(void*)> writer = write_payload;
  return PostSendMessage(vci, peer, header, header_length, nullptr,
                         payload_length, &writer);
}

PostResult IbTransport::RdmaWritev(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   const MemoryRegion& local_region,
                                   RemoteBuffer remote,
                                   const uint32_t* immediate,
                                   uint64_t context) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  // A write with immediate consumes one of the peer's receive buffers.
  if (immediate != nullptr &&
      c->send_credits.Available(c->CreditsReturned()) == 0) {
    ++state.credit_waits;
    state.starving.store(true, std::memory_order_relaxed);
    return PostResult::kRetry;
  }
  // Empty pieces take no scatter/gather entry (a zero-byte write has none).
  absl::InlinedVector<IoSegment, kInlinePieces> pieces;
  pieces.reserve(local_count);
  for (int i = 0; i < local_count; ++i) {
    if (local[i].length > 0) pieces.push_back(local[i]);
  }
  local = pieces.data();
  local_count = static_cast<int>(pieces.size());
  const int requests =
      std::max(1, (local_count + max_send_sge_ - 1) / max_send_sge_);
  const char* what =
      immediate != nullptr ? "RDMA write with immediate" : "RDMA write";
  Op* op = StartOp(state, *c, requests, OpKind::kUser, what);
  if (op == nullptr) return PostResult::kRetry;
  op->context = context;
  if (immediate != nullptr) {
    state.starving.store(false, std::memory_order_relaxed);
    c->send_credits.Take(c->CreditsReturned());
  }
  absl::InlinedVector<ibv_sge, kInlinePieces> sges(std::max(local_count, 1));
  absl::InlinedVector<ibv_send_wr, kInlinePieces> wrs(requests);
  uint64_t remote_address = remote.address;
  for (int r = 0; r < requests; ++r) {
    const int first = r * max_send_sge_;
    const int count = std::max(0, std::min(max_send_sge_, local_count - first));
    size_t bytes = 0;
    for (int i = 0; i < count; ++i) {
      sges[first + i] = {local[first + i].address,
                         static_cast<uint32_t>(local[first + i].length),
                         local_region.local_key};
      bytes += local[first + i].length;
    }
    ibv_send_wr& wr = wrs[r];
    wr.wr_id = OperationWorkId(IndexOf(state, op));
    wr.sg_list = count > 0 ? &sges[first] : nullptr;
    wr.num_sge = std::max(count, 0);
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_address;
    wr.wr.rdma.rkey = remote.remote_key;
    remote_address += bytes;
    if (r + 1 < requests) wr.next = &wrs[r + 1];
  }
  if (immediate != nullptr) {
    // The last write carries the immediate: RC places the earlier ones
    // first, so the peer's notification means all bytes are there.
    wrs.back().opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wrs.back().imm_data = EncodeImmediate(*immediate);
  }
  PostOrRetry(*c, wrs.data(), what);
  return PostResult::kOk;
}

PostResult IbTransport::RdmaWrite(int vci, PeerVci peer, const void* local,
                                  const MemoryRegion& local_region,
                                  RemoteBuffer remote, size_t length,
                                  uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, local_region, remote, nullptr,
                    context);
}

PostResult IbTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion& local_region,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, local_region, remote, &immediate,
                    context);
}

PostResult IbTransport::RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                                  int local_count,
                                  const MemoryRegion& local_region,
                                  const IoSegment* remote, int remote_count,
                                  uint32_t remote_key, uint64_t context) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  int requests = SplitRead(local, local_count, remote, remote_count,
                           max_send_sge_, [](uint64_t, const ibv_sge*, int) {});
  const bool empty = requests == 0;
  if (empty) requests = 1;  // nothing to read: one empty read completes it
  Op* op = StartOp(state, *c, requests, OpKind::kUser, "RDMA read");
  if (op == nullptr) return PostResult::kRetry;
  op->context = context;
  absl::InlinedVector<ibv_sge, kInlinePieces> sges;
  sges.reserve(local_count + remote_count + 1);
  absl::InlinedVector<ibv_send_wr, kInlinePieces> wrs;
  wrs.reserve(requests);
  absl::InlinedVector<std::pair<size_t, int>, kInlinePieces> sge_ranges;
  if (empty) {
    wrs.emplace_back();
    wrs.back().wr.rdma.remote_addr = remote_count > 0 ? remote[0].address : 0;
    sge_ranges.push_back({0, 0});
  } else {
    SplitRead(local, local_count, remote, remote_count, max_send_sge_,
              [&](uint64_t address, const ibv_sge* pieces, int count) {
                sge_ranges.push_back({sges.size(), count});
                for (int i = 0; i < count; ++i) {
                  sges.push_back(pieces[i]);
                  sges.back().lkey = local_region.local_key;
                }
                wrs.emplace_back();
                wrs.back().wr.rdma.remote_addr = address;
              });
  }
  for (size_t r = 0; r < wrs.size(); ++r) {
    ibv_send_wr& wr = wrs[r];
    wr.wr_id = OperationWorkId(IndexOf(state, op));
    wr.sg_list =
        sge_ranges[r].second > 0 ? &sges[sge_ranges[r].first] : nullptr;
    wr.num_sge = sge_ranges[r].second;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.rkey = remote_key;
    if (r + 1 < wrs.size()) wr.next = &wrs[r + 1];
  }
  PostOrRetry(*c, wrs.data(), "RDMA read");
  return PostResult::kOk;
}

PostResult IbTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                 const MemoryRegion& local_region,
                                 RemoteBuffer remote, size_t length,
                                 uint64_t context) {
  const IoSegment local_segment = {reinterpret_cast<uint64_t>(local), length};
  const IoSegment remote_segment = {remote.address, length};
  return RdmaReadv(vci, peer, &local_segment, 1, local_region, &remote_segment,
                   1, remote.remote_key, context);
}

// --- Memory ----------------------------------------------------------------

absl::StatusOr<MemoryRegion> IbTransport::RegisterMemory(void* address,
                                                         size_t length) {
  if (length == 0) {
    // Nothing to reach: no registration (and no key to misuse).
    MemoryRegion region;
    region.address = address;
    return region;
  }
  absl::StatusOr<Registration> registration =
      registrations_->Acquire(address, length);
  if (!registration.ok()) return registration.status();
  MemoryRegion region;
  region.address = address;
  region.length = length;
  region.local_key = registration->mr().lkey;
  region.remote_key = registration->mr().rkey;
  region.transport_handle = new Registration(*std::move(registration));
  return region;
}

void IbTransport::DeregisterMemory(const MemoryRegion& region) {
  auto* registration = static_cast<Registration*>(region.transport_handle);
  if (registration == nullptr) return;
  registrations_->Release(*registration);
  delete registration;
}

// --- Completions -----------------------------------------------------------

void IbTransport::RepostReceive(Vci& state, char* buffer) {
  uint32_t lkey;
  std::memcpy(&lkey, buffer + max_message_, sizeof(lkey));
  ibv_sge sge = {reinterpret_cast<uint64_t>(buffer),
                 static_cast<uint32_t>(max_message_), lkey};
  ibv_recv_wr wr{};
  wr.wr_id = ReceiveWorkId(buffer);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (verbs_->PostSrqRecv(state.srq, &wr, &bad) != 0) {
    Die(absl::StrCat("reposting a receive buffer failed: ",
                     std::strerror(errno)));
  }
}

void IbTransport::GiveBackCredits(Vci& state, Connection& c) {
  Op* op = StartOp(state, c, 1, OpKind::kCreditReturn, "credit return");
  if (op == nullptr) {
    if (!c.in_credit_backlog) {
      c.in_credit_backlog = true;
      state.credit_backlog.push_back(&c);
    }
    return;
  }
  uint32_t* source = c.credit_word_storage.get() + 8;
  *source = c.return_credits.TakeTotal();
  ibv_sge sge = {reinterpret_cast<uint64_t>(source), sizeof(uint32_t),
                 c.credit_word_mr.lkey};
  ibv_send_wr wr{};
  wr.wr_id = OperationWorkId(IndexOf(state, op));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED |
                  (max_inline_ >= sizeof(uint32_t) ? IBV_SEND_INLINE : 0);
  wr.wr.rdma.remote_addr = c.peer_credit_word.address;
  wr.wr.rdma.rkey = c.peer_credit_word.remote_key;
  ++state.credit_returns;
  PostOrRetry(c, &wr, "credit return");
}

void IbTransport::FlushCreditBacklog(Vci& state) {
  if (state.credit_backlog.empty()) return;
  std::vector<Connection*> waiting;
  waiting.swap(state.credit_backlog);
  for (Connection* c : waiting) {
    c->in_credit_backlog = false;
    if (c->return_credits.owed() > 0) GiveBackCredits(state, *c);
  }
}

int IbTransport::Poll(int vci, CompletionHandler& handler,
                      int max_completions) {
  Vci& state = vcis_[vci];
  if (!state.ready.load(std::memory_order_acquire)) return 0;
  int handled = 0;
  int work = 0;
  ibv_wc wcs[16];
  while (handled < max_completions) {
    const int n =
        verbs_->PollCq(state.cq, std::min(16, max_completions - handled), wcs);
    if (n < 0) {
      Die(absl::StrCat("polling VCI ", vci,
                       "'s completion queue failed (overrun?)"));
    }
    if (n == 0) break;
    work += n;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        // A credit return fails when its peer already tore its queue pair
        // down, at the end of a job (the peer needs no credits then); a
        // live peer's failures show on the data it moves, so only those
        // end the job.
        const bool credit_return =
            IsOperationWorkId(wc.wr_id) &&
            OperationIndex(wc.wr_id) < state.ops.size() &&
            state.ops[OperationIndex(wc.wr_id)].kind == OpKind::kCreditReturn;
        if (!credit_return) DieOnCompletion(state, wc);
      }
      if (!IsOperationWorkId(wc.wr_id)) {
        char* buffer = reinterpret_cast<char*>(wc.wr_id);
        Connection* c = ByQpNumber(state, wc.qp_num);
        if (c == nullptr) {
          Die(absl::StrCat("a completion from an unknown queue pair (",
                           wc.qp_num, ") on VCI ", vci));
        }
        if (!c->owner_synchronized) {
          // The connection manager's thread connected this QP before the
          // peer could send on it (the peer sends only after our Accept or
          // Ready, posted after the state's release store). This acquire
          // pairs with that store, so what the thread wrote (the peer's
          // credit word, the credits) is visible to this thread too.
          const PairState seen = c->state.load(std::memory_order_acquire);
          c->owner_synchronized =
              seen == PairState::kAccepted || seen == PairState::kConnected;
        }
        Completion completion;
        completion.peer = c->peer.rank;
        completion.peer_vci = c->peer.vci;
        if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
          completion.type = CompletionType::kWriteImmediate;
          completion.length = wc.byte_len;
          completion.immediate = DecodeImmediate(wc.imm_data);
        } else {
          completion.type = CompletionType::kReceive;
          completion.data = buffer;
          completion.length = wc.byte_len;
        }
        handler.OnCompletion(vci, completion);
        ++handled;
        RepostReceive(state, buffer);
        c->return_credits.Reposted();
        if (c->return_credits.ShouldReturn()) GiveBackCredits(state, *c);
        continue;
      }
      Op& op = state.ops[OperationIndex(wc.wr_id)];
      op.connection->outstanding -= 1;
      state.budget_used -= 1;
      if (--op.remaining > 0) continue;
      const OpKind kind = op.kind;
      const uint64_t context = op.context;
      const PeerVci peer = op.connection->peer;
      if (op.send_buffer != nullptr) {
        state.free_send_buffers.push_back(op.send_buffer);
      }
      op.in_use = false;
      state.free_ops.push_back(OperationIndex(wc.wr_id));
      if (kind == OpKind::kUser) {
        Completion completion;
        completion.type = CompletionType::kLocalDone;
        completion.peer = peer.rank;
        completion.peer_vci = peer.vci;
        completion.context = context;
        handler.OnCompletion(vci, completion);
        ++handled;
      }
    }
  }
  FlushCreditBacklog(state);
  return handled > 0 ? handled : (work > 0 ? 1 : 0);
}

// --- Doorbells ---------------------------------------------------------------

uint64_t IbTransport::ArmDoorbell(int vci) {
  const int leader = DoorbellOf(vci);
  Vci& bell = vcis_[leader];
  bell.armed.store(true, std::memory_order_seq_cst);
  if (bell.sleepers.load(std::memory_order_seq_cst) == 0) {
    uint64_t count;
    while (read(bell.event_fd, &count, sizeof(count)) > 0) {
    }
  }
  // Every CQ of the group reports its next completion to the channel.
  const int end = leader == 0 ? shared_vcis_ : leader + 1;
  for (int v = leader; v < end; ++v) {
    Vci& state = vcis_[v];
    if (state.ready.load(std::memory_order_acquire)) {
      verbs_->ReqNotifyCq(state.cq);
    }
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return bell.rings.load(std::memory_order_seq_cst);
}

void IbTransport::SleepOnDoorbell(int vci, uint64_t token, int64_t timeout_ns) {
  const int leader = DoorbellOf(vci);
  Vci& bell = vcis_[leader];
  const int end = leader == 0 ? shared_vcis_ : leader + 1;
  for (int v = leader; v < end; ++v) {
    // Returned credits raise no completion: look again soon.
    if (vcis_[v].starving.load(std::memory_order_relaxed)) {
      timeout_ns = std::min(timeout_ns, kCreditWaitSliceNs);
    }
  }
  bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
  VerbsChannel* channel = bell.channel.load(std::memory_order_acquire);
  if (bell.rings.load(std::memory_order_seq_cst) == token) {
    pollfd fds[2] = {{bell.event_fd, POLLIN, 0}, {-1, POLLIN, 0}};
    if (channel != nullptr) fds[1].fd = verbs_->ChannelFd(channel);
    const int64_t wait_ns = std::max<int64_t>(timeout_ns, 0);
    const timespec timeout = {static_cast<time_t>(wait_ns / 1'000'000'000),
                              static_cast<long>(wait_ns % 1'000'000'000)};
    ppoll(fds, 2, &timeout, nullptr);
  }
  // Events taken off the channel; the CQs themselves are polled by Poll.
  if (channel != nullptr) {
    while (verbs_->GetCqEvent(channel)) {
    }
  }
  bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void IbTransport::RingDoorbell(int vci) {
  Vci& bell = vcis_[DoorbellOf(vci)];
  if (!bell.armed.load(std::memory_order_seq_cst)) return;
  if (!bell.armed.exchange(false, std::memory_order_seq_cst)) return;
  bell.rings.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t one = 1;
  ssize_t ignored = write(bell.event_fd, &one, sizeof(one));
  (void)ignored;
}

bool IbTransport::MayHaveWork(int vci) const {
  return vcis_[vci].ready.load(std::memory_order_relaxed);
}

IbTransport::Counters IbTransport::CountersForTesting(int vci) {
  Vci& state = vcis_[vci];
  Counters counters;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    counters.queue_pairs = static_cast<int>(state.connections.size());
    counters.overcommitted = state.overcommitted;
  }
  counters.receive_buffers =
      state.receive_buffers.load(std::memory_order_relaxed);
  counters.credit_waits = state.credit_waits;
  counters.queue_full_waits = state.queue_full_waits;
  counters.credit_returns = state.credit_returns;
  return counters;
}

}  // namespace minimpi::net::ib
