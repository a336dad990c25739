#include "mpi/bindings/datatype_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/error_dispatch.h"
#include "mpi/bindings/object_handles.h"

namespace minimpi {

int DatatypeError(const char* call, MPI_Datatype handle, const char* what) {
  return RaiseError(nullptr, call, MPI_ERR_TYPE,
                    absl::StrCat("invalid ", what,
                                 handle == MPI_DATATYPE_NULL
                                     ? " (MPI_DATATYPE_NULL)"
                                     : " (freed, or never a datatype)"));
}

int NullPointerError(const char* call, const char* what) {
  return RaiseError(nullptr, call, MPI_ERR_ARG,
                    absl::StrCat(what, " is a null pointer"));
}

int CheckCount(const char* call, int64_t count, const char* what) {
  if (count >= 0) [[likely]]
    return MPI_SUCCESS;
  return RaiseError(nullptr, call, MPI_ERR_COUNT,
                    absl::StrFormat("invalid %s %d", what, count));
}

int CheckNotNegative(const char* call, int64_t value, const char* what) {
  if (value >= 0) [[likely]]
    return MPI_SUCCESS;
  return RaiseError(nullptr, call, MPI_ERR_ARG,
                    absl::StrFormat("invalid %s %d", what, value));
}

int CheckArray(const char* call, const void* array, int64_t count,
               const char* what) {
  if (array != nullptr || count <= 0) [[likely]]
    return MPI_SUCCESS;
  return RaiseError(
      nullptr, call, MPI_ERR_ARG,
      absl::StrFormat("%s is a null pointer (%d entries)", what, count));
}

template <typename T>
int CheckEntriesNotNegative(const char* call, const T* array, int64_t count,
                            const char* what) {
  for (int64_t i = 0; i < count; ++i) {
    if (array[i] < 0) [[unlikely]] {
      return RaiseError(nullptr, call, MPI_ERR_ARG,
                        absl::StrFormat("invalid %s[%d] %d", what, i,
                                        static_cast<int64_t>(array[i])));
    }
  }
  return MPI_SUCCESS;
}

template int CheckEntriesNotNegative<int>(const char*, const int*, int64_t,
                                          const char*);
template int CheckEntriesNotNegative<int64_t>(const char*, const int64_t*,
                                              int64_t, const char*);

}  // namespace minimpi
