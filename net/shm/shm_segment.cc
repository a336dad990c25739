// net/shm's setup and teardown: the segment each rank maps (its rings and
// inboxes), the exchange of segment names through the bootstrap, mapping
// the peers' segments, and the check that cross-memory attach works. The
// data path is in shm_transport.cc, the single copies in
// shm_cross_memory.cc.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "net/shm/segment_layout.h"
#include "net/shm/shm_transport.h"

namespace minimpi::net::shm {
namespace {

constexpr size_t kPageBytes = 4096;
constexpr std::string_view kAddressKey = "net.shm";
constexpr uint64_t kProbeMagic = 0x6d696e696d70692dULL;  // "minimpi-"

size_t RoundUpToPage(size_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

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
  // Other jobs' transport first: its progress thread rings our doorbells,
  // which live in the segments unmapped below.
  other_jobs_.store(nullptr, std::memory_order_release);
  other_jobs_owner_.reset();
  for (const Mapping& segment : peer_segments_) {
    if (segment.length != 0) munmap(segment.address, segment.length);
  }
  if (own_segment_.address != nullptr) {
    munmap(own_segment_.address, own_segment_.length);
  }
  if (segment_linked_) shm_unlink(segment_name_.c_str());
  if (segment_fd_ >= 0) close(segment_fd_);
}

}  // namespace minimpi::net::shm
