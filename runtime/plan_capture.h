// Device graphs (CUDA Graphs) for a Plan: its device work recorded once and replayed as
// one launch per run, which removes the per-kernel launch cost that dominates small
// models (a 3-100-3 network's training step is ~20 launches of a few µs each, for
// microseconds of math). Plan::EnableCapture turns it on; Session does for
// SessionOptions::device_graphs.
//
// Which plans: every node runs on one provider that can capture, except
//   - copies of graph inputs and constants to the device (the prologue: run before the
//     recorded work, into the buffers it reads),
//   - host nodes that compute shapes only (Shape, Size and arithmetic on their results
//     and on constants: fixed for fixed input shapes, so not run again),
//   - copies of graph outputs to the host (the epilogue: run after it).
// A device node that reads some other host value (an optimizer's step as a host scalar)
// would see its recorded value forever: such a plan is not recorded. Nor is one with
// subgraphs, nodes on two devices, or data going back to the host mid-run.
//
// When: the first run with a set of input shapes, dtypes and devices launches kernel by
// kernel (it builds the kernels' per-shape state: cuDNN plans, workspaces); the next
// records and replays; later ones replay. Other inputs start over. While profiling, the
// plan launches (per-node times need the nodes).
//
// Inputs: a device-fed input that a node updates in place (an optimizer's parameter and
// state, KernelDef::updates_inputs_in_place) is read and written where the caller keeps
// it, so the recording is replayed only while the caller feeds that same buffer (a new
// one is recorded again; after kMaxRecordingsInARow the plan goes back to launches). Any
// other input is copied into a buffer of the plan's own before each replay (a device copy
// for a device-fed one, the prologue's copy for a host-fed one).
// Outputs: copied out of the recorded buffers into fresh ones after each replay, so a
// caller may keep them across runs; an output that is an input updated in place is the
// caller's tensor itself.
// A recording that fails (a kernel that waits for the device, a call the driver does not
// allow while recording) is not an error: that run and every later one launch kernel by
// kernel, and capture_status() says why.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "framework/execution_provider.h"
#include "graph/tensor.h"

namespace tandem {

struct PlanCapture {
  enum Role : int { kPrologue = 0, kShape = 1, kBody = 2, kEpilogue = 3 };
  static constexpr int kMaxRecordingsInARow = 3;

  // Fixed by EnableCapture.
  std::string off;                      // why the plan launches ("" while it records)
  ExecutionProvider* device = nullptr;  // whose work is recorded
  std::vector<Role> roles;              // per step
  std::vector<bool> in_place;           // per graph input: updated in place by a node
  std::vector<std::pair<size_t, int>> input_copies;  // prologue steps copying graph input k
  std::set<int> epilogue_slots;         // values the epilogue produces

  // What the last runs saw, and the recording.
  struct Feed {
    DataType dtype;
    Dims dims;
    Device device;
    bool operator==(const Feed& o) const { return dtype == o.dtype && dims == o.dims && device == o.device; }
  };
  std::vector<Feed> signature;  // of the inputs of the last run
  bool warm = false;            // a run with `signature` has launched every kernel
  std::unique_ptr<DeviceGraph> graph;
  std::vector<Tensor> bound;             // per graph input: the device buffer the recording reads
  std::vector<Tensor> prologue_outputs;  // per input copy: the device buffer it fills
  std::vector<Tensor> kept;              // per slot: what replays read back (outputs, epilogue inputs)
  int recordings_in_a_row = 0;
  int64_t replays = 0;

  // Forgets the recording (the buffers go back after the graph: work already enqueued
  // on the device's stream finishes before they are reused).
  void Drop() {
    graph.reset();
    bound.clear();
    prologue_outputs.clear();
    kept.clear();
  }
};

}  // namespace tandem
