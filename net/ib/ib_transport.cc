// net/ib's transport: setup (the device's limits, the connection
// manager's address through the bootstrap), teardown, errors that end the
// job, memory registration and doorbells. Connections are made in
// ib_connections.cc, work posted in ib_post.cc, completions and credits
// handled in ib_completions.cc; the device is chosen in port_choice.cc.
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
#include "net/ib/ib_transport_internal.h"
#include "net/tcp/tcp_transport.h"

namespace minimpi::net::ib {
namespace {

constexpr char kAddressKey[] = "minimpi.ib";

}  // namespace

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
