// Derived datatypes in collectives. The algorithms of mpi/coll move blocks
// of `count * extent` bytes and reduce arrays of predefined items; they
// never look at a layout. So before a collective is built, every buffer
// whose datatype is not dense (items back to back, nothing between them) is
// staged:
//
//   - data that only moves goes through its packed form: a send buffer is
//     packed into a contiguous copy, a receive buffer is replaced by a
//     contiguous one that is unpacked into the program's buffer when the
//     collective completes; the algorithms then see items of size(type)
//     bytes. Both sides of a collective agree, because the packed form of
//     any type is its type signature's bytes in order (what MPI requires
//     the two sides to match);
//   - a predefined reduction on a derived type runs on arrays of the type's
//     one predefined base type (MPI_Type_contiguous(4, MPI_DOUBLE) reduces
//     as 4 * count doubles), copied there and back only when the memory is
//     not already such an array;
//   - a user-defined reduction on a derived type is handed items of the
//     derived type, as MPI says; data that is not dense is copied into a
//     dense array of items of that type (gaps and all) and back.
//
// The staging owns its copies and its rewritten count/displacement arrays,
// and keeps the datatypes' layouts alive, since a nonblocking collective
// may outlive the program's MPI_Type_free. It finds the datatype behind a
// handle through the resolver it is given (the bindings' handle table), and
// reports an argument it cannot stage as an MPI error class and a message,
// for the caller to raise.
//
// Owned by: mpi/coll. Called by: the bindings' RunCollective
// (mpi/bindings/collective_util.cc) before a collective is built.
#ifndef MINIMPI_MPI_COLL_STAGING_H_
#define MINIMPI_MPI_COLL_STAGING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/coll/algorithms.h"
#include "mpi/objects/comm.h"
#include "mpi/objects/datatype.h"

namespace minimpi::coll {

class CollectiveStaging {
 public:
  // The datatype a handle the caller already checked names.
  using DatatypeResolver = const Datatype* (*)(MPI_Datatype handle);

  explicit CollectiveStaging(DatatypeResolver resolve) : resolve_(resolve) {}
  CollectiveStaging(const CollectiveStaging&) = delete;
  CollectiveStaging& operator=(const CollectiveStaging&) = delete;

  // Whether Stage would leave `arguments` as they are: every datatype they
  // name is predefined and dense (or not named). Inline and cheap: every
  // blocking collective asks, and most pass doubles or bytes.
  static bool NothingToStage(const Arguments& arguments) {
    return PredefinedAndDense(arguments.type) &&
           PredefinedAndDense(arguments.send_type) &&
           PredefinedAndDense(arguments.receive_type);
  }

  // Rewrites `arguments` of `collective` on `comm` so that the algorithms
  // see dense data only. Returns MPI_SUCCESS, or the error class of what it
  // cannot stage (a user reduction on a datatype whose data lies outside its
  // items' extents; counts past INT_MAX), with error_message() saying why.
  int Stage(const Communicator& comm, Collective collective,
            Arguments* arguments);
  const std::string& error_message() const;

  // MPI_Alltoallw as an alltoallv of bytes: each block travels in its
  // packed form (copied only when some block's datatype is not dense).
  // Fills every field of `arguments` (the caller checked the arrays).
  void StageAlltoallw(const void* send_buffer, CountArray send_counts,
                      CountArray send_displacements,
                      const MPI_Datatype* send_types, void* receive_buffer,
                      CountArray receive_counts,
                      CountArray receive_displacements,
                      const MPI_Datatype* receive_types, int ranks,
                      bool in_place, Arguments* arguments);

  // Whether Stage made copies that Finish must copy back.
  bool needs_finish() const {
    return made_ != nullptr && !made_->finish.empty();
  }
  // Whether Stage copied any of the program's data (a packed send buffer,
  // a preserved receive buffer, a reduction's copy): such copies hold the
  // data of the call that made them (persistent collectives restage).
  bool made_copies() const {
    return made_ != nullptr && !made_->buffers.empty();
  }
  // Copies the staged results into the program's buffers: call once the
  // collective's steps are all done.
  void Finish();

 private:
  static bool PredefinedAndDense(MPI_Datatype handle) {
    if (handle == nullptr) return true;
    const Datatype* type = Datatype::FindPredefined(handle);
    return type != nullptr && type->dense();
  }

  // A contiguous packed copy of `count` items of `type` at `buffer`, or
  // `buffer` itself when the type is dense.
  const void* PackedInput(const void* buffer, int64_t count,
                          const Datatype& type);
  // A contiguous buffer standing for `count` items of `type` at `buffer`,
  // unpacked into it by Finish; `preserve` packs the current contents in
  // first (MPI_IN_PLACE, or output that may stay untouched).
  void* PackedOutput(void* buffer, int64_t count, const Datatype& type,
                     bool preserve);
  // For PackedOutputBlocks: pack every block in first (in-place alltoallv).
  static constexpr int kPreserveAll = -2;

  // The same with blocks at displacements (the v-collectives): a
  // contiguous buffer holding the blocks one after the other, and the
  // displacements of that buffer (in items) in *new_displacements.
  const void* PackedInputBlocks(const void* buffer, CountArray counts,
                                CountArray displacements, int blocks,
                                const Datatype& type,
                                CountArray* new_displacements);
  void* PackedOutputBlocks(void* buffer, CountArray counts,
                           CountArray displacements, int blocks,
                           const Datatype& type, int preserve_block,
                           CountArray* new_displacements);

  int StageReduction(const Communicator& comm, Collective collective,
                     Arguments* arguments);
  // Records why staging failed; returns `error_class`.
  int Fail(int error_class, std::string message);
  // The datatype behind a handle; nullptr for a side that is not
  // significant on this rank.
  const Datatype* TypeOf(MPI_Datatype handle) const {
    return handle == nullptr ? nullptr : resolve_(handle);
  }

  std::byte* NewBuffer(size_t bytes);
  const int64_t* NewArray(std::vector<int64_t> values);
  void Hold(const Datatype& type);

  // What staging made. Dense data (most calls) needs none of it, so it is
  // made on first use: a blocking call's staging, on the stack, then costs
  // two words to build and one test to destroy.
  struct Made {
    std::string error_message;
    std::vector<std::unique_ptr<std::byte[]>> buffers;
    std::vector<std::unique_ptr<int64_t[]>> arrays;
    std::vector<datatype::LayoutRef> layouts;
    std::vector<std::function<void()>> finish;
  };
  Made& made() {
    if (made_ == nullptr) made_ = std::make_unique<Made>();
    return *made_;
  }

  const DatatypeResolver resolve_;
  std::unique_ptr<Made> made_;
};

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_STAGING_H_
