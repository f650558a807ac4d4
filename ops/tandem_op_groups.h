// The three parts of the ai.tandem declarations (ops/tandem_ops.h), one file each; only
// tandem_ops.cc reads them.
#pragma once
#include <vector>

#include "ops/tandem_ops.h"

namespace tandem::tandem_ops {

// Fusions, layouts, device copies, the all-reduce and the shape helpers of the gradient
// rules (tandem_ops.cc).
std::vector<TandemOpDecl> GraphOps();
// The *Grad ops the gradient rules write (tandem_gradient_ops.cc).
std::vector<TandemOpDecl> GradientOps();
// The losses, their gradients and the optimizer updates (tandem_training_ops.cc).
std::vector<TandemOpDecl> LossAndOptimizerOps();

}  // namespace tandem::tandem_ops
