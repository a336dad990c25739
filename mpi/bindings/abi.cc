// The MPI-5 standard ABI's own calls (MPI-5.0 chapter 20): MPI_Abi_get_version
// and MPI_Abi_get_info, the Fortran queries, and MPI_<Handle>_toint /
// MPI_<Handle>_fromint. minimpi's mpi.h has every value of the standard ABI,
// so libmpi.so and libmpi_abi.so.1 are the same code; these calls are what a
// program built against the standard's header may call beyond MPI-4.1.
//
// toint / fromint give the integers c2f / f2c give (see
// mpi/objects/handle_conversion.h), so the two ways agree. minimpi has no files: a
// file handle's integer is its bits, which no call accepts but MPI_FILE_NULL.
//
// Owned by: mpi/bindings. Called by: programs.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/mpi.h"

using minimpi::CheckOutput;
using minimpi::RaiseError;

namespace {

// The Fortran booleans a program set (MPI_Abi_set_fortran_booleans), by
// LOGICAL size (1, 2, 4, 8 or 16 bytes). minimpi has no Fortran bindings,
// so it only remembers them for MPI_Abi_get_fortran_booleans.
struct FortranBooleans {
  bool is_set = false;
  unsigned char true_bytes[16];
  unsigned char false_bytes[16];
};

struct FortranBooleanTable {
  std::mutex mutex;
  FortranBooleans by_size[5];  // index log2(size)
};

FortranBooleanTable& Booleans() {
  static FortranBooleanTable* table = new FortranBooleanTable();
  return *table;
}

// The table index of a LOGICAL size, or -1 for a size Fortran has not.
int LogicalSizeIndex(int logical_size) {
  for (int index = 0; index < 5; ++index) {
    if (logical_size == 1 << index) return index;
  }
  return -1;
}

int CheckLogicalSize(const char* call, int logical_size) {
  if (LogicalSizeIndex(logical_size) >= 0) return MPI_SUCCESS;
  return RaiseError(nullptr, call, MPI_ERR_ARG,
                    absl::StrCat("invalid logical_size ", logical_size,
                                 " (must be 1, 2, 4, 8 or 16)"));
}

// The booleans of one LOGICAL size, copied out under the lock (errors are
// raised after it is released: a handler may call back into the library).
FortranBooleans BooleansOfSize(int logical_size) {
  FortranBooleanTable& table = Booleans();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.by_size[LogicalSizeIndex(logical_size)];
}

int CheckBooleanBuffers(const char* call, void* logical_true,
                        void* logical_false) {
  if (int error = CheckOutput(call, logical_true, "logical_true")) {
    return error;
  }
  return CheckOutput(call, logical_false, "logical_false");
}

}  // namespace

extern "C" {

int PMPI_Abi_get_version(int* abi_major, int* abi_minor) {
  constexpr const char* kCall = "MPI_Abi_get_version";
  if (int error = CheckOutput(kCall, abi_major, "abi_major")) return error;
  if (int error = CheckOutput(kCall, abi_minor, "abi_minor")) return error;
  *abi_major = MPI_ABI_VERSION;
  *abi_minor = MPI_ABI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Abi_get_info(MPI_Info* info) {
  constexpr const char* kCall = "MPI_Abi_get_info";
  if (int error = CheckOutput(kCall, info, "info")) return error;
  if (int error = PMPI_Info_create(info)) return error;
  const std::pair<const char*, size_t> sizes[] = {
      {"mpi_aint_size", sizeof(MPI_Aint)},
      {"mpi_count_size", sizeof(MPI_Count)},
      {"mpi_offset_size", sizeof(MPI_Offset)}};
  for (const auto& [key, size] : sizes) {
    if (int error = PMPI_Info_set(*info, key, absl::StrCat(size).c_str())) {
      return error;
    }
  }
  return MPI_SUCCESS;
}

int PMPI_Abi_get_fortran_info(MPI_Info* info) {
  constexpr const char* kCall = "MPI_Abi_get_fortran_info";
  if (int error = CheckOutput(kCall, info, "info")) return error;
  *info = MPI_INFO_NULL;  // no Fortran bindings
  return MPI_SUCCESS;
}

int PMPI_Abi_set_fortran_info(MPI_Info /*info*/) {
  return RaiseError(nullptr, "MPI_Abi_set_fortran_info", MPI_ERR_ABI,
                    "minimpi has no Fortran bindings to configure");
}

int PMPI_Abi_get_fortran_booleans(int logical_size, void* logical_true,
                                  void* logical_false, int* is_set) {
  constexpr const char* kCall = "MPI_Abi_get_fortran_booleans";
  if (int error = CheckLogicalSize(kCall, logical_size)) return error;
  if (int error = CheckOutput(kCall, is_set, "is_set")) return error;
  const FortranBooleans booleans = BooleansOfSize(logical_size);
  *is_set = booleans.is_set ? 1 : 0;
  if (!booleans.is_set) return MPI_SUCCESS;  // nothing to write
  if (int error = CheckBooleanBuffers(kCall, logical_true, logical_false)) {
    return error;
  }
  std::memcpy(logical_true, booleans.true_bytes, logical_size);
  std::memcpy(logical_false, booleans.false_bytes, logical_size);
  return MPI_SUCCESS;
}

int PMPI_Abi_set_fortran_booleans(int logical_size, void* logical_true,
                                  void* logical_false) {
  constexpr const char* kCall = "MPI_Abi_set_fortran_booleans";
  if (int error = CheckLogicalSize(kCall, logical_size)) return error;
  if (int error = CheckBooleanBuffers(kCall, logical_true, logical_false)) {
    return error;
  }
  FortranBooleans booleans;
  std::memcpy(booleans.true_bytes, logical_true, logical_size);
  std::memcpy(booleans.false_bytes, logical_false, logical_size);
  booleans.is_set = true;
  FortranBooleanTable& table = Booleans();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.by_size[LogicalSizeIndex(logical_size)] = booleans;
  return MPI_SUCCESS;
}

// toint / fromint are c2f / f2c under their MPI-5.0 names.
#define MINIMPI_TOINT_FROMINT(Kind, Handle)                                    \
  int PMPI_##Kind##_toint(Handle handle) { return PMPI_##Kind##_c2f(handle); } \
  Handle PMPI_##Kind##_fromint(int value) { return PMPI_##Kind##_f2c(value); }

MINIMPI_TOINT_FROMINT(Comm, MPI_Comm)
MINIMPI_TOINT_FROMINT(Errhandler, MPI_Errhandler)
MINIMPI_TOINT_FROMINT(Group, MPI_Group)
MINIMPI_TOINT_FROMINT(Info, MPI_Info)
MINIMPI_TOINT_FROMINT(Message, MPI_Message)
MINIMPI_TOINT_FROMINT(Op, MPI_Op)
MINIMPI_TOINT_FROMINT(Request, MPI_Request)
MINIMPI_TOINT_FROMINT(Session, MPI_Session)
MINIMPI_TOINT_FROMINT(Type, MPI_Datatype)
MINIMPI_TOINT_FROMINT(Win, MPI_Win)
#undef MINIMPI_TOINT_FROMINT

int PMPI_File_toint(MPI_File file) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(file));
}

MPI_File PMPI_File_fromint(int value) {
  return reinterpret_cast<MPI_File>(
      static_cast<uintptr_t>(static_cast<uint32_t>(value)));
}

}  // extern "C"

MINIMPI_EXPORT(Abi_get_version)
MINIMPI_EXPORT(Abi_get_info)
MINIMPI_EXPORT(Abi_get_fortran_info)
MINIMPI_EXPORT(Abi_set_fortran_info)
MINIMPI_EXPORT(Abi_get_fortran_booleans)
MINIMPI_EXPORT(Abi_set_fortran_booleans)
MINIMPI_EXPORT(Comm_toint)
MINIMPI_EXPORT(Comm_fromint)
MINIMPI_EXPORT(Errhandler_toint)
MINIMPI_EXPORT(Errhandler_fromint)
MINIMPI_EXPORT(File_toint)
MINIMPI_EXPORT(File_fromint)
MINIMPI_EXPORT(Group_toint)
MINIMPI_EXPORT(Group_fromint)
MINIMPI_EXPORT(Info_toint)
MINIMPI_EXPORT(Info_fromint)
MINIMPI_EXPORT(Message_toint)
MINIMPI_EXPORT(Message_fromint)
MINIMPI_EXPORT(Op_toint)
MINIMPI_EXPORT(Op_fromint)
MINIMPI_EXPORT(Request_toint)
MINIMPI_EXPORT(Request_fromint)
MINIMPI_EXPORT(Session_toint)
MINIMPI_EXPORT(Session_fromint)
MINIMPI_EXPORT(Type_toint)
MINIMPI_EXPORT(Type_fromint)
MINIMPI_EXPORT(Win_toint)
MINIMPI_EXPORT(Win_fromint)
