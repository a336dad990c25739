// Pack and unpack throughput of a few datatype shapes, next to memcpy of
// the same number of bytes between two contiguous buffers: the ceiling a
// packing loop can approach. The shapes are those of stencil codes (halo
// columns of a 2-D grid, faces of a 3-D one), plus a struct and a
// contiguous array.
//
//   bazel run -c opt //mpi/datatype:pack_bench [-- seconds_per_case]
//
// Owned by: mpi/datatype. Called by: people measuring the engine.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi/datatype/array_layouts.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

double g_seconds_per_case = 0.2;

// Runs `work` until it has taken at least g_seconds_per_case (after one
// warm-up run) and returns the best GB/s of `bytes` per run over 3 tries.
double GigabytesPerSecond(int64_t bytes, const std::function<void()>& work) {
  using Clock = std::chrono::steady_clock;
  work();
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int64_t runs = 0;
    const Clock::time_point start = Clock::now();
    double elapsed = 0;
    do {
      work();
      ++runs;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < g_seconds_per_case / 3);
    best = std::max(best, static_cast<double>(bytes) * runs / elapsed / 1e9);
  }
  return best;
}

// Keeps the compiler from proving the copies useless.
volatile unsigned char g_sink;

void Measure(const char* name, const Layout& layout, int64_t count) {
  const int64_t bytes = count * layout.size();
  const int64_t span = layout.true_ub() + (count - 1) * layout.extent() -
                       std::min<int64_t>(0, layout.true_lb());
  std::vector<unsigned char> memory(span + 64, 1);
  void* buffer = memory.data() - std::min<int64_t>(0, layout.true_lb());
  std::vector<unsigned char> packed(bytes, 2);
  std::vector<unsigned char> copy(bytes, 3);

  const double pack = GigabytesPerSecond(bytes, [&] {
    Pack(buffer, count, &layout, 0, packed.data(), bytes);
    g_sink = packed[bytes / 2];
  });
  const double unpack = GigabytesPerSecond(bytes, [&] {
    Unpack(packed.data(), bytes, buffer, count, &layout, 0);
    g_sink = memory[memory.size() / 2];
  });
  const double memcpy_rate = GigabytesPerSecond(bytes, [&] {
    std::memcpy(copy.data(), packed.data(), bytes);
    g_sink = copy[bytes / 2];
  });
  std::printf("%-44s %9lld %8lld %5zu %8.2f %8.2f %8.2f %6.0f%%\n", name,
              static_cast<long long>(bytes),
              static_cast<long long>(layout.num_blocks() * count),
              layout.runs().size(), pack, unpack, memcpy_rate,
              100 * pack / memcpy_rate);
}

void PrintTable() {
  const Layout& dbl = *PredefinedLayout(MPI_DOUBLE);
  std::printf("%-44s %9s %8s %5s %8s %8s %8s %7s\n", "shape", "bytes", "blocks",
              "runs", "pack", "unpack", "memcpy", "pack/mc");
  std::printf("%-44s %9s %8s %5s %8s %8s %8s\n", "", "", "", "", "GB/s", "GB/s",
              "GB/s");

  // Halo columns: N blocks of B bytes, two blocks apart (cache-friendly)
  // or one 8 KiB grid row apart (a column of a 1024-wide grid of doubles).
  for (const int64_t block_doubles : {1, 2, 4, 8}) {
    for (const int64_t blocks : {512, 8192}) {
      for (const int64_t row_doubles : {2 * block_doubles, int64_t{1024}}) {
        const LayoutRef column =
            Vector(blocks, block_doubles, row_doubles, dbl);
        const std::string name = "vector " + std::to_string(blocks) + " x " +
                                 std::to_string(block_doubles * 8) +
                                 " B, stride " +
                                 std::to_string(row_doubles * 8) + " B";
        Measure(name.c_str(), *column, 1);
      }
    }
  }

  // Faces of a 130^3 grid of doubles with a ghost layer (128^3 interior).
  const std::vector<int64_t> sizes = {130, 130, 130};
  struct Face {
    const char* name;
    std::vector<int64_t> subsizes, starts;
  };
  const Face faces[] = {
      {"subarray 3-D face x (contiguous rows)", {1, 128, 128}, {1, 1, 1}},
      {"subarray 3-D face y (rows of 1 KiB)", {128, 1, 128}, {1, 1, 1}},
      {"subarray 3-D face z (8 B blocks)", {128, 128, 1}, {1, 1, 1}},
  };
  for (const Face& face : faces) {
    const LayoutRef type =
        *Subarray(sizes, face.subsizes, face.starts, MPI_ORDER_C, dbl);
    Measure(face.name, *type, 1);
  }

  // An array of {int; double; char[3]} structs (three blocks per item).
  const std::vector<const Layout*> members = {PredefinedLayout(MPI_INT), &dbl,
                                              PredefinedLayout(MPI_CHAR)};
  const LayoutRef record = Struct(std::vector<int64_t>{1, 1, 3},
                                  std::vector<int64_t>{0, 8, 16}, members);
  Measure("struct {int; double; char[3]} x 16384", *record, 16384);

  Measure("contiguous 1 MiB of doubles", dbl, 131072);
}

}  // namespace

void RunBenchmarks(double seconds_per_case) {
  g_seconds_per_case = seconds_per_case;
  PrintTable();
}

}  // namespace minimpi::datatype

int main(int argc, char** argv) {
  minimpi::datatype::RunBenchmarks(argc > 1 ? std::atof(argv[1]) : 0.2);
  return 0;
}
