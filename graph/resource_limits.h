// Resource limits for everything whose size comes from a model or its inputs. Sizes are
// checked (negative dimensions, int64/size_t overflow, the memory limit) before memory is
// asked for, so a hostile or broken model gets a clear status instead of std::bad_alloc,
// an abort or the OOM killer.
//
// The limits are process-wide (set by the CLI's --max-memory/--max-loop-iterations, or by
// an embedding application); each field is read atomically.
//
// Allocation inside kernels cannot return a status (KernelContext::AllocateOutput returns
// a reference), so allocators throw AllocationError; the runtime catches it at the kernel
// boundary (runtime/plan.cc) and reports it as RESOURCE_EXHAUSTED naming the node.
#pragma once
#include <cstdint>
#include <new>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "graph/data_type.h"
#include "graph/tensor.h"

namespace tandem {

struct ResourceLimits {
  // Largest total of live tensor memory one allocator may hand out, and so the largest
  // single tensor. 0 means the default: 80% of the machine's physical memory (or of the
  // container's cgroup limit). Not a process-wide cap: each session's allocator counts
  // its own live tensors; the CUDA plugin's device allocator applies it only when set.
  uint64_t max_memory_bytes = 0;
  // Iterations one Loop node may run (its trip count, or while its condition holds).
  int64_t max_loop_iterations = 10'000'000;
  // Nesting of subgraphs (If/Loop/Scan bodies) and nodes per graph the importer accepts.
  int max_subgraph_depth = 32;
  int64_t max_nodes_per_graph = 10'000'000;
};

ResourceLimits GetResourceLimits();
void SetResourceLimits(const ResourceLimits& limits);
// The memory limit in bytes, with the default resolved.
uint64_t MaxMemoryBytes();

// What a failed allocation throws: a std::bad_alloc whose what() says what was asked for,
// why it was refused and which limit applies.
class AllocationError : public std::bad_alloc {
 public:
  explicit AllocationError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// What to report for a failed allocation: AllocationError's message (what was asked for
// and which limit refused it), else "out of memory".
std::string AllocationFailureMessage(const std::bad_alloc& e);

// An allocator's two checks against a memory limit (0: none), each "" when the request may
// proceed, else the reason: one buffer of `bytes` over the limit (checked first: it also
// keeps the allocator's size rounding from overflowing), or `reserved` more bytes on top of
// the `in_use` bytes the allocator already hands out.
std::string BufferOverLimit(uint64_t bytes, uint64_t limit);
std::string LiveMemoryOverLimit(uint64_t reserved, uint64_t in_use, uint64_t limit);

// Bytes of a `dtype` tensor of `dims`; InvalidArgument for negative dimensions or a size
// that overflows. Strings count their handles.
absl::StatusOr<uint64_t> TensorBytes(DataType dtype, const Dims& dims);
// TensorBytes, and ResourceExhausted above the (host) memory limit.
absl::StatusOr<uint64_t> CheckedTensorBytes(DataType dtype, const Dims& dims);
// For allocators: CheckedTensorBytes, or TensorBytes when !memory_limit (a device's
// allocator applies its own limit); throws AllocationError instead of returning a status.
size_t TensorBytesOrThrow(DataType dtype, const Dims& dims, bool memory_limit = true);

// "1.5 GiB", "512 B".
std::string FormatBytes(uint64_t bytes);
// Parses "4096", "512K", "64M", "8G", "1.5G", "2T" (binary units, optional trailing "B"/"iB").
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace tandem
