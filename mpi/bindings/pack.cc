// Packing (MPI-4.1 sections 5.2 and 5.3): MPI_Pack, MPI_Unpack,
// MPI_Pack_size and their external32 twins, each with its _c form.
//
// minimpi's packed form is the data itself, no header: count items take
// exactly count * size bytes, so MPI_Pack_size is exact and a packing unit
// is interchangeable with a message of the same signature. The external32
// form is the standard's big-endian representation (datatype/external32.h).
//
// `position` semantics: the data goes to (or comes from) the buffer at
// *position, which then moves past it. A buffer with too little room from
// *position is MPI_ERR_TRUNCATE (the class Open MPI gives; the standard
// names none), and nothing is written then; a negative position or size is
// MPI_ERR_ARG.
#include "mpi/datatype/pack.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/datatype/external32.h"

using minimpi::Communicator;
using minimpi::Datatype;
using minimpi::RaiseError;
namespace datatype = minimpi::datatype;

namespace {

// count * item_bytes, or -1 when that does not fit in 63 bits.
int64_t TotalBytes(int64_t count, int64_t item_bytes) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, item_bytes, &bytes)) return -1;
  return bytes;
}

// The buffer side of MPI_Pack/MPI_Unpack and their external twins: a
// buffer of `size` bytes and a position in it that `bytes` more must fit
// after. `comm` is null for the external calls, which name none.
template <typename Position>
int CheckRoom(const char* call, Communicator* comm, const void* buffer,
              int64_t size, const Position* position, int64_t bytes,
              const char* buffer_name, const char* size_name) {
  if (position == nullptr) {
    return RaiseError(comm, call, MPI_ERR_ARG, "position is a null pointer");
  }
  if (size < 0) {
    return RaiseError(comm, call, MPI_ERR_ARG,
                      absl::StrFormat("invalid %s %d", size_name, size));
  }
  const int64_t at = *position;
  if (at < 0) {
    return RaiseError(comm, call, MPI_ERR_ARG,
                      absl::StrFormat("invalid position %d", at));
  }
  if (bytes < 0 || at > size || size - at < bytes) {
    return RaiseError(
        comm, call, MPI_ERR_TRUNCATE,
        bytes < 0 ? std::string("the data's size overflows 64 bits")
                  : absl::StrFormat("%d bytes do not fit at position %d of "
                                    "%s (%s %d)",
                                    bytes, at, buffer_name, size_name, size));
  }
  if (buffer == nullptr && bytes > 0) {
    return RaiseError(comm, call, MPI_ERR_BUFFER,
                      absl::StrFormat("%s is a null pointer", buffer_name));
  }
  return MPI_SUCCESS;
}

template <typename Count>
int Pack(const char* call, const void* inbuf, Count incount,
         MPI_Datatype datatype, void* outbuf, Count outsize, Count* position,
         MPI_Comm comm) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (int error =
          minimpi::CheckBuffer(call, c, inbuf, incount, datatype, &type)) {
    return error;
  }
  const int64_t bytes = TotalBytes(incount, type->size());
  if (int error = CheckRoom(call, c, outbuf, outsize, position, bytes, "outbuf",
                            "outsize")) {
    return error;
  }
  datatype::Pack(inbuf, incount, &type->layout(), 0,
                 static_cast<char*>(outbuf) + *position, bytes);
  *position += static_cast<Count>(bytes);
  return MPI_SUCCESS;
}

template <typename Count>
int Unpack(const char* call, const void* inbuf, Count insize, Count* position,
           void* outbuf, Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (int error =
          minimpi::CheckBuffer(call, c, outbuf, outcount, datatype, &type)) {
    return error;
  }
  const int64_t bytes = TotalBytes(outcount, type->size());
  if (int error = CheckRoom(call, c, inbuf, insize, position, bytes, "inbuf",
                            "insize")) {
    return error;
  }
  datatype::Unpack(static_cast<const char*>(inbuf) + *position, bytes, outbuf,
                   outcount, &type->layout(), 0);
  *position += static_cast<Count>(bytes);
  return MPI_SUCCESS;
}

template <typename Count>
int PackSize(const char* call, Count incount, MPI_Datatype datatype,
             MPI_Comm comm, Count* size) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (int error = minimpi::CheckCount(call, incount, "incount")) return error;
  if (int error = minimpi::CheckDatatype(call, datatype, "datatype", &type)) {
    return error;
  }
  if (int error = minimpi::CheckOutput(call, size, "size")) return error;
  // Exact: the packed form has no header. A size the output cannot hold is
  // MPI_UNDEFINED (MPI-4.1 section 5.2).
  const int64_t bytes = TotalBytes(incount, type->size());
  if constexpr (std::is_same_v<Count, int>) {
    *size = bytes < 0 ? MPI_UNDEFINED : minimpi::ClampToInt(bytes);
  } else {
    *size = bytes < 0 ? int64_t{MPI_UNDEFINED} : bytes;
  }
  return MPI_SUCCESS;
}

// "external32" is the one data representation MPI-4.1 defines for these
// calls; anything else is MPI_ERR_ARG.
int CheckDatarep(const char* call, const char* datarep) {
  if (datarep == nullptr) return minimpi::NullPointerError(call, "datarep");
  if (std::strcmp(datarep, "external32") == 0) [[likely]]
    return MPI_SUCCESS;
  return RaiseError(
      nullptr, call, MPI_ERR_ARG,
      absl::StrFormat("unsupported data representation \"%.64s\" (only "
                      "\"external32\")",
                      datarep));
}

// Both arguments are MPI_Aint in the int form and MPI_Count in the _c form;
// on this ABI they are one type.
template <typename Count>
int PackExternal(const char* call, const char* datarep, const void* inbuf,
                 Count incount, MPI_Datatype datatype, void* outbuf,
                 MPI_Count outsize, MPI_Count* position) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = CheckDatarep(call, datarep)) return error;
  if (int error = minimpi::CheckBuffer(call, nullptr, inbuf, incount, datatype,
                                       &type)) {
    return error;
  }
  const int64_t bytes = TotalBytes(incount, type->layout().external32_size());
  if (int error = CheckRoom(call, nullptr, outbuf, outsize, position, bytes,
                            "outbuf", "outsize")) {
    return error;
  }
  int64_t at = *position;
  const absl::Status status = datatype::PackExternal32(
      inbuf, incount, &type->layout(), outbuf, outsize, &at);
  if (!status.ok()) {  // CheckRoom made sure it fits: not expected
    return RaiseError(nullptr, call, MPI_ERR_TRUNCATE,
                      std::string(status.message()));
  }
  *position = at;
  return MPI_SUCCESS;
}

template <typename Count>
int UnpackExternal(const char* call, const char* datarep, const void* inbuf,
                   MPI_Count insize, MPI_Count* position, void* outbuf,
                   Count outcount, MPI_Datatype datatype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = CheckDatarep(call, datarep)) return error;
  if (int error = minimpi::CheckBuffer(call, nullptr, outbuf, outcount,
                                       datatype, &type)) {
    return error;
  }
  const int64_t bytes = TotalBytes(outcount, type->layout().external32_size());
  if (int error = CheckRoom(call, nullptr, inbuf, insize, position, bytes,
                            "inbuf", "insize")) {
    return error;
  }
  int64_t at = *position;
  const absl::Status status = datatype::UnpackExternal32(
      inbuf, insize, &at, outbuf, outcount, &type->layout());
  if (!status.ok()) {
    return RaiseError(nullptr, call, MPI_ERR_TRUNCATE,
                      std::string(status.message()));
  }
  *position = at;
  return MPI_SUCCESS;
}

template <typename Count>
int PackExternalSize(const char* call, const char* datarep, Count incount,
                     MPI_Datatype datatype, MPI_Count* size) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = CheckDatarep(call, datarep)) return error;
  if (int error = minimpi::CheckCount(call, incount, "incount")) return error;
  if (int error = minimpi::CheckDatatype(call, datatype, "datatype", &type)) {
    return error;
  }
  if (int error = minimpi::CheckOutput(call, size, "size")) return error;
  const int64_t bytes = TotalBytes(incount, type->layout().external32_size());
  if (bytes < 0) {
    return RaiseError(nullptr, call, MPI_ERR_COUNT,
                      absl::StrFormat("incount %d makes more external32 "
                                      "bytes than 64 bits can count",
                                      static_cast<int64_t>(incount)));
  }
  *size = bytes;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype,
              void* outbuf, int outsize, int* position, MPI_Comm comm) {
  return Pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position,
              comm);
}

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                void* outbuf, MPI_Count outsize, MPI_Count* position,
                MPI_Comm comm) {
  return Pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position,
              comm);
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  return Unpack("MPI_Unpack", inbuf, insize, position, outbuf, outcount,
                datatype, comm);
}

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position,
                  void* outbuf, MPI_Count outcount, MPI_Datatype datatype,
                  MPI_Comm comm) {
  return Unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount,
                datatype, comm);
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                   int* size) {
  return PackSize("MPI_Pack_size", incount, datatype, comm, size);
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                     MPI_Count* size) {
  return PackSize("MPI_Pack_size_c", incount, datatype, comm, size);
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount,
                       MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                       MPI_Aint* position) {
  return PackExternal("MPI_Pack_external", datarep, inbuf, incount, datatype,
                      outbuf, outsize, position);
}

int PMPI_Pack_external_c(const char datarep[], const void* inbuf,
                         MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                         MPI_Count outsize, MPI_Count* position) {
  return PackExternal("MPI_Pack_external_c", datarep, inbuf, incount, datatype,
                      outbuf, outsize, position);
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf,
                         MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  return UnpackExternal("MPI_Unpack_external", datarep, inbuf, insize, position,
                        outbuf, outcount, datatype);
}

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf,
                           MPI_Count insize, MPI_Count* position, void* outbuf,
                           MPI_Count outcount, MPI_Datatype datatype) {
  return UnpackExternal("MPI_Unpack_external_c", datarep, inbuf, insize,
                        position, outbuf, outcount, datatype);
}

int PMPI_Pack_external_size(const char datarep[], int incount,
                            MPI_Datatype datatype, MPI_Aint* size) {
  return PackExternalSize("MPI_Pack_external_size", datarep, incount, datatype,
                          size);
}

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount,
                              MPI_Datatype datatype, MPI_Count* size) {
  return PackExternalSize("MPI_Pack_external_size_c", datarep, incount,
                          datatype, size);
}

}  // extern "C"

MINIMPI_EXPORT(Pack)
MINIMPI_EXPORT(Pack_c)
MINIMPI_EXPORT(Unpack)
MINIMPI_EXPORT(Unpack_c)
MINIMPI_EXPORT(Pack_size)
MINIMPI_EXPORT(Pack_size_c)
MINIMPI_EXPORT(Pack_external)
MINIMPI_EXPORT(Pack_external_c)
MINIMPI_EXPORT(Unpack_external)
MINIMPI_EXPORT(Unpack_external_c)
MINIMPI_EXPORT(Pack_external_size)
MINIMPI_EXPORT(Pack_external_size_c)
