// ExecutionProvider: a device with its allocator, its kernel registry, a capability
// query with a cost estimate (used by the partitioner) and data transfer for its device
// edge. The runtime never includes a concrete provider's headers.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/allocator.h"
#include "framework/kernel.h"
#include "framework/kernel_registry.h"
#include "graph/graph.h"

namespace tandem {

// Device work recorded once and replayed as one launch (a CUDA Graph): see
// ExecutionProvider::BeginCapture. It reads and writes the very buffers the recorded
// kernels were given, so whoever holds it keeps those buffers alive and fills them.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Enqueues the recorded work again (on the provider's stream; returns before it ends).
  virtual absl::Status Replay() = 0;
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;
  virtual std::string name() const = 0;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;
  virtual const KernelRegistry& registry() const = 0;

  // Estimated cost in microseconds of running `info.node` here, or nullopt when this
  // provider has no kernel for it. The default: a kernel exists -> launch_overhead_us().
  // Only cost-based placement asks for the estimate.
  virtual std::optional<double> Capability(const KernelInfo& info) const;
  // Whether this provider can run `info.node` (what placement by preference order asks).
  // The default is Capability() != nullopt; a provider whose estimate is costly to make
  // (the CPU's calibrates its speed once) answers without it.
  virtual bool CanRun(const KernelInfo& info) const { return Capability(info).has_value(); }
  // Fixed cost per kernel launch (the GPU's ~10 µs is why tiny graphs stay on the CPU).
  virtual double launch_overhead_us() const { return 0.0; }
  // Estimated microseconds to move `bytes` between this device and the host (either
  // way); 0 for the host itself. The partitioner adds it for every value a placement
  // would copy.
  virtual double CopyCostUs(int64_t bytes) const { return 0.0; }

  // Rewrites of the nodes the partitioner assigned to this provider, for this provider
  // alone (the CPU's channel-blocked layout, providers/cpu/rewrites/blocked_layout.h); the graph
  // is partitioned and in execution order before and after. Returns nodes rewritten.
  virtual int OptimizeGraph(Graph& graph) { return 0; }

  // The kernel registered for the node's (domain, op, opset, dtype), or null.
  const KernelDef* FindKernel(const KernelInfo& info) const;
  // Creates the kernel registered for the node's (domain, op, opset, dtype).
  virtual absl::StatusOr<std::unique_ptr<Kernel>> MakeKernel(const KernelInfo& info);

  // Copies between this device and the host (either side may be this device; `dst` is
  // already allocated with src's dtype and size). When it returns, a host `dst` holds
  // the data; a device `dst` is ready for this provider's later kernels.
  virtual absl::Status Copy(const Tensor& src, Tensor& dst) = 0;
  virtual absl::Status Synchronize() { return absl::OkStatus(); }
  // Host memory for values this provider copies back to the host (a device provider
  // returns page-locked memory so copies run at full speed); null = ordinary host memory.
  virtual Allocator* host_allocator() { return nullptr; }
  // Stream capture, for providers that can record work (CUDA). Between BeginCapture and
  // EndCapture the kernels' launches are recorded instead of run, and device memory
  // allocated meanwhile is reserved for the recording: it is never handed to anyone else
  // while the DeviceGraph lives (buffers freed during the capture are reused only by it).
  // Nothing may copy to or from the host, or wait for the device, while capturing. The
  // recorded work has not run when EndCapture returns: Replay it. On any error the
  // capture is ended and discarded.
  virtual bool SupportsCapture() const { return false; }
  virtual absl::Status BeginCapture() { return absl::UnimplementedError(name() + " cannot capture"); }
  virtual absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture() {
    return absl::UnimplementedError(name() + " cannot capture");
  }
  // One line about the device, e.g. "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)".
  virtual std::string description() const { return name(); }
  // Sharing device memory with other libraries (DLPack): the device's native work queue
  // this provider enqueues on (CUDA: its cudaStream_t), null for the host; and making
  // another queue of this device (another library's cudaStream_t, or CUDA's special
  // handles 1 = legacy default, 2 = per-thread default) wait for everything enqueued here
  // so far, without blocking the host.
  virtual void* native_stream() const { return nullptr; }
  virtual absl::Status OrderBefore(void* stream) {
    (void)stream;
    return absl::OkStatus();
  }
};

// The CPU provider (providers/cpu/), which every session has: shape arithmetic, constant
// folding and every node no other provider runs. Defined in providers/cpu/cpu_provider.cc;
// this is how the runtime makes one without including a concrete provider's headers.
std::unique_ptr<ExecutionProvider> CreateCpuProvider();

// The provider among `providers` whose device is `d`, or null.
ExecutionProvider* ProviderOn(const std::vector<ExecutionProvider*>& providers, const Device& d);

// A host copy of `t` made by the provider that owns its device (`t` itself when it is
// already on the host or is not a tensor); an error when none of `providers` owns it.
absl::StatusOr<Tensor> CopyToHost(const std::vector<ExecutionProvider*>& providers, const Tensor& t);

// The registry lookup type for a node: the type of the registered type_input, taken from
// what is known statically.
DataType KernelLookupType(const KernelRegistry& registry, const KernelInfo& info);

}  // namespace tandem
