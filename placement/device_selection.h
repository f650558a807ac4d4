// --device cpu|cuda|auto → the providers a session uses, in order of preference.
//   cpu   the CPU alone;
//   cuda  the CUDA provider first, the CPU for what it lacks (Copy nodes between them);
//   auto  the first accelerator whose plugin sees a device and the CPU, placed by
//         estimated cost (PartitionOptions::Policy::kLowestCost: each part where it is
//         cheaper, a small graph all on the CPU); without one, the CPU.
// Asking for an accelerator that is absent (no plugin, no device) is not an error: the
// CPU runs everything and `notice` says why, in one line meant to be printed once. With
// TANDEM_REQUIRE_GPU=1 in the environment it is (GPU verification runs, where a silent
// CPU fallback or a skipped test would hide a plugin that failed to load).
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "placement/partitioner.h"

namespace tandem {

struct DeviceChoice {
  std::vector<std::string> providers;  // e.g. {"cuda", "cpu"}
  std::string device;                  // what runs: "cpu" or the accelerator's name
  std::string notice;                  // non-empty when an asked-for device is absent
  PartitionOptions::Policy placement = PartitionOptions::Policy::kPreferenceOrder;
};

// Accelerator plugins `auto` tries, in order.
const std::vector<std::string>& AcceleratorNames();

// Fails for an unknown device name, and under TANDEM_REQUIRE_GPU=1 for `cuda` or `auto`
// without a usable accelerator (FAILED_PRECONDITION, with the plugin's reason).
absl::StatusOr<DeviceChoice> ResolveDevice(const std::string& device);

// Whether TANDEM_REQUIRE_GPU=1 is set: an absent GPU is then a failure, not a fallback
// or a skip.
bool GpuRequired();

// Prints choice.notice to stderr the first time a notice is printed in this process (in a
// data-parallel job, on rank 0 only).
void PrintDeviceNoticeOnce(const DeviceChoice& choice);

}  // namespace tandem
