// tandem convert: rewrite an ONNX model (optimize, change opset, quantize to int8, change weight
// precision, fix dimensions, move weights to external data) and verify the result against the original.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "cli/cli.h"
#include "cli/lib/convert/optimize.h"
#include "cli/lib/convert/quantize.h"
#include "cli/lib/convert/verify.h"
#include "cli/lib/convert/weight_storage.h"
#include "cli/lib/run_inputs.h"
#include "onnx_import/export.h"
#include "onnx_import/import.h"
#include "onnx_import/libonnx_isolated.h"
#include "onnx_import/tensor_proto.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem convert [options] IN.onnx OUT.onnx\n"
    "\n"
    "Rewrites a model and checks the result: the original and the converted model run on\n"
    "the same inputs (--input files, the rest random), and the command prints each output's\n"
    "max absolute and relative difference. OUT is written only when every output is within\n"
    "the tolerance; IN is never modified (OUT may name it).\n"
    "With no option, the model is re-written as is (e.g. external data brought inline).\n"
    "\n"
    "options:\n"
    "  --optimize              constant folding, Identity/Dropout removal, shape\n"
    "                          simplification, Conv+BatchNormalization folding, bias Adds\n"
    "                          into MatMul(->Gemm)/Gemm/Conv, Transpose cancellation (NHWC\n"
    "                          exports become channels-first inside), decomposed layer norms\n"
    "                          -> LayerNormalization (opset >= 17), dead code; output is\n"
    "                          standard ONNX\n"
    "  --opset N               convert to ai.onnx opset N with libonnx's version converter\n"
    "                          (opsets up to 17 in and out)\n"
    "  --quantize dynamic|static\n"
    "                          int8 weights, as ONNX Runtime's quantizer writes them:\n"
    "                          dynamic: MatMul/Gemm -> DynamicQuantizeLinear + MatMulInteger\n"
    "                          (per-column int8 weights); static: QDQ around Conv/MatMul/Gemm\n"
    "                          (per-channel int8 weights, uint8 activations calibrated on\n"
    "                          the --input values, which should be real data: a batch of\n"
    "                          representative samples). Verified against the original with\n"
    "                          rtol 0.1 unless given; classifier outputs also report how\n"
    "                          many rows keep their top-1 class\n"
    "  --weights fp16|bf16     store float32 weights as float16/bfloat16, each followed by a\n"
    "                          Cast to float32 (computation stays float32)\n"
    "  --min-elements N        --weights leaves initializers smaller than N (default 16)\n"
    "  --fix-dims NAME=N       set the symbolic input dimension NAME to N (repeatable)\n"
    "  --external-data         write initializers of >= --external-threshold bytes to\n"
    "                          OUT.onnx.data beside OUT (default: all weights inline)\n"
    "  --external-threshold B  bytes (default 1024)\n"
    "  --input NAME=FILE.npy   a verification input (repeatable); others are random\n"
    "  --dim SYMBOL=N          symbolic dimension of random inputs (default: --fix-dims, else 2)\n"
    "  --seed N                seed of the random inputs (default 0)\n"
    "  --rtol R, --atol A      pass when max|converted - original| <= A + R * max|original|\n"
    "                          per output (defaults: 1e-4 and 1e-5; with --weights fp16\n"
    "                          rtol 1e-2, bf16 5e-2)\n"
    TANDEM_LIMITS_HELP;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: tandem convert: %s\n", std::string(s.message()).c_str());
  return 1;
}

// Writes into a fresh folder beside `out`, then (once verified) renames into place.
struct Staging {
  std::filesystem::path dir, file;
  ~Staging() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  absl::Status Create(const std::filesystem::path& out) {
    const std::filesystem::path folder = out.has_parent_path() ? out.parent_path() : ".";
    std::error_code ec;
    if (out.filename().empty() || std::filesystem::is_directory(out, ec))
      return absl::InvalidArgumentError(out.string() + " is a folder; name the output file");
    if (!std::filesystem::is_directory(folder, ec))
      return absl::NotFoundError("the output folder " + folder.string() + " does not exist");
    std::string name = (folder / ".tandem-convert-XXXXXX").string();
    if (!mkdtemp(name.data()))
      return absl::PermissionDeniedError("cannot create a staging folder in " + folder.string() + ": " +
                                         std::strerror(errno));
    dir = name;
    file = dir / out.filename();
    return absl::OkStatus();
  }
  absl::Status MoveTo(const std::filesystem::path& out) {
    std::error_code ec;
    const auto data = std::filesystem::path(file.string() + ".data");
    if (std::filesystem::exists(data))
      std::filesystem::rename(data, out.string() + ".data", ec);
    if (!ec) std::filesystem::rename(file, out, ec);
    return ec ? absl::PermissionDeniedError("cannot move the result to " + out.string() + ": " + ec.message())
              : absl::OkStatus();
  }
};

// The external-data files `model` reads (an unreadable model has none: import reported it).
std::set<std::filesystem::path> ExternalFiles(const std::string& model) {
  std::set<std::filesystem::path> files;
  std::ifstream in(model, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string b = bytes.str();
  onnx::ModelProto m;
  if (!ParseModelProto(b.data(), b.size(), &m)) return files;
  const auto folder = std::filesystem::path(model).parent_path();
  std::error_code ec;
  for (const auto& init : m.graph().initializer())
    for (const auto& entry : init.external_data())
      if (entry.key() == "location") files.insert(std::filesystem::weakly_canonical(folder / entry.value(), ec));
  return files;
}

size_t NodeCount(const Graph& g) { return g.nodes.size(); }

}  // namespace

int Convert(int argc, char** argv) {
  Args a = Parse(argc, argv,
                 {"--opset", "--weights", "--min-elements", "--fix-dims", "--external-threshold", "--input",
                  "--dim", "--seed", "--rtol", "--atol", "--quantize"},
                 {"--optimize", "--external-data"}, kUsage);
  if (a.positional.size() != 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string in = a.positional[0], out = a.positional[1];
  DataType weights = DataType::kUndefined;
  if (a.has("--weights")) {
    const std::string w = a.get("--weights");
    weights = w == "fp16" ? DataType::kFloat16 : w == "bf16" ? DataType::kBfloat16 : DataType::kUndefined;
    if (weights == DataType::kUndefined) {
      std::fprintf(stderr, "error: --weights expects fp16 or bf16, got '%s'\n", w.c_str());
      return 2;
    }
  }
  const std::string quantize = a.has("--quantize") ? a.get("--quantize") : "";
  if (!quantize.empty() && quantize != "dynamic" && quantize != "static") {
    std::fprintf(stderr, "error: --quantize expects dynamic or static, got '%s'\n", quantize.c_str());
    return 2;
  }
  auto fixed = ParseDimSpecs(a.all("--fix-dims"), "--fix-dims");
  auto dims = ParseDimSpecs(a.all("--dim"), "--dim");
  auto files = ParseAssignments(a.all("--input"), "--input", "NAME=FILE.npy");
  if (!fixed.ok() || !dims.ok() || !files.ok()) {
    const absl::Status s = !fixed.ok() ? fixed.status() : !dims.ok() ? dims.status() : files.status();
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const long target_opset = a.get_int("--opset", 0, 0);
  const long threshold = a.get_int("--external-threshold", 1024, 0);
  if (a.has("--opset") && target_opset < 1) {
    std::fprintf(stderr, "error: --opset expects a positive opset number\n");
    return 2;
  }

  // Where the result goes is checked before any work.
  Staging staging;
  if (auto s = staging.Create(out); !s.ok()) return Fail(s);
  const size_t external = a.has("--external-data") ? static_cast<size_t>(std::max(threshold, 1L)) : 0;
  std::error_code ec;
  if (external && std::filesystem::exists(out + ".data", ec) &&  // else nothing to overwrite
      ExternalFiles(in).count(std::filesystem::weakly_canonical(out + ".data", ec)))
    return Fail(absl::InvalidArgumentError(
        out + ".data holds " + in + "'s weights: it would be replaced before " + out +
        " is; write the converted model under another name"));

  ImportOptions import;
  import.fixed_dims = *fixed;
  auto graph = ImportModelFile(in, import);
  if (!graph.ok()) return Fail(graph.status());
  const size_t nodes_before = NodeCount(*graph);
  std::printf("%s: %zu nodes, ai.onnx opset %d\n", in.c_str(), nodes_before, graph->opset(""));

  if (a.has("--opset") && target_opset != graph->opset("")) {
    const int from = graph->opset("");
    if (from > kMaxLibOnnxOpset || target_opset > kMaxLibOnnxOpset)
      return Fail(absl::InvalidArgumentError(
          "--opset: libonnx 1.12's version converter knows ai.onnx opsets up to " +
          std::to_string(kMaxLibOnnxOpset) + "; this asks for " + std::to_string(from) + " -> " +
          std::to_string(target_opset)));
    auto proto = ExportModel(*graph);
    if (!proto.ok()) return Fail(proto.status());
    if (auto s = ConvertOpsetIsolated(*proto, static_cast<int>(target_opset)); !s.ok())
      return Fail(absl::InvalidArgumentError("--opset " + std::to_string(target_opset) + ": " + std::string(s.message())));
    std::string bytes;
    proto->SerializeToString(&bytes);
    auto converted = ImportModelBuffer(bytes.data(), bytes.size(), "", in + " (opset " + std::to_string(target_opset) + ")");
    if (!converted.ok()) return Fail(converted.status());
    *graph = std::move(*converted);
    std::printf("opset: %d -> %d (%zu nodes)\n", from, graph->opset(""), NodeCount(*graph));
  }
  if (a.has("--optimize")) {
    auto report = convert::Optimize(*graph);
    if (!report.ok()) return Fail(report.status());
    for (const auto& [what, n] : *report) std::printf("optimize: %d %s\n", n, what.c_str());
  }
  auto feeds = ReadNpyFiles(*files);
  if (!feeds.ok()) return Fail(feeds.status());
  std::map<std::string, int64_t> verify_dims = *dims;
  for (const auto& [name, value] : *fixed) verify_dims.emplace(name, value);
  const unsigned seed = static_cast<unsigned>(a.get_int("--seed", 0, 0, UINT32_MAX));
  if (quantize == "dynamic") {
    auto report = convert::QuantizeDynamic(*graph);
    if (!report.ok()) return Fail(report.status());
    std::printf("quantize dynamic: %d MatMul/Gemm layers with int8 weights, %d activations quantized at run time\n",
                report->layers, report->activations);
  } else if (quantize == "static") {
    if (feeds->empty())
      std::fprintf(stderr, "warning: --quantize static calibrates on random inputs: give --input NAME=FILE.npy "
                           "with real data for usable ranges\n");
    auto calibration = AddRandomInputs(graph->inputs, *feeds, verify_dims, seed, 2);
    if (!calibration.ok()) return Fail(calibration.status());
    auto report = convert::QuantizeStatic(*graph, {*calibration});
    if (!report.ok()) return Fail(report.status());
    std::printf("quantize static: %d Conv/MatMul/Gemm layers with int8 weights, %d activations quantized (QDQ)\n",
                report->layers, report->activations);
  }
  if (weights != DataType::kUndefined) {
    const int n = convert::StoreWeightsAs(*graph, weights, a.get_int("--min-elements", 16, 0));
    std::printf("weights: %d float32 initializers stored as %s\n", n, DataTypeName(weights));
  }

  auto proto = ExportModel(*graph);
  if (!proto.ok()) return Fail(proto.status());
  std::printf("onnx.checker: %s\n", graph->opset("") <= kMaxLibOnnxOpset
                                        ? "passed"
                                        : "not run (libonnx 1.12 knows opsets up to 17)");
  if (auto s = WriteModelFile(*proto, staging.file.string(), external); !s.ok()) return Fail(s);

  convert::VerifyOptions verify;
  verify.feeds = std::move(*feeds);
  verify.fixed_dims = *fixed;
  verify.dims = verify_dims;
  verify.seed = seed;
  verify.rtol = a.get_double("--rtol", !quantize.empty()                ? 1e-1
                                       : weights == DataType::kFloat16  ? 1e-2
                                       : weights == DataType::kBfloat16 ? 5e-2
                                                                        : 1e-4,
                               DoubleRange{0});
  verify.atol = a.get_double("--atol", 1e-5, DoubleRange{0});
  auto diffs = convert::CompareModels(in, staging.file.string(), verify);
  if (!diffs.ok()) return Fail(absl::Status(diffs.status().code(), "verification: " + std::string(diffs.status().message())));
  bool ok = true;
  std::printf("verification (rtol %g, atol %g):\n", verify.rtol, verify.atol);
  for (const convert::OutputDifference& d : *diffs) {
    std::printf("  %-24s %-14s max abs diff %.3g  max rel diff %.3g  %s\n", d.name.c_str(), d.shape.c_str(),
                d.max_abs, d.max_rel(), d.within ? "ok" : "FAILED");
    if (!quantize.empty() && d.rows > 0)
      std::printf("  %-24s top-1 class kept in %lld of %lld rows\n", "", static_cast<long long>(d.top1_kept),
                  static_cast<long long>(d.rows));
    ok &= d.within;
  }
  if (!ok) {
    std::fprintf(stderr, "error: tandem convert: the converted model's outputs differ beyond the tolerance; "
                         "%s was not written\n", out.c_str());
    return 1;
  }
  if (auto s = staging.MoveTo(out); !s.ok()) return Fail(s);
  const auto size = std::filesystem::file_size(out, ec);
  std::printf("wrote %s: %zu nodes (was %zu), %.2f MB%s\n", out.c_str(), NodeCount(*graph), nodes_before,
              ec ? 0.0 : size / 1e6, external ? " + external data" : "");
  return 0;
}

}  // namespace tandem::cli
