#include "graph/resource_limits.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/parse_number.h"

namespace tandem {
namespace {

ResourceLimits defaults;
std::atomic<uint64_t> max_memory{defaults.max_memory_bytes};
std::atomic<int64_t> max_loop_iterations{defaults.max_loop_iterations};
std::atomic<int> max_subgraph_depth{defaults.max_subgraph_depth};
std::atomic<int64_t> max_nodes_per_graph{defaults.max_nodes_per_graph};

// Physical memory, or the container's cgroup (v2) limit when that is lower.
uint64_t AvailableMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  uint64_t bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                                         : uint64_t{8} << 30;
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long cgroup = 0;
    if (std::fscanf(f, "%llu", &cgroup) == 1 && cgroup > 0 && cgroup < bytes) bytes = cgroup;
    std::fclose(f);  // "max" (no limit) does not scan
  }
  return bytes;
}

}  // namespace

ResourceLimits GetResourceLimits() {
  ResourceLimits l;
  l.max_memory_bytes = max_memory.load(std::memory_order_relaxed);
  l.max_loop_iterations = max_loop_iterations.load(std::memory_order_relaxed);
  l.max_subgraph_depth = max_subgraph_depth.load(std::memory_order_relaxed);
  l.max_nodes_per_graph = max_nodes_per_graph.load(std::memory_order_relaxed);
  return l;
}

void SetResourceLimits(const ResourceLimits& l) {
  max_memory.store(l.max_memory_bytes);
  max_loop_iterations.store(l.max_loop_iterations);
  max_subgraph_depth.store(l.max_subgraph_depth);
  max_nodes_per_graph.store(l.max_nodes_per_graph);
}

uint64_t MaxMemoryBytes() {
  const uint64_t set = max_memory.load(std::memory_order_relaxed);
  if (set) return set;
  static const uint64_t by_default = AvailableMemoryBytes() / 10 * 8;
  return by_default;
}

std::string BufferOverLimit(uint64_t bytes, uint64_t limit) {
  if (!limit || bytes <= limit) return "";
  return "a buffer of " + FormatBytes(bytes) + " is over the memory limit of " + FormatBytes(limit) +
         " (--max-memory)";
}

std::string LiveMemoryOverLimit(uint64_t reserved, uint64_t in_use, uint64_t limit) {
  if (!limit || in_use + reserved <= limit) return "";
  return "allocating " + FormatBytes(reserved) + " would raise live tensor memory to " +
         FormatBytes(in_use + reserved) + ", over the memory limit of " + FormatBytes(limit) +
         " (--max-memory)";
}

absl::StatusOr<uint64_t> TensorBytes(DataType dtype, const Dims& dims) {
  uint64_t n = 1;
  bool overflow = false, empty = false;
  for (int64_t d : dims) {
    if (d < 0)
      return absl::InvalidArgumentError(absl::StrCat("negative dimension in ", DataTypeName(dtype),
                                                     DimsToString(dims)));
    empty |= d == 0;
    if (d && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) overflow = true;
    else n *= static_cast<uint64_t>(d);
  }
  if (empty) return uint64_t{0};  // whatever the other dims, an empty tensor holds nothing
  const uint64_t size = SizeOf(dtype);
  if (overflow || (size && n > std::numeric_limits<int64_t>::max() / size))
    return absl::InvalidArgumentError(absl::StrCat(DataTypeName(dtype), DimsToString(dims),
                                                   " has more elements than fit in 64 bits"));
  return n * size;
}

absl::StatusOr<uint64_t> CheckedTensorBytes(DataType dtype, const Dims& dims) {
  auto counted = TensorBytes(dtype, dims);
  if (!counted.ok()) return counted;
  const uint64_t bytes = *counted;
  if (bytes > MaxMemoryBytes())
    return absl::ResourceExhaustedError(absl::StrCat(
        DataTypeName(dtype), DimsToString(dims), " needs ", FormatBytes(bytes),
        ", over the memory limit of ", FormatBytes(MaxMemoryBytes()), " (--max-memory)"));
  return bytes;
}

std::string AllocationFailureMessage(const std::bad_alloc& e) {
  return dynamic_cast<const AllocationError*>(&e) ? e.what() : "out of memory";
}

size_t TensorBytesOrThrow(DataType dtype, const Dims& dims, bool memory_limit) {
  auto bytes = memory_limit ? CheckedTensorBytes(dtype, dims) : TensorBytes(dtype, dims);
  if (!bytes.ok()) throw AllocationError(std::string(bytes.status().message()));
  return static_cast<size_t>(*bytes);
}

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
  return buf;
}

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  for (const char* suffix : {"IB", "B"})
    if (s.size() > 1 && absl::EndsWith(s, suffix)) {
      s.resize(s.size() - absl::string_view(suffix).size());
      break;
    }
  int shift = 0;
  if (!s.empty()) {
    const absl::string_view units = "KMGTP";
    const size_t u = units.find(s.back());
    if (u != absl::string_view::npos) {
      shift = 10 * static_cast<int>(u + 1);
      s.pop_back();
    }
  }
  auto v = ParseFiniteDouble(s);
  if (!v.ok() || std::ldexp(*v, shift) < 1 || std::ldexp(*v, shift) > 0x1p62)
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a size between 1 byte and 4 EiB (e.g. 512M, 8G)"));
  return static_cast<uint64_t>(std::ldexp(*v, shift));
}

}  // namespace tandem
