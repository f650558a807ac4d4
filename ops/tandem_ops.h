// The ai.tandem ops: Tandem's own operators (domain "ai.tandem", opset 1), which the
// fusions (optimizer/), the CPU's rewrites (providers/cpu/rewrites/), the gradient rules
// and optimizers (training/) and the partitioner write into graphs, and which the
// providers' kernels run. Each has one declaration here: its inputs, outputs, attributes
// and what it computes. `tandem inspect` prints them (--op NAME, --op all) and names any
// ai.tandem op a model uses that is not declared; a Plan refuses to run one
// (runtime/plan.cc), and tests/tandem_ops_test.cc checks that every ai.tandem kernel of
// the CPU and CUDA providers is declared and every declared op has a CPU kernel.
#pragma once
#include <string_view>
#include <vector>

namespace tandem {

struct TandemOpDecl {
  const char* name;
  // Inputs and outputs in order, comma-separated: `?` marks an optional one, `...` a
  // variadic run (e.g. "W_1, B_1, ..."); "" none.
  const char* inputs;
  const char* outputs;
  // Each attribute a kernel reads: "name: type (default)", separated by "; "; "" none.
  const char* attributes;
  // What it computes, its element types and which code writes it into graphs.
  const char* meaning;
};

// Every declared op, sorted by name.
const std::vector<TandemOpDecl>& TandemOps();
// The declaration of `name`, or null when ai.tandem has no such op.
const TandemOpDecl* FindTandemOp(std::string_view name);

}  // namespace tandem
