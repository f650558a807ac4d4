#include "runtime/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "graph/regular_file.h"
#include "graph/resource_limits.h"
#include "runtime/npy_header.h"

namespace tandem {

namespace {
// Reverses the bytes of each element (big-endian data to this machine's order).
void SwapBytes(Tensor& t) {
  const size_t size = SizeOf(t.dtype());
  char* p = static_cast<char*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i, p += size) std::reverse(p, p + size);
}

// The C-order copy of data stored in Fortran order (the first axis fastest).
Tensor FromFortranOrder(const Tensor& f) {
  Tensor c = Tensor::Host(f.dtype(), f.dims());
  const size_t size = SizeOf(f.dtype());
  const Dims& dims = f.dims();
  std::vector<int64_t> index(dims.size(), 0);
  const char* from = static_cast<const char*>(f.raw());
  char* to = static_cast<char*>(c.raw());
  for (int64_t i = 0; i < c.numel(); ++i) {  // i walks C order; `index` is its multi-index
    int64_t offset = 0;
    for (size_t d = dims.size(); d-- > 0;) offset = offset * dims[d] + index[d];
    std::memcpy(to + i * size, from + offset * size, size);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return c;
}
}  // namespace

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  auto bad = [&](const std::string& what) { return absl::InvalidArgumentError(path + ": " + what); };
  if (auto s = RequireRegularFile(path); !s.ok()) return s;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + ": cannot open file");
  unsigned char magic[8];
  if (!in.read(reinterpret_cast<char*>(magic), 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return bad("not a .npy file");
  const int major = magic[6], minor = magic[7];
  if (major < 1 || major > 3 || minor != 0)
    return bad("format version " + std::to_string(major) + "." + std::to_string(minor) +
               " (numpy writes 1.0, 2.0 and 3.0)");
  unsigned char length[4] = {0, 0, 0, 0};
  if (!in.read(reinterpret_cast<char*>(length), major == 1 ? 2 : 4)) return bad("truncated header");
  const uint32_t header_len = length[0] | (uint32_t{length[1]} << 8) | (uint32_t{length[2]} << 16) |
                              (uint32_t{length[3]} << 24);
  if (header_len > (1u << 20)) return bad("corrupt header: " + std::to_string(header_len) + " bytes long");
  std::string text(header_len, '\0');
  if (!in.read(text.data(), header_len)) return bad("truncated header");
  auto header = ParseNpyHeader(text);
  if (!header.ok()) return bad(std::string(header.status().message()));
  // The size is checked against the limits and the file before memory is asked for.
  auto bytes = CheckedTensorBytes(header->dtype, header->shape);
  if (!bytes.ok()) return bad(std::string(bytes.status().message()));
  const std::streamoff data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff left = in.tellg() - data_start;
  in.seekg(data_start);
  if (static_cast<uint64_t>(left) < *bytes)
    return bad("truncated data: expected " + std::to_string(*bytes) + " bytes, the file has " +
               std::to_string(left));
  Tensor t = Tensor::Host(header->dtype, header->shape);
  if (t.bytes() && !in.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(t.bytes())))
    return bad("truncated data: expected " + std::to_string(t.bytes()) + " bytes");
  if (header->big_endian) SwapBytes(t);
  return header->fortran_order && t.rank() > 1 ? FromFortranOrder(t) : t;
}

absl::Status WriteNpy(const std::string& path, const Tensor& t) {
  const std::string descr = NpyDescr(t.dtype());
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
