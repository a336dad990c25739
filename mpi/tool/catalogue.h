// Reading the catalogue that registry.h fills: what mpi/bindings/tool.cc
// (the MPI_T_* calls) and the unit tests look up by index or name. Indices
// are positions in registration order and never change; entries are never
// removed, so a returned reference stays valid for the life of the process.
//
// Owned by: mpi/tool. Called by: mpi/bindings/tool.cc, tests.
#ifndef MINIMPI_MPI_TOOL_CATALOGUE_H_
#define MINIMPI_MPI_TOOL_CATALOGUE_H_

#include <string>
#include <string_view>
#include <vector>

#include "mpi/tool/registry.h"

namespace minimpi::tool {

int NumPerformanceVariables();
const PerformanceVariable& PerformanceVariableAt(int index);
// The index of the variable with this name and class, or -1.
int FindPerformanceVariable(std::string_view name, int var_class);

int NumEventTypes();
const EventType& EventTypeAt(int index);
Event* EventAt(int index);
// The index of the event type with this name, or -1.
int FindEventType(std::string_view name);

// The writer a setting registered, or nullptr (the setting is fixed once
// MPI_Init has read it).
const ControlVariableWriter* FindControlVariableWriter(std::string_view name);

// A category (MPI-4.1 15.3.9): made on first use by a registration naming
// it. Control variables are numbered by the bindings (runtime/settings'
// order), which file them here with AddControlVariableToCategory.
struct Category {
  std::string name;
  std::string description;
  std::vector<int> control_variables;
  std::vector<int> performance_variables;
  std::vector<int> events;
};
void AddControlVariableToCategory(std::string_view category, int cvar_index);
int NumCategories();
// A copy: a category's lists grow while a tool reads them.
Category CategoryAt(int index);
int FindCategory(std::string_view name);
// Changes whenever a category is added or gains a member
// (MPI_T_category_changed).
int CategoryStamp();

// The size in bytes of a predefined type an event element may have
// (MPI_INT, MPI_UNSIGNED_LONG_LONG, MPI_DOUBLE, ...); 0 for any other.
size_t ElementSize(MPI_Datatype type);

}  // namespace minimpi::tool

#endif  // MINIMPI_MPI_TOOL_CATALOGUE_H_
