#include "training/data.h"

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "graph/parse_number.h"
#include "graph/regular_file.h"
#include "graph/resource_limits.h"
#include "runtime/npy.h"

namespace tandem::training {

namespace {

size_t RowBytes(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : t.bytes() / static_cast<size_t>(t.dim(0));
}

Dims WithDim0(const Dims& d, int64_t n) {
  Dims out = d;
  out[0] = n;
  return out;
}

// Copies rows src[rows[k]] to dst row k.
void GatherRows(const Tensor& src, const int64_t* rows, int64_t count, Tensor& dst) {
  const size_t rb = RowBytes(src);
  const char* s = static_cast<const char*>(src.raw());
  char* d = static_cast<char*>(dst.raw());
  for (int64_t k = 0; k < count; ++k)
    std::memcpy(d + k * rb, s + static_cast<size_t>(rows[k]) * rb, rb);
}


// A view of the first `count` rows of `buffer` (itself when it has exactly that many).
Tensor FirstRows(const Tensor& buffer, int64_t count) {
  return count == buffer.dim(0) ? buffer : Tensor(buffer.dtype(), WithDim0(buffer.dims(), count), buffer.buffer());
}

// ---- CSV ----

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  std::string t = s.substr(b, e - b + 1);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

std::vector<std::string> SplitFields(const std::string& line, char delim) {
  std::vector<std::string> f;
  size_t start = 0;
  while (true) {
    size_t p = line.find(delim, start);
    f.push_back(Trim(line.substr(start, p == std::string::npos ? std::string::npos : p - start)));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return f;
}

// ---- IDX ----

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct IdxFile {
  Dims dims;
  std::vector<uint8_t> data;
};

// An IDX ubyte file of `rank` dims, gzip or plain (zlib reads both): the header first, then
// exactly the bytes it declares, in bounded chunks, after their size has passed the
// resource limits; less or more data than that is refused. A 3 MB archive that inflates
// to gigabytes is refused once it passes what its header promised.
absl::StatusOr<IdxFile> ReadIdx(const std::string& path, int rank) {
  if (auto s = RequireRegularFile(path); !s.ok()) return s;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return absl::NotFoundError("cannot open '" + path + "'");
  struct Closer {
    gzFile f;
    ~Closer() { gzclose(f); }
  } closer{f};
  // Reads up to n bytes; the count read, or an error for a corrupt stream.
  auto read = [&](uint8_t* into, uint64_t n) -> absl::StatusOr<uint64_t> {
    uint64_t done = 0;
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(n - done, 1u << 20));
      const int got = gzread(f, into + done, chunk);
      if (got < 0) {
        int code = 0;
        return absl::DataLossError("'" + path + "': gzip read error: " + gzerror(f, &code));
      }
      if (got == 0) break;
      done += static_cast<uint64_t>(got);
    }
    return done;
  };
  uint8_t head[4 + 4 * 4];
  auto got = read(head, 4);
  if (!got.ok()) return got.status();
  if (*got < 4 || head[0] != 0 || head[1] != 0)
    return absl::InvalidArgumentError("'" + path + "' is not an IDX file (bad magic)");
  if (head[2] != 0x08) return absl::InvalidArgumentError("'" + path + "': only unsigned byte IDX data is supported");
  if (head[3] != rank)
    return absl::InvalidArgumentError("'" + path + "' has " + std::to_string(head[3]) + " dimensions, expected " +
                                      std::to_string(rank));
  got = read(head + 4, 4 * static_cast<uint64_t>(rank));
  if (!got.ok()) return got.status();
  if (*got < 4 * static_cast<uint64_t>(rank)) return absl::InvalidArgumentError("'" + path + "': truncated IDX header");
  IdxFile idx;
  for (int i = 0; i < rank; ++i) idx.dims.push_back(BigEndian32(head + 4 + 4 * i));
  // The images become float32: that size is what has to fit.
  auto bytes = CheckedTensorBytes(DataType::kFloat, idx.dims);
  if (!bytes.ok()) return absl::InvalidArgumentError("'" + path + "': " + std::string(bytes.status().message()));
  const uint64_t total = *bytes / sizeof(float);
  idx.data.resize(total);
  got = read(idx.data.data(), total);
  if (!got.ok()) return got.status();
  uint8_t extra;
  auto more = *got == total ? read(&extra, 1) : absl::StatusOr<uint64_t>(0);
  if (!more.ok()) return more.status();
  if (*got != total || *more != 0)
    return absl::InvalidArgumentError("'" + path + "': header says " + std::to_string(total) +
                                      " bytes of data, file has " + (*more ? "more" : std::to_string(*got)));
  return idx;
}

}  // namespace

Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::Host(t.dtype(), WithDim0(t.dims(), n));
  GatherRows(t, rows.data(), n, out);
  return out;
}

Dataset Gather(const Dataset& d, const std::vector<int64_t>& rows) {
  Dataset out;
  out.x = GatherRows(d.x, rows);
  out.y = GatherRows(d.y, rows);
  for (const auto& [name, t] : d.more) out.more[name] = GatherRows(t, rows);
  return out;
}

std::map<std::string, Tensor> Dataset::Inputs(const std::string& x_name) const {
  std::map<std::string, Tensor> inputs = more;
  inputs[x_name] = x;
  return inputs;
}

absl::Status ValidateDataset(const Dataset& d) {
  std::vector<std::pair<std::string, const Tensor*>> all = {{"x", &d.x}, {"y", &d.y}};
  for (const auto& [name, t] : d.more) all.emplace_back("input '" + name + "'", &t);
  for (const auto& [what_name, t] : all) {
    const char* what = what_name.c_str();
    if (!t->defined() || !t->is_tensor() || t->rank() < 1)
      return absl::InvalidArgumentError(std::string("dataset ") + what +
                                        " must be a tensor of rank >= 1");
    if (t->dtype() == DataType::kString)
      return absl::InvalidArgumentError(std::string("dataset ") + what + " must be numeric");
    if (t->device().type != DeviceType::kCpu)
      return absl::InvalidArgumentError(std::string("dataset ") + what + " must be on the host");
  }
  for (const auto& [what, t] : all)
    if (t->dim(0) != d.x.dim(0))
      return absl::InvalidArgumentError("dataset x has " + std::to_string(d.x.dim(0)) + " rows, " + what +
                                        " has " + std::to_string(t->dim(0)));
  return absl::OkStatus();
}

absl::StatusOr<Dataset> LoadNpyInputs(const std::map<std::string, std::string>& inputs,
                                      const std::string& x_name, const std::string& y_path) {
  Dataset d;
  for (const auto& [name, path] : inputs) {
    auto t = ReadNpy(path);
    if (!t.ok()) return t.status();
    (name == x_name ? d.x : d.more[name]) = std::move(*t);
  }
  if (!d.x.defined()) return absl::InvalidArgumentError("no data for input '" + x_name + "'");
  auto y = ReadNpy(y_path);
  if (!y.ok()) return y.status();
  d.y = std::move(*y);
  if (auto s = ValidateDataset(d); !s.ok()) return absl::InvalidArgumentError("'" + y_path + "' and the inputs: " + std::string(s.message()));
  return d;
}

absl::StatusOr<Dataset> LoadNpyDataset(const std::string& x_path, const std::string& y_path) {
  auto x = ReadNpy(x_path);
  if (!x.ok()) return x.status();
  auto y = ReadNpy(y_path);
  if (!y.ok()) return y.status();
  Dataset d{*x, *y};
  if (auto s = ValidateDataset(d); !s.ok())
    return absl::InvalidArgumentError("'" + x_path + "', '" + y_path + "': " + std::string(s.message()));
  return d;
}

absl::StatusOr<Dataset> LoadCsv(const std::string& path, const CsvOptions& options) {
  if (auto s = RequireRegularFile(path); !s.ok()) return s;
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot open '" + path + "'");
  std::vector<double> xs, ys;
  int64_t rows = 0, num_fields = -1;
  std::vector<bool> is_label;
  std::vector<int> label_order;
  std::string line;
  int64_t line_no = 0;
  bool first = true;
  auto where = [&](int64_t l) { return path + ":" + std::to_string(l) + ": "; };
  while (std::getline(in, line)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string> f = SplitFields(line, options.delimiter);
    if (first) {
      first = false;
      num_fields = static_cast<int64_t>(f.size());
      is_label.assign(f.size(), false);
      if (options.label_columns.empty())
        return absl::InvalidArgumentError(where(line_no) + "no label columns chosen");
      for (int c : options.label_columns) {
        int r = c < 0 ? c + static_cast<int>(num_fields) : c;
        if (r < 0 || r >= num_fields)
          return absl::InvalidArgumentError(where(line_no) + "label column " + std::to_string(c) +
                                            " is out of range for " + std::to_string(num_fields) +
                                            " columns");
        if (is_label[r])
          return absl::InvalidArgumentError(where(line_no) + "label column " + std::to_string(c) +
                                            " is listed twice");
        is_label[r] = true;
        label_order.push_back(r);
      }
      if (static_cast<int64_t>(label_order.size()) == num_fields)
        return absl::InvalidArgumentError(where(line_no) + "every column is a label column");
      bool header = options.header == CsvOptions::Header::kYes;
      if (options.header == CsvOptions::Header::kAuto)
        for (const std::string& s : f) header |= !ParseFiniteDouble(s).ok();
      if (header) continue;
    }
    if (static_cast<int64_t>(f.size()) != num_fields)
      return absl::InvalidArgumentError(where(line_no) + "has " + std::to_string(f.size()) +
                                        " fields, expected " + std::to_string(num_fields));
    std::vector<double> vals(f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      auto v = ParseFiniteDouble(f[i]);
      if (!v.ok())
        return absl::InvalidArgumentError(where(line_no) + "field " + std::to_string(i + 1) + ": " +
                                          std::string(v.status().message()));
      vals[i] = *v;
    }
    for (size_t i = 0; i < f.size(); ++i)
      if (!is_label[i]) xs.push_back(vals[i]);
    for (int c : label_order) {
      double v = vals[c];
      if (options.integer_labels && (v != std::floor(v) || std::fabs(v) > 9.0e15))
        return absl::InvalidArgumentError(where(line_no) + "label field " + std::to_string(c + 1) +
                                          " ('" + f[c] + "') is not an integer");
      ys.push_back(v);
    }
    ++rows;
  }
  if (rows == 0) return absl::InvalidArgumentError("'" + path + "' has no data rows");
  const int64_t nl = static_cast<int64_t>(label_order.size());
  const int64_t nf = num_fields - nl;
  Dataset d;
  d.x = Tensor::Host(DataType::kFloat, {rows, nf});
  for (size_t i = 0; i < xs.size(); ++i) d.x.data<float>()[i] = static_cast<float>(xs[i]);
  if (options.integer_labels) {
    d.y = Tensor::Host(DataType::kInt64, nl == 1 ? Dims{rows} : Dims{rows, nl});
    for (size_t i = 0; i < ys.size(); ++i) d.y.data<int64_t>()[i] = static_cast<int64_t>(ys[i]);
  } else {
    d.y = Tensor::Host(DataType::kFloat, {rows, nl});
    for (size_t i = 0; i < ys.size(); ++i) d.y.data<float>()[i] = static_cast<float>(ys[i]);
  }
  return d;
}

absl::StatusOr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path) {
  auto images = ReadIdx(images_path, 3);
  if (!images.ok()) return images.status();
  auto labels = ReadIdx(labels_path, 1);
  if (!labels.ok()) return labels.status();
  const Dims& id = images->dims;
  const int64_t n = id[0];
  if (labels->dims[0] != n)
    return absl::InvalidArgumentError("'" + images_path + "' holds " + std::to_string(n) + " images but '" +
                                      labels_path + "' " + std::to_string(labels->dims[0]) + " labels");
  Dataset d;
  d.x = Tensor::Host(DataType::kFloat, {n, 1, id[1], id[2]});
  const uint8_t* px = images->data.data();
  float* x = d.x.data<float>();
  for (int64_t i = 0; i < d.x.numel(); ++i) x[i] = px[i] / 255.0f;
  d.y = Tensor::Host(DataType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) d.y.data<int64_t>()[i] = labels->data[i];
  return d;
}

absl::StatusOr<Dataset> LoadFashionMnist(bool train, const std::string& dir) {
  std::string p = dir + "/" + (train ? "train" : "t10k");
  return LoadIdx(p + "-images-idx3-ubyte.gz", p + "-labels-idx1-ubyte.gz");
}

Dataset SliceRows(const Dataset& d, int64_t begin, int64_t end) {
  std::vector<int64_t> rows;
  for (int64_t i = begin; i < end; ++i) rows.push_back(i);
  return Gather(d, rows);
}

std::vector<int64_t> Permutation(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

absl::StatusOr<std::pair<Dataset, Dataset>> SplitValidation(const Dataset& d, double fraction,
                                                            uint64_t seed) {
  if (auto s = ValidateDataset(d); !s.ok()) return s;
  if (!(fraction >= 0 && fraction < 1))
    return absl::InvalidArgumentError("validation fraction must lie in [0, 1), got " +
                                      std::to_string(fraction));
  const int64_t n = d.size();
  const int64_t nv = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  std::mt19937_64 rng(seed);
  std::vector<int64_t> p = Permutation(n, rng);
  std::vector<int64_t> val(p.begin(), p.begin() + nv), train(p.begin() + nv, p.end());
  return std::make_pair(Gather(d, train), Gather(d, val));
}

BatchIterator::BatchIterator(const Dataset& data, int64_t batch_size, bool shuffle, uint64_t seed,
                             bool drop_last)
    : data_(data),
      batch_size_(std::max<int64_t>(1, batch_size)),
      shuffle_(shuffle),
      drop_last_(drop_last),
      rng_(seed) {
  const int64_t b = std::min(batch_size_, std::max<int64_t>(data_.size(), 1));
  if (data_.x.defined() && data_.x.rank() > 0)
    bx_ = Tensor::Host(data_.x.dtype(), WithDim0(data_.x.dims(), b));
  if (data_.y.defined() && data_.y.rank() > 0)
    by_ = Tensor::Host(data_.y.dtype(), WithDim0(data_.y.dims(), b));
  for (const auto& [name, t] : data_.more) bmore_[name] = Tensor::Host(t.dtype(), WithDim0(t.dims(), b));
}

void BatchIterator::Reset() {
  started_ = true;
  pos_ = 0;
  const int64_t n = data_.size();
  if (shuffle_) {
    order_ = Permutation(n, rng_);
  } else if (static_cast<int64_t>(order_.size()) != n) {
    order_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order_[i] = i;
  }
}

int64_t BatchIterator::num_batches() const {
  const int64_t n = data_.size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

bool BatchIterator::NextRows(const int64_t** rows, int64_t* count) {
  if (!started_) Reset();
  const int64_t n = static_cast<int64_t>(order_.size());
  *count = std::min(batch_size_, n - pos_);
  if (*count <= 0 || (drop_last_ && *count < batch_size_)) return false;
  if (!bx_.defined() || !by_.defined() || data_.y.dim(0) != data_.x.dim(0)) return false;  // as Next
  *rows = order_.data() + pos_;
  pos_ += *count;
  return true;
}

const Dataset* BatchIterator::Next() {
  if (!started_) Reset();
  const int64_t n = static_cast<int64_t>(order_.size());
  const int64_t count = std::min(batch_size_, n - pos_);
  if (count <= 0 || (drop_last_ && count < batch_size_)) return nullptr;
  if (!bx_.defined() || !by_.defined() || data_.y.dim(0) != data_.x.dim(0)) return nullptr;
  if (!shuffle_ && pos_ == 0 && count == n) {  // the whole dataset in order: itself, no copy
    pos_ = n;
    return &data_;
  }
  if (current_.x.dims().empty() || current_.x.dim(0) != count) {
    current_.x = FirstRows(bx_, count);
    current_.y = FirstRows(by_, count);
    for (const auto& [name, buffer] : bmore_) current_.more[name] = FirstRows(buffer, count);
  }
  GatherRows(data_.x, order_.data() + pos_, count, current_.x);
  GatherRows(data_.y, order_.data() + pos_, count, current_.y);
  for (auto& [name, t] : current_.more) GatherRows(data_.more.at(name), order_.data() + pos_, count, t);
  pos_ += count;
  return &current_;
}

std::string BatchIterator::RngState() const {
  std::ostringstream os;
  os << rng_;
  return os.str();
}

absl::Status BatchIterator::RestoreRngState(const std::string& state) {
  std::istringstream is(state);
  std::mt19937_64 rng;
  is >> rng;
  if (is.fail()) return absl::InvalidArgumentError("corrupt shuffling state in checkpoint");
  rng_ = rng;
  return absl::OkStatus();
}

}  // namespace tandem::training
