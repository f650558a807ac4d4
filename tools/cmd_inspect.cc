// tandem inspect: what is in a model and where it would run.
#include <cstdio>
#include <map>

#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tools/cli.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem inspect [options] MODEL.onnx\n"
    "\n"
    "Prints the model's inputs and outputs with types and shapes, opsets, an op\n"
    "histogram, the parameter count and bytes, and the provider each op runs on.\n"
    "\n"
    "options:\n"
    "  --providers LIST        comma-separated provider preference (overrides --device)\n"
    TANDEM_DEVICE_HELP
    TANDEM_LIMITS_HELP;

}  // namespace

int Inspect(int argc, char** argv) {
  Args a = Parse(argc, argv, {"--providers", "--device", "--provider"}, {}, kUsage);
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
  so.providers = DeviceProviders(a, "cpu");
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
  auto session = Session::FromGraph(*graph, so);
  std::map<std::string, std::map<std::string, int>> placement;  // op -> provider -> count
  if (session.ok())
    for (const Node& n : (*session)->graph().nodes) ++placement[n.op_type][n.provider];
  std::printf("nodes: %zu\n", graph->nodes.size());
  std::printf("  %-28s %6s  %s\n", "op", "count", "runs on (after folding)");
  for (const auto& [op, count] : histogram) {
    std::string where;
    for (const auto& [prov, c] : placement[op]) where += prov + ":" + std::to_string(c) + " ";
    if (where.empty()) where = session.ok() ? "(folded away)" : "-";
    std::printf("  %-28s %6d  %s\n", op.c_str(), count, where.c_str());
  }
  for (const auto& [op, where] : placement) {  // fused nodes and device copies
    if (histogram.count(op)) continue;
    std::string list;
    for (const auto& [prov, c] : where) list += prov + ":" + std::to_string(c) + " ";
    std::printf("  %-28s %6s  %s(added by fusion or placement)\n", op.c_str(), "-", list.c_str());
  }
  if (!session.ok()) {
    std::printf("placement: FAILED: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  const SessionStats& st = (*session)->stats();
  std::printf("placement:");
  for (const auto& [prov, c] : st.nodes_per_provider) std::printf(" %s=%d nodes", prov.c_str(), c);
  std::printf(", %d device copies, %d nodes constant-folded, %d removed as dead code, "
              "%d fused, %d rewritten by their provider\n",
              st.copies_inserted, st.nodes_folded, st.nodes_removed, st.nodes_fused,
              st.nodes_provider_rewritten);
  return 0;
}

}  // namespace tandem::cli
