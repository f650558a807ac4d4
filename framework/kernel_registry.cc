#include "framework/kernel_registry.h"

#include <algorithm>

namespace tandem {

namespace types {
const std::vector<DataType> kFloats = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                       DataType::kBfloat16};
const std::vector<DataType> kFloat = {DataType::kFloat};
const std::vector<DataType> kIntegers = {DataType::kInt8,   DataType::kInt16,  DataType::kInt32,
                                         DataType::kInt64,  DataType::kUint8,  DataType::kUint16,
                                         DataType::kUint32, DataType::kUint64};
const std::vector<DataType> kNumeric = {
    DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
    DataType::kInt8,  DataType::kInt16,  DataType::kInt32,   DataType::kInt64,
    DataType::kUint8, DataType::kUint16, DataType::kUint32,  DataType::kUint64};
const std::vector<DataType> kSignedNumeric = {DataType::kFloat, DataType::kDouble,
                                              DataType::kFloat16, DataType::kBfloat16,
                                              DataType::kInt8, DataType::kInt16,
                                              DataType::kInt32, DataType::kInt64};
const std::vector<DataType> kAll = {
    DataType::kFloat,  DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
    DataType::kInt8,   DataType::kInt16,  DataType::kInt32,   DataType::kInt64,
    DataType::kUint8,  DataType::kUint16, DataType::kUint32,  DataType::kUint64,
    DataType::kBool,   DataType::kString};
const std::vector<DataType> kAllAndNarrow = [] {
  std::vector<DataType> v = kAll;
  for (int t = 17; t <= 26; ++t) v.push_back(static_cast<DataType>(t));
  return v;
}();
}  // namespace types

bool KernelDef::reads_on_host(int input) const {
  return std::find(host_inputs.begin(), host_inputs.end(), input) != host_inputs.end();
}

bool KernelDef::reads_metadata_only(int input) const {
  return any_device ||
         std::find(metadata_inputs.begin(), metadata_inputs.end(), input) != metadata_inputs.end();
}

void KernelRegistry::Add(KernelDef def) {
  if (def.domain == "ai.onnx") def.domain.clear();
  defs_[{def.domain, def.op}].push_back(std::move(def));
}

void KernelRegistry::Add(const std::string& op, int since, int until, std::vector<DataType> t,
                         KernelFactory create, int type_input) {
  KernelDef def;
  def.op = op;
  def.since = since;
  def.until = until;
  def.types = std::move(t);
  def.type_input = type_input;
  def.create = std::move(create);
  Add(std::move(def));
}

const KernelDef* KernelRegistry::Find(const std::string& domain, const std::string& op,
                                      int opset, DataType dtype) const {
  auto it = defs_.find({domain == "ai.onnx" ? "" : domain, op});
  if (it == defs_.end()) return nullptr;
  for (const KernelDef& def : it->second) {
    if (opset < def.since || opset > def.until) continue;
    if (dtype == DataType::kUndefined || def.types.empty() ||
        std::find(def.types.begin(), def.types.end(), dtype) != def.types.end())
      return &def;
  }
  return nullptr;
}

std::string KernelRegistry::ExplainMiss(const std::string& domain, const std::string& op,
                                        int opset, DataType dtype) const {
  std::string full = (domain.empty() || domain == "ai.onnx" ? "" : domain + ".") + op;
  auto it = defs_.find({domain == "ai.onnx" ? "" : domain, op});
  if (it == defs_.end()) return "no kernel for op " + full;
  std::string ranges;
  bool opset_ok = false;
  for (const KernelDef& def : it->second) {
    if (!ranges.empty()) ranges += ", ";
    ranges += std::to_string(def.since) + "-" +
              (def.until >= (1 << 30) ? std::string("") : std::to_string(def.until));
    if (opset >= def.since && opset <= def.until) opset_ok = true;
  }
  if (!opset_ok)
    return "no kernel for " + full + " at opset " + std::to_string(opset) +
           " (kernels exist for opsets " + ranges + ")";
  return std::string("no kernel for ") + full + " at opset " + std::to_string(opset) +
         " with element type " + DataTypeName(dtype);
}

std::vector<std::string> KernelRegistry::Ops() const {
  std::vector<std::string> out;
  for (const auto& [key, defs] : defs_)
    out.push_back((key.first.empty() ? "" : key.first + ".") + key.second);
  return out;
}

}  // namespace tandem
