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
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

}  // namespace tandem
