// tandem inspect: what is in a model and where it would run.
#include <cstdio>
#include <algorithm>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/lib/run_inputs.h"
#include "cli/tandem_op_listing.h"
#include "cli/train_flags.h"
#include "framework/copy_kernel.h"
#include "framework/plugin/provider_plugin.h"
#include "onnx_import/import.h"
#include "runtime/session.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem inspect [options] MODEL.onnx\n"
    "       tandem inspect --op NAME|all\n"
    "\n"
    "Prints the model's inputs and outputs with types and shapes, opsets, an op\n"
    "histogram, the parameter count and bytes, and the provider each op runs on.\n"
    "With --device cuda on a machine without a GPU, a placement preview: the nodes are\n"
    "placed with the CUDA plugin's kernel table (no device is touched), by the same\n"
    "code as a GPU run, and the nodes left on the host and the copies a run on a GPU\n"
    "would make are listed. The ai.tandem ops (Tandem's own, written by its fusions,\n"
    "rewrites and training) that the model or its placed graph holds are listed with\n"
    "what they compute; --op prints an op's declaration (inputs, outputs, attributes).\n"
    "\n"
    "options:\n"
    "  --providers LIST        comma-separated provider preference (overrides --device)\n"
    TANDEM_DEVICE_HELP
    "                          (default here: cpu)\n"
    "  --train                 the training step instead (forward, loss, backward, update),\n"
    "                          with tandem train's loss and optimizer flags:\n"
    TANDEM_TRAIN_SPEC_HELP
    "  --costs                 place by estimated cost (as --device auto does) and print\n"
    "                          each node's estimate on each provider (implied by --device auto)\n"
    "  --dim SYMBOL=N          a size for a symbolic dim in the estimates, e.g. batch=128\n"
    "                          (repeatable; unbound dims count as 4 KiB values)\n"
    "  --op NAME|all           the declaration of ai.tandem op NAME, or of every one (no model)\n"
    TANDEM_LIMITS_HELP;

// kLowestCost's per-node estimates, most expensive first, and the placement's totals.
void PrintEstimates(const Graph& graph, const PartitionResult& placement,
                    const std::map<std::string, int64_t>& dims) {
  std::string unbound;
  for (const ValueInfo& in : graph.inputs)
    for (const Dim& d : in.shape.dims)
      if (!d.known() && !d.symbol.empty() && !dims.count(d.symbol) && unbound.find(d.symbol) == std::string::npos)
        unbound += (unbound.empty() ? "" : ", ") + d.symbol;
  std::printf("estimated cost per run (us, copies excluded)%s:\n",
              unbound.empty() ? "" : (" with " + unbound + " unbound: give --dim " + unbound.substr(0, unbound.find(',')) + "=N").c_str());
  std::vector<NodeEstimate> nodes = placement.node_estimates;
  auto cost = [](const NodeEstimate& e) {
    for (const auto& [p, us] : e.us)
      if (p == e.placed_on) return us;
    return 0.0;
  };
  std::stable_sort(nodes.begin(), nodes.end(), [&](const auto& x, const auto& y) { return cost(x) > cost(y); });
  std::vector<std::string> providers;
  for (const NodeEstimate& e : nodes)
    for (const auto& [p, us] : e.us)
      if (std::find(providers.begin(), providers.end(), p) == providers.end()) providers.push_back(p);
  std::printf("  %-32s %-18s", "node", "op");
  for (const std::string& p : providers) std::printf(" %10s", p.c_str());
  std::printf("  placed on\n");
  constexpr size_t kShown = 40;
  for (size_t i = 0; i < nodes.size() && i < kShown; ++i) {
    const NodeEstimate& e = nodes[i];
    std::printf("  %-32.32s %-18.18s", e.node.c_str(), e.op.c_str());
    for (const std::string& p : providers) {
      auto it = std::find_if(e.us.begin(), e.us.end(), [&](const auto& x) { return x.first == p; });
      if (it == e.us.end()) std::printf(" %10s", "-");
      else std::printf(" %10.2f", it->second);
    }
    std::printf("  %s\n", e.placed_on.c_str());
  }
  if (nodes.size() > kShown) std::printf("  ... %zu cheaper nodes\n", nodes.size() - kShown);
  std::printf("placement totals (us per run, copies included):");
  for (const auto& [name, us] : placement.candidates)
    std::printf(" %s %.4g%s;", name.c_str(), us, name == placement.plan ? " (chosen)" : "");
  std::printf("\n");
}

}  // namespace

// Where the session's nodes run beyond the op table: in a preview or whenever a device is
// in play, the nodes left on the host and every copy between devices.
void PrintHostNodesAndCopies(const Graph& placed, const std::set<std::string>& resident) {
  std::map<std::string, int> host_ops;
  std::vector<std::string> copies;
  for (const Node& n : placed.nodes) {
    if (IsDeviceCopy(n)) {
      // Constants are copied once, not per run; a trainer keeps its parameters and
      // optimizer state on the device, so their Copy nodes move nothing per step.
      copies.push_back(n.inputs[0] + " -> " + n.attr_string("to", "?") +
                       (placed.initializers.count(n.inputs[0]) ? " (once)"
                        : resident.count(n.inputs[0])          ? " (resident)"
                                                               : ""));
    } else if (n.provider == "cpu") {
      ++host_ops[n.op_type];
    }
  }
  std::string host;
  for (const auto& [op, c] : host_ops) host += " " + op + (c > 1 ? "x" + std::to_string(c) : "");
  std::printf("on the host:%s\n", host.empty() ? " nothing" : host.c_str());
  std::printf("copies (%zu):", copies.size());
  for (const std::string& c : copies) std::printf(" %s;", c.c_str());
  std::printf("\n");
}

int Inspect(int argc, char** argv) {
  std::vector<std::string> value_flags = {"--providers", "--device", "--provider", "--dim", "--op"};
  std::vector<std::string> bool_flags = {"--costs", "--train"};
  value_flags.insert(value_flags.end(), TrainSpecValueFlags().begin(), TrainSpecValueFlags().end());
  bool_flags.insert(bool_flags.end(), TrainSpecBoolFlags().begin(), TrainSpecBoolFlags().end());
  Args a = Parse(argc, argv, value_flags, bool_flags, kUsage);
  if (a.has("--op")) {
    if (!a.positional.empty()) {
      std::fprintf(stderr, "error: --op prints an op's declaration and takes no model\n");
      return 2;
    }
    return PrintTandemOpDeclarations(a.get("--op"));
  }
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string path = a.positional[0];
  auto graph = ImportModelFile(path);
  if (!graph.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  std::printf("model: %s\n", path.c_str());
  std::printf("opsets:");
  for (const auto& [domain, v] : graph->opsets)
    std::printf(" %s=%d", domain.empty() ? "ai.onnx" : domain.c_str(), v);
  std::printf("\ninputs:\n");
  for (const ValueInfo& v : graph->inputs) std::printf("  %-24s %s\n", v.name.c_str(), v.TypeString().c_str());
  std::printf("outputs:\n");
  for (const ValueInfo& v : graph->outputs) std::printf("  %-24s %s\n", v.name.c_str(), v.TypeString().c_str());
  int64_t params = 0, bytes = 0;
  for (const auto& [name, t] : graph->initializers) {
    if (IsFloatingPoint(t.dtype())) params += t.numel();
    bytes += static_cast<int64_t>(t.bytes());
  }
  std::printf("parameters: %lld (float initializers), %lld initializers, %.2f MiB\n",
              static_cast<long long>(params), static_cast<long long>(graph->initializers.size()),
              bytes / 1048576.0);
  std::map<std::string, int> histogram;
  for (const Node& n : graph->nodes) ++histogram[n.op_type];

  SessionOptions so;
  const DeviceChoice choice = DeviceFromFlags(a, "cpu");
  so.providers = choice.providers;
  so.placement = choice.placement;
  const bool costs = a.has("--costs") || a.get("--device", a.get("--provider")) == "auto";
  if (costs) so.placement = PartitionOptions::Policy::kLowestCost;
  auto dims = ParseDimSpecs(a.all("--dim"), "--dim");
  if (!dims.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(dims.status().message()).c_str());
    return 2;
  }
  so.dim_values = *dims;
  if (a.has("--providers")) {
    so.providers.clear();
    std::string list = a.get("--providers");
    for (size_t p = 0; p <= list.size();) {
      size_t q = list.find(',', p);
      if (q == std::string::npos) q = list.size();
      if (q > p) so.providers.push_back(list.substr(p, q - p));
      p = q + 1;
    }
  }
  // No GPU here but its plugin loads: preview what a GPU run would place.
  const std::string asked = a.get("--device", a.get("--provider", "cpu"));
  const auto& accelerators = AcceleratorNames();
  if (!a.has("--providers") && choice.device == "cpu" &&
      std::find(accelerators.begin(), accelerators.end(), asked) != accelerators.end() &&
      ProbeProviderPlugin(asked).loaded) {
    so.providers = {asked, "cpu"};
    so.placement_preview = true;
    std::printf("placement preview: no %s device here; nodes placed with the %s plugin's kernel table, by the\n"
                "same code as a run on one (nothing runs)\n", asked.c_str(), asked.c_str());
  }
  const bool train = a.has("--train");
  absl::StatusOr<std::unique_ptr<Session>> session = absl::UnknownError("");
  std::set<std::string> resident;
  if (train) {
    training::TrainerOptions to;
    if (auto st = TrainSpecFromFlags(a, &to); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
      return 2;
    }
    to.providers = so.providers;
    to.placement = so.placement;
    to.dim_values = so.dim_values;
    auto preview = training::Trainer::PreviewStep(*graph, to);
    if (preview.ok()) {
      resident = std::move(preview->resident);
      session = std::move(preview->session);
    } else {
      session = preview.status();
    }
    histogram.clear();  // the step's ops: forward, loss, backward and update
    if (session.ok())
      for (const Node& n : (*session)->graph().nodes)
        if (!(IsDeviceCopy(n))) ++histogram[n.op_type];
    std::printf("training step (%s loss, %s):\n", a.get("--loss", "mse").c_str(), a.get("--optimizer", "adam").c_str());
  } else {
    session = Session::FromGraph(*graph, so);
  }
  std::map<std::string, std::map<std::string, int>> placement;  // op -> provider -> count
  if (session.ok())
    for (const Node& n : (*session)->graph().nodes) ++placement[n.op_type][n.provider];
  int node_count = 0;
  for (const auto& [op, c] : histogram) node_count += c;
  std::printf("nodes: %d\n", node_count);
  std::printf("  %-28s %6s  %s\n", "op", "count", "runs on (after folding)");
  for (const auto& [op, count] : histogram) {
    std::string where;
    for (const auto& [prov, c] : placement[op]) where += prov + ":" + std::to_string(c) + " ";
    if (where.empty()) where = session.ok() ? "(folded or fused away)" : "-";
    std::printf("  %-28s %6d  %s\n", op.c_str(), count, where.c_str());
  }
  for (const auto& [op, where] : placement) {  // fused nodes and device copies
    if (histogram.count(op)) continue;
    std::string list;
    for (const auto& [prov, c] : where) list += prov + ":" + std::to_string(c) + " ";
    std::printf("  %-28s %6s  %s(added by fusion or placement)\n", op.c_str(), "-", list.c_str());
  }
  PrintTandemOpsUsed(*graph, session.ok() ? &(*session)->graph() : nullptr);
  if (!session.ok()) {
    std::printf("placement: FAILED: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  const SessionStats& st = (*session)->stats();
  std::printf("placement:");
  for (const auto& [prov, c] : st.placement.nodes_per_provider) std::printf(" %s=%d nodes", prov.c_str(), c);
  std::printf(", %d device copies, %d nodes constant-folded, %d removed as dead code, "
              "%d fused, %d rewritten by their provider\n",
              st.placement.copies_inserted, st.nodes_folded, st.nodes_removed, st.nodes_fused,
              st.nodes_provider_rewritten);
  if (so.placement_preview || so.providers.size() > 1) PrintHostNodesAndCopies((*session)->graph(), resident);
  if (costs) PrintEstimates(*graph, st.placement, *dims);
  return 0;
}

}  // namespace tandem::cli
