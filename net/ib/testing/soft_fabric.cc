#include "net/ib/testing/soft_fabric.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace minimpi::net::ib::testing::internal {

static_assert(std::is_trivially_copyable_v<Packet>);

namespace {

constexpr uint64_t kInboxMagic = 0x736f667469622d32ULL;  // "softib-2"
constexpr uint64_t kSlots = 1024;                        // a power of two
constexpr char kShmDirectory[] = "/dev/shm/";

std::string InboxPath(uint32_t id) {
  return absl::StrCat(kShmDirectory, "minimpi-softib-", id);
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value,
           const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value,
                 timeout, nullptr, 0);
}

bool ProcessAlive(pid_t pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

// After a partial process_vm_readv/writev: moves an I/O vector past the
// `bytes` the kernel transferred.
void SkipTransferred(iovec*& vector, int& count, size_t bytes) {
  while (count > 0 && (bytes > 0 || vector->iov_len == 0)) {
    const size_t n = std::min(bytes, vector->iov_len);
    vector->iov_base = static_cast<std::byte*>(vector->iov_base) + n;
    vector->iov_len -= n;
    bytes -= n;
    if (vector->iov_len == 0) ++vector, --count;
  }
}

// The fabric-wide counters, in a file every context maps.
struct FabricCounters {
  std::atomic<uint32_t> next_id;
  char pad[60];
  std::atomic<uint32_t> next_qpn;
};

FabricCounters* Counters() {
  static FabricCounters* const counters = []() -> FabricCounters* {
    const std::string path =
        absl::StrCat(kShmDirectory, "minimpi-softib-fabric");
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return nullptr;
    fchmod(fd, 0666);  // whoever runs next may be another user; best effort
    struct stat st;
    // Extending a file is safe to race: both extend to the same size and
    // existing bytes are kept.
    if (fstat(fd, &st) != 0 ||
        (st.st_size < 4096 && ftruncate(fd, 4096) != 0)) {
      close(fd);
      return nullptr;
    }
    void* base = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return nullptr;
    return static_cast<FabricCounters*>(base);
  }();
  return counters;
}

std::mutex cache_mutex;
std::map<uint32_t, std::shared_ptr<Inbox>>& Cache() {
  static auto* cache = new std::map<uint32_t, std::shared_ptr<Inbox>>;
  return *cache;
}

}  // namespace

struct Inbox::Header {
  std::atomic<uint64_t> magic;  // set last, once the segment is usable
  uint64_t pid_namespace;       // `pid` means something only in this one
  int32_t pid;
  uint32_t slots;
  std::atomic<uint32_t> closed;
  alignas(64) std::atomic<uint32_t> doorbell;  // the futex word
  std::atomic<uint32_t> consumer_sleeping;
  alignas(64) pthread_mutex_t producer_lock;
  std::atomic<uint64_t> head;  // next slot to fill (producers, locked)
  alignas(64) std::atomic<uint64_t> tail;  // next slot to take (consumer)
};

namespace {

constexpr size_t HeaderBytes() { return 4096; }

// This process's PID namespace (its inode), 0 when unknown. Tests run in
// sandboxes with their own PID namespaces sharing /dev/shm: a pid from
// another namespace says nothing here.
uint64_t PidNamespace() {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
}

// Whether the owner of an inbox with this header is known to be gone.
bool OwnerGone(uint64_t pid_namespace, pid_t pid) {
  const uint64_t ours = PidNamespace();
  if (pid_namespace != ours || ours == 0) return false;  // cannot tell
  return !ProcessAlive(pid);
}

// The lock files of the inboxes this process owns (see Inbox::Create). A
// forked child must not keep them: its copies would keep a dead parent's
// inbox looking owned.
std::mutex lock_fds_mutex;
std::vector<int>* owned_lock_fds = nullptr;

void CloseInheritedLockFds() {
  if (owned_lock_fds == nullptr) return;
  for (int fd : *owned_lock_fds) close(fd);
  owned_lock_fds->clear();
}

void AddOwnedLockFd(int fd) {
  static std::once_flag once;
  std::call_once(
      once, [] { pthread_atfork(nullptr, nullptr, CloseInheritedLockFds); });
  std::lock_guard<std::mutex> lock(lock_fds_mutex);
  if (owned_lock_fds == nullptr) owned_lock_fds = new std::vector<int>;
  owned_lock_fds->push_back(fd);
}

void RemoveOwnedLockFd(int fd) {
  std::lock_guard<std::mutex> lock(lock_fds_mutex);
  if (owned_lock_fds == nullptr) return;
  owned_lock_fds->erase(
      std::remove(owned_lock_fds->begin(), owned_lock_fds->end(), fd),
      owned_lock_fds->end());
}

// Removes the inboxes of processes that died without closing their device
// (killed ranks), so that /dev/shm does not fill up over a long test run.
// An owner holds a shared flock on its file for as long as it lives; the
// kernel drops it when the process dies, whatever its PID namespace (tests
// run in sandboxes with their own, sharing /dev/shm).
void RemoveStaleInboxes() {
  DIR* directory = opendir(kShmDirectory);
  if (directory == nullptr) return;
  constexpr char kPrefix[] = "minimpi-softib-";
  while (const dirent* entry = readdir(directory)) {
    const char* name = entry->d_name;
    if (std::strncmp(name, kPrefix, sizeof(kPrefix) - 1) != 0) continue;
    const char* digits = name + sizeof(kPrefix) - 1;
    if (*digits == '\0' ||
        std::strspn(digits, "0123456789") != std::strlen(digits)) {
      continue;  // the fabric file, or a temporary one
    }
    const std::string path = absl::StrCat(kShmDirectory, name);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat before, now;
    const bool stale = flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                       fstat(fd, &before) == 0 &&
                       stat(path.c_str(), &now) == 0 &&
                       before.st_ino == now.st_ino;  // not replaced meanwhile
    if (stale) unlink(path.c_str());
    close(fd);
  }
  closedir(directory);
}

}  // namespace

Inbox::Inbox(uint32_t id, void* base, size_t bytes, bool owner)
    : id_(id), base_(base), bytes_(bytes), owner_(owner) {}

Inbox::~Inbox() {
  ReleaseOwnership();
  munmap(base_, bytes_);
}

void Inbox::ReleaseOwnership() {
  // After fork the child's copy of the descriptor is gone (and its number
  // may be another file's): only the process that took it closes it.
  if (lock_fd_ >= 0 && lock_owner_ == getpid()) {
    RemoveOwnedLockFd(lock_fd_);
    close(lock_fd_);
  }
  lock_fd_ = -1;
}

Packet* Inbox::slot(uint64_t index) const {
  return reinterpret_cast<Packet*>(static_cast<std::byte*>(base_) +
                                   HeaderBytes()) +
         (index & (kSlots - 1));
}

std::shared_ptr<Inbox> Inbox::Create(uint32_t id) {
  static_assert(sizeof(Header) <= HeaderBytes());
  const size_t bytes = HeaderBytes() + kSlots * sizeof(Packet);
  // Built under a private name and renamed into place, so that a peer never
  // maps a half-initialized inbox and a stale file is replaced atomically.
  RemoveStaleInboxes();
  const std::string path = InboxPath(id);
  const std::string temporary = absl::StrCat(path, ".", getpid(), ".tmp");
  const int fd =
      open(temporary.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return nullptr;
  fchmod(fd, 0666);
  // Held until Close or death: what tells others the file is not stale.
  flock(fd, LOCK_SH);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    close(fd);
    unlink(temporary.c_str());
    errno = error;
    return nullptr;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    close(fd);
    unlink(temporary.c_str());
    errno = error;
    return nullptr;
  }
  Header* header = new (base) Header;
  header->pid_namespace = PidNamespace();
  header->pid = getpid();
  header->slots = kSlots;
  header->closed.store(0);
  header->doorbell.store(0);
  header->consumer_sleeping.store(0);
  header->head.store(0);
  header->tail.store(0);
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&header->producer_lock, &attributes);
  pthread_mutexattr_destroy(&attributes);
  header->magic.store(kInboxMagic, std::memory_order_release);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    munmap(base, bytes);
    close(fd);
    unlink(temporary.c_str());
    errno = rename_error;
    return nullptr;
  }
  struct stat st;
  fstat(fd, &st);
  std::shared_ptr<Inbox> inbox(new Inbox(id, base, bytes, /*owner=*/true));
  inbox->inode_ = st.st_ino;
  inbox->lock_fd_ = fd;
  inbox->lock_owner_ = getpid();
  AddOwnedLockFd(fd);
  std::lock_guard<std::mutex> lock(cache_mutex);
  Cache()[id] = inbox;
  return inbox;
}

std::shared_ptr<Inbox> Inbox::Open(uint32_t id) {
  const std::string path = InboxPath(id);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const size_t bytes = HeaderBytes() + kSlots * sizeof(Packet);
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    errno = ENOENT;
    return nullptr;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return nullptr;
  auto* header = static_cast<Header*>(base);
  if (header->magic.load(std::memory_order_acquire) != kInboxMagic ||
      header->slots != kSlots) {
    munmap(base, bytes);
    errno = ENOENT;
    return nullptr;
  }
  return std::shared_ptr<Inbox>(new Inbox(id, base, bytes, /*owner=*/false));
}

pid_t Inbox::pid() const { return header()->pid; }

bool Inbox::Push(const Packet& packet) {
  Header* h = header();
  int rc = pthread_mutex_lock(&h->producer_lock);
  if (rc == EOWNERDEAD) {
    // A producer died holding the lock. It had not published its slot
    // (head moves last), so the ring is consistent.
    pthread_mutex_consistent(&h->producer_lock);
  } else if (rc != 0) {
    return false;
  }
  const uint64_t head = h->head.load(std::memory_order_relaxed);
  const uint64_t tail = h->tail.load(std::memory_order_acquire);
  const bool room = head - tail < kSlots;
  if (room) {
    std::memcpy(static_cast<void*>(slot(head)), &packet, sizeof(Packet));
    h->head.store(head + 1, std::memory_order_release);
  }
  pthread_mutex_unlock(&h->producer_lock);
  return room;
}

bool Inbox::Pop(Packet* packet) {
  Header* h = header();
  const uint64_t tail = h->tail.load(std::memory_order_relaxed);
  if (h->head.load(std::memory_order_acquire) == tail) return false;
  std::memcpy(static_cast<void*>(packet), slot(tail), sizeof(Packet));
  h->tail.store(tail + 1, std::memory_order_release);
  return true;
}

bool Inbox::Empty() const {
  const Header* h = header();
  return h->head.load(std::memory_order_acquire) ==
         h->tail.load(std::memory_order_acquire);
}

bool Inbox::Alive() const {
  return header()->closed.load(std::memory_order_acquire) == 0 &&
         !OwnerGone(header()->pid_namespace, header()->pid);
}

void Inbox::Close() {
  header()->closed.store(1, std::memory_order_release);
  // Only remove the file if it is still ours (ids wrap; a newer context may
  // have replaced it).
  const std::string path = InboxPath(id_);
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && st.st_ino == inode_) {
    unlink(path.c_str());
  }
  ReleaseOwnership();
  Ring();
}

uint32_t Inbox::Doorbell() const {
  return header()->doorbell.load(std::memory_order_seq_cst);
}

void Inbox::Sleep(uint32_t seen_doorbell, int64_t timeout_ns) {
  Header* h = header();
  // Dekker with Ring(): we announce the sleep, then re-check for packets;
  // a producer publishes, bumps the doorbell, then checks the announcement.
  h->consumer_sleeping.store(1, std::memory_order_seq_cst);
  if (Empty() && h->doorbell.load(std::memory_order_seq_cst) == seen_doorbell) {
    timespec timeout;
    timeout.tv_sec = timeout_ns / 1000000000;
    timeout.tv_nsec = timeout_ns % 1000000000;
    Futex(&h->doorbell, FUTEX_WAIT, seen_doorbell,
          timeout_ns < 0 ? nullptr : &timeout);
  }
  h->consumer_sleeping.store(0, std::memory_order_relaxed);
}

void Inbox::Ring() {
  Header* h = header();
  h->doorbell.fetch_add(1, std::memory_order_seq_cst);
  if (h->consumer_sleeping.load(std::memory_order_seq_cst) != 0) {
    Futex(&h->doorbell, FUTEX_WAKE, 1, nullptr);
  }
}

std::shared_ptr<Inbox> FindInbox(uint32_t id) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto& cache = Cache();
  auto it = cache.find(id);
  if (it != cache.end()) {
    if (it->second->Alive()) return it->second;
    if (it->second->owner_) return nullptr;  // ours, closing
    cache.erase(it);
  }
  std::shared_ptr<Inbox> inbox = Inbox::Open(id);
  if (inbox == nullptr || !inbox->Alive()) return nullptr;
  cache[id] = inbox;
  return inbox;
}

void ForgetInbox(uint32_t id) {
  std::shared_ptr<Inbox> doomed;  // unmapped outside the lock
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto it = Cache().find(id);
  if (it != Cache().end()) {
    doomed = std::move(it->second);
    Cache().erase(it);
  }
}

uint32_t AllocateContextId() {
  FabricCounters* counters = Counters();
  if (counters == nullptr) return 0;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t id =
        counters->next_id.fetch_add(1, std::memory_order_relaxed) % kMaxId + 1;
    // Skip ids whose inbox is still in use (the counter wrapped).
    std::shared_ptr<Inbox> existing = Inbox::Open(id);
    if (existing == nullptr || !existing->Alive()) return id;
  }
  return 0;
}

uint32_t AllocateQpNumber() {
  FabricCounters* counters = Counters();
  const uint32_t n = counters == nullptr ? 0
                                         : counters->next_qpn.fetch_add(
                                               1, std::memory_order_relaxed);
  return 0x100 + n % (0xFFFFFF - 0x100);
}

int CrossMemoryCopy(pid_t pid, bool from_remote, iovec* local, int local_count,
                    iovec* remote, int remote_count) {
  SkipTransferred(local, local_count, 0);
  SkipTransferred(remote, remote_count, 0);
  while (local_count > 0 && remote_count > 0) {
    // The raw system calls, not the libc wrappers: sanitizers intercept
    // those and would see the NIC thread touch the application's buffers.
    // A NIC's DMA is invisible to them, and the application synchronizes
    // with it through completions (or by polling memory it expects the
    // peer to write), so this keeps ThreadSanitizer as blind as hardware.
    const ssize_t n =
        syscall(from_remote ? SYS_process_vm_readv : SYS_process_vm_writev, pid,
                local, static_cast<unsigned long>(local_count), remote,
                static_cast<unsigned long>(remote_count), 0UL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;
    SkipTransferred(local, local_count, static_cast<size_t>(n));
    SkipTransferred(remote, remote_count, static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace minimpi::net::ib::testing::internal
