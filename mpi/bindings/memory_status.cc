// MPI_Alloc_mem / MPI_Free_mem, and the status setters and getters that
// generalized requests and layered libraries use (MPI_Status_set_elements,
// _set_cancelled, and MPI-4.1's _set/_get_source, _tag, _error).
//
// Alloc_mem remembers what it handed out, so MPI_Free_mem of anything else
// is MPI_ERR_BASE instead of a crash. Status_set_elements stores the packed
// bytes that hold `count` basic elements of the datatype (predefined or
// derived), so MPI_Get_elements returns exactly `count` afterwards.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/datatype/predefined.h"

using minimpi::RaiseError;

namespace {

struct Allocations {
  std::mutex mutex;
  absl::flat_hash_set<void*> live;  // guarded by mutex
};

Allocations& LiveAllocations() {
  static auto* allocations = new Allocations();  // never destroyed
  return *allocations;
}

int CheckStatus(const char* call, const MPI_Status* status) {
  if (status != nullptr) return MPI_SUCCESS;
  // MPI_STATUS_IGNORE is a null pointer: no status to set or read.
  return RaiseError(nullptr, call, MPI_ERR_ARG,
                    "null status (MPI_STATUS_IGNORE is not a status)");
}

// The packed bytes that hold the first `count` basic elements of items of
// `type` (the inverse of MPI_Get_elements): whole items, then the type
// signature entry by entry, and inside a pair type the value member alone.
// -1 when the type holds no data but elements were asked for.
int64_t BytesForElements(const minimpi::Datatype& type, int64_t count) {
  const minimpi::datatype::Layout& layout = type.layout();
  if (layout.basic_elements() == 0) return count == 0 ? 0 : -1;
  int64_t bytes = count / layout.basic_elements() * layout.size();
  int64_t rest = count % layout.basic_elements();
  for (const minimpi::datatype::SignatureRun& run : layout.signature()) {
    if (rest == 0) break;
    const minimpi::datatype::PredefinedType& basic =
        *minimpi::datatype::FindPredefined(run.basic);
    const int64_t per_entry = basic.basic_elements();
    const int64_t whole = std::min(rest / per_entry, run.count);
    bytes += whole * basic.size;
    rest -= whole * per_entry;
    if (whole < run.count && rest > 0) {
      // Part of a pair: its value member is one basic element.
      bytes += static_cast<int64_t>(basic.members[0].native_size) *
               basic.members[0].components;
      rest = 0;
    }
  }
  return bytes;
}

int SetElements(const char* call, MPI_Status* status, MPI_Datatype datatype,
                MPI_Count count) {
  if (int error = CheckStatus(call, status)) return error;
  const minimpi::Datatype* type = minimpi::LookupDatatype(datatype);
  if (type == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_TYPE,
                      datatype == MPI_DATATYPE_NULL
                          ? "invalid datatype (MPI_DATATYPE_NULL)"
                          : "invalid datatype (freed or never created)");
  }
  if (count < 0) {
    return RaiseError(nullptr, call, MPI_ERR_COUNT,
                      absl::StrFormat("invalid count %d", count));
  }
  const int64_t bytes = BytesForElements(*type, count);
  if (bytes < 0) {
    return RaiseError(nullptr, call, MPI_ERR_TYPE,
                      absl::StrFormat("%d elements of a datatype that holds "
                                      "no data",
                                      count));
  }
  minimpi::SetStatusBytes(status, static_cast<uint64_t>(bytes));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  MINIMPI_REQUIRE_INIT("MPI_Alloc_mem");
  constexpr const char* kCall = "MPI_Alloc_mem";
  if (size < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_SIZE,
                      absl::StrFormat("invalid size %d", size));
  }
  minimpi::Info* hints;
  if (int error = minimpi::CheckInfo(kCall, nullptr, info, true, &hints)) {
    return error;
  }
  if (baseptr == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "baseptr");
  }
  // Cache-line aligned, and never null (size 0 still gets its own block).
  const size_t rounded = (static_cast<size_t>(size) + 63) / 64 * 64;
  void* memory = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (memory == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_NO_MEM,
                      absl::StrFormat("cannot allocate %d bytes", size));
  }
  {
    Allocations& allocations = LiveAllocations();
    std::lock_guard<std::mutex> lock(allocations.mutex);
    allocations.live.insert(memory);
  }
  // baseptr is really the address of a pointer.
  *static_cast<void**>(baseptr) = memory;
  return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
  MINIMPI_REQUIRE_INIT("MPI_Free_mem");
  if (base == nullptr) return MPI_SUCCESS;  // nothing was allocated there
  {
    Allocations& allocations = LiveAllocations();
    std::lock_guard<std::mutex> lock(allocations.mutex);
    if (allocations.live.erase(base) == 0) {
      return RaiseError(nullptr, "MPI_Free_mem", MPI_ERR_BASE,
                        "not memory from MPI_Alloc_mem (or freed already)");
    }
  }
  std::free(base);
  return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype,
                             int count) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_elements");
  return SetElements("MPI_Status_set_elements", status, datatype, count);
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                               MPI_Count count) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_elements_x");
  return SetElements("MPI_Status_set_elements_x", status, datatype, count);
}

int PMPI_Status_set_elements_c(MPI_Status* status, MPI_Datatype datatype,
                               MPI_Count count) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_elements_c");
  return SetElements("MPI_Status_set_elements_c", status, datatype, count);
}

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_cancelled");
  if (int error = CheckStatus("MPI_Status_set_cancelled", status)) {
    return error;
  }
  status->MPI_internal[2] = flag ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Status_set_source(MPI_Status* status, int source) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_source");
  if (int error = CheckStatus("MPI_Status_set_source", status)) return error;
  status->MPI_SOURCE = source;
  return MPI_SUCCESS;
}

int PMPI_Status_set_tag(MPI_Status* status, int tag) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_tag");
  if (int error = CheckStatus("MPI_Status_set_tag", status)) return error;
  status->MPI_TAG = tag;
  return MPI_SUCCESS;
}

int PMPI_Status_set_error(MPI_Status* status, int error_code) {
  MINIMPI_REQUIRE_INIT("MPI_Status_set_error");
  if (int error = CheckStatus("MPI_Status_set_error", status)) return error;
  status->MPI_ERROR = error_code;
  return MPI_SUCCESS;
}

int PMPI_Status_get_source(const MPI_Status* status, int* source) {
  MINIMPI_REQUIRE_INIT("MPI_Status_get_source");
  if (int error = CheckStatus("MPI_Status_get_source", status)) return error;
  if (source == nullptr) {
    return minimpi::NullArgument("MPI_Status_get_source", nullptr, "source");
  }
  *source = status->MPI_SOURCE;
  return MPI_SUCCESS;
}

int PMPI_Status_get_tag(const MPI_Status* status, int* tag) {
  MINIMPI_REQUIRE_INIT("MPI_Status_get_tag");
  if (int error = CheckStatus("MPI_Status_get_tag", status)) return error;
  if (tag == nullptr) {
    return minimpi::NullArgument("MPI_Status_get_tag", nullptr, "tag");
  }
  *tag = status->MPI_TAG;
  return MPI_SUCCESS;
}

int PMPI_Status_get_error(const MPI_Status* status, int* error_code) {
  MINIMPI_REQUIRE_INIT("MPI_Status_get_error");
  if (int error = CheckStatus("MPI_Status_get_error", status)) return error;
  if (error_code == nullptr) {
    return minimpi::NullArgument("MPI_Status_get_error", nullptr, "error");
  }
  *error_code = status->MPI_ERROR;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Alloc_mem)
MINIMPI_EXPORT(Free_mem)
MINIMPI_EXPORT(Status_set_elements)
MINIMPI_EXPORT(Status_set_elements_x)
MINIMPI_EXPORT(Status_set_elements_c)
MINIMPI_EXPORT(Status_set_cancelled)
MINIMPI_EXPORT(Status_set_source)
MINIMPI_EXPORT(Status_set_tag)
MINIMPI_EXPORT(Status_set_error)
MINIMPI_EXPORT(Status_get_source)
MINIMPI_EXPORT(Status_get_tag)
MINIMPI_EXPORT(Status_get_error)
