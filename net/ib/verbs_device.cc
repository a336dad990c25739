// The real device behind net/ib/verbs.h: each method is one (or two)
// libibverbs calls and nothing more.
//
// This is the only code in net/ib that CI cannot run: CI machines have no
// RDMA device, so everything above this layer is tested over the software
// device in net/ib/testing instead. Keep this file plain and obvious, so it
// can be checked by reading: no logic, no policy, no state. The opaque
// handles ARE the libibverbs objects (a VerbsQp* is an ibv_qp*, and so on);
// the casts below only convert between the two spellings.
//
// Owned by: net/ib. Called by: net/ib/ib_transport.cc, net/ib/ib_devices.cc.
#include <fcntl.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/ib/verbs.h"

namespace minimpi::net::ib {
namespace {

ibv_context* Ctx(VerbsContext* context) {
  return reinterpret_cast<ibv_context*>(context);
}
ibv_pd* Pd(VerbsPd* pd) { return reinterpret_cast<ibv_pd*>(pd); }
ibv_cq* Cq(VerbsCq* cq) { return reinterpret_cast<ibv_cq*>(cq); }
ibv_comp_channel* Channel(VerbsChannel* channel) {
  return reinterpret_cast<ibv_comp_channel*>(channel);
}
ibv_srq* Srq(VerbsSrq* srq) { return reinterpret_cast<ibv_srq*>(srq); }
ibv_qp* Qp(VerbsQp* qp) { return reinterpret_cast<ibv_qp*>(qp); }

// Adds O_NONBLOCK to `fd`; 0, or -1 with errno set.
int MakeNonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return -1;
  return fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ? -1 : 0;
}

bool IsQpEvent(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return true;
    default:
      return false;
  }
}

bool IsPortEvent(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return true;
    default:
      return false;
  }
}

class DeviceVerbs : public Verbs {
 public:
  const char* provider() const override { return "libibverbs"; }

  std::vector<std::string> ListDevices() override {
    std::vector<std::string> names;
    int count = 0;
    // Null (errno set) when the verbs stack is unusable, e.g. no kernel
    // support; an empty list when no device exists.
    ibv_device** devices = ibv_get_device_list(&count);
    if (devices == nullptr) return names;
    for (int i = 0; i < count && devices[i] != nullptr; ++i) {
      const char* name = ibv_get_device_name(devices[i]);
      names.emplace_back(name != nullptr ? name : "");
    }
    ibv_free_device_list(devices);
    return names;
  }

  VerbsContext* OpenDevice(const std::string& name) override {
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    if (devices == nullptr) return nullptr;  // errno set
    ibv_context* context = nullptr;
    errno = ENODEV;
    for (int i = 0; i < count && devices[i] != nullptr; ++i) {
      const char* device_name = ibv_get_device_name(devices[i]);
      if (device_name != nullptr && name == device_name) {
        context = ibv_open_device(devices[i]);  // errno set on failure
        break;
      }
    }
    const int saved_errno = errno;
    ibv_free_device_list(devices);  // an opened context outlives the list
    errno = saved_errno;
    if (context == nullptr) return nullptr;
    if (MakeNonblocking(context->async_fd) != 0) {
      const int fcntl_errno = errno;
      ibv_close_device(context);
      errno = fcntl_errno;
      return nullptr;
    }
    return reinterpret_cast<VerbsContext*>(context);
  }

  void CloseDevice(VerbsContext* context) override {
    ibv_close_device(Ctx(context));
  }

  int QueryDevice(VerbsContext* context, ibv_device_attr* attr) override {
    return ibv_query_device(Ctx(context), attr);
  }

  int QueryPort(VerbsContext* context, uint8_t port,
                ibv_port_attr* attr) override {
    return ibv_query_port(Ctx(context), port, attr);
  }

  int QueryGid(VerbsContext* context, uint8_t port, uint32_t index,
               ibv_gid_entry* entry) override {
    return ibv_query_gid_ex(Ctx(context), port, index, entry, 0);
  }

  bool GetAsyncEvent(VerbsContext* context, AsyncEvent* event) override {
    ibv_async_event raw;
    // async_fd is nonblocking (OpenDevice): -1 with EAGAIN when none waits.
    if (ibv_get_async_event(Ctx(context), &raw) != 0) return false;
    *event = AsyncEvent{};
    event->type = raw.event_type;
    if (IsQpEvent(raw.event_type) && raw.element.qp != nullptr) {
      event->qp_num = raw.element.qp->qp_num;
    }
    if (IsPortEvent(raw.event_type)) {
      event->port = static_cast<uint8_t>(raw.element.port_num);
    }
    ibv_ack_async_event(&raw);
    return true;
  }

  int AsyncEventFd(VerbsContext* context) override {
    return Ctx(context)->async_fd;
  }

  VerbsPd* AllocPd(VerbsContext* context) override {
    return reinterpret_cast<VerbsPd*>(ibv_alloc_pd(Ctx(context)));
  }

  void DeallocPd(VerbsPd* pd) override { ibv_dealloc_pd(Pd(pd)); }

  bool RegMr(VerbsPd* pd, void* address, size_t length, int access,
             VerbsMr* mr) override {
    ibv_mr* raw = ibv_reg_mr(Pd(pd), address, length, access);
    if (raw == nullptr) return false;  // errno set
    mr->lkey = raw->lkey;
    mr->rkey = raw->rkey;
    mr->handle = raw;
    return true;
  }

  int DeregMr(VerbsMr* mr) override {
    return ibv_dereg_mr(static_cast<ibv_mr*>(mr->handle));
  }

  VerbsChannel* CreateCompChannel(VerbsContext* context) override {
    ibv_comp_channel* channel = ibv_create_comp_channel(Ctx(context));
    if (channel == nullptr) return nullptr;  // errno set
    if (MakeNonblocking(channel->fd) != 0) {
      const int fcntl_errno = errno;
      ibv_destroy_comp_channel(channel);
      errno = fcntl_errno;
      return nullptr;
    }
    return reinterpret_cast<VerbsChannel*>(channel);
  }

  void DestroyCompChannel(VerbsChannel* channel) override {
    ibv_destroy_comp_channel(Channel(channel));
  }

  int ChannelFd(VerbsChannel* channel) override { return Channel(channel)->fd; }

  bool GetCqEvent(VerbsChannel* channel) override {
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    // The channel's fd is nonblocking: -1 with EAGAIN when none waits.
    if (ibv_get_cq_event(Channel(channel), &cq, &cq_context) != 0) {
      return false;
    }
    ibv_ack_cq_events(cq, 1);
    return true;
  }

  VerbsCq* CreateCq(VerbsContext* context, int entries,
                    VerbsChannel* channel) override {
    return reinterpret_cast<VerbsCq*>(
        ibv_create_cq(Ctx(context), entries, nullptr, Channel(channel), 0));
  }

  void DestroyCq(VerbsCq* cq) override { ibv_destroy_cq(Cq(cq)); }

  int ReqNotifyCq(VerbsCq* cq) override { return ibv_req_notify_cq(Cq(cq), 0); }

  int PollCq(VerbsCq* cq, int entries, ibv_wc* wc) override {
    return ibv_poll_cq(Cq(cq), entries, wc);
  }

  VerbsSrq* CreateSrq(VerbsPd* pd, uint32_t max_wr, uint32_t max_sge) override {
    ibv_srq_init_attr init = {};
    init.attr.max_wr = max_wr;
    init.attr.max_sge = max_sge;
    return reinterpret_cast<VerbsSrq*>(ibv_create_srq(Pd(pd), &init));
  }

  void DestroySrq(VerbsSrq* srq) override { ibv_destroy_srq(Srq(srq)); }

  int PostSrqRecv(VerbsSrq* srq, ibv_recv_wr* wr,
                  ibv_recv_wr** bad_wr) override {
    return ibv_post_srq_recv(Srq(srq), wr, bad_wr);
  }

  VerbsQp* CreateRcQp(VerbsPd* pd, RcQpConfig& config,
                      uint32_t* qp_num) override {
    ibv_qp_init_attr init = {};
    init.send_cq = Cq(config.send_cq);
    init.recv_cq = Cq(config.recv_cq);
    init.srq = Srq(config.srq);
    init.cap = config.capabilities;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 0;
    ibv_qp* qp = ibv_create_qp(Pd(pd), &init);
    if (qp == nullptr) return nullptr;  // errno set
    config.capabilities = init.cap;     // what the device granted
    *qp_num = qp->qp_num;
    return reinterpret_cast<VerbsQp*>(qp);
  }

  void DestroyQp(VerbsQp* qp) override { ibv_destroy_qp(Qp(qp)); }

  int ModifyQp(VerbsQp* qp, ibv_qp_attr* attr, int mask) override {
    return ibv_modify_qp(Qp(qp), attr, mask);
  }

  int PostSend(VerbsQp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) override {
    return ibv_post_send(Qp(qp), wr, bad_wr);
  }
};

}  // namespace

std::unique_ptr<Verbs> CreateDeviceVerbs() {
  return std::make_unique<DeviceVerbs>();
}

}  // namespace minimpi::net::ib
