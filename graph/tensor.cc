#include "graph/tensor.h"

#include "graph/low_precision.h"
#include "graph/numeric_cast.h"
#include "graph/resource_limits.h"

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>

namespace tandem {

std::string Device::ToString() const {
  return type == DeviceType::kCpu ? "cpu" : "cuda:" + std::to_string(index);
}

int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string DimsToString(const Dims& dims) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "," : "") << dims[i];
  os << ']';
  return os.str();
}

Tensor::Tensor(DataType dtype, Dims dims, std::shared_ptr<Buffer> buffer, size_t byte_offset)
    : dtype_(dtype), dims_(std::move(dims)), buffer_(std::move(buffer)), offset_(byte_offset) {}

Tensor Tensor::Host(DataType dtype, Dims dims) {
  const size_t bytes = TensorBytesOrThrow(dtype, dims);
  const size_t n = static_cast<size_t>(NumElements(dims));
  auto buf = std::make_shared<Buffer>();
  buf->bytes = bytes;
  if (dtype == DataType::kString) {
    auto* s = new std::string[n ? n : 1];
    buf->data = s;
    buf->release = [](Buffer& b) { delete[] static_cast<std::string*>(b.data); };
  } else {
    size_t alloc = ((bytes ? bytes : 1) + 63) / 64 * 64;
    buf->data = std::aligned_alloc(64, alloc);
    if (!buf->data)
      throw AllocationError("out of memory allocating " + FormatBytes(alloc) + " for " +
                            DataTypeName(dtype) + DimsToString(dims));
    std::memset(buf->data, 0, alloc);
    buf->release = [](Buffer& b) { std::free(b.data); };
  }
  return Tensor(dtype, std::move(dims), std::move(buf));
}

Tensor Tensor::Sequence(DataType elem, std::vector<Tensor> elements) {
  Tensor t;
  t.dtype_ = elem;
  t.dims_ = {0};
  t.kind_ = ValueKind::kSequence;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  return t;
}

Tensor Tensor::Optional(Tensor value) {
  Tensor t;
  t.dtype_ = value.dtype();
  t.dims_ = {0};
  t.kind_ = ValueKind::kOptional;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::vector<Tensor>{std::move(value)});
  return t;
}

Tensor Tensor::NoneOptional(DataType elem) {
  Tensor t;
  t.dtype_ = elem;
  t.dims_ = {0};
  t.kind_ = ValueKind::kOptional;
  t.items_ = std::make_shared<const std::vector<Tensor>>();
  return t;
}

const std::vector<Tensor>& Tensor::sequence() const {
  static const std::vector<Tensor> kEmpty;
  return is_sequence() && items_ ? *items_ : kEmpty;
}

const Tensor& Tensor::optional_value() const {
  static const Tensor kNone;
  if (!is_optional()) return *this;
  return items_ && !items_->empty() ? items_->front() : kNone;
}

Tensor Tensor::Reshaped(Dims dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::Rows(int64_t begin, int64_t end) const {
  if (!defined() || !is_tensor() || dims_.empty()) return *this;
  begin = std::max<int64_t>(0, std::min(begin, dims_[0]));
  end = std::max(begin, std::min(end, dims_[0]));
  Tensor t = *this;
  t.dims_[0] = end - begin;
  t.offset_ += static_cast<size_t>(begin) * (dims_[0] ? bytes() / static_cast<size_t>(dims_[0]) : 0);
  return t;
}

Tensor Tensor::Clone() const {
  if (is_sequence()) {
    std::vector<Tensor> items;
    for (const Tensor& e : sequence()) items.push_back(e.Clone());
    return Sequence(dtype_, std::move(items));
  }
  if (is_optional()) return has_value() ? Optional(optional_value().Clone()) : NoneOptional(dtype_);
  Tensor t = Host(dtype_, dims_);
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < numel(); ++i) t.data<std::string>()[i] = data<std::string>()[i];
  } else if (bytes()) {
    std::memcpy(t.raw(), raw(), bytes());
  }
  return t;
}

namespace {
template <typename From, typename To>
To ConvertOne(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<float>(v) != 0.0f;
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>) {
    return NumericCast<To>(static_cast<float>(v));
  } else {
    return NumericCast<To>(v);
  }
}
}  // namespace

Tensor Tensor::CastTo(DataType to) const {
  if (to == dtype_ || !is_tensor()) return Clone();
  Tensor out = Host(to, dims_);
  const int64_t n = numel();
  if (dtype_ == DataType::kString) {
    const auto* s = data<std::string>();
    VisitNumericType(to, [&](auto tag) {
      using To = decltype(tag);
      for (int64_t i = 0; i < n; ++i) out.data<To>()[i] = ConvertOne<double, To>(std::strtod(s[i].c_str(), nullptr));
    });
    return out;
  }
  if (to == DataType::kString) {
    auto* s = out.data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      std::ostringstream os;
      os << ElementAsDouble(i);
      s[i] = os.str();
    }
    return out;
  }
  if (IsLowPrecision(to)) {  // saturating, as Cast's default
    for (int64_t i = 0; i < n; ++i) out.data<uint8_t>()[i] = LowPrecisionFromDouble(to, ElementAsDouble(i), true);
    return out;
  }
  if (IsLowPrecision(dtype_)) {
    VisitNumericType(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      for (int64_t i = 0; i < n; ++i) out.data<To>()[i] = ConvertOne<double, To>(ElementAsDouble(i));
    });
    return out;
  }
  VisitNumericType(dtype_, [&](auto from_tag) {
    using From = decltype(from_tag);
    const From* src = data<From>();
    VisitNumericType(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      To* dst = out.data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertOne<From, To>(src[i]);
    });
  });
  return out;
}

double Tensor::ElementAsDouble(int64_t i) const {
  double r = 0;
  if (!is_tensor()) return r;
  if (IsLowPrecision(dtype_)) return LowPrecisionToDouble(dtype_, data<uint8_t>()[i]);
  VisitNumericType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      r = static_cast<float>(data<T>()[i]);
    else
      r = static_cast<double>(data<T>()[i]);
  });
  return r;
}

int64_t Tensor::ElementAsInt64(int64_t i) const {
  int64_t r = 0;
  if (!is_tensor()) return r;
  if (IsLowPrecision(dtype_)) return NumericCast<int64_t>(LowPrecisionToDouble(dtype_, data<uint8_t>()[i]));
  VisitNumericType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      r = NumericCast<int64_t>(static_cast<float>(data<T>()[i]));
    else
      r = NumericCast<int64_t>(data<T>()[i]);
  });
  return r;
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[i] = ElementAsInt64(i);
  return v;
}

}  // namespace tandem
