// softib: a software RDMA device implementing the thin verbs layer
// (net/ib/verbs.h) with reliable-connected semantics, so that net/ib runs in
// CI on machines without RDMA hardware, between processes of one host and
// across "simulated nodes" (network namespaces sharing /dev/shm and pids).
//
// The NIC model. Each opened context is one small NIC:
//   - an inbox: a ring of packet slots in /dev/shm/minimpi-softib-<lid>
//     that any process may push into (soft_fabric.h);
//   - a NIC thread that sleeps on a futex in the inbox until a packet
//     arrives (or a timer is due: RNR retries, outbox retries, peer-death
//     checks), then runs the responder and completion logic. PollCq also
//     runs that logic when its CQ lacks entries, which is merely a faster
//     NIC: nothing observable depends on which thread ran it.
//   - requester: PostSend checks the work request, queues it, and (when the
//     QP may transmit) checks its local keys and sends a request packet that
//     names the requester's buffers (or carries inline bytes, copied at
//     post time). Non-inline bytes are read later, by the responder, as a
//     real NIC DMAs them after ibv_post_send returns.
//   - responder: checks PSN, connection, rkeys and access flags against its
//     own tables at the time of access, takes a receive from the SRQ (or
//     parks the packet: an RNR NAK, retried when a receive is posted and on
//     a timer), moves bytes with process_vm_readv/writev, writes its CQE,
//     and sends an ACK or a NAK back to the requester's inbox.
//   - the requester's completion is generated from the ACK (so the data is
//     in place when it is polled), strictly in posting order; a NAK or a
//     local error moves the QP to the error state and flushes the rest.
//   - a full peer inbox never blocks anyone: packets wait in a per-peer
//     outbox retried by the NIC thread, and a NIC keeps consuming its own
//     inbox meanwhile, so two NICs never wait on each other.
//   - a request that no connected QP accepts (the peer QP is not in RTR
//     yet, is in error, or is connected elsewhere) is answered "dropped";
//     the requester resends it every millisecond, as hardware retries on
//     its transport timer, and fails it with IBV_WC_RETRY_EXC_ERR after
//     (retry_cnt + 1) * 4.096 us * 2^timeout, at least 1 s. A PSN other
//     than the expected one fails at once with the same status.
//   - a peer whose context closed or whose process died fails the waiting
//     work requests with IBV_WC_RETRY_EXC_ERR (checked every few ms).
//
// Addresses: a context's id is its LID (IB mode) and is encoded in its
// GIDs. As on hardware, where the LID belongs to the port, reopening the
// device in a process gives the id it had before; only a second context
// open at the same time in one process gets another (like a second port).
// QP numbers are unique on the host.
//
// Environment, read at OpenDevice:
//   MINIMPI_SOFTIB_LINK=ib|roce   link layer (default ib: LIDs; roce: lid 0,
//                                 four GIDs, address vectors need a GRH)
//   MINIMPI_SOFTIB_MAX_RNR=N      once this process's responders have sent
//                                 more than N RNR NAKs, an RNR fails the
//                                 requester at once (IBV_WC_RNR_RETRY_EXC_ERR)
//                                 whatever its rnr_retry; unset: no limit.
//
// Threading: every method is safe from any thread; each context has one
// lock. Fork only while this process has no open context.
//
// Owned by: net/ib/testing. Used by: net/ib tests, and libmpi through
// libminimpi_softib.so (MINIMPI_IB_TEST_DEVICE).
#ifndef MINIMPI_NET_IB_TESTING_SOFT_VERBS_H_
#define MINIMPI_NET_IB_TESTING_SOFT_VERBS_H_

#include <cstdint>
#include <memory>

#include "net/ib/verbs.h"

namespace minimpi::net::ib::testing {

// The software device; it lists one device, "softib0". The object holds no
// state (contexts belong to the process), so contexts may outlive it.
std::unique_ptr<Verbs> CreateSoftVerbs();

// Test introspection, per process.
struct SoftVerbsCounters {
  uint64_t rnr_naks = 0;       // RNR NAKs sent by this process's responders
  uint64_t packets_sent = 0;   // requests and acknowledgements
  uint64_t outbox_waits = 0;   // packets that met a full peer inbox
  uint64_t peer_failures = 0;  // work requests failed because a peer died
};
SoftVerbsCounters GetSoftVerbsCounters();
// Shorthand for GetSoftVerbsCounters().rnr_naks.
uint64_t SoftVerbsRnrNakCount();

}  // namespace minimpi::net::ib::testing

#endif  // MINIMPI_NET_IB_TESTING_SOFT_VERBS_H_
