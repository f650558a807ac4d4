// KernelRegistry: kernels of one provider keyed by (domain, op, opset range, dtype).
// Registration states the ONNX opset range each kernel implements, so a model importing
// opset 11 never runs a kernel written for opset 13's semantics.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/kernel.h"

namespace tandem {

using KernelFactory = std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const KernelInfo&)>;

struct KernelDef {
  std::string domain;   // "" = ai.onnx, "ai.tandem" = our own ops (ops/tandem_ops.h)
  std::string op;
  int since = 1;        // first opset (inclusive)
  int until = 1 << 30;  // last opset (inclusive)
  std::vector<DataType> types;  // accepted types of input `type_input`; empty = any
  int type_input = 0;
  KernelFactory create;
  // Inputs the kernel reads on the host (shape vectors, axes, scalars such as an
  // optimizer's step and learning rate): the partitioner never copies them to the device.
  std::vector<int> host_inputs;
  // Inputs of which the kernel reads only dtype and dims (SumToShape's `like`): they may
  // live on any device and are never copied.
  std::vector<int> metadata_inputs;
  // Every input may live on any device: Shape and Size read only dims, Copy moves data
  // between devices itself.
  bool any_device = false;
  // The kernel writes some of its inputs in place (an optimizer update: the parameter
  // and its state). A recorded device graph (runtime/plan_capture.h) then reads and
  // writes the caller's buffers themselves, so it is replayed only while the caller
  // feeds those same buffers.
  bool updates_inputs_in_place = false;

  bool reads_on_host(int input) const;
  bool reads_metadata_only(int input) const;
};

// Builds a factory for kernel class K constructible from `const KernelInfo&`.
template <typename K>
KernelFactory Make() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(info));
  };
}

class KernelRegistry {
 public:
  void Add(KernelDef def);
  // Shorthand for the default domain.
  void Add(const std::string& op, int since, int until, std::vector<DataType> types,
           KernelFactory create, int type_input = 0);

  // The kernel for `op` at `opset` accepting `dtype` (kUndefined matches any), or null.
  const KernelDef* Find(const std::string& domain, const std::string& op, int opset,
                        DataType dtype) const;
  // Why Find failed, e.g. "no kernel for Foo" or "Relu has kernels for opsets 6-12 and
  // 13-13 but not opset 14" or "... not for type int64".
  std::string ExplainMiss(const std::string& domain, const std::string& op, int opset,
                          DataType dtype) const;
  // All (domain, op) pairs with at least one kernel.
  std::vector<std::string> Ops() const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> defs_;
};

// Common type sets.
namespace types {
extern const std::vector<DataType> kFloats;      // float, double, float16, bfloat16
extern const std::vector<DataType> kFloat;       // float
extern const std::vector<DataType> kNumeric;     // all numbers (no bool, no string)
extern const std::vector<DataType> kSignedNumeric;
extern const std::vector<DataType> kIntegers;
extern const std::vector<DataType> kAll;         // every type incl. bool and string
extern const std::vector<DataType> kAllAndNarrow;  // kAll and the float8/float4/int4/int2 types
}  // namespace types

}  // namespace tandem
