// What the library shows a tool (MPI_T, MPI-4.1 chapter 15): the catalogue
// of performance variables and events that the rest of minimpi registers,
// and the cheap calls its data paths make to raise events.
//
// The layering: this package depends on nothing of minimpi's but the public
// header. Modules (mpi/match through mpi/p2p, mpi/part, mpi/vci, mpi/coll,
// mpi/rma) keep their own counters where they already count, and register
// here a function that reads them; mpi/bindings/tool.cc turns the catalogue
// into the MPI_T_* calls (sessions, handles, start/stop, callbacks). So a
// counter is written once, on the path that already owns it, and read only
// when a tool asks: MINIMPI_*_STATS printouts and MPI_T read the same
// numbers.
//
// Registration happens once per process, from RegisterAllToolVariables()
// (mpi/bindings/tool_catalogue.cc, which sits above every module), which
// the first MPI_T_init_thread calls before it returns (a process that never
// initializes MPI_T registers nothing: its Event pointers stay null and
// its data paths raise nothing); indices are stable from then on. Writers
// of control variables are registered by mpi/bindings/tool.cc.
//
// Owned by: mpi/tool. Called by: every module that exposes a variable or
// raises an event; mpi/bindings/tool.cc.
#ifndef MINIMPI_MPI_TOOL_REGISTRY_H_
#define MINIMPI_MPI_TOOL_REGISTRY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpi.h"

namespace minimpi::tool {

// What a variable or event is bound to (MPI_T_BIND_*): the object whose
// handle a tool passes to MPI_T_pvar_handle_alloc. The read functions get
// the library's own object behind that handle (Communicator*, the request's
// object, Window*), or nullptr for kNoObject.
enum class Binding : int {
  kNoObject = MPI_T_BIND_NO_OBJECT,
  kComm = MPI_T_BIND_MPI_COMM,
  kRequest = MPI_T_BIND_MPI_REQUEST,
  kWin = MPI_T_BIND_MPI_WIN,
};

// The element type a variable reads as. Counters, levels, sizes and
// watermarks are unsigned long long (MPI_UNSIGNED_LONG_LONG); timers are
// double seconds (MPI_DOUBLE); a state is an int with an enumeration.
enum class ValueType { kUnsignedLongLong, kDouble, kInt };

struct PerformanceVariable {
  std::string name;         // e.g. "posted_recvq_length"
  std::string description;  // one or two sentences
  std::string category;     // e.g. "matching"; made on first use
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  int var_class = MPI_T_PVAR_CLASS_COUNTER;  // MPI_T_PVAR_CLASS_*
  ValueType type = ValueType::kUnsignedLongLong;
  Binding binding = Binding::kNoObject;
  // Elements per object (e.g. one per VCI, one per collective kind). A
  // variable whose count depends on the object gives count_for instead.
  int count = 1;
  std::function<int(const void* object)> count_for;
  // For a kInt state: the enumeration's name and its items (value, name).
  std::string enum_name;
  std::vector<std::pair<int, std::string>> enum_items;
  // Reads the current values (count of them) of `object` into `values`
  // (uint64_t* for kUnsignedLongLong, double* for kDouble, int* for kInt).
  // Counters and timers read as monotonic totals since the object was
  // made: the MPI_T layer keeps each handle's start and reset offsets, so
  // modules never reset anything. Levels read the value now; a watermark
  // reads the high (or low) mark since the object was made, and the MPI_T
  // layer takes the handle's mark from the values it sees while started
  // and from Reset below.
  std::function<void(const void* object, void* values)> read;
  // Optional: a watermark's module can restart its mark at the level now
  // when a handle is reset or started (so a tool sees the mark of its own
  // interval). Levels and counters leave it empty.
  std::function<void(const void* object)> reset_mark;
  // Optional: timers that cost a clock read on the data path are off until
  // a handle on them is started; the MPI_T layer calls this with true at
  // the first start and false after the last stop. Empty for variables
  // that always count.
  std::function<void(bool on)> enable;
  bool continuous = true;  // false: MPI_T_pvar_start/stop apply
  bool readonly = true;    // false: MPI_T_pvar_write may set it
  bool atomic = false;     // MPI_T_pvar_readreset is atomic
};

// Adds a performance variable; returns its index. Names are unique per
// class (MPI-4.1 15.3.7): a second registration of the same name and class
// is a programming error and aborts.
int RegisterPerformanceVariable(PerformanceVariable variable);

// One element of an event's payload: its type and the offset in the
// payload buffer (MPI_T_event_get_info returns both).
struct EventElement {
  MPI_Datatype type;  // a predefined type: MPI_INT, MPI_UNSIGNED_LONG_LONG
  size_t offset;
  std::string name;  // for the description, e.g. "source"
};

struct EventType {
  std::string name;  // e.g. "unexp_message_enqueued"
  std::string description;
  std::string category;
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  Binding binding = Binding::kNoObject;
  std::vector<EventElement> elements;
  size_t payload_bytes = 0;  // the payload buffer's size
};

// A registered event type: the handle data paths keep (one static per event
// type) and test before they build a payload.
class Event {
 public:
  // True while any registration of this event has a callback. A relaxed
  // load: the only cost an event adds to a data path when no tool listens.
  bool active() const { return listeners_.load(std::memory_order_relaxed) > 0; }
  int index() const { return index_; }

  // Hands one instance to the registrations' callbacks: `object` is the
  // bound object (nullptr for kNoObject), `payload` payload_bytes long.
  // Called with the caller's locks held: callbacks registered with
  // MPI_T_CB_REQUIRE_THREAD_SAFE or stricter run at once; the others are
  // queued (bounded; overflow goes to the dropped-event handler) and run
  // when the thread next enters MPI_T or leaves a blocking MPI call.
  void Raise(const void* object, const void* payload) const;

  // For mpi/bindings/tool.cc only.
  std::atomic<int>& listeners() { return listeners_; }
  void set_index(int index) { index_ = index; }

 private:
  std::atomic<int> listeners_{0};
  int index_ = -1;
};

// Adds an event type; returns the Event a data path raises (owned by the
// registry, alive until the process ends).
Event* RegisterEventType(EventType type);

// Control variables come from runtime/settings (every MINIMPI_* setting);
// a setting that may change after MPI_Init registers a writer here.
struct ControlVariableWriter {
  std::string name;  // MINIMPI_...
  // Applies a new value (as text, the environment's form); returns false
  // (MPI_T_ERR_CVAR_SET_NOT_NOW / _NEVER is the binding's business) when
  // the value is refused.
  std::function<bool(const std::string& value)> write;
};
void RegisterControlVariableWriter(ControlVariableWriter writer);

// Registers every module's variables and events, once per process (the
// first caller does it; later calls return at once). Defined in
// mpi/bindings/tool_catalogue.cc, which calls each module's
// Register<Module>ToolVariables() (declared in that module's header).
void RegisterAllToolVariables();

}  // namespace minimpi::tool

#endif  // MINIMPI_MPI_TOOL_REGISTRY_H_
