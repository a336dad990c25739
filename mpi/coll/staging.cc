#include "mpi/coll/staging.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_format.h"
#include "mpi/datatype/pack.h"

namespace minimpi::coll {
namespace {

bool NeedsStaging(const Datatype* type) {
  return type != nullptr && !type->dense();
}

std::vector<int64_t> ToVector(CountArray values, int n) {
  std::vector<int64_t> copy(n);
  for (int i = 0; i < n; ++i) copy[i] = values[i];
  return copy;
}

int64_t Sum(CountArray counts, int blocks) {
  int64_t total = 0;
  for (int i = 0; i < blocks; ++i) total += counts[i];
  return total;
}

// `from_count` items of layout `from_layout` at `from` into `to_count`
// items of `to_layout` at `to` (layouts of equal signature: the same
// packed bytes).
void CopyItems(const void* from, int64_t from_count,
               const datatype::Layout* from_layout, void* to, int64_t to_count,
               const datatype::Layout* to_layout) {
  const int64_t bytes = from_count * from_layout->size();
  if (bytes == 0) return;
  datatype::TypedCopy(from, from_count, from_layout, to, to_count, to_layout,
                      bytes);
}

}  // namespace

const std::string& CollectiveStaging::error_message() const {
  static const std::string* const kNone = new std::string;
  return made_ != nullptr ? made_->error_message : *kNone;
}

std::byte* CollectiveStaging::NewBuffer(size_t bytes) {
  made().buffers.push_back(
      std::make_unique<std::byte[]>(std::max<size_t>(bytes, 1)));
  return made().buffers.back().get();
}

const int64_t* CollectiveStaging::NewArray(std::vector<int64_t> values) {
  auto array = std::make_unique<int64_t[]>(std::max<size_t>(values.size(), 1));
  std::copy(values.begin(), values.end(), array.get());
  made().arrays.push_back(std::move(array));
  return made().arrays.back().get();
}

void CollectiveStaging::Hold(const Datatype& type) {
  if (!type.predefined()) {
    made().layouts.push_back(datatype::LayoutRef::Share(type.layout_pointer()));
  }
}

const void* CollectiveStaging::PackedInput(const void* buffer, int64_t count,
                                           const Datatype& type) {
  if (type.dense()) return buffer;
  const int64_t bytes = count * type.size();
  std::byte* packed = NewBuffer(static_cast<size_t>(bytes));
  datatype::Pack(buffer, count, &type.layout(), 0, packed, bytes);
  return packed;
}

void* CollectiveStaging::PackedOutput(void* buffer, int64_t count,
                                      const Datatype& type, bool preserve) {
  if (type.dense()) return buffer;
  Hold(type);
  const int64_t bytes = count * type.size();
  std::byte* packed = NewBuffer(static_cast<size_t>(bytes));
  const datatype::Layout* layout = &type.layout();
  if (preserve) datatype::Pack(buffer, count, layout, 0, packed, bytes);
  made().finish.push_back([packed, bytes, buffer, count, layout] {
    datatype::Unpack(packed, bytes, buffer, count, layout, 0);
  });
  return packed;
}

const void* CollectiveStaging::PackedInputBlocks(
    const void* buffer, CountArray counts, CountArray displacements, int blocks,
    const Datatype& type, CountArray* new_displacements) {
  *new_displacements = displacements;
  if (type.dense()) return buffer;
  std::vector<int64_t> packed_displacements(blocks);
  int64_t items = 0;
  for (int i = 0; i < blocks; ++i) {
    packed_displacements[i] = items;
    items += counts[i];
  }
  std::byte* packed = NewBuffer(static_cast<size_t>(items * type.size()));
  for (int i = 0; i < blocks; ++i) {
    const auto* block = static_cast<const std::byte*>(buffer) +
                        int64_t{displacements[i]} * type.extent();
    datatype::Pack(block, counts[i], &type.layout(), 0,
                   packed + int64_t{packed_displacements[i]} * type.size(),
                   counts[i] * type.size());
  }
  *new_displacements = NewArray(std::move(packed_displacements));
  return packed;
}

void* CollectiveStaging::PackedOutputBlocks(void* buffer, CountArray counts,
                                            CountArray displacements,
                                            int blocks, const Datatype& type,
                                            int preserve_block,
                                            CountArray* new_displacements) {
  *new_displacements = displacements;
  if (type.dense()) return buffer;
  Hold(type);
  std::vector<int64_t> packed_displacements(blocks);
  int64_t items = 0;
  for (int i = 0; i < blocks; ++i) {
    packed_displacements[i] = items;
    items += counts[i];
  }
  std::byte* packed = NewBuffer(static_cast<size_t>(items * type.size()));
  const datatype::Layout* layout = &type.layout();
  const int64_t size = type.size();
  const int64_t extent = type.extent();
  // Only the blocks' places are copied back, never what lies between them.
  std::vector<int64_t> block_counts = ToVector(counts, blocks);
  std::vector<int64_t> user_displacements = ToVector(displacements, blocks);
  for (int i = 0; i < blocks; ++i) {
    if (preserve_block == i || preserve_block == kPreserveAll) {
      datatype::Pack(
          static_cast<std::byte*>(buffer) + int64_t{displacements[i]} * extent,
          counts[i], layout, 0,
          packed + int64_t{packed_displacements[i]} * size, counts[i] * size);
    }
  }
  made().finish.push_back([packed, buffer, layout, size, extent,
                           block_counts = std::move(block_counts),
                           user_displacements = std::move(user_displacements),
                           packed_displacements] {
    for (size_t i = 0; i < block_counts.size(); ++i) {
      datatype::Unpack(packed + int64_t{packed_displacements[i]} * size,
                       block_counts[i] * size,
                       static_cast<std::byte*>(buffer) +
                           int64_t{user_displacements[i]} * extent,
                       block_counts[i], layout, 0);
    }
  });
  *new_displacements = NewArray(std::move(packed_displacements));
  return packed;
}

int CollectiveStaging::Fail(int error_class, std::string message) {
  made().error_message = std::move(message);
  return error_class;
}

int CollectiveStaging::Stage(const Communicator& comm, Collective collective,
                             Arguments* arguments) {
  Arguments& a = *arguments;
  // Blocks are per peer: per remote process on an intercommunicator.
  const int n = comm.peer_count();
  const bool is_root = comm.inter ? a.root == MPI_ROOT : comm.rank == a.root;
  // An intercommunicator's root group: only the root has data, and it is
  // the side left unset by the bindings that the other processes send or
  // receive.
  if (comm.inter && a.root == MPI_PROC_NULL &&
      (collective == Collective::kBcast || collective == Collective::kReduce ||
       collective == Collective::kGather ||
       collective == Collective::kGatherv ||
       collective == Collective::kScatter ||
       collective == Collective::kScatterv)) {
    return MPI_SUCCESS;
  }
  switch (collective) {
    case Collective::kBarrier:
      return MPI_SUCCESS;
    case Collective::kReduce:
    case Collective::kAllreduce:
    case Collective::kReduceScatter:
    case Collective::kReduceScatterBlock:
    case Collective::kScan:
    case Collective::kExscan:
      return StageReduction(comm, collective, arguments);
    case Collective::kBcast: {
      const Datatype* type = TypeOf(a.type);
      if (!NeedsStaging(type)) return MPI_SUCCESS;
      a.receive_buffer =
          is_root
              ? const_cast<void*>(PackedInput(a.receive_buffer, a.count, *type))
              : PackedOutput(a.receive_buffer, a.count, *type, false);
      a.extent = static_cast<size_t>(type->size());
      return MPI_SUCCESS;
    }
    default:
      break;
  }

  // The data-movement collectives: the send side first. In place means no
  // send side, except for scatter(v), where it is the root's receive side.
  const bool scatters =
      collective == Collective::kScatter || collective == Collective::kScatterv;
  const Datatype* send_type =
      a.in_place && !scatters ? nullptr : TypeOf(a.send_type);
  const bool sends_blocks = collective == Collective::kScatterv ||
                            collective == Collective::kAlltoallv;
  const bool sends_all_blocks =
      collective == Collective::kScatter || collective == Collective::kAlltoall;
  const bool sends =
      collective == Collective::kScatter || collective == Collective::kScatterv
          ? is_root
          : true;
  if (sends && NeedsStaging(send_type)) {
    if (sends_blocks) {
      a.send_buffer =
          PackedInputBlocks(a.send_buffer, a.send_counts, a.send_displacements,
                            n, *send_type, &a.send_displacements);
    } else {
      a.send_buffer = PackedInput(
          a.send_buffer,
          sends_all_blocks ? int64_t{a.send_count} * n : a.send_count,
          *send_type);
    }
    a.send_extent = static_cast<size_t>(send_type->size());
  }

  // Then the receive side.
  const bool receives =
      collective == Collective::kGather || collective == Collective::kGatherv
          ? is_root
          : true;
  // Scatter in place: the root's block stays where it is, nothing received.
  const bool receive_in_place =
      a.in_place && (collective == Collective::kScatter ||
                     collective == Collective::kScatterv);
  const Datatype* receive_type =
      receives && !receive_in_place ? TypeOf(a.receive_type) : nullptr;
  if (!NeedsStaging(receive_type)) return MPI_SUCCESS;
  switch (collective) {
    case Collective::kGather:
    case Collective::kAllgather:
    case Collective::kAlltoall:
      a.receive_buffer =
          PackedOutput(a.receive_buffer, int64_t{a.receive_count} * n,
                       *receive_type, /*preserve=*/a.in_place);
      break;
    case Collective::kScatter:
      a.receive_buffer = PackedOutput(a.receive_buffer, a.receive_count,
                                      *receive_type, /*preserve=*/false);
      break;
    case Collective::kGatherv:
    case Collective::kAllgatherv:
    case Collective::kAlltoallv: {
      const int preserve =
          !a.in_place ? -1
                      : (collective == Collective::kAlltoallv ? kPreserveAll
                                                              : comm.rank);
      a.receive_buffer = PackedOutputBlocks(
          a.receive_buffer, a.receive_counts, a.receive_displacements, n,
          *receive_type, preserve, &a.receive_displacements);
      break;
    }
    case Collective::kScatterv:
      a.receive_buffer = PackedOutput(a.receive_buffer, a.receive_count,
                                      *receive_type, /*preserve=*/false);
      break;
    default:
      break;
  }
  a.receive_extent = static_cast<size_t>(receive_type->size());
  return MPI_SUCCESS;
}

int CollectiveStaging::StageReduction(const Communicator& comm,
                                      Collective collective,
                                      Arguments* arguments) {
  Arguments& a = *arguments;
  const Datatype* type = TypeOf(a.type);
  if (type == nullptr || type->predefined()) return MPI_SUCCESS;
  const int n = comm.size;  // reduce_scatter's counts: the local group
  const bool is_root = comm.inter ? a.root == MPI_ROOT : comm.rank == a.root;

  // How many items each buffer holds on this rank (-1: not significant).
  int64_t input_items = 0;
  int64_t output_items = 0;
  int64_t output_kept = 0;  // items the result occupies in the output
  bool preserve_output = a.in_place;
  switch (collective) {
    case Collective::kReduce:
      // An intercommunicator's root only receives.
      input_items = comm.inter && is_root ? 0 : a.count;
      output_items = is_root ? a.count : -1;
      output_kept = output_items;
      break;
    case Collective::kAllreduce:
    case Collective::kScan:
    case Collective::kExscan:
      input_items = a.count;
      output_items = a.count;
      output_kept = a.count;
      // MPI leaves rank 0's Exscan output undefined: keep what was there.
      if (collective == Collective::kExscan) preserve_output = true;
      break;
    case Collective::kReduceScatter:
      input_items = Sum(a.receive_counts, n);
      output_kept = a.receive_counts[comm.rank];
      output_items = a.in_place ? input_items : output_kept;
      break;
    case Collective::kReduceScatterBlock:
      input_items = int64_t{a.count} * n;
      output_kept = a.count;
      output_items = a.in_place ? input_items : output_kept;
      break;
    default:
      return MPI_SUCCESS;
  }

  if (a.op->predefined()) {
    // Reduce arrays of the base type: the kernels exist for those.
    const Datatype& base =
        *Datatype::FindPredefined(type->layout().reduction_base());
    const int64_t per_item = type->layout().reduction_base_count();
    if (type->dense() && base.dense()) {
      // The memory already is such an array: only the counts change.
    } else {
      Hold(*type);
      const int64_t base_bytes = base.extent();
      const datatype::Layout* layout = &type->layout();
      const datatype::Layout* base_layout = &base.layout();
      if (!a.in_place && input_items > 0) {
        std::byte* input =
            NewBuffer(static_cast<size_t>(input_items * per_item * base_bytes));
        CopyItems(a.send_buffer, input_items, layout, input,
                  input_items * per_item, base_layout);
        a.send_buffer = input;
      }
      if (output_items >= 0) {
        std::byte* output = NewBuffer(
            static_cast<size_t>(output_items * per_item * base_bytes));
        void* user = a.receive_buffer;
        if (preserve_output) {
          CopyItems(user, output_items, layout, output, output_items * per_item,
                    base_layout);
        }
        made().finish.push_back(
            [output, user, output_kept, per_item, base_layout, layout] {
              CopyItems(output, output_kept * per_item, base_layout, user,
                        output_kept, layout);
            });
        a.receive_buffer = output;
      }
    }
    a.type = base.handle();
    a.extent = static_cast<size_t>(base.extent());
    a.count = a.count * per_item;
    if (a.receive_counts != nullptr) {
      std::vector<int64_t> scaled(n);
      for (int i = 0; i < n; ++i) {
        scaled[i] = a.receive_counts[i] * per_item;
      }
      a.receive_counts = NewArray(std::move(scaled));
    }
    return MPI_SUCCESS;
  }

  // A user-defined operation sees items of the program's type. Data that
  // is not dense is copied to dense items of that type (holes included).
  if (type->dense()) return MPI_SUCCESS;
  const datatype::Layout& layout = type->layout();
  if (layout.true_lb() < 0 || layout.true_ub() > type->extent() ||
      type->extent() <= 0) {
    return Fail(
        MPI_ERR_TYPE,
        absl::StrFormat("a user-defined operation on a datatype whose data "
                        "lies outside its items' extent (true lb %d, true ub "
                        "%d, extent %d) is not supported",
                        layout.true_lb(), layout.true_ub(), type->extent()));
  }
  Hold(*type);
  const int64_t extent = type->extent();
  const datatype::Layout* items = &layout;
  if (!a.in_place && input_items > 0) {
    std::byte* input = NewBuffer(static_cast<size_t>(input_items * extent));
    CopyItems(a.send_buffer, input_items, items, input, input_items, items);
    a.send_buffer = input;
  }
  if (output_items >= 0) {
    std::byte* output = NewBuffer(static_cast<size_t>(output_items * extent));
    void* user = a.receive_buffer;
    if (preserve_output) {
      CopyItems(user, output_items, items, output, output_items, items);
    }
    made().finish.push_back([output, user, output_kept, items] {
      CopyItems(output, output_kept, items, user, output_kept, items);
    });
    a.receive_buffer = output;
  }
  return MPI_SUCCESS;
}

void CollectiveStaging::StageAlltoallw(
    const void* send_buffer, CountArray send_counts,
    CountArray send_displacements, const MPI_Datatype* send_types,
    void* receive_buffer, CountArray receive_counts,
    CountArray receive_displacements, const MPI_Datatype* receive_types,
    int ranks, bool in_place, Arguments* arguments) {
  Arguments& a = *arguments;
  // In place, the blocks to send are the receive buffer's.
  if (in_place) {
    send_buffer = receive_buffer;
    send_counts = receive_counts;
    send_displacements = receive_displacements;
    send_types = receive_types;
  }
  struct Side {
    std::vector<const Datatype*> types;
    std::vector<int64_t> byte_counts;
    bool all_dense = true;
  };
  auto describe = [this, ranks](CountArray counts,
                                const MPI_Datatype* handles) {
    Side side;
    for (int i = 0; i < ranks; ++i) {
      const Datatype* type = resolve_(handles[i]);
      side.types.push_back(type);
      side.byte_counts.push_back(counts[i] * type->size());
      side.all_dense = side.all_dense && type->dense();
    }
    return side;
  };
  const Side send = describe(send_counts, send_types);
  const Side receive = describe(receive_counts, receive_types);
  auto packed_displacements = [ranks](const std::vector<int64_t>& byte_counts) {
    std::vector<int64_t> displacements(ranks);
    int64_t offset = 0;
    for (int i = 0; i < ranks; ++i) {
      displacements[i] = offset;
      offset += byte_counts[i];
    }
    return displacements;
  };

  a.send_type = MPI_BYTE;
  a.send_extent = 1;
  a.send_counts = NewArray(send.byte_counts);
  if (send.all_dense) {
    // Dense blocks already are their packed form, at byte displacements.
    a.send_buffer = send_buffer;
    a.send_displacements = NewArray(ToVector(send_displacements, ranks));
  } else {
    std::vector<int64_t> displacements = packed_displacements(send.byte_counts);
    std::byte* packed = NewBuffer(
        static_cast<size_t>(displacements.back() + send.byte_counts.back()));
    for (int i = 0; i < ranks; ++i) {
      datatype::Pack(
          static_cast<const std::byte*>(send_buffer) + send_displacements[i],
          send_counts[i], &send.types[i]->layout(), 0,
          packed + displacements[i], send.byte_counts[i]);
    }
    a.send_buffer = packed;
    a.send_displacements = NewArray(std::move(displacements));
  }
  // A packed copy of the blocks to send stands for the receive buffer's old
  // contents, so the exchange itself is never in place.
  a.in_place = false;
  if (in_place && send.all_dense) {
    std::vector<int64_t> displacements = packed_displacements(send.byte_counts);
    std::byte* copy = NewBuffer(
        static_cast<size_t>(displacements.back() + send.byte_counts.back()));
    for (int i = 0; i < ranks; ++i) {
      std::memcpy(
          copy + displacements[i],
          static_cast<const std::byte*>(send_buffer) + send_displacements[i],
          send.byte_counts[i]);
    }
    a.send_buffer = copy;
    a.send_displacements = NewArray(std::move(displacements));
  }

  a.receive_type = MPI_BYTE;
  a.receive_extent = 1;
  a.receive_counts = NewArray(receive.byte_counts);
  if (receive.all_dense) {
    a.receive_buffer = receive_buffer;
    a.receive_displacements = NewArray(ToVector(receive_displacements, ranks));
    return;
  }
  std::vector<int64_t> displacements =
      packed_displacements(receive.byte_counts);
  std::byte* packed = NewBuffer(
      static_cast<size_t>(displacements.back() + receive.byte_counts.back()));
  for (const Datatype* type : receive.types) Hold(*type);
  std::vector<const datatype::Layout*> layouts;
  for (const Datatype* type : receive.types) layouts.push_back(&type->layout());
  made().finish.push_back([packed, receive_buffer, layouts = std::move(layouts),
                           byte_counts = receive.byte_counts,
                           counts = ToVector(receive_counts, ranks),
                           user = ToVector(receive_displacements, ranks),
                           displacements] {
    for (size_t i = 0; i < layouts.size(); ++i) {
      datatype::Unpack(packed + displacements[i], byte_counts[i],
                       static_cast<std::byte*>(receive_buffer) + user[i],
                       counts[i], layouts[i], 0);
    }
  });
  a.receive_buffer = packed;
  a.receive_displacements = NewArray(std::move(displacements));
}

void CollectiveStaging::Finish() {
  if (made_ == nullptr) return;
  for (std::function<void()>& work : made_->finish) work();
  made_->finish.clear();
}

}  // namespace minimpi::coll
