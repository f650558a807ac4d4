#include "cli/tandem_op_listing.h"

#include <cctype>
#include <cstdio>
#include <set>

#include "ops/tandem_ops.h"

namespace tandem::cli {

namespace {

void PrintDeclaration(const TandemOpDecl& op) {
  std::printf("ai.tandem %s\n", op.name);
  std::printf("  inputs:     %s\n", *op.inputs ? op.inputs : "(none)");
  std::printf("  outputs:    %s\n", *op.outputs ? op.outputs : "(none)");
  std::printf("  attributes: %s\n", *op.attributes ? op.attributes : "(none)");
  std::printf("  %s\n", op.meaning);
}

// The meaning's first sentence (up to a period before a capital letter), cut at a word
// to fit one line.
std::string Summary(const char* meaning) {
  std::string s = meaning;
  for (size_t i = 0; i + 2 < s.size(); ++i)
    if (s[i] == '.' && s[i + 1] == ' ' && std::isupper(static_cast<unsigned char>(s[i + 2]))) {
      s.resize(i + 1);
      break;
    }
  constexpr size_t kWidth = 90;
  if (s.size() > kWidth) {
    const size_t cut = s.rfind(' ', kWidth - 4);
    s = s.substr(0, cut == std::string::npos ? kWidth - 4 : cut) + " ...";
  }
  return s;
}

}  // namespace

int PrintTandemOpDeclarations(const std::string& name) {
  if (name == "all") {
    for (const TandemOpDecl& op : TandemOps()) {
      PrintDeclaration(op);
      std::printf("\n");
    }
    std::printf("%zu ai.tandem ops\n", TandemOps().size());
    return 0;
  }
  if (const TandemOpDecl* op = FindTandemOp(name)) {
    PrintDeclaration(*op);
    return 0;
  }
  std::string names;
  for (const TandemOpDecl& op : TandemOps()) names += std::string(names.empty() ? "" : ", ") + op.name;
  std::fprintf(stderr, "error: ai.tandem has no op '%s'; its %zu ops: %s\n", name.c_str(), TandemOps().size(),
               names.c_str());
  return 1;
}

void PrintTandemOpsUsed(const Graph& model, const Graph* placed) {
  std::set<std::string> used;
  for (const Graph* g : {&model, placed})
    if (g)
      for (const Node& n : g->nodes)
        if (n.domain == kTandemDomain) used.insert(n.op_type);
  if (used.empty()) return;
  std::printf("ai.tandem ops (tandem inspect --op NAME for one's inputs and attributes):\n");
  for (const std::string& op : used) {
    const TandemOpDecl* decl = FindTandemOp(op);
    std::printf("  %-28s %s\n", op.c_str(),
                decl ? Summary(decl->meaning).c_str() : "not an ai.tandem op: Tandem declares no such op");
  }
}

}  // namespace tandem::cli
