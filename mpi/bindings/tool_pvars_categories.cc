// The MPI_T calls on performance variables (MPI-4.1 15.3.7: sessions,
// handles bound to objects, reads and writes) and on categories (15.3.9),
// over the catalogue in mpi/tool. The state and the entry every call makes
// are tool.cc's (tool_state.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/tool_state.h"
#include "mpi/mpi.h"
#include "mpi/tool/catalogue.h"
#include "mpi/tool/pvar_session.h"
#include "mpi/tool/registry.h"

namespace minimpi {
namespace {

using mpit::BoundObject;
using mpit::EnumType;
using mpit::ReturnString;
using mpit::Set;
using mpit::ToolState;
using tool::PvarHandle;
using tool::PvarSession;

MPI_Datatype TypeOf(tool::ValueType type) {
  switch (type) {
    case tool::ValueType::kDouble:
      return MPI_DOUBLE;
    case tool::ValueType::kInt:
      return MPI_INT;
    case tool::ValueType::kUnsignedLongLong:
      break;
  }
  return MPI_UNSIGNED_LONG_LONG;
}

MPI_T_enum EnumOf(ToolState& s, int pvar_index,
                  const tool::PerformanceVariable& variable) {
  if (variable.enum_items.empty()) return MPI_T_ENUM_NULL;
  std::unique_ptr<EnumType>& made = s.enums[pvar_index];
  if (made == nullptr) {
    made = std::make_unique<EnumType>(
        EnumType{variable.enum_name, variable.enum_items});
  }
  return reinterpret_cast<MPI_T_enum>(made.get());
}

PvarSession* LookupSession(ToolState& s, MPI_T_pvar_session handle) {
  auto* session = reinterpret_cast<PvarSession*>(handle);
  return s.sessions.count(session) ? session : nullptr;
}

// False when the object a handle is bound to has been freed since (its
// MPI handle no longer names it): the module's read would touch freed
// memory.
bool BoundObjectAlive(const PvarHandle& handle) {
  const tool::Binding binding = handle.variable().binding;
  if (binding == tool::Binding::kNoObject) return true;
  void* user_handle = handle.user_handle();
  return BoundObject(binding, &user_handle) == handle.object();
}

int StartStopOrReset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     int (PvarHandle::*operation)()) {
  MINIMPI_TOOL_CALL(call);
  PvarSession* owner = LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    // Applies to every handle it may apply to; the others are skipped
    // (15.3.7: continuous or read-only ones are ignored), and so are
    // handles whose object is gone.
    for (const auto& each : owner->handles()) {
      if (BoundObjectAlive(*each)) (each.get()->*operation)();
    }
    return MPI_SUCCESS;
  }
  if (!owner->Owns(handle)) return MPI_T_ERR_INVALID_HANDLE;
  auto* found = reinterpret_cast<PvarHandle*>(handle);
  if (!BoundObjectAlive(*found)) return MPI_T_ERR_INVALID_HANDLE;
  return (found->*operation)();
}

// The owning session's handle, or the error class for a bad pair
// (MPI_T_PVAR_ALL_HANDLES included: read and write take one handle).
int LookupPvarHandle(ToolState& s, MPI_T_pvar_session session,
                     MPI_T_pvar_handle handle, PvarHandle** found) {
  PvarSession* owner = LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (!owner->Owns(handle)) return MPI_T_ERR_INVALID_HANDLE;
  *found = reinterpret_cast<PvarHandle*>(handle);
  return MPI_SUCCESS;
}

// The same for a handle about to be read or written: its object must live.
int LookupLivePvarHandle(ToolState& s, MPI_T_pvar_session session,
                         MPI_T_pvar_handle handle, PvarHandle** found) {
  const int error = LookupPvarHandle(s, session, handle, found);
  if (error != MPI_SUCCESS) return error;
  return BoundObjectAlive(**found) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

// A handle about to be read or written (its object alive) and the
// buffer, which only a variable of no values may leave null.
int LookupForAccess(ToolState& s, MPI_T_pvar_session session,
                    MPI_T_pvar_handle handle, const void* buf,
                    PvarHandle** found) {
  const int error = LookupLivePvarHandle(s, session, handle, found);
  if (error != MPI_SUCCESS) return error;
  if (buf == nullptr && (*found)->count() > 0) return MPI_ERR_ARG;
  return MPI_SUCCESS;
}

// MPI_T_pvar_read and MPI_T_pvar_readreset: counted in mpit_pvar_reads
// when they succeed.
int CountedRead(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf,
                int (PvarHandle::*read)(void*)) {
  MINIMPI_TOOL_CALL(call);
  PvarHandle* found = nullptr;
  if (int error = LookupForAccess(s, session, handle, buf, &found)) {
    return error;
  }
  const int result = (found->*read)(buf);
  if (result == MPI_SUCCESS) s.pvar_reads.fetch_add(1);
  return result;
}

// The category at `index`, or false (MPI_T_ERR_INVALID_INDEX).
bool CategoryAt(int index, tool::Category* category) {
  if (index < 0 || index >= tool::NumCategories()) return false;
  *category = tool::CategoryAt(index);
  return true;
}

int ReturnIndices(int cat_index, int len, int indices[],
                  std::vector<int> tool::Category::*list) {
  MINIMPI_TOOL_CALL(call);
  tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
  const std::vector<int>& members = category.*list;
  const int n = std::min(len, static_cast<int>(members.size()));
  std::copy(members.begin(), members.begin() + n, indices);
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace minimpi

using minimpi::mpit::ToolState;
using minimpi::tool::PvarHandle;
using minimpi::tool::PvarSession;

extern "C" {

// ---- Performance variables (15.3.7) ----

int PMPI_T_pvar_get_num(int* num_pvar) {
  MINIMPI_TOOL_CALL(call);
  if (num_pvar == nullptr) return MPI_ERR_ARG;
  *num_pvar = minimpi::tool::NumPerformanceVariables();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len,
                         int* verbosity, int* var_class, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* readonly, int* continuous,
                         int* atomic) {
  MINIMPI_TOOL_CALL(call);
  if (pvar_index < 0 ||
      pvar_index >= minimpi::tool::NumPerformanceVariables()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const minimpi::tool::PerformanceVariable& v =
      minimpi::tool::PerformanceVariableAt(pvar_index);
  minimpi::ReturnString(v.name, name, name_len);
  minimpi::Set(verbosity, v.verbosity);
  minimpi::Set(var_class, v.var_class);
  minimpi::Set(datatype, minimpi::TypeOf(v.type));
  minimpi::Set(enumtype, minimpi::EnumOf(s, pvar_index, v));
  minimpi::ReturnString(v.description, desc, desc_len);
  minimpi::Set(bind, static_cast<int>(v.binding));
  minimpi::Set(readonly, v.readonly ? 1 : 0);
  minimpi::Set(continuous, v.continuous ? 1 : 0);
  minimpi::Set(atomic, v.atomic ? 1 : 0);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || pvar_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindPerformanceVariable(name, var_class);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *pvar_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_index)

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  MINIMPI_TOOL_CALL(call);
  if (session == nullptr) return MPI_ERR_ARG;
  auto* made = new PvarSession;
  s.sessions.insert(made);
  s.sessions_live.store(s.sessions.size(), std::memory_order_relaxed);
  *session = reinterpret_cast<MPI_T_pvar_session>(made);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  MINIMPI_TOOL_CALL(call);
  if (session == nullptr) return MPI_ERR_ARG;
  PvarSession* found = minimpi::LookupSession(s, *session);
  if (found == nullptr) return MPI_T_ERR_INVALID_SESSION;
  s.sessions.erase(found);
  s.sessions_live.store(s.sessions.size(), std::memory_order_relaxed);
  delete found;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                             void* obj_handle, MPI_T_pvar_handle* handle,
                             int* count) {
  MINIMPI_TOOL_CALL(call);
  PvarSession* owner = minimpi::LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 ||
      pvar_index >= minimpi::tool::NumPerformanceVariables()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (handle == nullptr || count == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::PerformanceVariable& v =
      minimpi::tool::PerformanceVariableAt(pvar_index);
  const void* object = nullptr;
  if (v.binding != minimpi::tool::Binding::kNoObject) {
    if (obj_handle == nullptr) return MPI_ERR_ARG;
    object = minimpi::BoundObject(v.binding, obj_handle);
    if (object == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  }
  PvarHandle* made = owner->AddHandle(pvar_index, &v, object);
  if (made == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (object != nullptr)
    made->set_user_handle(*static_cast<void**>(obj_handle));
  *handle = reinterpret_cast<MPI_T_pvar_handle>(made);
  *count = made->count();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session,
                            MPI_T_pvar_handle* handle) {
  MINIMPI_TOOL_CALL(call);
  if (handle == nullptr) return MPI_ERR_ARG;
  PvarHandle* found = nullptr;
  const int error = minimpi::LookupPvarHandle(s, session, *handle, &found);
  if (error != MPI_SUCCESS) return error;
  minimpi::LookupSession(s, session)->FreeHandle(found);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_handle_free)

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Start);
}
MINIMPI_EXPORT(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Stop);
}
MINIMPI_EXPORT(T_pvar_stop)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Reset);
}
MINIMPI_EXPORT(T_pvar_reset)

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     void* buf) {
  return minimpi::CountedRead(session, handle, buf, &PvarHandle::Read);
}
MINIMPI_EXPORT(T_pvar_read)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                      const void* buf) {
  MINIMPI_TOOL_CALL(call);
  PvarHandle* found = nullptr;
  if (int error = minimpi::LookupForAccess(s, session, handle, buf, &found)) {
    return error;
  }
  return found->Write(buf);
}
MINIMPI_EXPORT(T_pvar_write)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                          void* buf) {
  return minimpi::CountedRead(session, handle, buf, &PvarHandle::ReadReset);
}
MINIMPI_EXPORT(T_pvar_readreset)

// ---- Categories (15.3.9) ----

int PMPI_T_category_get_num(int* num_cat) {
  MINIMPI_TOOL_CALL(call);
  if (num_cat == nullptr) return MPI_ERR_ARG;
  *num_cat = minimpi::tool::NumCategories();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len,
                             char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  minimpi::ReturnString(category.name, name, name_len);
  minimpi::ReturnString(category.description, desc, desc_len);
  minimpi::Set(num_cvars, static_cast<int>(category.control_variables.size()));
  minimpi::Set(num_pvars,
               static_cast<int>(category.performance_variables.size()));
  minimpi::Set(num_categories, 0);  // categories hold no categories
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_info)

int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (num_events == nullptr) return MPI_ERR_ARG;
  *num_events = static_cast<int>(category.events.size());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_num_events)

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || cat_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindCategory(name);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *cat_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_index)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(cat_index, len, indices,
                                &minimpi::tool::Category::control_variables);
}
MINIMPI_EXPORT(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(
      cat_index, len, indices, &minimpi::tool::Category::performance_variables);
}
MINIMPI_EXPORT(T_category_get_pvars)

int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(cat_index, len, indices,
                                &minimpi::tool::Category::events);
}
MINIMPI_EXPORT(T_category_get_events)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
  return MPI_SUCCESS;  // no subcategories
}
MINIMPI_EXPORT(T_category_get_categories)

int PMPI_T_category_changed(int* update_number) {
  MINIMPI_TOOL_CALL(call);
  if (update_number == nullptr) return MPI_ERR_ARG;
  *update_number = minimpi::tool::CategoryStamp();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_changed)

}  // extern "C"
