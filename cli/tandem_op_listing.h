// What `tandem inspect` says about ai.tandem ops (ops/tandem_ops.h): their declarations
// (--op NAME|all), and which of them a model or its placed graph uses.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cli {

// "all": every declaration; else the one of op `name`. An unknown name is an error on
// stderr that names it and lists the declared ops; returns the exit status (0 or 1).
int PrintTandemOpDeclarations(const std::string& name);

// One line per ai.tandem op that `model` or `placed` (null: none) holds: the op and the
// start of its meaning, or that ai.tandem declares no such op. Nothing when
// neither graph has one.
void PrintTandemOpsUsed(const Graph& model, const Graph* placed);

}  // namespace tandem::cli
