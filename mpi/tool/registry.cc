// The catalogue: registrations append under one mutex to deques (entries
// never move, so references handed out stay valid), and lookups take the
// same mutex. None of this is on a data path: modules register once and
// tools look things up through MPI_T calls.
#include "mpi/tool/registry.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "mpi/tool/catalogue.h"

namespace minimpi::tool {
namespace {

struct EventEntry {
  explicit EventEntry(EventType t) : type(std::move(t)) {}
  EventType type;
  Event event;
};

struct Catalogue {
  std::mutex mutex;
  std::deque<PerformanceVariable> performance_variables;
  std::deque<EventEntry> events;
  std::map<std::string, ControlVariableWriter, std::less<>> writers;
  std::deque<Category> categories;
  int category_stamp = 0;
};

Catalogue& TheCatalogue() {
  // Never destroyed: modules' static destructors may still look it up.
  static Catalogue* catalogue = new Catalogue;
  return *catalogue;
}

[[noreturn]] void RegistrationError(const std::string& what) {
  std::fprintf(stderr, "minimpi: MPI_T catalogue: %s\n", what.c_str());
  std::abort();
}

// The category named `name`, made on first use. An empty name files the
// member under no category.
Category* CategoryNamed(Catalogue& c, std::string_view name) {
  if (name.empty()) return nullptr;
  for (Category& category : c.categories) {
    if (category.name == name) return &category;
  }
  Category& made = c.categories.emplace_back();
  made.name = std::string(name);
  made.description = "minimpi's " + made.name + " variables and events";
  return &made;
}

bool IsInstantaneousClass(int var_class) {
  return var_class == MPI_T_PVAR_CLASS_STATE ||
         var_class == MPI_T_PVAR_CLASS_LEVEL ||
         var_class == MPI_T_PVAR_CLASS_SIZE ||
         var_class == MPI_T_PVAR_CLASS_PERCENTAGE ||
         var_class == MPI_T_PVAR_CLASS_GENERIC;
}

}  // namespace

int RegisterPerformanceVariable(PerformanceVariable variable) {
  if (variable.var_class < MPI_T_PVAR_CLASS_STATE ||
      variable.var_class > MPI_T_PVAR_CLASS_GENERIC) {
    RegistrationError("performance variable " + variable.name +
                      " has no valid class");
  }
  if (!variable.read) {
    RegistrationError("performance variable " + variable.name +
                      " has no read function");
  }
  // A tool's write to a level or state would have to change the module's
  // own value, which no module offers: only handle-relative classes
  // (counters, timers, aggregates, watermarks) are writable.
  if (IsInstantaneousClass(variable.var_class)) variable.readonly = true;
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const PerformanceVariable& known : c.performance_variables) {
    if (known.name == variable.name && known.var_class == variable.var_class) {
      RegistrationError("performance variable " + variable.name +
                        " registered twice");
    }
  }
  const int index = static_cast<int>(c.performance_variables.size());
  if (Category* category = CategoryNamed(c, variable.category)) {
    category->performance_variables.push_back(index);
  }
  ++c.category_stamp;
  c.performance_variables.push_back(std::move(variable));
  return index;
}

Event* RegisterEventType(EventType type) {
  for (const EventElement& element : type.elements) {
    if (ElementSize(element.type) == 0 ||
        element.offset + ElementSize(element.type) > type.payload_bytes) {
      RegistrationError("event " + type.name + ": element " + element.name +
                        " has an unsupported type or lies past the payload");
    }
  }
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const EventEntry& known : c.events) {
    if (known.type.name == type.name) {
      RegistrationError("event " + type.name + " registered twice");
    }
  }
  const int index = static_cast<int>(c.events.size());
  if (Category* category = CategoryNamed(c, type.category)) {
    category->events.push_back(index);
  }
  ++c.category_stamp;
  EventEntry& entry = c.events.emplace_back(std::move(type));
  entry.event.set_index(index);
  return &entry.event;
}

void RegisterControlVariableWriter(ControlVariableWriter writer) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::string name = writer.name;
  c.writers.insert_or_assign(std::move(name), std::move(writer));
}

int NumPerformanceVariables() {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int>(c.performance_variables.size());
}

const PerformanceVariable& PerformanceVariableAt(int index) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.performance_variables.at(index);
}

int FindPerformanceVariable(std::string_view name, int var_class) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (size_t i = 0; i < c.performance_variables.size(); ++i) {
    const PerformanceVariable& v = c.performance_variables[i];
    if (v.name == name && v.var_class == var_class) return static_cast<int>(i);
  }
  return -1;
}

int NumEventTypes() {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int>(c.events.size());
}

const EventType& EventTypeAt(int index) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.events.at(index).type;
}

Event* EventAt(int index) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return &c.events.at(index).event;
}

int FindEventType(std::string_view name) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (size_t i = 0; i < c.events.size(); ++i) {
    if (c.events[i].type.name == name) return static_cast<int>(i);
  }
  return -1;
}

const ControlVariableWriter* FindControlVariableWriter(std::string_view name) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.writers.find(name);
  return it == c.writers.end() ? nullptr : &it->second;
}

void AddControlVariableToCategory(std::string_view category, int cvar_index) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (Category* made = CategoryNamed(c, category)) {
    made->control_variables.push_back(cvar_index);
    ++c.category_stamp;
  }
}

int NumCategories() {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int>(c.categories.size());
}

Category CategoryAt(int index) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.categories.at(index);
}

int FindCategory(std::string_view name) {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (size_t i = 0; i < c.categories.size(); ++i) {
    if (c.categories[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int CategoryStamp() {
  Catalogue& c = TheCatalogue();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.category_stamp;
}

size_t ElementSize(MPI_Datatype type) {
  if (type == MPI_CHAR) return 1;
  if (type == MPI_INT || type == MPI_UNSIGNED || type == MPI_INT32_T ||
      type == MPI_UINT32_T) {
    return 4;
  }
  if (type == MPI_UNSIGNED_LONG_LONG || type == MPI_LONG_LONG ||
      type == MPI_INT64_T || type == MPI_UINT64_T || type == MPI_DOUBLE ||
      type == MPI_COUNT || type == MPI_AINT) {
    return 8;
  }
  return 0;
}

}  // namespace minimpi::tool
