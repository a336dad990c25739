// The MPI_T event calls (MPI-4.1 15.3.8): the one event source (the steady
// clock), event types, registrations, callbacks and the instances a
// callback reads, over mpi/tool/events.h. The state and the entry every
// call makes are tool.cc's (tool_state.h).
#include <cstdint>
#include <cstring>
#include <memory>

#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/tool_state.h"
#include "mpi/mpi.h"
#include "mpi/tool/catalogue.h"
#include "mpi/tool/events.h"
#include "mpi/tool/registry.h"

namespace minimpi {
using mpit::BoundObject;
using mpit::LookupRegistration;
using mpit::ReturnString;
using mpit::Set;
}  // namespace minimpi

extern "C" {

// ---- Event sources (15.3.8): one, the steady clock ----

int PMPI_T_source_get_num(int* num_sources) {
  MINIMPI_TOOL_CALL(call);
  if (num_sources == nullptr) return MPI_ERR_ARG;
  *num_sources = 1;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_num)

int PMPI_T_source_get_info(int source_index, char* name, int* name_len,
                           char* desc, int* desc_len,
                           MPI_T_source_order* ordering,
                           MPI_Count* ticks_per_second, MPI_Count* max_ticks,
                           MPI_Info* info) {
  MINIMPI_TOOL_CALL(call);
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  minimpi::ReturnString("steady_clock", name, name_len);
  minimpi::ReturnString(
      "the process's monotonic clock in nanoseconds; every event of this "
      "process is stamped by it",
      desc, desc_len);
  minimpi::Set(ordering, MPI_T_SOURCE_ORDERED);
  minimpi::Set(ticks_per_second, static_cast<MPI_Count>(1000000000));
  minimpi::Set(max_ticks, static_cast<MPI_Count>(INT64_MAX));
  minimpi::Set(info, MPI_INFO_NULL);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  MINIMPI_TOOL_CALL(call);
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (timestamp == nullptr) return MPI_ERR_ARG;
  *timestamp = minimpi::tool::EventTimestampNow();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_timestamp)

// ---- Events (15.3.8) ----

int PMPI_T_event_get_num(int* num_events) {
  MINIMPI_TOOL_CALL(call);
  if (num_events == nullptr) return MPI_ERR_ARG;
  *num_events = minimpi::tool::NumEventTypes();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_num)

int PMPI_T_event_get_info(int event_index, char* name, int* name_len,
                          int* verbosity, MPI_Datatype array_of_datatypes[],
                          MPI_Aint array_of_displacements[], int* num_elements,
                          MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                          int* desc_len, int* bind) {
  MINIMPI_TOOL_CALL(call);
  if (event_index < 0 || event_index >= minimpi::tool::NumEventTypes()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(event_index);
  minimpi::ReturnString(type.name, name, name_len);
  minimpi::Set(verbosity, type.verbosity);
  // num_elements is in (the arrays' room) and out (the element count).
  const int elements = static_cast<int>(type.elements.size());
  if (num_elements != nullptr) {
    const int room = std::min(*num_elements, elements);
    for (int i = 0; i < room; ++i) {
      if (array_of_datatypes != nullptr) {
        array_of_datatypes[i] = type.elements[i].type;
      }
      if (array_of_displacements != nullptr) {
        array_of_displacements[i] =
            static_cast<MPI_Aint>(type.elements[i].offset);
      }
    }
    *num_elements = elements;
  }
  minimpi::Set(enumtype, MPI_T_ENUM_NULL);
  minimpi::Set(info, MPI_INFO_NULL);
  std::string described = type.description;
  for (const auto& element : type.elements) {
    absl::StrAppend(&described, described == type.description ? " [" : ", ",
                    element.name);
  }
  if (!type.elements.empty()) described += "]";
  minimpi::ReturnString(described, desc, desc_len);
  minimpi::Set(bind, static_cast<int>(type.binding));
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_info)

int PMPI_T_event_get_index(const char* name, int* event_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || event_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindEventType(name);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *event_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_index)

int PMPI_T_event_handle_alloc(int event_index, void* obj_handle,
                              MPI_Info /*info*/,
                              MPI_T_event_registration* event_registration) {
  MINIMPI_TOOL_CALL(call);
  if (event_index < 0 || event_index >= minimpi::tool::NumEventTypes()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (event_registration == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(event_index);
  const void* object = nullptr;
  if (type.binding != minimpi::tool::Binding::kNoObject) {
    if (obj_handle == nullptr) return MPI_ERR_ARG;
    object = minimpi::BoundObject(type.binding, obj_handle);
    if (object == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  }
  auto made = minimpi::tool::AddEventRegistration(event_index, object);
  s.registrations[made.get()] = made;
  *event_registration = reinterpret_cast<MPI_T_event_registration>(made.get());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_alloc)

// No info keys are defined for registrations or callbacks: set_info
// accepts any info and get_info returns an empty one.
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration,
                                 MPI_Info /*info*/) {
  MINIMPI_TOOL_CALL(call);
  if (minimpi::LookupRegistration(s, event_registration) == nullptr) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info* info_used) {
  MINIMPI_TOOL_CALL(call);
  if (minimpi::LookupRegistration(s, event_registration) == nullptr) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  if (info_used == nullptr) return MPI_ERR_ARG;
  return PMPI_Info_create(info_used);
}
MINIMPI_EXPORT(T_event_handle_get_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info /*info*/,
                                   void* user_data,
                                   MPI_T_event_cb_function* event_cb_function) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (!found->SetCallback(cb_safety, event_cb_function, user_data)) {
    return MPI_ERR_ARG;
  }
  minimpi::tool::UpdateEventListeners(found->event_index());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety,
                                   MPI_Info /*info*/) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (minimpi::tool::SafetySlot(cb_safety) < 0) return MPI_ERR_ARG;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety,
                                   MPI_Info* info_used) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (minimpi::tool::SafetySlot(cb_safety) < 0 || info_used == nullptr) {
    return MPI_ERR_ARG;
  }
  return PMPI_Info_create(info_used);
}
MINIMPI_EXPORT(T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration,
                             void* user_data,
                             MPI_T_event_free_cb_function* free_cb_function) {
  std::shared_ptr<minimpi::tool::EventRegistration> freed;
  {
    MINIMPI_TOOL_CALL(call);
    auto it = s.registrations.find(
        reinterpret_cast<minimpi::tool::EventRegistration*>(
            event_registration));
    if (it == s.registrations.end()) return MPI_T_ERR_INVALID_HANDLE;
    freed = std::move(it->second);
    s.registrations.erase(it);
  }
  // Outside the lock: the free callback (run when the last reference
  // goes, here unless a callback is running) may call MPI_T.
  freed->SetFreeCallback(free_cb_function, user_data);
  minimpi::tool::RemoveEventRegistration(freed);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_free)

int PMPI_T_event_set_dropped_handler(
    MPI_T_event_registration event_registration,
    MPI_T_event_dropped_cb_function* dropped_cb_function) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  found->SetDroppedHandler(dropped_cb_function);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_set_dropped_handler)

// The instance calls are valid only inside the callback given the
// instance, on its thread: no lock (a thread-safe callback may run with a
// data path's locks held), only this thread's list of running instances.
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index,
                      void* buffer) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(instance->event_index);
  if (element_index < 0 ||
      element_index >= static_cast<int>(type.elements.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (buffer == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::EventElement& element = type.elements[element_index];
  std::memcpy(buffer, instance->payload + element.offset,
              minimpi::tool::ElementSize(element.type));
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (buffer == nullptr) return MPI_ERR_ARG;
  std::memcpy(buffer, instance->payload,
              minimpi::tool::EventTypeAt(instance->event_index).payload_bytes);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
                               MPI_Count* event_timestamp) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (event_timestamp == nullptr) return MPI_ERR_ARG;
  *event_timestamp = instance->timestamp_ns;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance,
                            int* source_index) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (source_index == nullptr) return MPI_ERR_ARG;
  *source_index = 0;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_source)

}  // extern "C"
