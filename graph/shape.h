// Static type information of a value: element type and a shape whose dims may be
// symbolic ("batch") or unknown. Concrete runtime shapes are plain Dims (tensor.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/data_type.h"
#include "graph/tensor.h"

namespace tandem {

struct Dim {
  int64_t value = -1;   // >= 0 when known
  std::string symbol;   // set when symbolic; both empty/-1 means unknown
  bool known() const { return value >= 0; }
};

struct Shape {
  std::vector<Dim> dims;
  bool rank_known = false;
  static Shape Unknown() { return Shape{}; }
  static Shape Of(const Dims& d);
  bool fully_known() const;
  Dims ToDims() const;  // requires fully_known()
  std::string ToString() const;  // e.g. [batch,3,224,224] or ?
};

struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;  // tensors only; kUndefined for other kinds
  Shape shape;                            // tensors only
  // Non-tensor ONNX types: kind is kSequence (sequence of tensors) or kOptional (of a
  // tensor or, when optional_of is kSequence, of a sequence); elem_type is then the
  // element type of the innermost tensors (kUndefined when unknown).
  ValueKind kind = ValueKind::kTensor;
  ValueKind optional_of = ValueKind::kTensor;
  DataType elem_type = DataType::kUndefined;
  // "float[2,3]", "seq(float)", "optional(seq(float))".
  std::string TypeString() const;
};

}  // namespace tandem
