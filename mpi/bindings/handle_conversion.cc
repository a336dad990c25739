// Handle conversions for C code that passes handles through integers:
// MPI_<Kind>_c2f and MPI_<Kind>_f2c for communicators, datatypes, groups,
// requests, operations, info objects, error handlers, messages, windows and
// sessions, and MPI_Status_c2f / MPI_Status_f2c. The integers are described in
// mpi/objects/handle_conversion.h: a predefined handle is its own ABI value, any
// other handle its slot index and some generation bits, and converting
// back the integer of a freed handle gives an invalid handle.
//
// The conversions of predefined handles and of info objects work before
// MPI_Init and after MPI_Finalize too (info objects live that long); other
// objects exist only in between. No conversion raises an error: c2f and f2c
// have no error to return, and an invalid input gives an invalid output.
#include "mpi/objects/handle_conversion.h"

#include <cstring>

#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/window_object.h"
#include "mpi/objects/group.h"
#include "mpi/objects/info.h"
#include "mpi/objects/session.h"

using minimpi::HandleKind;
using minimpi::HandleTable;
using minimpi::Instance;
using minimpi::LibraryState;
namespace conversion = minimpi::handle_conversion;

namespace {

// What f2c gives for an integer that names nothing: a handle of no kind
// (kind bits 0xF) at an index beyond every table, which no call accepts.
constexpr uintptr_t kInvalidHandle =
    (uintptr_t{0xF} << 56) | uintptr_t{0xFFFFFFFF};

bool Initialized() { return Instance::state() == LibraryState::kInitialized; }

MPI_Fint TableHandleToInt(uintptr_t handle, HandleKind kind) {
  if (handle <= conversion::kLargestPredefined) {
    return static_cast<MPI_Fint>(handle);
  }
  if (!minimpi::HandleIsKind(handle, kind)) return conversion::kNotAHandle;
  return conversion::EncodeSlot(minimpi::HandleIndex(handle),
                                minimpi::HandleGeneration(handle),
                                conversion::kTableIndexBits);
}

// `table` is nullptr when the objects of this kind do not exist now
// (before MPI_Init, after MPI_Finalize).
template <typename T>
uintptr_t IntToTableHandle(MPI_Fint value, const HandleTable<T>* table) {
  if (conversion::IsPredefined(value)) return static_cast<uintptr_t>(value);
  const auto slot = conversion::DecodeSlot(value, conversion::kTableIndexBits);
  if (!slot.has_value() || table == nullptr) return kInvalidHandle;
  const uintptr_t live = table->LiveHandleAt(slot->index);
  if (live == 0 ||
      !conversion::GenerationMatches(minimpi::HandleGeneration(live), *slot,
                                     conversion::kTableIndexBits)) {
    return kInvalidHandle;
  }
  return live;
}

// The instance's table of one kind, or nullptr outside MPI_Init..Finalize.
template <typename T>
const HandleTable<T>* InstanceTable(HandleTable<T>& (Instance::*table)()) {
  return Initialized() ? &(Instance::Get().*table)() : nullptr;
}

template <typename Handle>
Handle ToHandleType(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

}  // namespace

extern "C" {

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm) {
  return TableHandleToInt(minimpi::HandleValue(comm),
                          HandleKind::kCommunicator);
}

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm) {
  return ToHandleType<MPI_Comm>(
      IntToTableHandle(comm, InstanceTable(&Instance::communicators)));
}

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype) {
  return TableHandleToInt(minimpi::HandleValue(datatype),
                          HandleKind::kDatatype);
}

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype) {
  return ToHandleType<MPI_Datatype>(
      IntToTableHandle(datatype, InstanceTable(&Instance::datatypes)));
}

MPI_Fint PMPI_Group_c2f(MPI_Group group) {
  return TableHandleToInt(minimpi::HandleValue(group), HandleKind::kGroup);
}

MPI_Group PMPI_Group_f2c(MPI_Fint group) {
  return ToHandleType<MPI_Group>(
      IntToTableHandle(group, InstanceTable(&Instance::groups)));
}

MPI_Fint PMPI_Op_c2f(MPI_Op op) {
  return TableHandleToInt(minimpi::HandleValue(op), HandleKind::kOp);
}

MPI_Op PMPI_Op_f2c(MPI_Fint op) {
  return ToHandleType<MPI_Op>(
      IntToTableHandle(op, InstanceTable(&Instance::ops)));
}

MPI_Fint PMPI_Info_c2f(MPI_Info info) {
  return TableHandleToInt(minimpi::HandleValue(info), HandleKind::kInfo);
}

MPI_Info PMPI_Info_f2c(MPI_Fint info) {
  // Info objects are process-wide: valid outside MPI_Init..Finalize too.
  return ToHandleType<MPI_Info>(IntToTableHandle(info, &minimpi::InfoTable()));
}

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler) {
  return TableHandleToInt(minimpi::HandleValue(errhandler),
                          HandleKind::kErrhandler);
}

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler) {
  return ToHandleType<MPI_Errhandler>(
      IntToTableHandle(errhandler, InstanceTable(&Instance::errhandlers)));
}

MPI_Fint PMPI_Message_c2f(MPI_Message message) {
  return TableHandleToInt(minimpi::HandleValue(message), HandleKind::kMessage);
}

MPI_Message PMPI_Message_f2c(MPI_Fint message) {
  return ToHandleType<MPI_Message>(
      IntToTableHandle(message, InstanceTable(&Instance::messages)));
}

// Requests live in per-VCI pools, not a HandleTable: the index is the VCI
// and the index in its pool (binding_util.h), and a slot is live unless it
// is back in the pool.
MPI_Fint PMPI_Request_c2f(MPI_Request request) {
  const uintptr_t value = minimpi::HandleValue(request);
  if (value <= conversion::kLargestPredefined) {
    return static_cast<MPI_Fint>(value);
  }
  if (!minimpi::HandleIsKind(value, HandleKind::kRequest)) {
    return conversion::kNotAHandle;
  }
  return conversion::EncodeSlot(minimpi::HandleIndex(value),
                                minimpi::HandleGeneration(value),
                                conversion::kRequestIndexBits);
}

MPI_Request PMPI_Request_f2c(MPI_Fint request) {
  if (conversion::IsPredefined(request)) {
    return ToHandleType<MPI_Request>(static_cast<uintptr_t>(request));
  }
  const auto slot =
      conversion::DecodeSlot(request, conversion::kRequestIndexBits);
  if (!slot.has_value() || !Initialized()) {
    return ToHandleType<MPI_Request>(kInvalidHandle);
  }
  const uint32_t vci = slot->index >> minimpi::kRequestVciShift;
  const uint32_t index =
      slot->index & ((uint32_t{1} << minimpi::kRequestVciShift) - 1);
  const minimpi::vci::Request* found =
      Instance::Get().p2p().RequestSlot(vci, index);
  if (found == nullptr ||
      found->state.load(std::memory_order_acquire) ==
          minimpi::vci::RequestState::kFree ||
      !conversion::GenerationMatches(
          found->generation.load(std::memory_order_relaxed), *slot,
          conversion::kRequestIndexBits)) {
    return ToHandleType<MPI_Request>(kInvalidHandle);
  }
  return minimpi::ToHandle(const_cast<minimpi::vci::Request*>(found));
}

// No window exists yet (windows.cc): only MPI_WIN_NULL converts.
MPI_Fint PMPI_Win_c2f(MPI_Win win) {
  return TableHandleToInt(minimpi::HandleValue(win), HandleKind::kWindow);
}

MPI_Win PMPI_Win_f2c(MPI_Fint win) {
  return ToHandleType<MPI_Win>(
      IntToTableHandle(win, Initialized() ? &minimpi::WindowTable() : nullptr));
}

// Sessions have a table of their own that outlives every session (a stale
// session handle must stay an error, never a crash).
MPI_Fint PMPI_Session_c2f(MPI_Session session) {
  return TableHandleToInt(minimpi::HandleValue(session), HandleKind::kSession);
}

MPI_Session PMPI_Session_f2c(MPI_Fint session) {
  return ToHandleType<MPI_Session>(
      IntToTableHandle(session, &minimpi::Sessions()));
}

// A status is MPI_F_STATUS_SIZE integers either way, in the same order
// (MPI_SOURCE, MPI_TAG, MPI_ERROR at MPI_F_SOURCE, MPI_F_TAG, MPI_F_ERROR,
// then the library's own fields).
static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_SOURCE) ==
              MPI_F_SOURCE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_ERROR) ==
              MPI_F_ERROR * sizeof(MPI_Fint));

namespace {
int NullStatus(const char* call, const char* what) {
  if (!Initialized()) return MPI_ERR_ARG;  // no handler to raise it on
  return minimpi::RaiseError(
      nullptr, call, MPI_ERR_ARG,
      std::string(what) +
          " is a null pointer (MPI_STATUS_IGNORE cannot be converted)");
}
}  // namespace

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (c_status == nullptr) return NullStatus("MPI_Status_c2f", "c_status");
  if (f_status == nullptr) return NullStatus("MPI_Status_c2f", "f_status");
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (f_status == nullptr) return NullStatus("MPI_Status_f2c", "f_status");
  if (c_status == nullptr) return NullStatus("MPI_Status_f2c", "c_status");
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_c2f)
MINIMPI_EXPORT(Comm_f2c)
MINIMPI_EXPORT(Type_c2f)
MINIMPI_EXPORT(Type_f2c)
MINIMPI_EXPORT(Group_c2f)
MINIMPI_EXPORT(Group_f2c)
MINIMPI_EXPORT(Op_c2f)
MINIMPI_EXPORT(Op_f2c)
MINIMPI_EXPORT(Info_c2f)
MINIMPI_EXPORT(Info_f2c)
MINIMPI_EXPORT(Errhandler_c2f)
MINIMPI_EXPORT(Errhandler_f2c)
MINIMPI_EXPORT(Message_c2f)
MINIMPI_EXPORT(Message_f2c)
MINIMPI_EXPORT(Request_c2f)
MINIMPI_EXPORT(Request_f2c)
MINIMPI_EXPORT(Win_c2f)
MINIMPI_EXPORT(Win_f2c)
MINIMPI_EXPORT(Session_c2f)
MINIMPI_EXPORT(Session_f2c)
MINIMPI_EXPORT(Status_c2f)
MINIMPI_EXPORT(Status_f2c)
