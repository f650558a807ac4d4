#include "onnx_import/tensor_proto.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/strings/str_cat.h"
#include "graph/low_precision.h"
#include "graph/parse_number.h"
#include "graph/regular_file.h"
#include "graph/resource_limits.h"

namespace tandem {

namespace {

absl::Status Bad(const onnx::TensorProto& p, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("tensor '", p.name(), "': ", what));
}

// Resolves `location` inside `model_dir`, refusing anything that leaves it.
absl::StatusOr<std::string> ResolveExternalPath(const onnx::TensorProto& p,
                                                const std::string& location,
                                                const std::string& model_dir) {
  if (model_dir.empty())
    return Bad(p, "external data '" + location + "' cannot be used by a model loaded from memory");
  if (location.empty()) return Bad(p, "external data has no location");
  if (location[0] == '/' || location.find(':') != std::string::npos)
    return Bad(p, "external data location '" + location + "' must be relative to the model's folder");
  for (size_t start = 0; start <= location.size();) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0)
      return Bad(p, "external data location '" + location + "' escapes the model's folder");
    start = end + 1;
  }
  char dir_real[PATH_MAX], file_real[PATH_MAX];
  if (!realpath(model_dir.c_str(), dir_real)) return Bad(p, "cannot resolve model folder " + model_dir);
  std::string full = model_dir + "/" + location;
  if (!realpath(full.c_str(), file_real))
    return Bad(p, "external data file '" + full + "' does not exist");
  std::string dir(dir_real), file(file_real);
  if (file.compare(0, dir.size() + 1, dir + "/") != 0)
    return Bad(p, "external data location '" + location + "' resolves outside the model's folder (" + file + ")");
  return file;
}

absl::StatusOr<std::string> ReadExternal(const onnx::TensorProto& p, const std::string& model_dir,
                                         size_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      auto v = ParseInt64(kv.value(), 0);
      if (!v.ok()) return Bad(p, "external data " + kv.key() + ": " + std::string(v.status().message()));
      (kv.key() == "offset" ? offset : length) = *v;
    }
  }
  auto path = ResolveExternalPath(p, location, model_dir);
  if (!path.ok()) return path.status();
  auto file = OpenRegularFileNoFollow(*path);
  if (!file.ok()) return Bad(p, "external data: " + std::string(file.status().message()));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{file->fd};
  const int64_t file_size = file->size;
  if (length < 0) length = file_size - offset;
  if (offset > file_size || length > file_size - offset)
    return Bad(p, absl::StrCat("external data range offset=", offset, " length=", length,
                               " exceeds file ", *path, " of ", file_size, " bytes"));
  if (static_cast<size_t>(length) != expected)
    return Bad(p, absl::StrCat("external data has ", length, " bytes, expected ", expected));
  std::string bytes(static_cast<size_t>(length), '\0');
  for (int64_t done = 0; done < length;) {
    const ssize_t got = pread(file->fd, bytes.data() + done, static_cast<size_t>(length - done), offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Bad(p, "short read from external data file " + *path);
    done += got;
  }
  return bytes;
}

// Unpacks n elements of a 4- or 2-bit type (low bits first) into one byte each; signed
// integers are sign-extended, float4 codes stay codes.
void UnpackNarrow(DataType dtype, const std::string& packed, int64_t n, uint8_t* out) {
  const int bits = PackedBits(dtype), per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  const bool sign_extend = dtype == DataType::kInt4 || dtype == DataType::kInt2;
  for (int64_t i = 0; i < n; ++i) {
    unsigned v = (static_cast<uint8_t>(packed[i / per_byte]) >> ((i % per_byte) * bits)) & mask;
    if (sign_extend && (v >> (bits - 1))) v |= ~mask;
    out[i] = static_cast<uint8_t>(v);
  }
}

// Values `p` carries in the typed field its element type uses (string_data for strings).
int64_t TypedValueCount(const onnx::TensorProto& p) {
  switch (static_cast<DataType>(p.data_type())) {
    case DataType::kString: return p.string_data_size();
    case DataType::kFloat: return p.float_data_size();
    case DataType::kDouble: return p.double_data_size();
    case DataType::kInt64: return p.int64_data_size();
    case DataType::kUint32:
    case DataType::kUint64: return p.uint64_data_size();
    default: return p.int32_data_size();  // int8/16/32, uint8/16, bool, float16, bfloat16
  }
}

// Copies `field` (already known to hold n values) into `out`.
template <typename Field, typename T>
absl::Status CopyTyped(const onnx::TensorProto& p, const Field& field, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(field.Get(static_cast<int>(i)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::string& model_dir) {
  if (!IsKnownDataType(p.data_type()))
    return Bad(p, absl::StrCat("unsupported element type ", p.data_type()));
  if (p.has_segment()) return Bad(p, "segmented tensors are not supported");
  DataType dtype = static_cast<DataType>(p.data_type());
  Dims dims(p.dims().begin(), p.dims().end());
  // Sizes are checked (negative, overflow, memory limit) and matched against the data the
  // file carries before anything is allocated.
  auto checked = CheckedTensorBytes(dtype, dims);
  if (!checked.ok()) return Bad(p, std::string(checked.status().message()));
  const size_t bytes = static_cast<size_t>(*checked);
  const int64_t n = NumElements(dims);
  // 4- and 2-bit types are packed in the file (raw_data, external data, int32_data bytes).
  const int per_byte = 8 / PackedBits(dtype);
  const size_t file_bytes = per_byte > 1 ? static_cast<size_t>((n + per_byte - 1) / per_byte) : bytes;
  const bool is_external = p.data_location() == onnx::TensorProto::EXTERNAL;
  if (dtype == DataType::kString && (p.has_raw_data() || is_external))
    return Bad(p, "string tensors must keep their values in string_data");
  if (!is_external && p.has_raw_data() && p.raw_data().size() != file_bytes)
    return Bad(p, absl::StrCat("raw_data has ", p.raw_data().size(), " bytes, expected ", file_bytes,
                               " for ", DataTypeName(dtype), DimsToString(dims)));
  const int64_t typed_count = per_byte > 1 ? static_cast<int64_t>(file_bytes) : n;
  if (!is_external && !p.has_raw_data() && TypedValueCount(p) != typed_count)
    return Bad(p, absl::StrCat("has ", TypedValueCount(p), " values for ", n, " elements"));
  std::string external;  // read (and its range checked) before the tensor is allocated
  if (is_external) {
    auto data = ReadExternal(p, model_dir, file_bytes);
    if (!data.ok()) return data.status();
    external = std::move(*data);
  }
  Tensor t = Tensor::Host(dtype, dims);

  if (dtype == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = p.string_data(static_cast<int>(i));
    return t;
  }
  if (per_byte > 1) {  // unpack into one element per byte
    std::string packed = is_external ? std::move(external) : p.has_raw_data() ? p.raw_data() : std::string();
    if (!is_external && !p.has_raw_data())
      for (int v : p.int32_data()) packed.push_back(static_cast<char>(v));
    UnpackNarrow(dtype, packed, n, t.data<uint8_t>());
    return t;
  }
  if (is_external) {
    if (bytes) std::memcpy(t.raw(), external.data(), bytes);
    return t;
  }
  if (p.has_raw_data()) {
    if (bytes) std::memcpy(t.raw(), p.raw_data().data(), bytes);
    return t;
  }
  switch (dtype) {
    case DataType::kFloat: {
      auto s = CopyTyped(p, p.float_data(), t.data<float>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kDouble: {
      auto s = CopyTyped(p, p.double_data(), t.data<double>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kInt64: {
      auto s = CopyTyped(p, p.int64_data(), t.data<int64_t>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kUint32: {
      auto s = CopyTyped(p, p.uint64_data(), t.data<uint32_t>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kUint64: {
      auto s = CopyTyped(p, p.uint64_data(), t.data<uint64_t>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kFloat16:
    case DataType::kBfloat16: {  // bit patterns stored in int32_data
      auto s = CopyTyped(p, p.int32_data(), t.data<uint16_t>(), n);
      if (!s.ok()) return s;
      return t;
    }
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: case DataType::kFloat8E8M0: {  // one code per int32
      auto s = CopyTyped(p, p.int32_data(), t.data<uint8_t>(), n);
      if (!s.ok()) return s;
      return t;
    }
    default: {  // int8/16/32, uint8/16, bool: stored in int32_data
      absl::Status s;
      VisitNumericType(dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T>)
          s = CopyTyped(p, p.int32_data(), t.data<T>(), n);
      });
      if (!s.ok()) return s;
      return t;
    }
  }
}

bool ParseModelProto(const void* data, size_t size, onnx::ModelProto* model) {
  if (size > static_cast<size_t>(INT32_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT32_MAX);
  coded.SetRecursionLimit(256);
  return model->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

void TensorToProto(const Tensor& t, std::string name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) proto->add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) proto->add_string_data(t.data<std::string>()[i]);
  } else if (PackedBits(t.dtype()) < 8) {  // pack 4- and 2-bit elements, low bits first
    const int bits = PackedBits(t.dtype()), per_byte = 8 / bits;
    std::string packed(static_cast<size_t>((t.numel() + per_byte - 1) / per_byte), '\0');
    for (int64_t i = 0; i < t.numel(); ++i)
      packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                                               ((t.data<uint8_t>()[i] & ((1u << bits) - 1)) << ((i % per_byte) * bits)));
    proto->set_raw_data(packed);
  } else {
    proto->set_raw_data(t.raw(), t.bytes());
  }
}

}  // namespace tandem
