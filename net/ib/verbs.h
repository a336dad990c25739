// The thin verbs layer: every call net/ib makes to an RDMA device, and
// nothing else. net/ib talks to a device only through this interface, so
// that all of its logic (connections, credits, receive queues, registration,
// completions, errors) runs in CI over a software device that lives with
// the tests (net/ib/testing/soft_verbs.h), while the one implementation that
// needs hardware (verbs_device.cc: each method is one libibverbs call) stays
// small enough to read at a glance.
//
// The methods mirror libibverbs one for one and use its structures for what
// crosses the device boundary (work requests, completions, port and QP
// attributes, GIDs), so what net/ib builds is exactly what a NIC would get.
// Objects are opaque handles: libibverbs objects for the real device, the
// test device's own otherwise. Return conventions follow libibverbs: a null
// handle or a nonzero int is a failure with errno set.
//
// Threading, as in libibverbs: posting on a QP or SRQ and polling a CQ are
// safe from any thread (net/ib serializes each VCI's use anyway); creating
// and modifying objects from another thread than the one polling is safe.
//
// Owned by: net/ib. Called by: net/ib/ib_transport.cc, net/ib/ib_devices.cc.
#ifndef MINIMPI_NET_IB_VERBS_H_
#define MINIMPI_NET_IB_VERBS_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minimpi::net::ib {

// Opaque device objects.
struct VerbsContext;  // an opened device (ibv_context)
struct VerbsPd;       // protection domain (ibv_pd)
struct VerbsCq;       // completion queue (ibv_cq)
struct VerbsChannel;  // completion channel (ibv_comp_channel)
struct VerbsSrq;      // shared receive queue (ibv_srq)
struct VerbsQp;       // queue pair (ibv_qp)

// A registered memory region (ibv_mr's keys plus the handle to free it).
struct VerbsMr {
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  void* handle = nullptr;
};

// What ibv_create_qp needs for a reliable-connected QP: its CQs, its SRQ and
// its capacities (max_send_wr, max_send_sge, max_inline_data; the receive
// side is the SRQ's).
struct RcQpConfig {
  VerbsCq* send_cq = nullptr;
  VerbsCq* recv_cq = nullptr;
  VerbsSrq* srq = nullptr;
  ibv_qp_cap capabilities = {};
};

// An asynchronous event (ibv_async_event), reduced to what net/ib reports.
struct AsyncEvent {
  ibv_event_type type = IBV_EVENT_DEVICE_FATAL;
  uint32_t qp_num = 0;  // for QP events
  uint8_t port = 0;     // for port events
};

class Verbs {
 public:
  virtual ~Verbs() = default;

  // "libibverbs", or the test device's name; shown in messages.
  virtual const char* provider() const = 0;

  // ibv_get_device_list + ibv_get_device_name; empty when none or no
  // driver. Never fails.
  virtual std::vector<std::string> ListDevices() = 0;
  // ibv_open_device of the device named `name`; null (errno set) when it
  // does not exist or cannot be opened. The context's asynchronous event
  // descriptor is made nonblocking.
  virtual VerbsContext* OpenDevice(const std::string& name) = 0;
  virtual void CloseDevice(VerbsContext* context) = 0;
  virtual int QueryDevice(VerbsContext* context, ibv_device_attr* attr) = 0;
  virtual int QueryPort(VerbsContext* context, uint8_t port,
                        ibv_port_attr* attr) = 0;
  // ibv_query_gid_ex: one GID table entry with its type (IB, RoCE v1 or
  // v2); nonzero when the index is unused.
  virtual int QueryGid(VerbsContext* context, uint8_t port, uint32_t index,
                       ibv_gid_entry* entry) = 0;
  // ibv_get_async_event + ibv_ack_async_event, without blocking: false
  // when no event is pending.
  virtual bool GetAsyncEvent(VerbsContext* context, AsyncEvent* event) = 0;
  // The descriptor that becomes readable when an asynchronous event waits.
  virtual int AsyncEventFd(VerbsContext* context) = 0;

  virtual VerbsPd* AllocPd(VerbsContext* context) = 0;
  virtual void DeallocPd(VerbsPd* pd) = 0;
  // ibv_reg_mr; false (errno set) on failure.
  virtual bool RegMr(VerbsPd* pd, void* address, size_t length, int access,
                     VerbsMr* mr) = 0;
  virtual int DeregMr(VerbsMr* mr) = 0;

  // ibv_create_comp_channel, its descriptor made nonblocking.
  virtual VerbsChannel* CreateCompChannel(VerbsContext* context) = 0;
  virtual void DestroyCompChannel(VerbsChannel* channel) = 0;
  // The descriptor that becomes readable when an armed CQ got a completion.
  virtual int ChannelFd(VerbsChannel* channel) = 0;
  // ibv_get_cq_event + ibv_ack_cq_events, without blocking: true when an
  // event was taken off `channel`.
  virtual bool GetCqEvent(VerbsChannel* channel) = 0;

  // ibv_create_cq with room for `entries` completions, reporting to
  // `channel` (may be null).
  virtual VerbsCq* CreateCq(VerbsContext* context, int entries,
                            VerbsChannel* channel) = 0;
  virtual void DestroyCq(VerbsCq* cq) = 0;
  // ibv_req_notify_cq(cq, 0): the next completion raises one event.
  virtual int ReqNotifyCq(VerbsCq* cq) = 0;
  // ibv_poll_cq: up to `entries` completions into `wc`; the count, or
  // negative on error (e.g. an overrun CQ).
  virtual int PollCq(VerbsCq* cq, int entries, ibv_wc* wc) = 0;

  // ibv_create_srq with max_wr and max_sge as given.
  virtual VerbsSrq* CreateSrq(VerbsPd* pd, uint32_t max_wr,
                              uint32_t max_sge) = 0;
  virtual void DestroySrq(VerbsSrq* srq) = 0;
  virtual int PostSrqRecv(VerbsSrq* srq, ibv_recv_wr* wr,
                          ibv_recv_wr** bad_wr) = 0;

  // ibv_create_qp of type IBV_QPT_RC; `config.capabilities` is updated with
  // what the device granted. The QP number through `qp_num`.
  virtual VerbsQp* CreateRcQp(VerbsPd* pd, RcQpConfig& config,
                              uint32_t* qp_num) = 0;
  virtual void DestroyQp(VerbsQp* qp) = 0;
  // ibv_modify_qp: `mask` says which fields of `attr` apply.
  virtual int ModifyQp(VerbsQp* qp, ibv_qp_attr* attr, int mask) = 0;
  // ibv_post_send: ENOMEM when the send queue is full.
  virtual int PostSend(VerbsQp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) = 0;
};

// The real device: libibverbs itself.
std::unique_ptr<Verbs> CreateDeviceVerbs();

// A test device library (a shared object built from net/ib/testing) exports
// this C function; MINIMPI_IB_TEST_DEVICE names the library to load.
inline constexpr char kTestDeviceFactorySymbol[] = "minimpi_create_test_verbs";
using TestDeviceFactory = Verbs* (*)();

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_VERBS_H_
