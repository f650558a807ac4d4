#include "tests/fuzz/fuzz_entries.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/lib/args.h"
#include "cli/lib/run_inputs.h"
#include "graph/parse_number.h"
#include "graph/resource_limits.h"
#include "onnx_import/import.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "tests/remove_at_exit.h"
#include "training/checkpoint.h"
#include "training/data.h"

namespace tandem::fuzz {
namespace {

// A file holding `data`, private to this process, rewritten on every call.
std::string AsFile(const uint8_t* data, size_t size, const char* suffix) {
  static testing::RemoveAtExit made;
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/tandem_fuzz_" +
                           std::to_string(getpid()) + suffix;
  made.Add(path);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return path;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

// A deterministic input for `vi`, or an undefined Tensor when it would be too big.
Tensor SmallInput(const ValueInfo& vi, uint32_t seed) {
  if (vi.kind != ValueKind::kTensor || vi.dtype == DataType::kUndefined ||
      vi.dtype == DataType::kString)
    return Tensor();
  Dims dims;
  int64_t n = 1;
  for (const Dim& d : vi.shape.dims) {
    const int64_t v = d.known() ? d.value : 2;
    if (v > 4096 || (n *= std::max<int64_t>(v, 1)) > 4096) return Tensor();
    dims.push_back(v);
  }
  Tensor f = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < f.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    f.data<float>()[i] = static_cast<float>(seed >> 8) / 8388608.f - 1.f;  // [-1, 1)
  }
  return vi.dtype == DataType::kFloat ? f : f.CastTo(vi.dtype);
}

// libonnx's checker and shape inference are off: in an import they run in a child process
// (onnx_import/libonnx_isolated.h) whose crashes become errors — the recorded regressions
// cover that path — and a fork per execution would slow fuzzing ~30x. Tandem's own
// importer must cope without libonnx's shapes anyway (opsets above 17 never get them).
ImportOptions FuzzImportOptions() {
  ImportOptions o;
  o.run_checker = false;
  o.run_shape_inference = false;
  return o;
}

}  // namespace

void SetFuzzLimits() {
  ResourceLimits l = GetResourceLimits();
  l.max_memory_bytes = uint64_t{256} << 20;
  l.max_loop_iterations = 1000;
  SetResourceLimits(l);
}

void ImportModel(const uint8_t* data, size_t size) {
  ImportModelBuffer(data, size, "", "<fuzz>", FuzzImportOptions()).IgnoreError();
}

void ImportAndRun(const uint8_t* data, size_t size) {
  auto graph = ImportModelBuffer(data, size, "", "<fuzz>", FuzzImportOptions());
  if (!graph.ok()) return;
  SessionOptions options;
  options.num_threads = 1;
  auto session = Session::FromGraph(std::move(*graph), options);
  if (!session.ok()) return;
  std::map<std::string, Tensor> feeds;
  uint32_t seed = static_cast<uint32_t>(size);
  for (const ValueInfo& vi : (*session)->inputs()) {
    Tensor t = SmallInput(vi, seed++);
    if (!t.defined()) return;
    feeds[vi.name] = std::move(t);
  }
  (*session)->Run(feeds).IgnoreError();
}

void ReadNpyFile(const uint8_t* data, size_t size) {
  ReadNpy(AsFile(data, size, ".npy")).IgnoreError();
}

void LoadCheckpointFile(const uint8_t* data, size_t size) {
  training::LoadCheckpoint(AsFile(data, size, ".tdm")).IgnoreError();
}

void LoadCsvFile(const uint8_t* data, size_t size) {
  training::LoadCsv(AsFile(data, size, ".csv")).IgnoreError();
}

void LoadIdxFiles(const uint8_t* data, size_t size) {
  training::LoadIdx(AsFile(data, size, "-images.idx"), AsFile(data, size, "-labels.idx")).IgnoreError();
}

void ParseFlags(const uint8_t* data, size_t size) {
  std::vector<std::string> words = {"tandem"};
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (size_t start = 0; start <= text.size() && words.size() < 64;) {
    const size_t end = std::min(text.find('\0', start), text.size());
    words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  auto args = cli::ParseArgs(static_cast<int>(argv.size()), argv.data(),
                             {"--batch-size", "--epochs", "--lr", "--val-split", "--input", "--dim"}, {"--quiet"});
  if (!args.ok()) return;
  for (const auto& [flag, value] : args->flags) {
    ParseInt64(value, 1).IgnoreError();
    ParseFiniteDouble(value, DoubleRange{0, 1, false, true}).IgnoreError();
    ParseByteSize(value).IgnoreError();
  }
  cli::ParseAssignments(args->all("--input"), "--input", "NAME=FILE.npy").IgnoreError();
}

Entry EntryFor(const std::string& target) {
  static const std::map<std::string, Entry> entries = {
      {"import", ImportModel}, {"run", ImportAndRun}, {"npy", ReadNpyFile}, {"checkpoint", LoadCheckpointFile},
      {"csv", LoadCsvFile},    {"idx", LoadIdxFiles}, {"flags", ParseFlags}};
  auto it = entries.find(target);
  return it == entries.end() ? nullptr : it->second;
}

}  // namespace tandem::fuzz
