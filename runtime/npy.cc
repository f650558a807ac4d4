#include "runtime/npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "graph/resource_limits.h"

namespace tandem {

namespace {
const std::map<std::string, DataType>& DescrToType() {
  static const std::map<std::string, DataType> m = {
      {"<f4", DataType::kFloat},  {"<f8", DataType::kDouble}, {"<f2", DataType::kFloat16},
      {"|i1", DataType::kInt8},   {"<i2", DataType::kInt16},  {"<i4", DataType::kInt32},
      {"<i8", DataType::kInt64},  {"|u1", DataType::kUint8},  {"<u2", DataType::kUint16},
      {"<u4", DataType::kUint32}, {"<u8", DataType::kUint64}, {"|b1", DataType::kBool}};
  return m;
}

// Value of `key` in the header dict, e.g. 'descr': '<f4' -> <f4.
std::string DictValue(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t colon = header.find(':', k);
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos) return "";
  if (header[start] == '\'') return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
  if (header[start] == '(') return header.substr(start + 1, header.find(')', start) - start - 1);
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}
}  // namespace

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  auto bad = [&](const std::string& what) { return absl::InvalidArgumentError(path + ": " + what); };
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + ": cannot open file");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) return bad("not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t l;
    in.read(reinterpret_cast<char*>(&l), 2);
    header_len = l;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  if (!in || header_len > (1u << 20)) return bad("corrupt header");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return bad("truncated header");
  std::string descr = DictValue(header, "descr");
  auto type = DescrToType().find(descr);
  if (type == DescrToType().end()) return bad("unsupported dtype '" + descr + "'");
  if (DictValue(header, "fortran_order") == "True") return bad("Fortran-order arrays are not supported");
  Dims dims;
  std::string shape = DictValue(header, "shape");
  for (size_t p = 0; p < shape.size();) {
    size_t q = shape.find(',', p);
    std::string part = shape.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (part.find_first_not_of(" ") != std::string::npos) {
      int64_t d = 0;
      if (!absl::SimpleAtoi(part, &d)) return bad("corrupt header: shape '" + shape + "'");
      dims.push_back(d);
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }
  // The size is checked against the limits and the file before memory is asked for.
  auto bytes = CheckedTensorBytes(type->second, dims);
  if (!bytes.ok()) return bad(std::string(bytes.status().message()));
  const std::streamoff data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff left = in.tellg() - data_start;
  in.seekg(data_start);
  if (static_cast<uint64_t>(left) < *bytes)
    return bad("truncated data: expected " + std::to_string(*bytes) + " bytes, the file has " +
               std::to_string(left));
  Tensor t = Tensor::Host(type->second, dims);
  if (t.bytes() && !in.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(t.bytes())))
    return bad("truncated data: expected " + std::to_string(t.bytes()) + " bytes");
  return t;
}

absl::Status WriteNpy(const std::string& path, const Tensor& t) {
  std::string descr;
  for (const auto& [d, type] : DescrToType())
    if (type == t.dtype()) descr = d;
  if (descr.empty()) return absl::InvalidArgumentError(std::string("cannot write ") + DataTypeName(t.dtype()) + " to .npy");
  std::string shape;
  for (int64_t d : t.dims()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 1);  // "2, 3," -> numpy style "(2, 3)"
  if (t.rank() > 1) shape.pop_back();
  if (t.rank() == 1) shape.pop_back();
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::ErrnoToStatus(errno, path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
  return out ? absl::OkStatus() : absl::DataLossError(path + ": write failed");
}

}  // namespace tandem
