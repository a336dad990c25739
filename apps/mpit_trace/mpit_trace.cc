// mpit_trace: a PMPI interposer that watches an unmodified MPI program
// through the tool information interface (MPI_T) and writes what it saw.
//
// Preloaded into every rank (LD_PRELOAD=PREFIX/lib/libmpit_trace.so, which
// the `mpit_trace` launcher sets), it wraps MPI_Init/MPI_Init_thread to
// start an MPI_T session, binds handles for the queue-length performance
// variables to MPI_COMM_WORLD and to every communicator the program makes,
// registers callbacks for the unexpected-queue events and, per partitioned
// request, for partition arrivals, samples the levels from a thread every
// interval (and around the blocking receive-side calls it wraps), and at
// MPI_Finalize writes one text file per rank and a summary on stderr.
//
// It uses only the standard MPI_T and PMPI interfaces and finds variables
// and events by name, skipping those the library lacks, so it runs on any
// MPI built with this mpi.h. The file format is described in
// tools/mpit_plot/mpit_plot.py, which draws it.
//
// Environment (the launcher sets the first two from -o and -i):
//   MPIT_TRACE_DIR          where mpit_trace.<rank> goes (default .)
//   MPIT_TRACE_INTERVAL_US  sampling thread period; 0: no thread (1000)
//   MPIT_TRACE_PVARS        comma-separated name fragments: a performance
//                           variable bound to a communicator or a request
//                           whose name contains one is traced
//                           (default recvq,msgq,part_)
//   MPIT_TRACE_EVENTS       comma-separated event names (default
//                           unexp_message_enqueued,unexp_message_dequeued,
//                           partition_arrived)
//   MPIT_TRACE_MAX_EVENTS   event records kept per process (262144)
//   MPIT_TRACE_SAMPLE_CALLS 0: do not sample around wrapped calls (1)
//   MPIT_TRACE_QUIET        1: no summary on stderr
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

// Weak: on an MPI without MPI_T the preloaded tool finds this null and
// stays out of the way instead of failing to resolve it.
extern "C" int MPI_T_init_thread(int required, int* provided)
    __attribute__((weak));

namespace {

// ---- Settings ---------------------------------------------------------------

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

long EnvLong(const char* name, long fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return fallback;
  char* end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0) {
    std::fprintf(stderr, "mpit_trace: %s=%s is not a count; using %ld\n", name,
                 value, fallback);
    return fallback;
  }
  return parsed;
}

struct TraceSettings {
  std::string dir = EnvOr("MPIT_TRACE_DIR", ".");
  long interval_us = EnvLong("MPIT_TRACE_INTERVAL_US", 1000);
  std::vector<std::string> pvar_fragments =
      SplitCommas(EnvOr("MPIT_TRACE_PVARS", "recvq,msgq,part_"));
  std::vector<std::string> event_names = SplitCommas(
      EnvOr("MPIT_TRACE_EVENTS",
            "unexp_message_enqueued,unexp_message_dequeued,partition_arrived"));
  long max_events = EnvLong("MPIT_TRACE_MAX_EVENTS", 262144);
  bool sample_calls = EnvLong("MPIT_TRACE_SAMPLE_CALLS", 1) != 0;
  bool quiet = EnvLong("MPIT_TRACE_QUIET", 0) != 0;
};

// ---- Time -------------------------------------------------------------------

double MonotonicSeconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

// Microseconds since tracing started, on the monotonic clock (samples) or
// on an MPI_T source's clock (events carry the library's timestamp, taken
// where the event happened).
struct Clock {
  double start_seconds = 0;
  struct Source {
    double ticks_per_second = 0;  // 0: unusable, stamp events on arrival
    MPI_Count start_ticks = 0;
  };
  std::vector<Source> sources;

  void Start() {
    start_seconds = MonotonicSeconds();
    int num_sources = 0;
    if (MPI_T_source_get_num(&num_sources) != MPI_SUCCESS) num_sources = 0;
    sources.assign(num_sources, Source{});
    for (int i = 0; i < num_sources; ++i) {
      char name[64];
      char desc[8];
      int name_len = sizeof name;
      int desc_len = sizeof desc;
      MPI_T_source_order ordering;
      MPI_Count ticks_per_second = 0;
      MPI_Count max_ticks = 0;
      MPI_Info info = MPI_INFO_NULL;
      if (MPI_T_source_get_info(i, name, &name_len, desc, &desc_len, &ordering,
                                &ticks_per_second, &max_ticks,
                                &info) != MPI_SUCCESS ||
          ticks_per_second <= 0 ||
          MPI_T_source_get_timestamp(i, &sources[i].start_ticks) !=
              MPI_SUCCESS) {
        continue;
      }
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      sources[i].ticks_per_second = static_cast<double>(ticks_per_second);
    }
  }
  double NowMicros() const {
    return (MonotonicSeconds() - start_seconds) * 1e6;
  }
  double EventMicros(MPI_T_event_instance instance) const {
    int source = -1;
    MPI_Count ticks = 0;
    if (MPI_T_event_get_source(instance, &source) == MPI_SUCCESS &&
        source >= 0 && source < static_cast<int>(sources.size()) &&
        sources[source].ticks_per_second > 0 &&
        MPI_T_event_get_timestamp(instance, &ticks) == MPI_SUCCESS) {
      return static_cast<double>(ticks - sources[source].start_ticks) * 1e6 /
             sources[source].ticks_per_second;
    }
    return NowMicros();
  }
};

// ---- What the library offers ------------------------------------------------

const char* BindName(int bind) {
  switch (bind) {
    case MPI_T_BIND_NO_OBJECT:
      return "none";
    case MPI_T_BIND_MPI_COMM:
      return "comm";
    case MPI_T_BIND_MPI_REQUEST:
      return "request";
    case MPI_T_BIND_MPI_WIN:
      return "win";
    default:
      return "other";
  }
}

const char* ClassName(int var_class) {
  static const char* const kNames[] = {
      "?",          "state",         "level",        "size",
      "percentage", "highwatermark", "lowwatermark", "counter",
      "aggregate",  "timer",         "generic"};
  return var_class >= 1 && var_class <= 10 ? kNames[var_class] : "?";
}

struct PvarType {
  int index = -1;
  std::string name;
  int var_class = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int bind = MPI_T_BIND_NO_OBJECT;
  bool continuous = true;
};

// One element of an event's payload, as MPI_T_event_get_info gives it.
struct PayloadElement {
  MPI_Datatype datatype;
  MPI_Aint displacement;
  int size;
};

struct EventType {
  int index = -1;
  int slot = -1;  // position in Tracer::event_types_
  std::string name;
  int bind = MPI_T_BIND_NO_OBJECT;
  std::vector<PayloadElement> elements;
  size_t payload_bytes = 0;
  std::string description;  // the library's, which names the elements
};

std::string DatatypeName(MPI_Datatype type) {
  if (type == MPI_INT) return "int";
  if (type == MPI_UNSIGNED) return "unsigned";
  if (type == MPI_LONG) return "long";
  if (type == MPI_UNSIGNED_LONG) return "unsigned_long";
  if (type == MPI_UNSIGNED_LONG_LONG) return "unsigned_long_long";
  if (type == MPI_COUNT) return "count";
  if (type == MPI_AINT) return "aint";
  if (type == MPI_DOUBLE) return "double";
  if (type == MPI_INT32_T) return "int32";
  if (type == MPI_UINT32_T) return "uint32";
  if (type == MPI_INT64_T) return "int64";
  if (type == MPI_UINT64_T) return "uint64";
  return "bytes";
}

// Formats one value of `type` stored at `data` (unaligned is fine).
std::string FormatValue(MPI_Datatype type, const unsigned char* data,
                        int size) {
  char text[64];
  auto load = [data](auto value) {
    std::memcpy(&value, data, sizeof value);
    return value;
  };
  if (type == MPI_DOUBLE) {
    std::snprintf(text, sizeof text, "%.9g", load(0.0));
  } else if (type == MPI_INT || type == MPI_INT32_T) {
    std::snprintf(text, sizeof text, "%d", load(int32_t{0}));
  } else if (type == MPI_UNSIGNED || type == MPI_UINT32_T) {
    std::snprintf(text, sizeof text, "%u", load(uint32_t{0}));
  } else if (type == MPI_LONG || type == MPI_COUNT || type == MPI_AINT ||
             type == MPI_INT64_T) {
    std::snprintf(text, sizeof text, "%lld",
                  static_cast<long long>(load(int64_t{0})));
  } else if (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG ||
             type == MPI_UINT64_T) {
    std::snprintf(text, sizeof text, "%llu",
                  static_cast<unsigned long long>(load(uint64_t{0})));
  } else {  // an unknown type: its bytes in hex
    std::string hex = "0x";
    for (int i = 0; i < size && i < 16; ++i) {
      std::snprintf(text, sizeof text, "%02x", data[i]);
      hex += text;
    }
    return hex;
  }
  return text;
}

// ---- Event records: written by callbacks, read at MPI_Finalize
// ----------------

// Which object an event registration watches; the callbacks' user_data.
// Never freed (a callback may still hold one while its handle is freed).
struct ObjectTag {
  char kind;  // 'c' communicator, 'r' request, 'n' none
  int id;
  const EventType* type;
};

constexpr size_t kPayloadBytes = 48;
struct EventRecord {
  double t_us;
  const ObjectTag* tag;
  unsigned char payload[kPayloadBytes];
};

// Records come in chunks claimed with one atomic per chunk; a thread fills
// its chunk alone, so a callback does no allocation, takes no lock and makes
// no MPI call besides MPI_T's own event accessors.
constexpr uint32_t kChunkRecords = 256;
struct Chunk {
  std::atomic<uint32_t> used{0};
  EventRecord records[kChunkRecords];
};

class EventPool {
 public:
  void Allocate(long max_events) {
    num_chunks_ = std::max<size_t>(1, max_events / kChunkRecords);
    chunks_.reset(new Chunk[num_chunks_]);
  }
  // The calling thread's next free record, or nullptr when the pool is
  // exhausted (counted in lost()).
  EventRecord* Claim() {
    Chunk* chunk = current_;
    if (chunk == nullptr ||
        chunk->used.load(std::memory_order_relaxed) == kChunkRecords) {
      size_t next = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (next >= num_chunks_) {
        lost_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
      }
      chunk = current_ = &chunks_[next];
    }
    return &chunk->records[chunk->used.load(std::memory_order_relaxed)];
  }
  // Publishes the record Claim() returned.
  void Commit() {
    current_->used.store(current_->used.load(std::memory_order_relaxed) + 1,
                         std::memory_order_release);
  }
  template <typename Visit>
  void ForEach(Visit visit) const {
    size_t claimed =
        std::min(num_chunks_, next_chunk_.load(std::memory_order_acquire));
    for (size_t c = 0; c < claimed; ++c) {
      uint32_t used = chunks_[c].used.load(std::memory_order_acquire);
      for (uint32_t i = 0; i < used; ++i) visit(chunks_[c].records[i]);
    }
  }
  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

 private:
  static thread_local Chunk* current_;
  std::unique_ptr<Chunk[]> chunks_;
  size_t num_chunks_ = 0;
  std::atomic<size_t> next_chunk_{0};
  std::atomic<uint64_t> lost_{0};
};
thread_local Chunk* EventPool::current_ = nullptr;

// ---- Traced objects
// -----------------------------------------------------------

struct BoundPvar {
  const PvarType* type;
  MPI_T_pvar_handle handle;
  int count;
  bool started;
  std::string last_value;  // the last value recorded ("" before the first)
  double peak = 0;         // the largest element seen
};

struct TracedObject {
  char kind;  // 'c' or 'r'
  int id;
  std::string description;  // the trace file's declaration line, after the id
  std::vector<BoundPvar> pvars;
  std::vector<MPI_T_event_registration> registrations;
};

struct Sample {
  double t_us;
  char kind;
  int id;
  const PvarType* type;
  std::string value;
};

class Tracer {
 public:
  void Start();
  void Finish();

  void TrackComm(MPI_Comm comm, const char* created_by, MPI_Comm parent);
  void ForgetComm(MPI_Comm comm);
  void TrackPartitioned(MPI_Request request, const char* created_by,
                        int partitions, MPI_Comm comm);
  void ForgetRequest(MPI_Request request);
  void SampleComm(MPI_Comm comm);

  // The event callbacks' entry points.
  void Record(MPI_T_event_instance instance, const ObjectTag* tag);
  void CountDropped(MPI_Count count) {
    dropped_by_library_.fetch_add(static_cast<uint64_t>(count),
                                  std::memory_order_relaxed);
  }

 private:
  void DiscoverVariables();
  void Bind(TracedObject& object, int bind, void* handle);
  void SampleLocked(TracedObject& object);
  void ReleaseLocked(TracedObject& object);
  void SamplerLoop();
  int CommIdLocked(MPI_Comm comm) const;
  void WriteTrace();
  void PrintSummary() const;

  TraceSettings settings_;
  Clock clock_;
  EventPool events_;
  // Set once tracing started, cleared when MPI_Finalize ends it: read by
  // every wrapped call on the program's threads.
  std::atomic<bool> running_{false};
  int rank_ = 0;
  int size_ = 1;
  MPI_T_pvar_session session_ = MPI_T_PVAR_SESSION_NULL;
  std::vector<PvarType> pvar_types_;
  std::vector<EventType> event_types_;

  // Guards everything below. Held only for the tool's bookkeeping and
  // MPI_T reads, never across a call into the library's data path.
  mutable std::mutex mutex_;
  int next_comm_id_ = 0;
  int next_request_id_ = 0;
  std::map<MPI_Comm, std::unique_ptr<TracedObject>> comms_;
  std::map<MPI_Request, std::unique_ptr<TracedObject>> requests_;
  std::vector<std::unique_ptr<TracedObject>> finished_;  // freed objects
  std::vector<std::unique_ptr<ObjectTag>> tags_;
  std::vector<Sample> samples_;
  std::vector<std::string> object_lines_;                  // in creation order
  std::vector<std::pair<double, std::string>> lifecycle_;  // "freed comm 3"

  std::atomic<uint64_t> dropped_by_library_{0};
  std::thread sampler_;
  std::condition_variable sampler_wake_;
  bool stop_sampler_ = false;
};

Tracer& TheTracer() {
  static Tracer* tracer =
      new Tracer;  // never destroyed: callbacks may race exit
  return *tracer;
}

void OnEvent(MPI_T_event_instance instance, MPI_T_event_registration,
             MPI_T_cb_safety, void* user_data) {
  TheTracer().Record(instance, static_cast<const ObjectTag*>(user_data));
}

void OnDropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety,
               void*) {
  TheTracer().CountDropped(count);
}

bool NameMatches(const std::string& name,
                 const std::vector<std::string>& fragments) {
  for (const std::string& fragment : fragments) {
    if (name.find(fragment) != std::string::npos) return true;
  }
  return false;
}

void Tracer::DiscoverVariables() {
  int num_pvars = 0;
  if (MPI_T_pvar_get_num(&num_pvars) != MPI_SUCCESS) num_pvars = 0;
  for (int i = 0; i < num_pvars; ++i) {
    char name[256];
    int name_len = sizeof name;
    PvarType type;
    MPI_T_enum enumtype;
    int verbosity, readonly, continuous, atomic;
    char desc[8];
    int desc_len = sizeof desc;
    if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &type.var_class,
                            &type.datatype, &enumtype, desc, &desc_len,
                            &type.bind, &readonly, &continuous,
                            &atomic) != MPI_SUCCESS) {
      continue;  // an index the library no longer offers
    }
    type.index = i;
    type.name = name;
    type.continuous = continuous != 0;
    bool bindable =
        type.bind == MPI_T_BIND_MPI_COMM || type.bind == MPI_T_BIND_MPI_REQUEST;
    bool readable = type.datatype == MPI_UNSIGNED_LONG_LONG ||
                    type.datatype == MPI_DOUBLE || type.datatype == MPI_INT ||
                    type.datatype == MPI_UNSIGNED ||
                    type.datatype == MPI_UNSIGNED_LONG ||
                    type.datatype == MPI_COUNT;
    if (bindable && readable &&
        NameMatches(type.name, settings_.pvar_fragments))
      pvar_types_.push_back(type);
  }
  for (const std::string& wanted : settings_.event_names) {
    EventType type;
    if (MPI_T_event_get_index(wanted.c_str(), &type.index) != MPI_SUCCESS)
      continue;  // this library has no such event
    int num_elements = 0;
    char name[256];
    int name_len = sizeof name;
    int verbosity;
    MPI_T_enum enumtype;
    char desc[1024];
    int desc_len = sizeof desc;
    MPI_Info info = MPI_INFO_NULL;
    // The first call asks for the element count only.
    if (MPI_T_event_get_info(type.index, name, &name_len, &verbosity, nullptr,
                             nullptr, &num_elements, &enumtype, &info, desc,
                             &desc_len, &type.bind) != MPI_SUCCESS)
      continue;
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    std::vector<MPI_Datatype> datatypes(num_elements);
    std::vector<MPI_Aint> displacements(num_elements);
    name_len = sizeof name;
    desc_len = sizeof desc;
    if (MPI_T_event_get_info(type.index, name, &name_len, &verbosity,
                             datatypes.data(), displacements.data(),
                             &num_elements, &enumtype, &info, desc, &desc_len,
                             &type.bind) != MPI_SUCCESS)
      continue;
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    type.name = wanted;
    type.description = desc;
    for (int e = 0; e < num_elements; ++e) {
      int size = 0;
      PMPI_Type_size(datatypes[e], &size);
      type.elements.push_back({datatypes[e], displacements[e], size});
      type.payload_bytes = std::max(
          type.payload_bytes, static_cast<size_t>(displacements[e]) + size);
    }
    type.slot = static_cast<int>(event_types_.size());
    event_types_.push_back(type);
  }
}

void Tracer::Start() {
  int provided = 0;
  if (MPI_T_init_thread == nullptr) {
    std::fprintf(stderr, "mpit_trace: this MPI has no MPI_T; not tracing\n");
    return;
  }
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "mpit_trace: MPI_T_init_thread failed; not tracing\n");
    return;
  }
  if (MPI_T_pvar_session_create(&session_) != MPI_SUCCESS)
    session_ = MPI_T_PVAR_SESSION_NULL;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &size_);
  clock_.Start();
  events_.Allocate(settings_.max_events);
  DiscoverVariables();
  if (!settings_.quiet && rank_ == 0 && pvar_types_.empty() &&
      event_types_.empty()) {
    std::fprintf(stderr,
                 "mpit_trace: this MPI offers none of the variables or events "
                 "asked for; the trace will hold only the communicators\n");
  }
  running_ = true;
  TrackComm(MPI_COMM_WORLD, "MPI_COMM_WORLD", MPI_COMM_NULL);
  if (settings_.interval_us > 0)
    sampler_ = std::thread([this] { SamplerLoop(); });
}

void Tracer::SamplerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_sampler_) {
    sampler_wake_.wait_for(lock,
                           std::chrono::microseconds(settings_.interval_us));
    if (stop_sampler_) break;
    for (auto& [handle, object] : comms_) SampleLocked(*object);
    for (auto& [handle, object] : requests_) SampleLocked(*object);
  }
}

// Allocates a handle for every traced variable, and a registration for
// every traced event, bound to this kind of object.
void Tracer::Bind(TracedObject& object, int bind, void* handle) {
  for (const PvarType& type : pvar_types_) {
    if (type.bind != bind || session_ == MPI_T_PVAR_SESSION_NULL) continue;
    BoundPvar bound{&type, MPI_T_PVAR_HANDLE_NULL, 0, false, "", 0};
    if (MPI_T_pvar_handle_alloc(session_, type.index, handle, &bound.handle,
                                &bound.count) != MPI_SUCCESS ||
        bound.count < 1) {
      continue;
    }
    if (!type.continuous)
      bound.started = MPI_T_pvar_start(session_, bound.handle) == MPI_SUCCESS;
    object.pvars.push_back(std::move(bound));
  }
  for (const EventType& type : event_types_) {
    if (type.bind != bind) continue;
    MPI_T_event_registration registration;
    if (MPI_T_event_handle_alloc(type.index, handle, MPI_INFO_NULL,
                                 &registration) != MPI_SUCCESS) {
      continue;
    }
    tags_.push_back(
        std::make_unique<ObjectTag>(ObjectTag{object.kind, object.id, &type}));
    if (MPI_T_event_register_callback(
            registration, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
            tags_.back().get(), OnEvent) != MPI_SUCCESS) {
      MPI_T_event_handle_free(registration, nullptr, nullptr);
      continue;
    }
    MPI_T_event_set_dropped_handler(registration, OnDropped);
    object.registrations.push_back(registration);
  }
}

void Tracer::SampleLocked(TracedObject& object) {
  double t_us = clock_.NowMicros();
  for (BoundPvar& bound : object.pvars) {
    // Eight bytes per element covers every type DiscoverVariables accepts.
    uint64_t raw[16];
    std::vector<uint64_t> large;
    void* buffer = raw;
    if (bound.count > 16) {
      large.resize(bound.count);
      buffer = large.data();
    }
    if (MPI_T_pvar_read(session_, bound.handle, buffer) != MPI_SUCCESS)
      continue;
    int element_size = 0;
    PMPI_Type_size(bound.type->datatype, &element_size);
    std::string value;
    for (int i = 0; i < bound.count; ++i) {
      const unsigned char* element =
          static_cast<const unsigned char*>(buffer) + i * element_size;
      std::string text =
          FormatValue(bound.type->datatype, element, element_size);
      bound.peak = std::max(bound.peak, std::strtod(text.c_str(), nullptr));
      if (i > 0) value += ",";
      value += text;
    }
    if (value == bound.last_value) continue;  // record changes only
    bound.last_value = value;
    samples_.push_back({t_us, object.kind, object.id, bound.type, value});
  }
}

void Tracer::ReleaseLocked(TracedObject& object) {
  SampleLocked(object);
  for (MPI_T_event_registration& registration : object.registrations)
    MPI_T_event_handle_free(registration, nullptr, nullptr);
  object.registrations.clear();
  for (BoundPvar& bound : object.pvars) {
    if (bound.started) MPI_T_pvar_stop(session_, bound.handle);
    MPI_T_pvar_handle_free(session_, &bound.handle);
  }
  lifecycle_.push_back({clock_.NowMicros(),
                        std::string(object.kind == 'c' ? "comm " : "request ") +
                            std::to_string(object.id)});
}

int Tracer::CommIdLocked(MPI_Comm comm) const {
  auto found = comms_.find(comm);
  return found == comms_.end() ? -1 : found->second->id;
}

void Tracer::TrackComm(MPI_Comm comm, const char* created_by, MPI_Comm parent) {
  if (!running_ || comm == MPI_COMM_NULL) return;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::lock_guard<std::mutex> lock(mutex_);
  if (comms_.count(comm) != 0) return;
  auto object = std::make_unique<TracedObject>();
  object->kind = 'c';
  object->id = next_comm_id_++;
  int parent_id = CommIdLocked(parent);
  object->description =
      "size " + std::to_string(size) + " from " + created_by + " parent " +
      (parent_id < 0 ? std::string("-") : std::to_string(parent_id));
  object_lines_.push_back("comm " + std::to_string(object->id) + " " +
                          object->description);
  Bind(*object, MPI_T_BIND_MPI_COMM, &comm);
  SampleLocked(*object);
  comms_[comm] = std::move(object);
}

void Tracer::ForgetComm(MPI_Comm comm) {
  if (!running_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = comms_.find(comm);
  if (found == comms_.end()) return;
  ReleaseLocked(*found->second);
  finished_.push_back(std::move(found->second));
  comms_.erase(found);
}

void Tracer::TrackPartitioned(MPI_Request request, const char* created_by,
                              int partitions, MPI_Comm comm) {
  if (!running_ || request == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto object = std::make_unique<TracedObject>();
  object->kind = 'r';
  object->id = next_request_id_++;
  object->description = std::string(created_by) + " partitions " +
                        std::to_string(partitions) + " comm " +
                        std::to_string(CommIdLocked(comm));
  object_lines_.push_back("request " + std::to_string(object->id) + " " +
                          object->description);
  Bind(*object, MPI_T_BIND_MPI_REQUEST, &request);
  requests_[request] = std::move(object);
}

void Tracer::ForgetRequest(MPI_Request request) {
  if (!running_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = requests_.find(request);
  if (found == requests_.end()) return;
  ReleaseLocked(*found->second);
  finished_.push_back(std::move(found->second));
  requests_.erase(found);
}

void Tracer::SampleComm(MPI_Comm comm) {
  if (!running_ || !settings_.sample_calls) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = comms_.find(comm);
  if (found != comms_.end()) SampleLocked(*found->second);
}

void Tracer::Record(MPI_T_event_instance instance, const ObjectTag* tag) {
  EventRecord* record = events_.Claim();
  if (record == nullptr) return;
  record->t_us = clock_.EventMicros(instance);
  record->tag = tag;
  const EventType& type = *tag->type;
  if (type.payload_bytes <= kPayloadBytes) {
    if (type.payload_bytes > 0) MPI_T_event_copy(instance, record->payload);
  } else {  // keep the elements that fit
    for (size_t e = 0; e < type.elements.size(); ++e) {
      const PayloadElement& element = type.elements[e];
      if (element.displacement + element.size <= (MPI_Aint)kPayloadBytes) {
        MPI_T_event_read(instance, static_cast<int>(e),
                         record->payload + element.displacement);
      }
    }
  }
  events_.Commit();
}

void Tracer::Finish() {
  if (!running_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_sampler_ = true;
  }
  sampler_wake_.notify_all();
  if (sampler_.joinable()) sampler_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [handle, object] : requests_) {
      ReleaseLocked(*object);
      finished_.push_back(std::move(object));
    }
    requests_.clear();
    for (auto& [handle, object] : comms_) {
      ReleaseLocked(*object);
      finished_.push_back(std::move(object));
    }
    comms_.clear();
  }
  running_ = false;
  if (session_ != MPI_T_PVAR_SESSION_NULL) MPI_T_pvar_session_free(&session_);
  WriteTrace();
  if (!settings_.quiet) PrintSummary();
  MPI_T_finalize();
}

void Tracer::WriteTrace() {
  std::string path = settings_.dir + "/mpit_trace." + std::to_string(rank_);
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "mpit_trace: rank %d cannot write %s: %s\n", rank_,
                 path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(out,
               "# mpit_trace: what MPI_T showed of one rank; times in "
               "microseconds since MPI_Init\n");
  std::fprintf(out, "rank %d size %d interval_us %ld\n", rank_, size_,
               settings_.interval_us);
  for (const PvarType& type : pvar_types_)
    std::fprintf(out, "pvar %s class %s bind %s\n", type.name.c_str(),
                 ClassName(type.var_class), BindName(type.bind));
  for (const EventType& type : event_types_) {
    std::fprintf(out, "event_type %s bind %s elements %zu", type.name.c_str(),
                 BindName(type.bind), type.elements.size());
    for (const PayloadElement& element : type.elements)
      std::fprintf(out, " %s", DatatypeName(element.datatype).c_str());
    std::fprintf(out, "\n");
    if (!type.description.empty())
      std::fprintf(out, "# %s: %s\n", type.name.c_str(),
                   type.description.c_str());
  }
  for (const std::string& line : object_lines_)
    std::fprintf(out, "%s\n", line.c_str());
  // Samples, events and frees, merged in time order.
  std::vector<std::pair<double, std::string>> lines;
  for (const Sample& sample : samples_) {
    lines.push_back(
        {sample.t_us, sample.type->name +
                          (sample.kind == 'c' ? " comm " : " request ") +
                          std::to_string(sample.id) + " " + sample.value});
    lines.back().second = "sample %s " + lines.back().second;
  }
  events_.ForEach([&lines](const EventRecord& record) {
    const ObjectTag& tag = *record.tag;
    std::string line = "event %s " + tag.type->name +
                       (tag.kind == 'c'   ? " comm "
                        : tag.kind == 'r' ? " request "
                                          : " none ") +
                       std::to_string(tag.id);
    for (const PayloadElement& element : tag.type->elements) {
      if (element.displacement + element.size > (MPI_Aint)kPayloadBytes) {
        line += " ?";
        continue;
      }
      line += " " + FormatValue(element.datatype,
                                record.payload + element.displacement,
                                element.size);
    }
    lines.push_back({record.t_us, line});
  });
  for (const auto& [t_us, what] : lifecycle_)
    lines.push_back({t_us, "freed %s " + what});
  std::stable_sort(
      lines.begin(), lines.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [t_us, format] : lines) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "%.3f", t_us);
    // Each line's "%s" is where its time goes.
    size_t at = format.find("%s");
    std::fprintf(out, "%s%s%s\n", format.substr(0, at).c_str(), stamp,
                 format.substr(at + 2).c_str());
  }
  if (events_.lost() > 0)
    std::fprintf(out, "lost %llu\n",
                 static_cast<unsigned long long>(events_.lost()));
  uint64_t dropped = dropped_by_library_.load(std::memory_order_relaxed);
  if (dropped > 0)
    std::fprintf(out, "dropped %llu\n",
                 static_cast<unsigned long long>(dropped));
  std::fclose(out);
}

void Tracer::PrintSummary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Events per (object kind, id, event type).
  std::map<std::tuple<char, int, std::string>, uint64_t> counts;
  events_.ForEach([&counts](const EventRecord& record) {
    ++counts[{record.tag->kind, record.tag->id, record.tag->type->name}];
  });
  std::string text;
  for (const auto& object : finished_) {
    std::string line;
    for (const BoundPvar& bound : object->pvars) {
      int cls = bound.type->var_class;
      if (object->kind == 'r') {  // a request's totals, as they ended
        line += " " + bound.type->name + " " + bound.last_value;
        continue;
      }
      // Only the queues that held something: a short summary.
      if ((cls != MPI_T_PVAR_CLASS_LEVEL &&
           cls != MPI_T_PVAR_CLASS_HIGHWATERMARK) ||
          bound.peak == 0) {
        continue;
      }
      char peak[96];
      std::snprintf(peak, sizeof peak, " peak %s %.0f",
                    bound.type->name.c_str(), bound.peak);
      line += peak;
    }
    for (const auto& [key, count] : counts) {
      if (std::get<0>(key) == object->kind && std::get<1>(key) == object->id)
        line += " " + std::get<2>(key) + " " + std::to_string(count);
    }
    if (line.empty()) continue;  // nothing seen on it
    text += "mpit_trace: rank " + std::to_string(rank_) +
            (object->kind == 'c' ? " comm " : " request ") +
            std::to_string(object->id) + " (" + object->description +
            "):" + line + "\n";
  }
  if (events_.lost() > 0)
    text += "mpit_trace: rank " + std::to_string(rank_) + " lost " +
            std::to_string(events_.lost()) +
            " events (raise MPIT_TRACE_MAX_EVENTS)\n";
  text += "mpit_trace: rank " + std::to_string(rank_) + " wrote " +
          settings_.dir + "/mpit_trace." + std::to_string(rank_) + "\n";
  std::fputs(text.c_str(), stderr);
}

// Starts tracing once, whichever init call the program makes (an
// MPI_Init implemented through MPI_Init_thread passes here twice).
void StartOnce(int rc) {
  static std::once_flag once;
  if (rc == MPI_SUCCESS) std::call_once(once, [] { TheTracer().Start(); });
}

// After a constructor: traces the new communicator if the call succeeded.
int Traced(int rc, MPI_Comm* newcomm, const char* created_by, MPI_Comm parent) {
  if (rc == MPI_SUCCESS && newcomm != nullptr)
    TheTracer().TrackComm(*newcomm, created_by, parent);
  return rc;
}

}  // namespace

// ---- The wrapped calls
// --------------------------------------------------------

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  StartOnce(rc);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  StartOnce(rc);
  return rc;
}

int MPI_Finalize(void) {
  TheTracer().Finish();
  return PMPI_Finalize();
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_dup(comm, newcomm), newcomm, "MPI_Comm_dup", comm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm,
                "MPI_Comm_dup_with_info", comm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_split(comm, color, key, newcomm), newcomm,
                "MPI_Comm_split", comm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_split_type(comm, split_type, key, info, newcomm),
                newcomm, "MPI_Comm_split_type", comm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_create(comm, group, newcomm), newcomm,
                "MPI_Comm_create", comm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                          MPI_Comm* newcomm) {
  return Traced(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm,
                "MPI_Comm_create_group", comm);
}

int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                               MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm* newcomm) {
  return Traced(
      PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm),
      newcomm, "MPI_Comm_create_from_group", MPI_COMM_NULL);
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                    const int periods[], int reorder, MPI_Comm* comm_cart) {
  return Traced(
      PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart),
      comm_cart, "MPI_Cart_create", comm_old);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return Traced(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm,
                "MPI_Cart_sub", comm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                     const int edges[], int reorder, MPI_Comm* comm_graph) {
  return Traced(
      PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph),
      comm_graph, "MPI_Graph_create", comm_old);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                   const int sources[],
                                   const int* sourceweights, int outdegree,
                                   const int destinations[],
                                   const int* destweights, MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  return Traced(PMPI_Dist_graph_create_adjacent(
                    comm_old, indegree, sources, sourceweights, outdegree,
                    destinations, destweights, info, reorder, comm_dist_graph),
                comm_dist_graph, "MPI_Dist_graph_create_adjacent", comm_old);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                          const int degrees[], const int destinations[],
                          const int* weights, MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  return Traced(
      PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations,
                             weights, info, reorder, comm_dist_graph),
      comm_dist_graph, "MPI_Dist_graph_create", comm_old);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                         MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  return Traced(PMPI_Intercomm_create(local_comm, local_leader, peer_comm,
                                      remote_leader, tag, newintercomm),
                newintercomm, "MPI_Intercomm_create", local_comm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return Traced(PMPI_Intercomm_merge(intercomm, high, newintracomm),
                newintracomm, "MPI_Intercomm_merge", intercomm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr) TheTracer().ForgetComm(*comm);
  return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm* comm) {
  if (comm != nullptr) TheTracer().ForgetComm(*comm);
  return PMPI_Comm_disconnect(comm);
}

int MPI_Psend_init(const void* buf, int partitions, int count,
                   MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request) {
  int rc = PMPI_Psend_init(buf, partitions, count, datatype, dest, tag, comm,
                           info, request);
  if (rc == MPI_SUCCESS && request != nullptr)
    TheTracer().TrackPartitioned(*request, "MPI_Psend_init", partitions, comm);
  return rc;
}

int MPI_Precv_init(void* buf, int partitions, int count, MPI_Datatype datatype,
                   int source, int tag, MPI_Comm comm, MPI_Info info,
                   MPI_Request* request) {
  int rc = PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm,
                           info, request);
  if (rc == MPI_SUCCESS && request != nullptr)
    TheTracer().TrackPartitioned(*request, "MPI_Precv_init", partitions, comm);
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  if (request != nullptr) TheTracer().ForgetRequest(*request);
  return PMPI_Request_free(request);
}

// The receive side's blocking calls: a sample before and after catches the
// queue at its deepest (a probe pulls every earlier arrival into the
// unexpected queue; a receive takes one out).
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  TheTracer().SampleComm(comm);
  int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  TheTracer().SampleComm(comm);
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  TheTracer().SampleComm(comm);
  int rc = PMPI_Probe(source, tag, comm, status);
  TheTracer().SampleComm(comm);
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  TheTracer().SampleComm(comm);
  int rc = PMPI_Barrier(comm);
  TheTracer().SampleComm(comm);
  return rc;
}

}  // extern "C"
