// --device cpu|cuda|auto → the providers a session uses, in order of preference.
//   cpu   the CPU alone;
//   cuda  the CUDA provider first, the CPU for what it lacks (Copy nodes between them);
//   auto  the first accelerator whose plugin sees a device and the CPU, placed by
//         estimated cost (PartitionOptions::Policy::kLowestCost: each part where it is
//         cheaper, a small graph all on the CPU); without one, the CPU.
// Asking for an accelerator that is absent (no plugin, no device) is not an error: the
// CPU runs everything and `notice` says why, in one line meant to be printed once.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "providers/partitioner.h"

namespace tandem {

struct DeviceChoice {
  std::vector<std::string> providers;  // e.g. {"cuda", "cpu"}
  std::string device;                  // what runs: "cpu" or the accelerator's name
  std::string notice;                  // non-empty when an asked-for device is absent
  PartitionOptions::Policy placement = PartitionOptions::Policy::kPreferenceOrder;
};

// Accelerator plugins `auto` tries, in order.
const std::vector<std::string>& AcceleratorNames();

// Fails only for an unknown device name.
absl::StatusOr<DeviceChoice> ResolveDevice(const std::string& device);

// Prints choice.notice to stderr the first time a notice is printed in this process.
void PrintDeviceNoticeOnce(const DeviceChoice& choice);

}  // namespace tandem
