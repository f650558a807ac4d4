// The ai.tandem Copy kernel that the partitioner inserts where a value changes device.
// A device provider registers it (RegisterCopyKernel) and the partitioner assigns each
// Copy node to the device side of the edge, so the kernel always runs on the provider
// that can reach both memories. Attribute "to" names the destination provider ("cpu"
// for the host).
//
// Contract:
//   - a value already on the destination device is passed through as an alias, so
//     callers that keep data resident on the device (trainer parameters, a dataset
//     uploaded once, IO binding) pay no copy;
//   - a constant (initializer) is copied once and the device copy reused by later runs;
//   - host destinations come from provider->host_allocator() when it has one (pinned
//     memory on CUDA) and are complete when Compute returns.
#pragma once
#include "framework/kernel_registry.h"

namespace tandem {

void RegisterCopyKernel(KernelRegistry& registry);

// Whether `n` is such a Copy node (ai.tandem Copy).
bool IsDeviceCopy(const Node& n);

}  // namespace tandem
