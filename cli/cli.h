// What the `tandem` subcommands share: argument parsing that prints and exits (over
// cli/lib/args.h), the device, precision and limit flags, and the common printouts.
#pragma once
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cli/lib/args.h"
#include "framework/plugin/provider_options.h"
#include "placement/device_selection.h"
#include "runtime/plan.h"

namespace tandem {
class Session;
}

namespace tandem::cli {


// The most --threads a command takes (0 means every core).
constexpr long kMaxThreads = 4096;
// The largest float: the bound of flags a float32 optimizer takes (--lr, --gamma, ...).
constexpr double kMaxFloat = std::numeric_limits<float>::max();

// ParseArgs for a command: --help prints `usage` and exits(0), an error prints it and
// exits(2); then --max-memory and --max-loop-iterations are applied.
Args Parse(int argc, char** argv, const std::vector<std::string>& value_flags,
           const std::vector<std::string>& bool_flags, const char* usage);

// The providers for `--device cpu|cuda|auto` (default `fallback`): prints the one-line
// notice when an asked-for device is absent, exits(2) on an unknown device name.
// `--provider` is accepted as a second spelling (as the ONNX runners use it).
DeviceChoice DeviceFromFlags(const Args& a, const std::string& fallback = "auto");
// The help lines for --device, for the commands' usage texts.
#define TANDEM_DEVICE_HELP                                                              \
  "  --device cpu|cuda|auto  where to run (default auto: with a GPU visible, each part\n" \
  "                          where its estimated cost is lower, so small graphs stay on\n" \
  "                          the CPU; cuda: all the GPU can run, the rest on the CPU)\n"

// `--precision fp32|tf32` (default fp32) as provider options; exits(2) on another value.
ProviderOptions ProviderOptionsFromFlags(const Args& a);
#define TANDEM_PRECISION_HELP                                                             \
  "  --precision fp32|tf32   fp32 (default): float32 math everywhere; tf32: the GPU's\n"   \
  "                          matrix products and convolutions on TF32 tensor cores\n"      \
  "                          (faster, ~1e-3 relative error; the CPU is unaffected)\n"

// `--no-cuda-graph`: every kernel launched, instead of the GPU work recorded once as a CUDA
// graph and replayed (SessionOptions::device_graphs, on by default in the CLI).
inline bool DeviceGraphsFromFlags(const Args& a) { return !a.has("--no-cuda-graph"); }
#define TANDEM_CUDA_GRAPH_HELP                                                              \
  "  --no-cuda-graph         launch the GPU's kernels one by one instead of replaying them\n" \
  "                          as a CUDA graph (recorded from the second run of a shape,\n"    \
  "                          where every node runs on the GPU), to compare\n"

// After a session's runs on a GPU, one line: "CUDA graph: N of M runs replayed" or
// "CUDA graph: off (why)". Nothing for a session on the CPU alone or with --no-cuda-graph.
void PrintDeviceGraphStatus(const Session& session, int64_t runs);

// --max-memory SIZE and --max-loop-iterations N, accepted by every command (Parse applies
// them to graph/resource_limits.h; a malformed value exits(2)).
#define TANDEM_LIMITS_HELP                                                                 \
  "  --max-memory SIZE       refuse tensors past this much live memory (e.g. 512M, 8G;\n"   \
  "                          default 80% of physical memory; GPU memory only if given)\n" \
  "  --max-loop-iterations N refuse Loop nodes that would run longer (default 10000000)\n"

// For cost-based placement between several providers, one line: the placement chosen,
// its estimate and the others', e.g. "placement: all on cpu, estimated 41 us per run
// (all on cuda 95 us, node by node 95 us)". Prints nothing otherwise.
void PrintPlacementChoice(const PartitionResult& placement);

// Prints a per-node time table, most expensive first.
void PrintProfile(std::vector<StepProfile> steps);

using Command = int (*)(int argc, char** argv);
int Convert(int argc, char** argv);
int Inspect(int argc, char** argv);
int Profile(int argc, char** argv);
int Run(int argc, char** argv);
int TestOnnx(int argc, char** argv);
int Train(int argc, char** argv);

}  // namespace tandem::cli
