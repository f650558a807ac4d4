// Kernel: the compiled form of one node on one provider. Created once per node by the
// provider (KernelInfo carries the node, its opset and what is known statically) and
// run many times through Compute(KernelContext&).
//
// Contract for Compute:
//   - inputs come as `const Tensor*` (nullptr for an omitted optional input) on the
//     provider's device;
//   - each wanted output is produced by AllocateOutput (fresh memory) or SetOutput (e.g.
//     an alias of an input, as Reshape does); shapes are computed from the inputs;
//   - errors are returned as absl::Status describing what is wrong; the runtime prefixes
//     the node's name and op, so messages need not repeat them.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/allocator.h"
#include "graph/graph.h"
#include "graph/node.h"

namespace tandem {

class ExecutionProvider;

struct KernelInfo {
  const Node& node;
  int opset = 0;                        // version of node.domain imported by the model
  std::vector<DataType> input_types;    // kUndefined where unknown statically
  std::vector<DataType> output_types;
  std::vector<const Tensor*> constant_inputs;  // initializer values; nullptr otherwise
  // Static shapes (rank unknown where shape inference said nothing), for cost estimates.
  std::vector<Shape> input_shapes, output_shapes;
  ExecutionProvider* provider = nullptr;

  DataType input_type(size_t i) const {
    return i < input_types.size() ? input_types[i] : DataType::kUndefined;
  }
  const Tensor* constant_input(size_t i) const {
    return i < constant_inputs.size() ? constant_inputs[i] : nullptr;
  }
};

// Runs a subgraph attribute of the node (If/Loop/Scan bodies) with the given inputs;
// values of enclosing graphs are visible to it.
using SubgraphRunner = std::function<absl::StatusOr<std::vector<Tensor>>(
    const std::string& attribute, const std::vector<Tensor>& inputs)>;

// What one kernel call sees. It views the caller's vectors (no copies: a plan reuses
// them step after step), which must outlive the context.
class KernelContext {
 public:
  KernelContext(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                const std::vector<bool>& wanted, Allocator* allocator, int num_threads)
      : inputs_(&inputs),
        outputs_(outputs),
        wanted_(&wanted),
        allocator_(allocator),
        num_threads_(num_threads) {}

  int num_inputs() const { return static_cast<int>(inputs_->size()); }
  const Tensor* input(int i) const {
    const Tensor* t = i < num_inputs() ? (*inputs_)[i] : nullptr;
    return t && t->defined() ? t : nullptr;
  }
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  // Whether output i exists in the node and someone reads it.
  bool output_wanted(int i) const { return i < static_cast<int>(wanted_->size()) && (*wanted_)[i]; }
  Tensor& AllocateOutput(int i, DataType dtype, Dims dims) {
    (*outputs_)[i] = AllocateTensor(*allocator_, dtype, std::move(dims));
    return (*outputs_)[i];
  }
  void SetOutput(int i, Tensor t) { (*outputs_)[i] = std::move(t); }
  Allocator& allocator() { return *allocator_; }
  int num_threads() const { return num_threads_; }

  void set_subgraph_runner(SubgraphRunner runner) { subgraph_runner_ = std::move(runner); }
  absl::StatusOr<std::vector<Tensor>> RunSubgraph(const std::string& attribute,
                                                  const std::vector<Tensor>& inputs) const {
    if (!subgraph_runner_) return absl::UnimplementedError("subgraphs are not available here");
    return subgraph_runner_(attribute, inputs);
  }

 private:
  const std::vector<const Tensor*>* inputs_;
  std::vector<Tensor>* outputs_;
  const std::vector<bool>* wanted_;
  Allocator* allocator_;
  int num_threads_;
  SubgraphRunner subgraph_runner_;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual absl::Status Compute(KernelContext& ctx) = 0;
};

}  // namespace tandem
