#include "net/shm/shm_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace minimpi::net::shm {
namespace {

// After a partial process_vm_readv/writev: moves an I/O vector past the
// `bytes` the kernel transferred, so the next call resumes where it
// stopped.
void SkipTransferred(iovec*& vector, int& left, size_t bytes) {
  while (bytes > 0) {
    const size_t n = std::min(bytes, vector->iov_len);
    vector->iov_base = static_cast<std::byte*>(vector->iov_base) + n;
    vector->iov_len -= n;
    bytes -= n;
    if (vector->iov_len == 0 && left > 0) ++vector, --left;
  }
}

constexpr size_t kPageBytes = 4096;
constexpr std::string_view kAddressKey = "net.shm";
constexpr uint64_t kProbeMagic = 0x6d696e696d70692dULL;  // "minimpi-"

size_t RoundUpToPage(size_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

std::string ErrnoText(int error) { return std::strerror(error); }

// MINIMPI_SHM_RING_BYTES rounded up to whole cache lines, as rings use it.
size_t RingCapacity(const runtime::Settings& settings) {
  return (settings.shm_ring_bytes + kCacheLineBytes - 1) / kCacheLineBytes *
         kCacheLineBytes;
}

// POSIX shared-memory names allow one leading slash and a short name; job
// ids (PMIx namespaces) may hold any character, so keep a safe subset.
std::string SegmentName(const std::string& job_id, int rank) {
  std::string safe;
  for (char c : job_id) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                      c == '_' || c == '.';
    safe.push_back(keep ? c : '_');
  }
  if (safe.size() > 160) safe = safe.substr(safe.size() - 160);
  return absl::StrCat("/minimpi-", safe, "-", rank);
}

// What each rank publishes: pid, segment name, probe word address, and the
// settings that fix the segment layout (all ranks must agree on them).
struct PeerAddress {
  pid_t pid = 0;
  std::string segment_name;
  uint64_t probe_address = 0;
  int num_vcis = 0;
  size_t ring_bytes = 0;
  size_t max_message = 0;

  std::string Encode() const {
    return absl::StrCat(pid, " ", segment_name, " ", probe_address, " ",
                        num_vcis, " ", ring_bytes, " ", max_message);
  }
  static absl::StatusOr<PeerAddress> Decode(const std::string& text) {
    // Debian's Abseil has its own string_view, distinct from std's.
    std::vector<absl::string_view> fields = absl::StrSplit(text, ' ');
    PeerAddress address;
    int64_t pid = 0;
    if (fields.size() != 6 || !absl::SimpleAtoi(fields[0], &pid) ||
        !absl::SimpleAtoi(fields[2], &address.probe_address) ||
        !absl::SimpleAtoi(fields[3], &address.num_vcis) ||
        !absl::SimpleAtoi(fields[4], &address.ring_bytes) ||
        !absl::SimpleAtoi(fields[5], &address.max_message)) {
      return absl::InternalError(
          absl::StrCat("net/shm: malformed peer address '", text, "'"));
    }
    address.pid = static_cast<pid_t>(pid);
    address.segment_name = std::string(fields[1]);
    return address;
  }
};

// A segment published as "memfd:<fd>" is a memory file of the peer's,
// opened through /proc; any other name is a POSIX shared-memory name.
constexpr absl::string_view kMemoryFilePrefix = "memfd:";

int OpenPeerSegment(const PeerAddress& address) {
  const std::string& name = address.segment_name;
  if (absl::StartsWith(name, kMemoryFilePrefix)) {
    const std::string path = absl::StrCat(
        "/proc/", address.pid, "/fd/", name.substr(kMemoryFilePrefix.size()));
    return open(path.c_str(), O_RDWR | O_CLOEXEC);
  }
  return shm_open(name.c_str(), O_RDWR, 0);
}

// An inbox in a segment: a line with the count of registrations and the
// VCI whose doorbell this VCI uses (written once at setup); a line with the
// doorbell (only the first VCI of a group that shares one uses its own);
// then the entries, each (sender local index * VCIs + sender VCI) + 1, 0
// while being written.
std::atomic<uint32_t>* InboxCount(void* inbox) {
  return static_cast<std::atomic<uint32_t>*>(inbox);
}
std::atomic<uint32_t>* InboxDoorbellVci(void* inbox) {
  return static_cast<std::atomic<uint32_t>*>(inbox) + 1;
}
std::atomic<uint32_t>* InboxDoorbell(void* inbox) {
  return reinterpret_cast<std::atomic<uint32_t>*>(
      static_cast<std::byte*>(inbox) + kCacheLineBytes);
}
std::atomic<uint32_t>* InboxEntries(void* inbox) {
  return reinterpret_cast<std::atomic<uint32_t>*>(
      static_cast<std::byte*>(inbox) + 2 * kCacheLineBytes);
}

// A doorbell word: bit 0 says someone may sleep on it (armed); the other
// bits count rings, so a sleeper whose token went stale returns at once.
constexpr uint32_t kArmed = 1;

long Futex(std::atomic<uint32_t>* word, int operation, uint32_t value,
           const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word lives in memory shared with peers.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), operation, value,
                 timeout, nullptr, 0);
}

// Wakes every sleeper if the word is armed: disarm and count one ring in
// one step (adding 1 to an armed word clears bit 0 and carries into the
// count), then wake.
bool RingIfArmed(std::atomic<uint32_t>* doorbell) {
  uint32_t word = doorbell->load(std::memory_order_relaxed);
  while ((word & kArmed) != 0) {
    if (doorbell->compare_exchange_weak(word, word + 1,
                                        std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
      Futex(doorbell, FUTEX_WAKE, INT32_MAX, nullptr);
      return true;
    }
  }
  return false;
}
}  // namespace

ShmTransport::ShmTransport(runtime::Bootstrap& bootstrap,
                           const runtime::Settings& settings)
    : rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      num_vcis_(settings.num_vcis + settings.endpoint_vcis),
      shared_vcis_(settings.num_vcis),
      ring_bytes_(RingCapacity(settings)),
      max_message_(kMaxHeaderBytes + settings.eager_max),
      pull_min_(settings.shm_pull_min),
      ring_stride_(RoundUpToPage(RingBytes(ring_bytes_))),
      local_ranks_(bootstrap.local_ranks()),
      local_index_of_rank_(bootstrap.size(), -1) {
  for (size_t i = 0; i < local_ranks_.size(); ++i) {
    local_index_of_rank_[local_ranks_[i]] = static_cast<int>(i);
  }
  my_local_index_ = local_index_of_rank_[rank_];
  probe_word_ = kProbeMagic ^ static_cast<uint64_t>(rank_);
}

absl::StatusOr<std::unique_ptr<ShmTransport>> ShmTransport::Create(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  if (settings.num_vcis < 1) {
    return absl::InvalidArgumentError("net/shm: need at least 1 VCI");
  }
  const size_t max_message = kMaxHeaderBytes + settings.eager_max;
  const size_t ring_bytes = RingCapacity(settings);
  if (!IsValidRingCapacity(ring_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "net/shm: MINIMPI_SHM_RING_BYTES=", settings.shm_ring_bytes,
        " is not a ring size (at least ", kMinRingCapacity,
        ", at most 4 GiB)"));
  }
  if (MaxRecordMessage(ring_bytes) <
      std::max(max_message, sizeof(PullRequest))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "net/shm: MINIMPI_SHM_RING_BYTES=", settings.shm_ring_bytes,
        " cannot hold one ", max_message,
        "-byte message (MINIMPI_EAGER_MAX plus a header); raise it or lower "
        "MINIMPI_EAGER_MAX"));
  }
  // Private constructor: no make_unique.
  std::unique_ptr<ShmTransport> transport(
      new ShmTransport(bootstrap, settings));
  if (transport->my_local_index_ < 0) {
    return absl::InternalError(
        "net/shm: the bootstrap's local ranks do not include this rank");
  }
  absl::Status status = transport->Setup(bootstrap);
  if (!status.ok()) return status;
  return transport;
}

absl::Status ShmTransport::Setup(runtime::Bootstrap& bootstrap) {
  const int num_local = static_cast<int>(local_ranks_.size());
  // Yama (ptrace_scope 1) lets only ancestors attach; ranks are siblings.
  // Fails harmlessly with EINVAL where Yama is absent.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

  // Our receive rings: one per (sender, sender's VCI, our VCI), self
  // included, behind one inbox per VCI where senders register the rings they
  // start using. The segment is
  // an anonymous memory file that peers open through /proc/<pid>/fd/<fd>
  // (allowed exactly when cross-memory attach is, which single copy needs
  // anyway), so it has no name: nothing is left behind in /dev/shm when a
  // rank dies, even during MPI_Init. Where memory files are unavailable,
  // fall back to a named POSIX segment that is unlinked once mapped.
  // ftruncate gives zeroed, sparse memory, which is an empty ring; nothing
  // is touched here.
  // An inbox: its count of registrations on a cache line of its own, its
  // doorbell on another, then one entry per possible sender (local index x
  // VCI).
  inbox_stride_ =
      (2 * kCacheLineBytes + sizeof(uint32_t) * num_local * num_vcis_ +
       kCacheLineBytes - 1) /
      kCacheLineBytes * kCacheLineBytes;
  rings_offset_ = RoundUpToPage(size_t(num_vcis_) * inbox_stride_);
  const size_t segment_bytes =
      rings_offset_ + size_t(num_local) * num_vcis_ * num_vcis_ * ring_stride_;
  int fd = memfd_create("minimpi-shm", MFD_CLOEXEC);
  if (fd >= 0) {
    segment_name_ = absl::StrCat(kMemoryFilePrefix, fd);
  } else {
    segment_name_ = SegmentName(bootstrap.job_id(), rank_);
    fd = shm_open(segment_name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) {
      // Left over by a crashed earlier incarnation of this very rank and job.
      shm_unlink(segment_name_.c_str());
      fd = shm_open(segment_name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0) {
      return absl::UnavailableError(absl::StrCat(
          "net/shm: shm_open(", segment_name_, ") failed: ", ErrnoText(errno)));
    }
    segment_linked_ = true;
  }
  if (ftruncate(fd, static_cast<off_t>(segment_bytes)) != 0) {
    int error = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("net/shm: ftruncate(", segment_name_, ", ", segment_bytes,
                     ") failed: ", ErrnoText(error)));
  }
  void* base =
      mmap(nullptr, segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int mmap_error = errno;
  if (base == MAP_FAILED) {
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("net/shm: mmap of ", segment_bytes,
                     " bytes failed: ", ErrnoText(mmap_error)));
  }
  // A memory file must stay open until every peer has opened it too.
  if (segment_linked_) {
    close(fd);
  } else {
    segment_fd_ = fd;
  }
  own_segment_ = {base, segment_bytes};
  // Which doorbell each of our VCIs rings, for senders to read when they
  // connect (before the address exchange, so before any of them does).
  for (int v = 0; v < num_vcis_; ++v) {
    InboxDoorbellVci(static_cast<std::byte*>(base) + InboxOffset(v))
        ->store(uint32_t(DoorbellOf(v)), std::memory_order_release);
  }

  PeerAddress mine;
  mine.pid = getpid();
  mine.segment_name = segment_name_;
  mine.probe_address = reinterpret_cast<uint64_t>(&probe_word_);
  mine.num_vcis = num_vcis_;
  mine.ring_bytes = ring_bytes_;
  mine.max_message = max_message_;
  absl::Status status = bootstrap.Put(kAddressKey, mine.Encode());
  if (status.ok()) status = bootstrap.Commit();
  if (status.ok()) status = bootstrap.Fence();
  if (!status.ok()) return status;

  // Map every peer's segment (our own through the mapping we already have):
  // we write our rings there and register them in its inboxes. Only the
  // pages of rings in use ever get memory. Then check that single copy
  // works.
  peer_pids_.assign(num_local, 0);
  peer_segments_.assign(num_local, Mapping{});
  for (int peer_local = 0; peer_local < num_local; ++peer_local) {
    const int peer = local_ranks_[peer_local];
    absl::StatusOr<std::string> encoded = bootstrap.Get(peer, kAddressKey);
    if (!encoded.ok()) return encoded.status();
    absl::StatusOr<PeerAddress> address = PeerAddress::Decode(*encoded);
    if (!address.ok()) return address.status();
    if (address->num_vcis != num_vcis_ || address->ring_bytes != ring_bytes_ ||
        address->max_message != max_message_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net/shm: rank ", peer, " uses ", address->num_vcis, " VCIs, ",
          address->ring_bytes, "-byte rings and ", address->max_message,
          "-byte messages but rank ", rank_, " uses ", num_vcis_, ", ",
          ring_bytes_, " and ", max_message_,
          "; every rank must see the same MINIMPI_* settings"));
    }
    peer_pids_[peer_local] = address->pid;
    if (peer_local == my_local_index_) {
      peer_segments_[peer_local] = {own_segment_.address, 0};
      continue;
    }
    int peer_fd = OpenPeerSegment(*address);
    if (peer_fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("net/shm: cannot open rank ", peer, "'s segment ",
                       address->segment_name, ": ", ErrnoText(errno)));
    }
    void* segment = mmap(nullptr, segment_bytes, PROT_READ | PROT_WRITE,
                         MAP_SHARED, peer_fd, 0);
    int error = errno;
    close(peer_fd);
    if (segment == MAP_FAILED) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "net/shm: cannot map rank ", peer, "'s segment: ", ErrnoText(error)));
    }
    peer_segments_[peer_local] = {segment, segment_bytes};
    status = CheckCrossMemoryAttach(peer_local, address->probe_address);
    if (!status.ok()) return status;
  }

  // Connections are made on first use (ProducerFor, TakeNewSenders).
  vcis_ = std::make_unique<Vci[]>(num_vcis_);
  PresenceOf(my_local_index_)
      ->cpu.store(sched_getcpu(), std::memory_order_relaxed);

  // Everyone has mapped everyone: the name (or open file) is no longer
  // needed; the mappings keep the memory.
  status = bootstrap.Fence();
  if (!status.ok()) return status;
  if (segment_linked_) shm_unlink(segment_name_.c_str());
  segment_linked_ = false;
  if (segment_fd_ >= 0) close(segment_fd_);
  segment_fd_ = -1;
  return absl::OkStatus();
}

absl::Status ShmTransport::CheckCrossMemoryAttach(int peer_local,
                                                  uint64_t probe_address) {
  const int peer = local_ranks_[peer_local];
  uint64_t value = 0;
  iovec local_iov = {&value, sizeof(value)};
  iovec remote_iov = {reinterpret_cast<void*>(probe_address), sizeof(value)};
  ssize_t got = process_vm_readv(peer_pids_[peer_local], &local_iov, 1,
                                 &remote_iov, 1, 0);
  if (got < 0) {
    const int error = errno;
    std::string why;
    if (error == EPERM) {
      why =
          "the kernel denies ptrace access between ranks (Yama "
          "kernel.yama.ptrace_scope >= 2, a seccomp profile, or a container "
          "without CAP_SYS_PTRACE); single-copy transfers need it";
    } else if (error == ENOSYS) {
      why = "the kernel lacks cross-memory attach (CONFIG_CROSS_MEMORY_ATTACH)";
    } else {
      why = "unexpected error";
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "net/shm: process_vm_readv from rank ", peer, " (pid ",
        peer_pids_[peer_local], ") failed: ", ErrnoText(error), "; ", why));
  }
  if (got != sizeof(value) ||
      value != (kProbeMagic ^ static_cast<uint64_t>(peer))) {
    return absl::InternalError(absl::StrCat(
        "net/shm: cross-memory attach to rank ", peer,
        " read the wrong data; is the pid from another PID namespace?"));
  }
  return absl::OkStatus();
}

ShmTransport::~ShmTransport() {
  for (const Mapping& segment : peer_segments_) {
    if (segment.length != 0) munmap(segment.address, segment.length);
  }
  if (own_segment_.address != nullptr) {
    munmap(own_segment_.address, own_segment_.length);
  }
  if (segment_linked_) shm_unlink(segment_name_.c_str());
  if (segment_fd_ >= 0) close(segment_fd_);
}

absl::StatusOr<MemoryRegion> ShmTransport::RegisterMemory(void* address,
                                                          size_t length) {
  // Cross-memory attach reaches any mapped address: nothing to pin.
  MemoryRegion region;
  region.address = address;
  region.length = length;
  return region;
}

void ShmTransport::DeregisterMemory(const MemoryRegion&) {}

int ShmTransport::LocalIndexOrDie(PeerVci peer, const char* operation) const {
  if (peer.rank < 0 || peer.rank >= size_ ||
      local_index_of_rank_[peer.rank] < 0 || peer.vci < 0 ||
      peer.vci >= num_vcis_) {
    std::fprintf(stderr,
                 "net/shm %s(rank %d): rank %d VCI %d is not reachable\n",
                 operation, rank_, peer.rank, peer.vci);
    std::abort();
  }
  return local_index_of_rank_[peer.rank];
}

ShmTransport::Outbound& ShmTransport::ProducerFor(int vci, PeerVci peer,
                                                  const char* operation) {
  const int peer_local = LocalIndexOrDie(peer, operation);
  Vci& state = vcis_[vci];
  if (state.to_peer.empty()) {
    state.to_peer.resize(local_ranks_.size() * size_t(num_vcis_));
  }
  Outbound& out = state.to_peer[size_t(peer_local) * num_vcis_ + peer.vci];
  if (out.ring.attached()) [[likely]] {
    return out;
  }
  // First message on this connection: the ring's place is fixed, and
  // registering it in the receiving VCI's inbox is what makes that VCI
  // poll it. The entry is written before any message, so the receiver never
  // misses one.
  auto* segment = static_cast<std::byte*>(peer_segments_[peer_local].address);
  out.ring = RingProducer(segment + RingOffset(my_local_index_, vci, peer.vci),
                          ring_bytes_);
  state.touched.store(true, std::memory_order_relaxed);
  void* inbox = segment + InboxOffset(peer.vci);
  out.doorbell = PeerDoorbell(peer_local, peer.vci);
  out.peer_local = peer_local;
  const uint32_t slot =
      InboxCount(inbox)->fetch_add(1, std::memory_order_acq_rel);
  InboxEntries(inbox)[slot].store(
      uint32_t(my_local_index_) * num_vcis_ + vci + 1,
      std::memory_order_release);
  return out;
}

void ShmTransport::Deliver(Outbound& out) {
  out.ring.Publish();
  // Order the publication before the look at the doorbell (the sleeper
  // arms before its last look at the ring): either it sees the message or
  // this sees it armed. The look is one load of a line that changes only
  // when somebody arms, so a peer that spins costs nothing more.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  WakePeer(out.doorbell, out.peer_local);
}

CellHeader* ShmTransport::Reserve(Outbound& out, size_t message_bytes) {
  CellHeader* cell = out.ring.TryReserve(message_bytes);
  if (cell == nullptr) {
    // The ring is full, and its producer may have just published a wrap
    // marker that only the consumer can take to make room: wake it, or both
    // sides could sleep waiting for each other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    WakePeer(out.doorbell, out.peer_local);
  }
  return cell;
}

void ShmTransport::WakePeer(std::atomic<uint32_t>* doorbell, int peer_local) {
  if (!RingIfArmed(doorbell) || peer_local == my_local_index_) return;
  Presence* presence = PresenceOf(peer_local);
  presence->cpu.store(-1, std::memory_order_relaxed);
  presence->asleep.store(0, std::memory_order_relaxed);
}

ShmTransport::Presence* ShmTransport::PresenceOf(int local_index) const {
  // In the first line of VCI 0's inbox, after its two words.
  return reinterpret_cast<Presence*>(
      static_cast<std::byte*>(peer_segments_[local_index].address) +
      InboxOffset(0) + 2 * sizeof(uint32_t));
}

bool ShmTransport::PeerMayShareCore(bool* move_away) {
  if (move_away != nullptr) *move_away = false;
  if (local_ranks_.size() < 2 || local_ranks_.size() > kMaxPresenceScan) {
    return false;
  }
  const int cpu = sched_getcpu();
  // Written only when it changed: peers read this line on every wait.
  Presence* mine = PresenceOf(my_local_index_);
  if (mine->cpu.load(std::memory_order_relaxed) != cpu) {
    mine->cpu.store(cpu, std::memory_order_relaxed);
  }
  for (int local = 0; local < static_cast<int>(local_ranks_.size()); ++local) {
    if (local == my_local_index_) continue;
    const Presence* presence = PresenceOf(local);
    if (presence->asleep.load(std::memory_order_relaxed) != 0) continue;
    const int peer_cpu = presence->cpu.load(std::memory_order_relaxed);
    if (peer_cpu < 0) return true;
    if (peer_cpu == cpu) {
      // Of two ranks on one core, the later one moves.
      if (move_away != nullptr) *move_away = local > my_local_index_;
      return true;
    }
  }
  return false;
}

std::atomic<uint32_t>* ShmTransport::OwnDoorbell(int vci) const {
  return InboxDoorbell(static_cast<std::byte*>(own_segment_.address) +
                       InboxOffset(DoorbellOf(vci)));
}

uint64_t ShmTransport::ArmDoorbell(int vci) {
  std::atomic<uint32_t>* doorbell = OwnDoorbell(vci);
  const uint32_t token =
      doorbell->fetch_or(kArmed, std::memory_order_seq_cst) | kArmed;
  // The caller's next look at its rings must not move before the arming.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return token;
}

void ShmTransport::SleepOnDoorbell(int vci, uint64_t token,
                                   int64_t timeout_ns) {
  const timespec timeout = {static_cast<time_t>(timeout_ns / 1'000'000'000),
                            static_cast<long>(timeout_ns % 1'000'000'000)};
  Presence* presence = PresenceOf(my_local_index_);
  presence->asleep.store(1, std::memory_order_relaxed);
  // Returns at once when a ring already changed the word.
  Futex(OwnDoorbell(vci), FUTEX_WAIT, static_cast<uint32_t>(token), &timeout);
  presence->asleep.store(0, std::memory_order_relaxed);
  const int cpu = sched_getcpu();
  if (presence->cpu.load(std::memory_order_relaxed) != cpu) {
    presence->cpu.store(cpu, std::memory_order_relaxed);
  }
}

void ShmTransport::RingDoorbell(int vci) {
  // No fence: the caller ordered its change before (see the interface).
  RingIfArmed(OwnDoorbell(vci));
}

bool ShmTransport::MayHaveWork(int vci) const {
  if (vcis_[vci].touched.load(std::memory_order_relaxed)) return true;
  void* inbox =
      static_cast<std::byte*>(own_segment_.address) + InboxOffset(vci);
  return InboxCount(inbox)->load(std::memory_order_acquire) != 0;
}

std::atomic<uint32_t>* ShmTransport::PeerDoorbell(int peer_local,
                                                  int peer_vci) const {
  auto* segment = static_cast<std::byte*>(peer_segments_[peer_local].address);
  const uint32_t doorbell_vci =
      InboxDoorbellVci(segment + InboxOffset(peer_vci))
          ->load(std::memory_order_acquire);
  return InboxDoorbell(segment + InboxOffset(int(doorbell_vci)));
}

void ShmTransport::RingPeerDoorbell(int peer_local, int peer_vci) {
  std::atomic<uint32_t>* doorbell = PeerDoorbell(peer_local, peer_vci);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  WakePeer(doorbell, peer_local);
}

void ShmTransport::TakeNewSenders(int vci) {
  Vci& state = vcis_[vci];
  void* inbox =
      static_cast<std::byte*>(own_segment_.address) + InboxOffset(vci);
  const uint32_t registered =
      InboxCount(inbox)->load(std::memory_order_acquire);
  while (state.inbox_seen < registered) {
    const uint32_t entry =
        InboxEntries(inbox)[state.inbox_seen].load(std::memory_order_acquire);
    if (entry == 0) return;  // its sender is still writing it: next time
    const int sender_local = static_cast<int>((entry - 1) / num_vcis_);
    const int sender_vci = static_cast<int>((entry - 1) % num_vcis_);
    Inbound inbound;
    inbound.ring = RingConsumer(static_cast<std::byte*>(own_segment_.address) +
                                    RingOffset(sender_local, sender_vci, vci),
                                ring_bytes_);
    inbound.rank = local_ranks_[sender_local];
    inbound.vci = sender_vci;
    state.from_sender.push_back(inbound);
    ++state.inbox_seen;
  }
}

PostResult ShmTransport::Send(int vci, PeerVci peer, const void* header,
                              size_t header_length, const void* payload,
                              size_t payload_length) {
  const size_t length = header_length + payload_length;
  if (length > max_message_) {
    std::fprintf(stderr,
                 "net/shm Send(rank %d): %zu-byte message exceeds the %zu "
                 "bytes a cell holds\n",
                 rank_, length, max_message_);
    std::abort();
  }
  Outbound& out = ProducerFor(vci, peer, "Send");
  CellHeader* cell = Reserve(out, length);
  if (cell == nullptr) return PostResult::kRetry;
  // Straight into the peer's cell: the only copy on the sending side.
  std::byte* message = cell->message();
  if (header_length != 0) std::memcpy(message, header, header_length);
  if (payload_length != 0) {
    std::memcpy(message + header_length, payload, payload_length);
  }
  cell->length = static_cast<uint32_t>(length);
  cell->flags = 0;
  Deliver(out);
  return PostResult::kOk;
}

PostResult ShmTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  const size_t length = header_length + payload_length;
  if (length > max_message_) {
    std::fprintf(stderr,
                 "net/shm SendPacked(rank %d): %zu-byte message exceeds the "
                 "%zu bytes a cell holds\n",
                 rank_, length, max_message_);
    std::abort();
  }
  Outbound& out = ProducerFor(vci, peer, "SendPacked");
  CellHeader* cell = Reserve(out, length);
  if (cell == nullptr) return PostResult::kRetry;
  std::byte* message = cell->message();
  if (header_length != 0) std::memcpy(message, header, header_length);
  if (payload_length != 0) write_payload(message + header_length);
  cell->length = static_cast<uint32_t>(length);
  cell->flags = 0;
  Deliver(out);
  return PostResult::kOk;
}

void ShmTransport::CrossMemoryReadv(int peer, const IoSegment* local,
                                    int local_count, const IoSegment* remote,
                                    int remote_count) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    // Our own address space: walk both lists with memmove.
    int l = 0, r = 0;
    size_t l_done = 0, r_done = 0;
    while (l < local_count && r < remote_count) {
      const size_t n =
          std::min(local[l].length - l_done, remote[r].length - r_done);
      std::memmove(reinterpret_cast<void*>(local[l].address + l_done),
                   reinterpret_cast<const void*>(remote[r].address + r_done),
                   n);
      l_done += n;
      r_done += n;
      if (l_done == local[l].length) ++l, l_done = 0;
      if (r_done == remote[r].length) ++r, r_done = 0;
    }
    return;
  }
  iovec local_iov[1024];
  iovec remote_iov[1024];
  size_t total = 0;
  for (int i = 0; i < local_count; ++i) {
    local_iov[i] = {reinterpret_cast<void*>(local[i].address), local[i].length};
    total += local[i].length;
  }
  for (int i = 0; i < remote_count; ++i) {
    remote_iov[i] = {reinterpret_cast<void*>(remote[i].address),
                     remote[i].length};
  }
  // The kernel may stop early (a partial transfer); resume where it did on
  // both lists.
  iovec* l = local_iov;
  iovec* r = remote_iov;
  int l_left = local_count, r_left = remote_count;
  size_t done = 0;
  while (done < total) {
    ssize_t moved =
        process_vm_readv(peer_pids_[peer_local], l, l_left, r, r_left, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      std::fprintf(stderr,
                   "net/shm RdmaReadv(rank %d): process_vm_readv of %zu bytes "
                   "in %d/%d segments from rank %d failed after %zu bytes: "
                   "%s\n",
                   rank_, total, local_count, remote_count, peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
    SkipTransferred(l, l_left, static_cast<size_t>(moved));
    SkipTransferred(r, r_left, static_cast<size_t>(moved));
  }
}

PostResult ShmTransport::RdmaReadv(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   const MemoryRegion&, const IoSegment* remote,
                                   int remote_count, uint32_t,
                                   uint64_t context) {
  LocalIndexOrDie(peer, "RdmaReadv");
  if (local_count > max_io_segments() || remote_count > max_io_segments()) {
    std::fprintf(stderr,
                 "net/shm RdmaReadv(rank %d): %d/%d segments exceed %d\n",
                 rank_, local_count, remote_count, max_io_segments());
    std::abort();
  }
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  CrossMemoryReadv(peer.rank, local, local_count, remote, remote_count);
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

void ShmTransport::CrossMemoryWritev(int peer, const IoSegment* local,
                                     int local_count, uint64_t remote) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    for (int i = 0; i < local_count; ++i) {
      std::memmove(reinterpret_cast<void*>(remote),
                   reinterpret_cast<const void*>(local[i].address),
                   local[i].length);
      remote += local[i].length;
    }
    return;
  }
  iovec local_iov[1024];
  size_t total = 0;
  for (int i = 0; i < local_count; ++i) {
    local_iov[i] = {reinterpret_cast<void*>(local[i].address), local[i].length};
    total += local[i].length;
  }
  // Resume after a partial transfer where the kernel stopped.
  iovec* l = local_iov;
  int l_left = local_count;
  size_t done = 0;
  while (done < total) {
    iovec remote_iov = {reinterpret_cast<void*>(remote + done), total - done};
    ssize_t moved =
        process_vm_writev(peer_pids_[peer_local], l, l_left, &remote_iov, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      std::fprintf(stderr,
                   "net/shm RdmaWritev(rank %d): process_vm_writev of %zu "
                   "bytes in %d segments to 0x%llx of rank %d failed after "
                   "%zu bytes: %s\n",
                   rank_, total, local_count,
                   static_cast<unsigned long long>(remote), peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
    SkipTransferred(l, l_left, static_cast<size_t>(moved));
  }
}

void ShmTransport::CrossMemoryCopy(bool write, int peer, void* local,
                                   uint64_t remote, size_t length) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    // Our own address space: a plain copy (memmove: regions may overlap).
    void* remote_pointer = reinterpret_cast<void*>(remote);
    if (write) {
      std::memmove(remote_pointer, local, length);
    } else {
      std::memmove(local, remote_pointer, length);
    }
    return;
  }
  size_t done = 0;
  while (done < length) {
    iovec local_iov = {static_cast<std::byte*>(local) + done, length - done};
    iovec remote_iov = {reinterpret_cast<void*>(remote + done), length - done};
    ssize_t moved = write ? process_vm_writev(peer_pids_[peer_local],
                                              &local_iov, 1, &remote_iov, 1, 0)
                          : process_vm_readv(peer_pids_[peer_local], &local_iov,
                                             1, &remote_iov, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      // Setup proved CMA works, so this is a bad address or a dead peer;
      // the transport interface has no error completion to report it.
      std::fprintf(stderr,
                   "net/shm %s(rank %d): %s %zu bytes at 0x%llx of rank %d "
                   "failed after %zu bytes: %s\n",
                   write ? "RdmaWrite" : "RdmaRead", rank_,
                   write ? "process_vm_writev" : "process_vm_readv", length,
                   static_cast<unsigned long long>(remote), peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
  }
}

void ShmTransport::PushLocalDone(Vci& vci, PeerVci peer, uint64_t context) {
  LocalCompletionQueue& queue = vci.local_done;
  Completion& entry =
      queue.entries[(queue.head + queue.size) % kLocalCompletionCapacity];
  entry = Completion{};
  entry.type = CompletionType::kLocalDone;
  entry.peer = peer.rank;
  entry.peer_vci = peer.vci;
  entry.context = context;
  ++queue.size;
  if (!vci.touched.load(std::memory_order_relaxed)) {
    vci.touched.store(true, std::memory_order_relaxed);
  }
}

PostResult ShmTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                  const MemoryRegion&, RemoteBuffer remote,
                                  size_t length, uint64_t context) {
  LocalIndexOrDie(peer, "RdmaRead");
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(false, peer.rank, local, remote.address, length);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWrite(int vci, PeerVci peer, const void* local,
                                   const MemoryRegion&, RemoteBuffer remote,
                                   size_t length, uint64_t context) {
  LocalIndexOrDie(peer, "RdmaWrite");
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(true, peer.rank, const_cast<void*>(local), remote.address,
                    length);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion&,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  Vci& state = vcis_[vci];
  Outbound& out = ProducerFor(vci, peer, "RdmaWriteImmediate");
  // Claim both resources before moving data, so kRetry never leaves a
  // write done without its notification.
  if (state.local_done.full()) return PostResult::kRetry;
  CellHeader* cell = Reserve(out, sizeof(WriteNotice));
  if (cell == nullptr) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(true, peer.rank, const_cast<void*>(local), remote.address,
                    length);
  }
  // The notification travels on the same ring as Sends, hence after them.
  const WriteNotice notice{length};
  std::memcpy(cell->message(), &notice, sizeof(notice));
  cell->length = sizeof(notice);
  cell->flags = kCellFlagWriteImmediate;
  cell->immediate = immediate;
  Deliver(out);
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWritev(int vci, PeerVci peer,
                                    const IoSegment* local, int local_count,
                                    const MemoryRegion&, RemoteBuffer remote,
                                    const uint32_t* immediate,
                                    uint64_t context) {
  Vci& state = vcis_[vci];
  // Claim every resource before moving data, so kRetry never leaves a
  // write done without its notification.
  if (state.local_done.full()) return PostResult::kRetry;
  Outbound* out = nullptr;
  CellHeader* cell = nullptr;
  size_t length = 0;
  for (int i = 0; i < local_count; ++i) length += local[i].length;
  const int peer_local = LocalIndexOrDie(peer, "RdmaWritev");
  const bool pull = immediate != nullptr && pull_min_ > 0 &&
                    length >= pull_min_ && local_count == 1 &&
                    peer_local != my_local_index_;
  if (immediate != nullptr) {
    out = &ProducerFor(vci, peer, "RdmaWritev");
    cell = Reserve(*out, pull ? sizeof(PullRequest) : sizeof(WriteNotice));
    if (cell == nullptr) return PostResult::kRetry;
  }
  if (pull) {
    // Large and contiguous: the receiver pulls it when it takes the cell,
    // then sets the slot's flag here, which Poll turns into our kLocalDone
    // (the buffer stays ours to keep unchanged until then). From twice the
    // threshold on, this thread writes the second half first, so both
    // processes copy at once (as the split rendezvous does).
    static_assert(sizeof(PullRequest) <= kMaxHeaderBytes);
    PullSlot* slot = nullptr;
    for (PullSlot& candidate : state.pulls) {
      if (!candidate.in_use) {
        slot = &candidate;
        break;
      }
    }
    if (slot == nullptr) return PostResult::kRetry;  // before any copy
    slot->in_use = true;
    slot->context = context;
    slot->peer = peer;
    slot->done.store(0, std::memory_order_relaxed);
    ++state.pulls_in_flight;
    size_t pulled = length;
    if (length >= 2 * pull_min_) {
      pulled = length / 2;
      const IoSegment rest = {local[0].address + pulled, length - pulled};
      CrossMemoryWritev(peer.rank, &rest, 1, remote.address + pulled);
    }
    PullRequest request;
    request.source = local[0].address;
    request.destination = remote.address;
    request.length = pulled;
    request.write_length = length;
    request.done_flag = reinterpret_cast<uint64_t>(&slot->done);
    std::memcpy(cell->message(), &request, sizeof(request));
    cell->length = sizeof(request);
    cell->flags = kCellFlagPullWrite;
    cell->immediate = *immediate;
    Deliver(*out);
    return PostResult::kOk;
  }
  if (length != 0) {
    CrossMemoryWritev(peer.rank, local, local_count, remote.address);
  }
  if (cell != nullptr) {
    const WriteNotice notice{length};
    std::memcpy(cell->message(), &notice, sizeof(notice));
    cell->length = sizeof(notice);
    cell->flags = kCellFlagWriteImmediate;
    cell->immediate = *immediate;
    Deliver(*out);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

int ShmTransport::Poll(int vci, CompletionHandler& handler,
                       int max_completions) {
  Vci& state = vcis_[vci];
  int handled = 0;
  // Local completions first. Copy the entry out before the call: the
  // handler may post and so push new entries.
  LocalCompletionQueue& queue = state.local_done;
  while (handled < max_completions && queue.size != 0) {
    const Completion completion = queue.entries[queue.head];
    queue.head = (queue.head + 1) % kLocalCompletionCapacity;
    --queue.size;
    handler.OnCompletion(vci, completion);
    ++handled;
  }

  // Pulled writes the receivers have finished.
  for (uint32_t i = 0; state.pulls_in_flight > 0 && i < kPullCapacity &&
                       handled < max_completions;
       ++i) {
    PullSlot& slot = state.pulls[i];
    if (!slot.in_use || slot.done.load(std::memory_order_acquire) == 0) {
      continue;
    }
    slot.in_use = false;
    --state.pulls_in_flight;
    Completion completion;
    completion.type = CompletionType::kLocalDone;
    completion.peer = slot.peer.rank;
    completion.peer_vci = slot.peer.vci;
    completion.context = slot.context;
    handler.OnCompletion(vci, completion);
    ++handled;
  }

  // Then one message per ring in turn, so that a busy sender cannot starve
  // the others; stop after a full round finds nothing. New senders first:
  // one load of a line that changes only when a connection is made.
  TakeNewSenders(vci);
  const uint32_t num_senders = static_cast<uint32_t>(state.from_sender.size());
  uint32_t sender = state.next_sender;
  uint32_t idle_rings = 0;
  // Rings this poll freed room in (at most one entry per completion), to
  // tell a producer that waits for room.
  uint32_t freed[64];
  int num_freed = 0;
  while (handled < max_completions && idle_rings < num_senders) {
    Inbound& inbound = state.from_sender[sender];
    RingConsumer& ring = inbound.ring;
    const uint64_t released_before = ring.released();
    const CellHeader* cell = ring.Peek();
    // Taking a wrap marker frees room too.
    if (ring.released() != released_before &&
        (num_freed == 0 || freed[num_freed - 1] != sender) && num_freed < 64) {
      freed[num_freed++] = sender;
    }
    if (cell != nullptr) {
      Completion completion;
      completion.peer = inbound.rank;
      completion.peer_vci = inbound.vci;
      completion.length = cell->length;
      if (cell->flags == kCellFlagWriteImmediate) {
        WriteNotice notice;
        std::memcpy(&notice, cell->message(), sizeof(notice));
        completion.type = CompletionType::kWriteImmediate;
        completion.immediate = cell->immediate;
        completion.length = notice.write_length;
      } else if (cell->flags == kCellFlagPullWrite) {
        PullRequest request;
        std::memcpy(&request, cell->message(), sizeof(request));
        CrossMemoryCopy(false, completion.peer,
                        reinterpret_cast<void*>(request.destination),
                        request.source, request.length);
        completion.type = CompletionType::kWriteImmediate;
        completion.immediate = cell->immediate;
        completion.length = request.write_length;
        uint64_t done = 1;
        CrossMemoryCopy(true, completion.peer, &done, request.done_flag,
                        sizeof(done));
        // The flag is no ring message: wake the sender if it sleeps.
        RingPeerDoorbell(local_index_of_rank_[completion.peer], inbound.vci);
      } else {
        completion.type = CompletionType::kReceive;
        completion.data = cell->message();
      }
      handler.OnCompletion(vci, completion);
      ring.Release();
      if ((num_freed == 0 || freed[num_freed - 1] != sender) &&
          num_freed < 64) {
        freed[num_freed++] = sender;
      }
      ++handled;
      idle_rings = 0;
    } else {
      ++idle_rings;
    }
    sender = (sender + 1 == num_senders) ? 0 : sender + 1;
  }
  state.next_sender = sender;
  for (int i = 0; i < num_freed; ++i) {
    Inbound& inbound = state.from_sender[freed[i]];
    if (inbound.ring.TakeProducerWaiting()) {
      RingPeerDoorbell(local_index_of_rank_[inbound.rank], inbound.vci);
    }
  }
  return handled;
}

}  // namespace minimpi::net::shm
