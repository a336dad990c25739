#include "net/ib/testing/soft_verbs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "net/ib/verbs.h"

namespace minimpi::net::ib::testing {
namespace {

constexpr int kAllAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

uint8_t PatternByte(uint32_t seed, size_t i) {
  return static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8) + (i >> 16));
}

void Fill(void* buffer, size_t length, uint32_t seed) {
  auto* bytes = static_cast<uint8_t*>(buffer);
  for (size_t i = 0; i < length; ++i) bytes[i] = PatternByte(seed, i);
}

// The offset of the first byte that differs from the pattern, or -1.
int64_t FirstMismatch(const void* buffer, size_t length, uint32_t seed) {
  const auto* bytes = static_cast<const uint8_t*>(buffer);
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != PatternByte(seed, i)) return static_cast<int64_t>(i);
  }
  return -1;
}

// What one side tells the other to connect (the handshake's fields).
struct Address {
  uint16_t lid = 0;
  ibv_gid gid = {};
  uint32_t qpn = 0;
  uint32_t psn = 0;  // this side's send PSN = the peer's receive PSN
};

struct ConnectOptions {
  int access = kAllAccess;
  uint8_t rnr_retry = 7;
  bool global = false;
  uint8_t sgid_index = 0;
};

// One opened device with a PD, a send CQ, a receive CQ, an SRQ and one RC
// QP; not connected.
struct Side {
  Verbs* verbs = nullptr;
  VerbsContext* context = nullptr;
  VerbsPd* pd = nullptr;
  VerbsCq* send_cq = nullptr;
  VerbsCq* recv_cq = nullptr;
  VerbsSrq* srq = nullptr;
  VerbsQp* qp = nullptr;
  uint32_t qpn = 0;
  ibv_qp_cap granted = {};
  uint32_t sq_psn = 0;

  Address address() const {
    Address a;
    ibv_port_attr port;
    if (verbs->QueryPort(context, 1, &port) == 0) a.lid = port.lid;
    ibv_gid_entry entry;
    if (verbs->QueryGid(context, 1, 0, &entry) == 0) a.gid = entry.gid;
    a.qpn = qpn;
    a.psn = sq_psn;
    return a;
  }
};

bool OpenSide(Verbs* verbs, Side* side, uint32_t sq_psn, int cq_entries = 4096,
              uint32_t max_send_wr = 256, uint32_t max_inline = 64) {
  side->verbs = verbs;
  side->context = verbs->OpenDevice("softib0");
  if (side->context == nullptr) return false;
  side->pd = verbs->AllocPd(side->context);
  side->send_cq = verbs->CreateCq(side->context, cq_entries, nullptr);
  side->recv_cq = verbs->CreateCq(side->context, cq_entries, nullptr);
  side->srq = verbs->CreateSrq(side->pd, 1024, 4);
  RcQpConfig config;
  config.send_cq = side->send_cq;
  config.recv_cq = side->recv_cq;
  config.srq = side->srq;
  config.capabilities.max_send_wr = max_send_wr;
  config.capabilities.max_send_sge = 4;
  config.capabilities.max_inline_data = max_inline;
  side->qp = verbs->CreateRcQp(side->pd, config, &side->qpn);
  side->granted = config.capabilities;
  side->sq_psn = sq_psn;
  return side->pd && side->send_cq && side->recv_cq && side->srq && side->qp;
}

// Destroys the side's objects, leaving its device open (or, once closed,
// letting it go).
void DestroyObjects(Side* side) {
  Verbs* v = side->verbs;
  if (side->qp) v->DestroyQp(side->qp);
  if (side->srq) v->DestroySrq(side->srq);
  if (side->send_cq) v->DestroyCq(side->send_cq);
  if (side->recv_cq) v->DestroyCq(side->recv_cq);
  if (side->pd) v->DeallocPd(side->pd);
  side->qp = nullptr;
  side->srq = nullptr;
  side->send_cq = side->recv_cq = nullptr;
  side->pd = nullptr;
}

void CloseSide(Side* side) {
  if (side->context == nullptr) return;
  DestroyObjects(side);
  side->verbs->CloseDevice(side->context);
  side->context = nullptr;
}

int ToInit(Verbs* verbs, VerbsQp* qp, int access) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = 1;
  attr.qp_access_flags = access;
  return verbs->ModifyQp(
      qp, &attr,
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

ibv_qp_attr RtrAttr(const Address& remote, const ConnectOptions& options) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_4096;
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 4;
  attr.min_rnr_timer = 1;
  attr.ah_attr.dlid = remote.lid;
  attr.ah_attr.port_num = 1;
  if (options.global) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = remote.gid;
    attr.ah_attr.grh.sgid_index = options.sgid_index;
    attr.ah_attr.grh.hop_limit = 1;
  }
  return attr;
}

constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                         IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                         IBV_QP_MAX_QP_RD_ATOMIC;

ibv_qp_attr RtsAttr(uint32_t sq_psn, const ConnectOptions& options) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = options.rnr_retry;
  attr.sq_psn = sq_psn;
  attr.max_rd_atomic = 4;
  return attr;
}

// RESET → INIT → RTR → RTS through the real state machine.
int Connect(Side* side, const Address& remote,
            const ConnectOptions& options = {}) {
  if (int rc = ToInit(side->verbs, side->qp, options.access); rc != 0) {
    return rc;
  }
  ibv_qp_attr rtr = RtrAttr(remote, options);
  if (int rc = side->verbs->ModifyQp(side->qp, &rtr, kRtrMask); rc != 0) {
    return rc;
  }
  ibv_qp_attr rts = RtsAttr(side->sq_psn, options);
  return side->verbs->ModifyQp(side->qp, &rts, kRtsMask);
}

// Polls until `count` completions arrived or `timeout` passed.
std::vector<ibv_wc> Poll(
    Verbs* verbs, VerbsCq* cq, int count,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  std::vector<ibv_wc> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (static_cast<int>(out.size()) < count) {
    ibv_wc wc[16];
    const int n = verbs->PollCq(
        cq, std::min<int>(16, count - static_cast<int>(out.size())), wc);
    if (n < 0) break;
    out.insert(out.end(), wc, wc + n);
    if (n == 0) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::yield();
    }
  }
  return out;
}

// A registered buffer, deregistered when it goes (unless a test did it):
// a registration left behind keeps its closed context alive, which
// LeakSanitizer rightly reports.
struct Buffer {
  explicit Buffer(Verbs* verbs) : verbs(verbs) {}
  ~Buffer() {
    if (mr.handle != nullptr) verbs->DeregMr(&mr);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Verbs* const verbs;
  std::vector<uint8_t> bytes;
  VerbsMr mr;
  uint64_t addr() const { return reinterpret_cast<uint64_t>(bytes.data()); }
  uint8_t* data() { return bytes.data(); }
};

std::unique_ptr<Buffer> Register(Verbs* verbs, VerbsPd* pd, size_t length,
                                 int access = kAllAccess) {
  auto buffer = std::make_unique<Buffer>(verbs);
  buffer->bytes.assign(length, 0);
  if (!verbs->RegMr(pd, buffer->bytes.data(), length, access, &buffer->mr)) {
    return nullptr;
  }
  return buffer;
}

int PostRecv(Verbs* verbs, VerbsSrq* srq, uint64_t wr_id, uint64_t addr,
             uint32_t length, uint32_t lkey) {
  ibv_sge sge = {addr, length, lkey};
  ibv_recv_wr wr = {};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return verbs->PostSrqRecv(srq, &wr, &bad);
}

int PostOne(Verbs* verbs, VerbsQp* qp, ibv_wr_opcode opcode, uint64_t wr_id,
            uint64_t addr, uint32_t length, uint32_t lkey, int flags,
            uint64_t remote_addr = 0, uint32_t rkey = 0, uint32_t imm = 0) {
  ibv_sge sge = {addr, length, lkey};
  ibv_send_wr wr = {};
  wr.wr_id = wr_id;
  wr.opcode = opcode;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = flags;
  wr.imm_data = imm;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return verbs->PostSend(qp, &wr, &bad);
}

// Two contexts in this process, their QPs connected to each other.
class SoftVerbsPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    verbs_ = CreateSoftVerbs();
    ASSERT_TRUE(OpenSide(verbs_.get(), &a_, 0x123456));
    ASSERT_TRUE(OpenSide(verbs_.get(), &b_, 0xFFFFF0));  // wraps soon
  }
  void TearDown() override {
    CloseSide(&a_);
    CloseSide(&b_);
  }
  void ConnectBoth(const ConnectOptions& a_options = {},
                   const ConnectOptions& b_options = {}) {
    ASSERT_EQ(Connect(&a_, b_.address(), a_options), 0);
    ASSERT_EQ(Connect(&b_, a_.address(), b_options), 0);
  }
  Verbs* v() { return verbs_.get(); }

  std::unique_ptr<Verbs> verbs_;
  Side a_;
  Side b_;
};

TEST(SoftVerbsTest, DeviceAndPort) {
  auto verbs = CreateSoftVerbs();
  EXPECT_STREQ(verbs->provider(), "softib");
  EXPECT_EQ(verbs->ListDevices(), std::vector<std::string>{"softib0"});
  errno = 0;
  EXPECT_EQ(verbs->OpenDevice("mlx5_0"), nullptr);
  EXPECT_EQ(errno, ENODEV);

  VerbsContext* first = verbs->OpenDevice("softib0");
  VerbsContext* second = verbs->OpenDevice("softib0");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ibv_device_attr device;
  ASSERT_EQ(verbs->QueryDevice(first, &device), 0);
  EXPECT_EQ(device.max_qp_wr, 1024);
  EXPECT_EQ(device.max_sge, 16);
  EXPECT_EQ(device.max_srq_wr, 8192);
  EXPECT_EQ(device.max_srq_sge, 4);
  EXPECT_EQ(device.max_cqe, 65536);
  EXPECT_EQ(device.max_qp_rd_atom, 16);
  EXPECT_EQ(device.phys_port_cnt, 1);

  ibv_port_attr port1, port2;
  ASSERT_EQ(verbs->QueryPort(first, 1, &port1), 0);
  ASSERT_EQ(verbs->QueryPort(second, 1, &port2), 0);
  EXPECT_NE(verbs->QueryPort(first, 2, &port1), 0);
  EXPECT_EQ(port1.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port1.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(port1.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(port1.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_NE(port1.lid, 0);
  EXPECT_LE(port1.lid, 0xBFFF);
  EXPECT_NE(port1.lid, port2.lid);

  ibv_gid_entry gid;
  ASSERT_EQ(verbs->QueryGid(first, 1, 0, &gid), 0);
  EXPECT_EQ(gid.gid_type, IBV_GID_TYPE_IB);
  EXPECT_EQ(gid.gid.raw[0], 0xfe);
  EXPECT_EQ(gid.gid.raw[1], 0x80);
  EXPECT_EQ((gid.gid.raw[14] << 8) | gid.gid.raw[15], port1.lid);
  EXPECT_NE(verbs->QueryGid(first, 1, 1, &gid), 0);

  AsyncEvent event;
  EXPECT_FALSE(verbs->GetAsyncEvent(first, &event));
  EXPECT_GE(verbs->AsyncEventFd(first), 0);
  EXPECT_NE(fcntl(verbs->AsyncEventFd(first), F_GETFL) & O_NONBLOCK, 0);
  // The LID is the port's: opening again after a close gives the same one
  // (callers probe a device, close it, and use the probed address).
  verbs->CloseDevice(first);
  VerbsContext* again = verbs->OpenDevice("softib0");
  ASSERT_NE(again, nullptr);
  ibv_port_attr port3;
  ASSERT_EQ(verbs->QueryPort(again, 1, &port3), 0);
  EXPECT_EQ(port3.lid, port1.lid);
  verbs->CloseDevice(again);
  verbs->CloseDevice(second);
}

TEST(SoftVerbsTest, QpCapabilitiesAreCheckedAndGranted) {
  auto verbs = CreateSoftVerbs();
  Side side;
  ASSERT_TRUE(OpenSide(verbs.get(), &side, 0, 64, 100, 200));
  EXPECT_GE(side.granted.max_send_wr, 100u);
  EXPECT_GE(side.granted.max_send_sge, 4u);
  EXPECT_GE(side.granted.max_inline_data, 200u);
  EXPECT_GE(side.qpn, 0x100u);

  RcQpConfig config;
  config.send_cq = side.send_cq;
  config.recv_cq = side.recv_cq;
  config.srq = side.srq;
  config.capabilities.max_send_wr = 1025;
  errno = 0;
  EXPECT_EQ(verbs->CreateRcQp(side.pd, config, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
  config.capabilities = {};
  config.capabilities.max_inline_data = 257;
  EXPECT_EQ(verbs->CreateRcQp(side.pd, config, nullptr), nullptr);
  config.capabilities = {};
  config.capabilities.max_send_sge = 17;
  EXPECT_EQ(verbs->CreateRcQp(side.pd, config, nullptr), nullptr);
  EXPECT_EQ(verbs->CreateCq(side.context, 65537, nullptr), nullptr);
  EXPECT_EQ(verbs->CreateSrq(side.pd, 8193, 1), nullptr);
  EXPECT_EQ(verbs->CreateSrq(side.pd, 16, 5), nullptr);
  CloseSide(&side);
}

TEST_F(SoftVerbsPairTest, StateMachineRejectsMissingMaskBits) {
  const Address remote = b_.address();
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = kAllAccess;
  // RESET → INIT without the access flags.
  EXPECT_EQ(v()->ModifyQp(a_.qp, &attr,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
            EINVAL);
  // RESET → RTR skips INIT.
  ibv_qp_attr rtr = RtrAttr(remote, {});
  EXPECT_EQ(v()->ModifyQp(a_.qp, &rtr, kRtrMask), EINVAL);
  ASSERT_EQ(ToInit(v(), a_.qp, kAllAccess), 0);

  // Posting before RTS.
  auto buffer = Register(v(), a_.pd, 64);
  ibv_sge sge = {buffer->addr(), 8, buffer->mr.lkey};
  ibv_send_wr wr = {};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(v()->PostSend(a_.qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);

  // INIT → RTR without the RNR timer, then with a bad MTU, then with an
  // address naming nobody.
  EXPECT_EQ(v()->ModifyQp(a_.qp, &rtr, kRtrMask & ~IBV_QP_MIN_RNR_TIMER),
            EINVAL);
  EXPECT_EQ(v()->ModifyQp(a_.qp, &rtr, kRtrMask & ~IBV_QP_AV), EINVAL);
  ibv_qp_attr bad_rtr = rtr;
  bad_rtr.ah_attr.dlid = 0;
  EXPECT_EQ(v()->ModifyQp(a_.qp, &bad_rtr, kRtrMask), EINVAL);
  bad_rtr = rtr;
  bad_rtr.path_mtu = static_cast<ibv_mtu>(6);
  EXPECT_EQ(v()->ModifyQp(a_.qp, &bad_rtr, kRtrMask), EINVAL);
  ASSERT_EQ(v()->ModifyQp(a_.qp, &rtr, kRtrMask), 0);
  EXPECT_EQ(v()->PostSend(a_.qp, &wr, &bad), EINVAL);

  // RTR → RTS without the SQ PSN.
  ibv_qp_attr rts = RtsAttr(a_.sq_psn, {});
  EXPECT_EQ(v()->ModifyQp(a_.qp, &rts, kRtsMask & ~IBV_QP_SQ_PSN), EINVAL);
  EXPECT_EQ(v()->ModifyQp(a_.qp, &rts, kRtsMask | IBV_QP_DEST_QPN), EINVAL);
  ASSERT_EQ(v()->ModifyQp(a_.qp, &rts, kRtsMask), 0);

  // Back to RESET, then through again.
  ibv_qp_attr reset = {};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(v()->ModifyQp(a_.qp, &reset, IBV_QP_STATE), 0);
  EXPECT_EQ(Connect(&a_, remote), 0);
  v()->DeregMr(&buffer->mr);
}

TEST_F(SoftVerbsPairTest, SendsArriveInOrderByteForByte) {
  ConnectBoth();
  constexpr int kMessages = 600;
  constexpr size_t kSlot = 20000;
  auto receive = Register(v(), b_.pd, kSlot * 64);
  auto send = Register(v(), a_.pd, kSlot * 64);
  ASSERT_NE(receive, nullptr);
  ASSERT_NE(send, nullptr);
  auto size_of = [](int i) -> uint32_t {
    static const uint32_t kSizes[] = {0,    1,    7,    64,    100,  4095,
                                      4096, 4097, 8192, 12345, 20000};
    return kSizes[i % 11];
  };
  int posted_recvs = 0;
  int received = 0;
  int sent = 0;
  int send_done = 0;
  while (received < kMessages) {
    // Keep 64 receives posted; slot = receive number mod 64.
    while (posted_recvs < kMessages && posted_recvs - received < 64) {
      ASSERT_EQ(PostRecv(v(), b_.srq, posted_recvs,
                         receive->addr() + (posted_recvs % 64) * kSlot, kSlot,
                         receive->mr.lkey),
                0);
      ++posted_recvs;
    }
    while (sent < kMessages && sent - send_done < 64 && sent < posted_recvs) {
      uint8_t* source = send->data() + (sent % 64) * kSlot;
      const uint32_t length = size_of(sent);
      Fill(source, length, sent);
      // Every third message is split over two SGEs.
      ibv_sge sge[2] = {
          {reinterpret_cast<uint64_t>(source), length / 3, send->mr.lkey},
          {reinterpret_cast<uint64_t>(source) + length / 3, length - length / 3,
           send->mr.lkey}};
      ibv_send_wr wr = {};
      wr.wr_id = sent;
      wr.opcode = IBV_WR_SEND;
      wr.sg_list = sent % 3 == 0 ? sge : &sge[1];
      wr.num_sge = sent % 3 == 0 ? 2 : 1;
      if (sent % 3 != 0)
        sge[1] = {reinterpret_cast<uint64_t>(source), length, send->mr.lkey};
      wr.send_flags = IBV_SEND_SIGNALED;
      if (length <= a_.granted.max_inline_data && sent % 2 == 0) {
        wr.send_flags |= IBV_SEND_INLINE;
      }
      ibv_send_wr* bad = nullptr;
      ASSERT_EQ(v()->PostSend(a_.qp, &wr, &bad), 0);
      ++sent;
    }
    ibv_wc wc[8];
    int n = v()->PollCq(a_.send_cq, 8, wc);
    ASSERT_GE(n, 0);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
      ASSERT_EQ(wc[i].opcode, IBV_WC_SEND);
      ASSERT_EQ(wc[i].wr_id, static_cast<uint64_t>(send_done));
      ++send_done;
    }
    n = v()->PollCq(b_.recv_cq, 8, wc);
    ASSERT_GE(n, 0);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
      ASSERT_EQ(wc[i].opcode, IBV_WC_RECV);
      ASSERT_EQ(wc[i].wr_id, static_cast<uint64_t>(received));
      ASSERT_EQ(wc[i].byte_len, size_of(received));
      ASSERT_EQ(wc[i].qp_num, b_.qpn);
      ASSERT_EQ(wc[i].src_qp, a_.qpn);
      ASSERT_EQ(wc[i].wc_flags & IBV_WC_WITH_IMM, 0);
      ASSERT_EQ(FirstMismatch(receive->data() + (received % 64) * kSlot,
                              size_of(received), received),
                -1)
          << "message " << received;
      ++received;
    }
  }
  EXPECT_EQ(Poll(v(), a_.send_cq, kMessages - send_done).size(),
            static_cast<size_t>(kMessages - send_done));
}

TEST_F(SoftVerbsPairTest, ImmediatesConsumeReceives) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 4096);
  auto target = Register(v(), b_.pd, 4096);
  auto landing = Register(v(), b_.pd, 4096);
  Fill(source->data(), 4096, 9);
  ASSERT_EQ(PostRecv(v(), b_.srq, 77, landing->addr(), 4096, landing->mr.lkey),
            0);
  ASSERT_EQ(PostRecv(v(), b_.srq, 78, 0, 0, 0), 0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND_WITH_IMM, 1, source->addr(), 300,
                    source->mr.lkey, IBV_SEND_SIGNALED, 0, 0, 0x01020304),
            0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE_WITH_IMM, 2, source->addr(),
                    1000, source->mr.lkey, IBV_SEND_SIGNALED,
                    target->addr() + 96, target->mr.rkey, 0xA0B0C0D0),
            0);
  auto recvs = Poll(v(), b_.recv_cq, 2);
  ASSERT_EQ(recvs.size(), 2u);
  EXPECT_EQ(recvs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(recvs[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(recvs[0].wr_id, 77u);
  EXPECT_EQ(recvs[0].byte_len, 300u);
  EXPECT_NE(recvs[0].wc_flags & IBV_WC_WITH_IMM, 0);
  EXPECT_EQ(recvs[0].imm_data, 0x01020304u);  // verbatim
  EXPECT_EQ(FirstMismatch(landing->data(), 300, 9), -1);
  EXPECT_EQ(recvs[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(recvs[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(recvs[1].wr_id, 78u);
  EXPECT_EQ(recvs[1].byte_len, 1000u);
  EXPECT_NE(recvs[1].wc_flags & IBV_WC_WITH_IMM, 0);
  EXPECT_EQ(recvs[1].imm_data, 0xA0B0C0D0u);
  EXPECT_EQ(recvs[1].src_qp, a_.qpn);
  EXPECT_EQ(FirstMismatch(target->data() + 96, 1000, 9), -1);
  EXPECT_EQ(target->data()[95], 0);
  EXPECT_EQ(target->data()[1096], 0);
  auto sends = Poll(v(), a_.send_cq, 2);
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sends[1].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(sends[1].wr_id, 2u);

  // A plain write: no receive consumed, no responder CQE.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 3, source->addr() + 1, 17,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                    target->mr.rkey),
            0);
  ASSERT_EQ(Poll(v(), a_.send_cq, 1).size(), 1u);
  EXPECT_EQ(target->data()[0], PatternByte(9, 1));
  EXPECT_TRUE(Poll(v(), b_.recv_cq, 1, std::chrono::milliseconds(20)).empty());
}

TEST_F(SoftVerbsPairTest, RdmaReadByteForByte) {
  ConnectBoth();
  constexpr size_t kBytes = 3 << 20;
  auto remote = Register(v(), b_.pd, kBytes);
  auto local = Register(v(), a_.pd, kBytes);
  Fill(remote->data(), kBytes, 5);
  ibv_sge sge[2] = {
      {local->addr(), 1 << 20, local->mr.lkey},
      {local->addr() + (1 << 20), kBytes - (1 << 20), local->mr.lkey}};
  ibv_send_wr wr = {};
  wr.wr_id = 42;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.sg_list = sge;
  wr.num_sge = 2;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote->addr();
  wr.wr.rdma.rkey = remote->mr.rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(v()->PostSend(a_.qp, &wr, &bad), 0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc[0].wr_id, 42u);
  EXPECT_EQ(wc[0].byte_len, kBytes);
  EXPECT_EQ(FirstMismatch(local->data(), kBytes, 5), -1);

  // An RDMA write of the same size the other way.
  Fill(local->data(), kBytes, 6);
  wr.opcode = IBV_WR_RDMA_WRITE;
  ASSERT_EQ(v()->PostSend(a_.qp, &wr, &bad), 0);
  wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(FirstMismatch(remote->data(), kBytes, 6), -1);
}

TEST_F(SoftVerbsPairTest, RnrParksThenCompletes) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 256);
  auto landing = Register(v(), b_.pd, 256);
  Fill(source->data(), 256, 3);
  const uint64_t before = SoftVerbsRnrNakCount();
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 256,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  // A write behind the parked send waits for it (in-order delivery).
  auto target = Register(v(), b_.pd, 16);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 2, source->addr(), 16,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                    target->mr.rkey),
            0);
  EXPECT_TRUE(Poll(v(), a_.send_cq, 1, std::chrono::milliseconds(30)).empty());
  EXPECT_GT(SoftVerbsRnrNakCount(), before);
  EXPECT_EQ(target->data()[0], 0);
  ASSERT_EQ(PostRecv(v(), b_.srq, 5, landing->addr(), 256, landing->mr.lkey),
            0);
  auto wc = Poll(v(), a_.send_cq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(FirstMismatch(landing->data(), 256, 3), -1);
  EXPECT_EQ(FirstMismatch(target->data(), 16, 3), -1);
  ASSERT_EQ(Poll(v(), b_.recv_cq, 1).size(), 1u);
}

TEST_F(SoftVerbsPairTest, RnrRetryLimitFailsTheRequest) {
  ConnectOptions options;
  options.rnr_retry = 1;
  ConnectBoth(options, {});
  auto source = Register(v(), a_.pd, 64);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 64,
                    source->mr.lkey, 0),
            0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 2, source->addr(), 64,
                    source->mr.lkey, 0),
            0);
  auto wc = Poll(v(), a_.send_cq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);  // unsignaled, failed
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[1].wr_id, 2u);
  // The QP is in error: new work is flushed.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 3, source->addr(), 64,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[0].wr_id, 3u);
}

TEST_F(SoftVerbsPairTest, MaxRnrEnvironmentFailsAtOnce) {
  // The limit counts this process's NAKs; make sure there is one.
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 8,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const uint64_t before = SoftVerbsRnrNakCount();
  while (SoftVerbsRnrNakCount() == before &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  setenv("MINIMPI_SOFTIB_MAX_RNR", "0", 1);
  Side c, d;
  const bool opened = OpenSide(v(), &c, 1) && OpenSide(v(), &d, 2);
  unsetenv("MINIMPI_SOFTIB_MAX_RNR");
  ASSERT_TRUE(opened);
  ASSERT_EQ(Connect(&c, d.address()), 0);  // rnr_retry 7: forever
  ASSERT_EQ(Connect(&d, c.address()), 0);
  auto buffer = Register(v(), c.pd, 64);
  ASSERT_EQ(PostOne(v(), c.qp, IBV_WR_SEND, 9, buffer->addr(), 8,
                    buffer->mr.lkey, IBV_SEND_SIGNALED),
            0);
  auto wc = Poll(v(), c.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
  v()->DeregMr(&buffer->mr);
  CloseSide(&c);
  CloseSide(&d);
}

TEST_F(SoftVerbsPairTest, SendQueueDepthIsEnforced) {
  // A QP with 4 send slots; B never posts receives so nothing completes.
  Side c, d;
  ASSERT_TRUE(OpenSide(v(), &c, 10, 64, 4));
  ASSERT_TRUE(OpenSide(v(), &d, 20));
  ASSERT_EQ(Connect(&c, d.address()), 0);
  ASSERT_EQ(Connect(&d, c.address()), 0);
  ASSERT_EQ(c.granted.max_send_wr, 4u);
  auto source = Register(v(), c.pd, 64);
  auto landing = Register(v(), d.pd, 64 * 8);
  ibv_sge sge = {source->addr(), 8, source->mr.lkey};
  ibv_send_wr wr[6] = {};
  for (int i = 0; i < 6; ++i) {
    wr[i].wr_id = i;
    wr[i].opcode = IBV_WR_SEND;
    wr[i].sg_list = &sge;
    wr[i].num_sge = 1;
    wr[i].send_flags = IBV_SEND_SIGNALED;
    wr[i].next = i < 5 ? &wr[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(v()->PostSend(c.qp, &wr[0], &bad), ENOMEM);
  EXPECT_EQ(bad, &wr[4]);
  // Completing them does not free the slots until their CQEs are polled.
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(
        PostRecv(v(), d.srq, i, landing->addr() + 64 * i, 64, landing->mr.lkey),
        0);
  }
  ASSERT_EQ(Poll(v(), d.recv_cq, 4).size(), 4u);
  wr[4].next = nullptr;
  EXPECT_EQ(v()->PostSend(c.qp, &wr[4], &bad), ENOMEM);
  auto wc = Poll(v(), c.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(v()->PostSend(c.qp, &wr[4], &bad), 0);  // one slot back
  EXPECT_EQ(v()->PostSend(c.qp, &wr[5], &bad), ENOMEM);
  v()->DeregMr(&source->mr);
  v()->DeregMr(&landing->mr);
  CloseSide(&c);
  CloseSide(&d);
}

TEST_F(SoftVerbsPairTest, UnsignaledSlotsReturnOnlyWithALaterSignaledOne) {
  Side c, d;
  ASSERT_TRUE(OpenSide(v(), &c, 10, 64, 4));
  ASSERT_TRUE(OpenSide(v(), &d, 20));
  ASSERT_EQ(Connect(&c, d.address()), 0);
  ASSERT_EQ(Connect(&d, c.address()), 0);
  auto source = Register(v(), c.pd, 64);
  auto target = Register(v(), d.pd, 64);
  // Four unsignaled writes fill the queue, and stay full though they are
  // all done: only a polled CQE gives slots back.
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(PostOne(v(), c.qp, IBV_WR_RDMA_WRITE, i, source->addr(), 8,
                      source->mr.lkey, 0, target->addr(), target->mr.rkey),
              0);
  }
  EXPECT_TRUE(Poll(v(), c.send_cq, 1, std::chrono::milliseconds(30)).empty());
  EXPECT_EQ(PostOne(v(), c.qp, IBV_WR_RDMA_WRITE, 4, source->addr(), 8,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                    target->mr.rkey),
            ENOMEM);
  // Free them by resetting nothing: a fresh QP pair where the fourth WR is
  // signaled shows the reclaim.
  Side e, f;
  ASSERT_TRUE(OpenSide(v(), &e, 30, 64, 4));
  ASSERT_TRUE(OpenSide(v(), &f, 40));
  ASSERT_EQ(Connect(&e, f.address()), 0);
  ASSERT_EQ(Connect(&f, e.address()), 0);
  auto source2 = Register(v(), e.pd, 64);
  auto target2 = Register(v(), f.pd, 64);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(PostOne(v(), e.qp, IBV_WR_RDMA_WRITE, i, source2->addr(), 8,
                      source2->mr.lkey, i == 3 ? IBV_SEND_SIGNALED : 0,
                      target2->addr(), target2->mr.rkey),
              0);
  }
  auto wc = Poll(v(), e.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 3u);
  for (int i = 4; i < 8; ++i) {
    EXPECT_EQ(PostOne(v(), e.qp, IBV_WR_RDMA_WRITE, i, source2->addr(), 8,
                      source2->mr.lkey, 0, target2->addr(), target2->mr.rkey),
              0)
        << i;
  }
  v()->DeregMr(&source->mr);
  v()->DeregMr(&target->mr);
  v()->DeregMr(&source2->mr);
  v()->DeregMr(&target2->mr);
  CloseSide(&c);
  CloseSide(&d);
  CloseSide(&e);
  CloseSide(&f);
}

TEST_F(SoftVerbsPairTest, CqOverrunIsAnErrorWithAnAsyncEvent) {
  Side c, d;
  ASSERT_TRUE(OpenSide(v(), &c, 10, /*cq_entries=*/2));
  ASSERT_TRUE(OpenSide(v(), &d, 20));
  ASSERT_EQ(Connect(&c, d.address()), 0);
  ASSERT_EQ(Connect(&d, c.address()), 0);
  auto source = Register(v(), c.pd, 64);
  auto target = Register(v(), d.pd, 64);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(PostOne(v(), c.qp, IBV_WR_RDMA_WRITE, i, source->addr(), 8,
                      source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                      target->mr.rkey),
              0);
  }
  pollfd fd = {v()->AsyncEventFd(c.context), POLLIN, 0};
  ASSERT_EQ(poll(&fd, 1, 10000), 1);
  AsyncEvent event;
  ASSERT_TRUE(v()->GetAsyncEvent(c.context, &event));
  EXPECT_EQ(event.type, IBV_EVENT_CQ_ERR);
  EXPECT_FALSE(v()->GetAsyncEvent(c.context, &event));
  ibv_wc wc[4];
  EXPECT_LT(v()->PollCq(c.send_cq, 4, wc), 0);
  EXPECT_LT(v()->PollCq(c.send_cq, 4, wc), 0);
  v()->DeregMr(&source->mr);
  v()->DeregMr(&target->mr);
  CloseSide(&c);
  CloseSide(&d);
}

TEST_F(SoftVerbsPairTest, RemoteAccessErrorsThenFlush) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 4096);
  auto target = Register(v(), b_.pd, 4096);
  // An out-of-range address, then a WR behind it.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 1, source->addr(), 100,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr() + 4000,
                    target->mr.rkey),
            0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 2, source->addr(), 100,
                    source->mr.lkey, 0, target->addr(), target->mr.rkey),
            0);
  auto wc = Poll(v(), a_.send_cq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[1].wr_id, 2u);
  // The responder's QP went to error too, with an async event.
  pollfd fd = {v()->AsyncEventFd(b_.context), POLLIN, 0};
  ASSERT_EQ(poll(&fd, 1, 10000), 1);
  AsyncEvent event;
  ASSERT_TRUE(v()->GetAsyncEvent(b_.context, &event));
  EXPECT_EQ(event.type, IBV_EVENT_QP_ACCESS_ERR);
  EXPECT_EQ(event.qp_num, b_.qpn);
}

TEST_F(SoftVerbsPairTest, WrongRkeyIsARemoteAccessError) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  auto target = Register(v(), b_.pd, 64);
  // The lkey where the rkey belongs: a classic mix-up.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 1, source->addr(), 8,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                    target->mr.lkey),
            0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(SoftVerbsPairTest, MissingQpAccessFlagIsARemoteAccessError) {
  ConnectOptions write_only;
  write_only.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  ConnectBoth({}, write_only);
  auto local = Register(v(), a_.pd, 64);
  auto remote = Register(v(), b_.pd, 64);
  ASSERT_EQ(
      PostOne(v(), a_.qp, IBV_WR_RDMA_READ, 1, local->addr(), 8, local->mr.lkey,
              IBV_SEND_SIGNALED, remote->addr(), remote->mr.rkey),
      0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(SoftVerbsPairTest, DeregisteredMrIsARemoteAccessError) {
  ConnectBoth();
  auto local = Register(v(), a_.pd, 64);
  auto remote = Register(v(), b_.pd, 64);
  ASSERT_EQ(
      PostOne(v(), a_.qp, IBV_WR_RDMA_READ, 1, local->addr(), 8, local->mr.lkey,
              IBV_SEND_SIGNALED, remote->addr(), remote->mr.rkey),
      0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
  const uint32_t stale = remote->mr.rkey;
  ASSERT_EQ(v()->DeregMr(&remote->mr), 0);
  // A new registration of the same memory gets new keys.
  VerbsMr again;
  ASSERT_TRUE(v()->RegMr(b_.pd, remote->data(), 64, kAllAccess, &again));
  EXPECT_NE(again.rkey, stale);
  EXPECT_NE(again.lkey, again.rkey);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_READ, 2, local->addr(), 8,
                    local->mr.lkey, IBV_SEND_SIGNALED, remote->addr(), stale),
            0);
  wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  v()->DeregMr(&again);
}

TEST_F(SoftVerbsPairTest, BadLocalKeyIsALocalProtectionError) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  auto target = Register(v(), b_.pd, 64);
  // In range of nothing: the SGE runs past the region.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 1, source->addr() + 60, 8,
                    source->mr.lkey, 0, target->addr(), target->mr.rkey),
            0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(wc[0].wr_id, 1u);
}

TEST_F(SoftVerbsPairTest, ShortReceiveIsALengthError) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 256);
  auto landing = Register(v(), b_.pd, 256);
  ASSERT_EQ(PostRecv(v(), b_.srq, 7, landing->addr(), 100, landing->mr.lkey),
            0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 200,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
  wc = Poll(v(), b_.recv_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(wc[0].wr_id, 7u);
}

TEST_F(SoftVerbsPairTest, PsnMismatchIsARetryError) {
  // B expects A's first PSN off by one: a swapped handshake field.
  Address wrong = a_.address();
  wrong.psn = (wrong.psn + 1) & 0xFFFFFF;
  ASSERT_EQ(Connect(&a_, b_.address()), 0);
  ASSERT_EQ(Connect(&b_, wrong), 0);
  auto source = Register(v(), a_.pd, 64);
  auto target = Register(v(), b_.pd, 64);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_RDMA_WRITE, 1, source->addr(), 8,
                    source->mr.lkey, 0, target->addr(), target->mr.rkey),
            0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
}

TEST_F(SoftVerbsPairTest, WrongDestinationQpIsARetryError) {
  // A connects to B's QP number + 1 (nobody's).
  Address wrong = b_.address();
  wrong.qpn += 100000;
  ASSERT_EQ(Connect(&a_, wrong), 0);
  auto source = Register(v(), a_.pd, 64);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 8,
                    source->mr.lkey, 0),
            0);
  auto wc = Poll(v(), a_.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
}

TEST_F(SoftVerbsPairTest, ErrorStateFlushesInOrder) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  for (int i = 0; i < 3; ++i) {  // parked at B: no receive
    ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, i, source->addr(), 8,
                      source->mr.lkey, i == 1 ? IBV_SEND_SIGNALED : 0),
              0);
  }
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(v()->ModifyQp(a_.qp, &attr, IBV_QP_STATE), 0);
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 3, source->addr(), 8,
                    source->mr.lkey, 0),
            0);
  auto wc = Poll(v(), a_.send_cq, 4);
  ASSERT_EQ(wc.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(wc[i].wr_id, static_cast<uint64_t>(i));
  }
}

TEST_F(SoftVerbsPairTest, CompletionChannelSignalsOncePerArm) {
  ConnectBoth();
  VerbsChannel* channel = v()->CreateCompChannel(b_.context);
  ASSERT_NE(channel, nullptr);
  VerbsCq* cq = v()->CreateCq(b_.context, 16, channel);
  ASSERT_NE(cq, nullptr);
  // A second QP pair whose receive CQ reports to the channel.
  RcQpConfig config;
  config.send_cq = b_.send_cq;
  config.recv_cq = cq;
  config.srq = b_.srq;
  config.capabilities.max_send_wr = 8;
  config.capabilities.max_send_sge = 1;
  Side c;
  ASSERT_TRUE(OpenSide(v(), &c, 77));
  uint32_t qpn = 0;
  VerbsQp* qp = v()->CreateRcQp(b_.pd, config, &qpn);
  ASSERT_NE(qp, nullptr);
  Side bq = b_;
  bq.qp = qp;
  bq.qpn = qpn;
  ASSERT_EQ(Connect(&c, bq.address()), 0);
  ASSERT_EQ(Connect(&bq, c.address()), 0);
  auto source = Register(v(), c.pd, 64);
  auto target = Register(v(), b_.pd, 64);
  const int fd = v()->ChannelFd(channel);
  EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_FALSE(v()->GetCqEvent(channel));

  auto write_imm = [&](int id) {
    return PostOne(v(), c.qp, IBV_WR_RDMA_WRITE_WITH_IMM, id, source->addr(), 8,
                   source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                   target->mr.rkey, id);
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(PostRecv(v(), b_.srq, i, 0, 0, 0), 0);
  }
  // Not armed: no event.
  ASSERT_EQ(write_imm(0), 0);
  ASSERT_EQ(Poll(v(), c.send_cq, 1).size(), 1u);
  pollfd pfd = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 20), 0);
  ASSERT_EQ(v()->ReqNotifyCq(cq), 0);
  ASSERT_EQ(write_imm(1), 0);
  ASSERT_EQ(write_imm(2), 0);
  ASSERT_EQ(Poll(v(), c.send_cq, 2).size(), 2u);
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);
  EXPECT_TRUE(v()->GetCqEvent(channel));
  EXPECT_FALSE(v()->GetCqEvent(channel));  // one event for one arm
  auto wc = Poll(v(), cq, 3);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[2].imm_data, 2u);

  v()->DestroyQp(qp);
  v()->DestroyCq(cq);
  v()->DestroyCompChannel(channel);
  v()->DeregMr(&source->mr);
  v()->DeregMr(&target->mr);
  CloseSide(&c);
}

// Non-inline bytes are read when the NIC moves them (here: when the parked
// send finally finds a receive), inline bytes when posted.
TEST_F(SoftVerbsPairTest, NonInlineDataIsReadAtDmaTime) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  auto landing = Register(v(), b_.pd, 128);
  for (bool inline_send : {false, true}) {
    Fill(source->data(), 32, 1);
    const uint64_t before = SoftVerbsRnrNakCount();
    ASSERT_EQ(
        PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 32, source->mr.lkey,
                IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0)),
        0);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (SoftVerbsRnrNakCount() == before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    ASSERT_GT(SoftVerbsRnrNakCount(), before);  // parked at the responder
    Fill(source->data(), 32, 2);                // the caller reuses it
    ASSERT_EQ(PostRecv(v(), b_.srq, 1, landing->addr(), 128, landing->mr.lkey),
              0);
    ASSERT_EQ(Poll(v(), b_.recv_cq, 1).size(), 1u);
    ASSERT_EQ(Poll(v(), a_.send_cq, 1).size(), 1u);
    EXPECT_EQ(FirstMismatch(landing->data(), 32, inline_send ? 1 : 2), -1)
        << (inline_send ? "inline" : "non-inline");
  }
}

TEST_F(SoftVerbsPairTest, ClosedPeerFailsPromptly) {
  ConnectBoth();
  auto source = Register(v(), a_.pd, 64);
  // A send parked at B (no receive), then B's device goes away.
  ASSERT_EQ(PostOne(v(), a_.qp, IBV_WR_SEND, 1, source->addr(), 8,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  Side left_behind = b_;
  v()->CloseDevice(b_.context);  // objects left behind: closed with it
  b_ = Side();
  auto wc = Poll(v(), a_.send_cq, 1, std::chrono::seconds(5));
  DestroyObjects(&left_behind);  // the closed device goes with the last
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_GT(GetSoftVerbsCounters().peer_failures, 0u);
}

TEST(SoftVerbsTest, RoceModeGidsAndGlobalRoutes) {
  auto verbs = CreateSoftVerbs();
  setenv("MINIMPI_SOFTIB_LINK", "roce", 1);
  Side a, b;
  const bool opened =
      OpenSide(verbs.get(), &a, 100) && OpenSide(verbs.get(), &b, 200);
  unsetenv("MINIMPI_SOFTIB_LINK");
  ASSERT_TRUE(opened);
  ibv_port_attr port;
  ASSERT_EQ(verbs->QueryPort(a.context, 1, &port), 0);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.lid, 0);
  EXPECT_EQ(port.gid_tbl_len, 4);
  ibv_gid_entry gid[4];
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_EQ(verbs->QueryGid(a.context, 1, i, &gid[i]), 0);
    EXPECT_EQ(gid[i].gid_index, i);
  }
  EXPECT_NE(verbs->QueryGid(a.context, 1, 4, &gid[0]), 0);
  EXPECT_EQ(gid[0].gid_type, IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(gid[1].gid_type, IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(gid[2].gid_type, IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(gid[3].gid_type, IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(gid[0].gid.raw[0], 0xfe);
  EXPECT_EQ(gid[0].gid.raw[1], 0x80);
  const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  EXPECT_EQ(std::memcmp(gid[3].gid.raw, v4_prefix, 12), 0);
  EXPECT_EQ(gid[3].gid.raw[12], 10);
  EXPECT_EQ(gid[3].gid.raw[13], 254);

  // Without a GRH the address names nobody.
  ASSERT_EQ(ToInit(verbs.get(), a.qp, kAllAccess), 0);
  ibv_qp_attr rtr = RtrAttr(b.address(), {});
  EXPECT_EQ(verbs->ModifyQp(a.qp, &rtr, kRtrMask), EINVAL);
  ibv_qp_attr reset = {};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(verbs->ModifyQp(a.qp, &reset, IBV_QP_STATE), 0);

  // With one (through the RoCE v2 IPv4 GID), traffic flows.
  Address to_b = b.address();
  ibv_gid_entry b_v2;
  ASSERT_EQ(verbs->QueryGid(b.context, 1, 3, &b_v2), 0);
  to_b.gid = b_v2.gid;
  ConnectOptions global;
  global.global = true;
  global.sgid_index = 3;
  ASSERT_EQ(Connect(&a, to_b, global), 0);
  ASSERT_EQ(Connect(&b, a.address(), global), 0);
  auto source = Register(verbs.get(), a.pd, 64);
  auto target = Register(verbs.get(), b.pd, 64);
  Fill(source->data(), 64, 8);
  ASSERT_EQ(PostOne(verbs.get(), a.qp, IBV_WR_RDMA_WRITE, 1, source->addr(), 64,
                    source->mr.lkey, IBV_SEND_SIGNALED, target->addr(),
                    target->mr.rkey),
            0);
  auto wc = Poll(verbs.get(), a.send_cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(FirstMismatch(target->data(), 64, 8), -1);
  verbs->DeregMr(&source->mr);
  verbs->DeregMr(&target->mr);
  CloseSide(&a);
  CloseSide(&b);
}

TEST(SoftVerbsTest, DestroyInAnyOrderWithWorkInFlight) {
  auto verbs = CreateSoftVerbs();
  Side a, b;
  ASSERT_TRUE(OpenSide(verbs.get(), &a, 1));
  ASSERT_TRUE(OpenSide(verbs.get(), &b, 2));
  ASSERT_EQ(Connect(&a, b.address()), 0);
  ASSERT_EQ(Connect(&b, a.address()), 0);
  VerbsChannel* channel = verbs->CreateCompChannel(a.context);
  auto source = Register(verbs.get(), a.pd, 64);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(PostOne(verbs.get(), a.qp, IBV_WR_SEND, i, source->addr(), 8,
                      source->mr.lkey, IBV_SEND_SIGNALED),
              0);
  }
  // Objects first, QPs last; the channel before its CQ.
  verbs->DestroyCompChannel(channel);
  verbs->DestroyCq(a.send_cq);
  verbs->DestroyCq(a.recv_cq);
  verbs->DestroySrq(a.srq);
  verbs->DestroySrq(b.srq);
  verbs->DeallocPd(a.pd);
  ASSERT_EQ(verbs->DeregMr(&source->mr), 0);
  EXPECT_NE(verbs->DeregMr(&source->mr), 0);
  verbs->DestroyQp(b.qp);
  verbs->DestroyQp(a.qp);
  verbs->CloseDevice(a.context);
  // B's device closes before its objects are destroyed.
  verbs->CloseDevice(b.context);
  verbs->DestroyCq(b.send_cq);
  verbs->DestroyCq(b.recv_cq);
  verbs->DeallocPd(b.pd);
}

// Many threads at once: one posts, one reaps, one receives and reposts, one
// creates and destroys QPs, in two contexts of one process.
TEST_F(SoftVerbsPairTest, ConcurrentPostPollAndSetup) {
  ConnectBoth();
  constexpr int kMessages = 3000;
  constexpr size_t kSlot = 9000;
  auto send = Register(v(), a_.pd, kSlot * 32);
  auto receive = Register(v(), b_.pd, kSlot * 128);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(PostRecv(v(), b_.srq, i, receive->addr() + i * kSlot, kSlot,
                       receive->mr.lkey),
              0);
  }
  std::atomic<int> send_done{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> stop_setup{false};
  std::thread poster([&] {
    for (int i = 0; i < kMessages && !failed; ++i) {
      while (i - send_done.load() >= 32 && !failed) std::this_thread::yield();
      uint8_t* source = send->data() + (i % 32) * kSlot;
      const uint32_t length = 1 + (i * 977) % kSlot;
      Fill(source, length, i);
      if (PostOne(v(), a_.qp, IBV_WR_SEND, i,
                  reinterpret_cast<uint64_t>(source), length, send->mr.lkey,
                  IBV_SEND_SIGNALED) != 0) {
        failed = true;
      }
    }
  });
  std::thread reaper([&] {
    while (send_done.load() < kMessages && !failed) {
      ibv_wc wc[8];
      const int n = v()->PollCq(a_.send_cq, 8, wc);
      if (n < 0) failed = true;
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS ||
            wc[i].wr_id != static_cast<uint64_t>(send_done.load())) {
          failed = true;
        }
        send_done.fetch_add(1);
      }
      if (n == 0) std::this_thread::yield();
    }
  });
  std::thread setup([&] {
    while (!stop_setup.load()) {
      Side extra;
      extra.verbs = v();
      RcQpConfig config;
      config.send_cq = a_.send_cq;
      config.recv_cq = a_.recv_cq;
      config.srq = a_.srq;
      config.capabilities.max_send_wr = 4;
      uint32_t qpn;
      VerbsQp* qp = v()->CreateRcQp(a_.pd, config, &qpn);
      if (qp == nullptr || ToInit(v(), qp, kAllAccess) != 0) failed = true;
      VerbsMr mr;
      if (!v()->RegMr(a_.pd, send->data(), 64, kAllAccess, &mr)) {
        failed = true;
      }
      v()->DeregMr(&mr);
      v()->DestroyQp(qp);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  int received = 0;
  std::string error;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (received < kMessages && !failed &&
         std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc[8];
    const int n = v()->PollCq(b_.recv_cq, 8, wc);
    if (n < 0) break;
    for (int i = 0; i < n; ++i) {
      const int slot = static_cast<int>(wc[i].wr_id);
      const uint32_t length = 1 + (received * 977) % kSlot;
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != length ||
          FirstMismatch(receive->data() + slot * kSlot, length, received) !=
              -1) {
        error = absl::StrCat("message ", received, " status ", wc[i].status);
        failed = true;
      }
      ++received;
      if (PostRecv(v(), b_.srq, slot, receive->addr() + slot * kSlot, kSlot,
                   receive->mr.lkey) != 0) {
        failed = true;
      }
    }
    if (n == 0) std::this_thread::yield();
  }
  if (received < kMessages) failed = true;
  stop_setup = true;
  poster.join();
  reaper.join();
  setup.join();
  EXPECT_FALSE(failed.load()) << error << " received " << received;
  EXPECT_EQ(received, kMessages);
}

// ---------------------------------------------------------------------------
// Across processes: a forked child is the peer.

struct SharedExchange {
  std::atomic<uint32_t> ready[2];
  Address address[2];
  uint64_t remote_addr[2];
  uint32_t rkey[2];
  std::atomic<uint32_t> done[2];
};

SharedExchange* MapExchange() {
  void* memory = mmap(nullptr, sizeof(SharedExchange), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  return new (memory) SharedExchange{};
}

bool WaitFor(const std::atomic<uint32_t>& flag,
             std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (flag.load() == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

constexpr int kCrossMessages = 200;
constexpr size_t kCrossSlot = 10000;
constexpr size_t kCrossWindow = 1 << 20;

uint32_t CrossLength(int i) {
  return static_cast<uint32_t>((i * 4099) % kCrossSlot);
}

// One side of the cross-process exchange: sends kCrossMessages to the
// other, receives as many and checks them, then RDMA-reads the other's
// window and checks it. Returns an empty string or what went wrong.
std::string RunCrossSide(int me, SharedExchange* exchange) {
  auto verbs = CreateSoftVerbs();
  Side side;
  // The buffers outlive the device (the NIC thread serves the peer's reads
  // of `window` until closed), and the device is closed on every path: a
  // child that leaves its device open leaves its inbox file behind.
  std::unique_ptr<Buffer> send, receive, window, readback;
  struct Closer {
    Side* side;
    ~Closer() { CloseSide(side); }
  } closer{&side};
  if (!OpenSide(verbs.get(), &side, 1000 + me)) return "open failed";
  Verbs* v = verbs.get();
  send = Register(v, side.pd, kCrossSlot * kCrossMessages);
  receive = Register(v, side.pd, kCrossSlot * kCrossMessages);
  window = Register(v, side.pd, kCrossWindow);
  readback = Register(v, side.pd, kCrossWindow);
  Fill(window->data(), kCrossWindow, 50 + me);
  for (int i = 0; i < kCrossMessages; ++i) {
    if (PostRecv(v, side.srq, i, receive->addr() + i * kCrossSlot, kCrossSlot,
                 receive->mr.lkey) != 0) {
      return "post recv failed";
    }
  }
  exchange->address[me] = side.address();
  exchange->remote_addr[me] = window->addr();
  exchange->rkey[me] = window->mr.rkey;
  exchange->ready[me] = 1;
  if (!WaitFor(exchange->ready[1 - me])) return "peer never ready";
  if (Connect(&side, exchange->address[1 - me]) != 0) return "connect failed";
  std::string error;
  int sent = 0, send_done = 0, received = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((send_done < kCrossMessages || received < kCrossMessages) &&
         std::chrono::steady_clock::now() < deadline && error.empty()) {
    while (sent < kCrossMessages && sent - send_done < 64) {
      uint8_t* source = send->data() + sent * kCrossSlot;
      Fill(source, CrossLength(sent), sent * 2 + me);
      if (PostOne(v, side.qp, IBV_WR_SEND, sent,
                  reinterpret_cast<uint64_t>(source), CrossLength(sent),
                  send->mr.lkey, IBV_SEND_SIGNALED) != 0) {
        return "post send failed";
      }
      ++sent;
    }
    ibv_wc wc[8];
    int n = v->PollCq(side.send_cq, 8, wc);
    if (n < 0) return "send CQ error";
    for (int i = 0; i < n; ++i, ++send_done) {
      if (wc[i].status != IBV_WC_SUCCESS && error.empty()) {
        error = absl::StrCat("send ", wc[i].wr_id, " status ", wc[i].status);
      }
    }
    n = v->PollCq(side.recv_cq, 8, wc);
    if (n < 0) return "recv CQ error";
    for (int i = 0; i < n; ++i, ++received) {
      if (wc[i].status != IBV_WC_SUCCESS ||
          wc[i].wr_id != static_cast<uint64_t>(received) ||
          wc[i].byte_len != CrossLength(received) ||
          FirstMismatch(receive->data() + received * kCrossSlot,
                        CrossLength(received), received * 2 + (1 - me)) != -1) {
        error = absl::StrCat("receive ", received, " wrong");
      }
    }
    if (n == 0) std::this_thread::yield();
  }
  if (!error.empty()) return error;
  if (received < kCrossMessages) return "timed out";
  if (PostOne(v, side.qp, IBV_WR_RDMA_READ, 9999, readback->addr(),
              kCrossWindow, readback->mr.lkey, IBV_SEND_SIGNALED,
              exchange->remote_addr[1 - me], exchange->rkey[1 - me]) != 0) {
    return "post read failed";
  }
  auto wc = Poll(v, side.send_cq, 1);
  if (wc.size() != 1 || wc[0].status != IBV_WC_SUCCESS) return "read failed";
  if (FirstMismatch(readback->data(), kCrossWindow, 50 + (1 - me)) != -1) {
    return "read bytes wrong";
  }
  // Stay until the peer has read our window too.
  exchange->done[me] = 1;
  if (!WaitFor(exchange->done[1 - me])) return "peer never done";
  return "";
}

TEST(SoftVerbsCrossProcessTest, SendsAndReadsAcrossFork) {
  SharedExchange* exchange = MapExchange();
  ASSERT_NE(exchange, nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string error = RunCrossSide(1, exchange);
    if (!error.empty()) std::fprintf(stderr, "child: %s\n", error.c_str());
    _exit(error.empty() ? 0 : 1);
  }
  const std::string error = RunCrossSide(0, exchange);
  EXPECT_EQ(error, "");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  munmap(exchange, sizeof(SharedExchange));
}

TEST(SoftVerbsCrossProcessTest, KilledPeerFailsTheRequester) {
  SharedExchange* exchange = MapExchange();
  ASSERT_NE(exchange, nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto verbs = CreateSoftVerbs();
    Side side;
    if (!OpenSide(verbs.get(), &side, 2)) _exit(1);
    exchange->address[1] = side.address();
    exchange->ready[1] = 1;
    if (!WaitFor(exchange->ready[0])) _exit(1);
    if (Connect(&side, exchange->address[0]) != 0) _exit(1);
    exchange->done[1] = 1;
    pause();  // never posts a receive; killed
    _exit(0);
  }
  auto verbs = CreateSoftVerbs();
  Side side;
  ASSERT_TRUE(OpenSide(verbs.get(), &side, 1));
  exchange->address[0] = side.address();
  exchange->ready[0] = 1;
  ASSERT_TRUE(WaitFor(exchange->ready[1]));
  ASSERT_EQ(Connect(&side, exchange->address[1]), 0);
  ASSERT_TRUE(WaitFor(exchange->done[1]));
  auto source = Register(verbs.get(), side.pd, 64);
  ASSERT_EQ(PostOne(verbs.get(), side.qp, IBV_WR_SEND, 1, source->addr(), 8,
                    source->mr.lkey, IBV_SEND_SIGNALED),
            0);
  // Parked at the child (RNR); now the child dies without closing.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  auto wc = Poll(verbs.get(), side.send_cq, 1, std::chrono::seconds(5));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
  // The killed child's inbox file stayed behind; the next device opened
  // here (same PID namespace) removes it.
  const std::string stale =
      absl::StrCat("/dev/shm/minimpi-softib-", exchange->address[1].lid);
  EXPECT_EQ(access(stale.c_str(), F_OK), 0);
  Side other;
  ASSERT_TRUE(OpenSide(verbs.get(), &other, 3));  // a second one: a new id
  EXPECT_NE(access(stale.c_str(), F_OK), 0);
  CloseSide(&other);
  verbs->DeregMr(&source->mr);
  CloseSide(&side);
  munmap(exchange, sizeof(SharedExchange));
}

}  // namespace
}  // namespace minimpi::net::ib::testing
