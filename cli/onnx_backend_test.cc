#include "cli/onnx_backend_test.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/low_precision.h"
#include "onnx_import/tensor_proto.h"
#include "runtime/session.h"

namespace tandem {

namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsFile(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}
std::string BaseName(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The suite stores bfloat16 data as uint16 (numpy has no bfloat16): same bits.
Tensor AsSuiteType(Tensor t, DataType model_type) {
  if (t.dtype() == DataType::kUint16 && model_type == DataType::kBfloat16)
    return Tensor(DataType::kBfloat16, t.dims(), t.buffer());
  return t;
}

absl::StatusOr<Tensor> FromSequenceProto(const onnx::SequenceProto& sp, DataType elem) {
  if (sp.elem_type() != onnx::SequenceProto::TENSOR && sp.tensor_values_size() == 0 &&
      sp.elem_type() != onnx::SequenceProto::UNDEFINED)
    return absl::UnimplementedError("only sequences of tensors are supported");
  std::vector<Tensor> items;
  for (const auto& tp : sp.tensor_values()) {
    auto t = TensorFromProto(tp, "");
    if (!t.ok()) return t.status();
    items.push_back(AsSuiteType(std::move(*t), elem));
  }
  if (elem == DataType::kUndefined && !items.empty()) elem = items[0].dtype();
  return Tensor::Sequence(elem, std::move(items));
}

// A value file: TensorProto, or SequenceProto / OptionalProto when `vi` (the model's
// input or output it belongs to, may be null) says so. Sets *name from the proto.
absl::StatusOr<Tensor> ReadValueFile(const std::string& path, const ValueInfo* vi, std::string* name) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  auto fail = [&](const absl::Status& st) {
    return absl::Status(st.code(), path + ": " + std::string(st.message()));
  };
  ValueKind kind = vi ? vi->kind : ValueKind::kTensor;
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto sp;
    if (!sp.ParseFromString(*bytes)) return absl::InvalidArgumentError("cannot parse " + path + " as a SequenceProto");
    *name = sp.name();
    auto t = FromSequenceProto(sp, vi->elem_type);
    if (!t.ok()) return fail(t.status());
    return t;
  }
  if (kind == ValueKind::kOptional) {
    onnx::OptionalProto op;
    if (!op.ParseFromString(*bytes)) return absl::InvalidArgumentError("cannot parse " + path + " as an OptionalProto");
    *name = op.name();
    absl::StatusOr<Tensor> inner = Tensor();
    if (op.has_tensor_value()) {
      inner = TensorFromProto(op.tensor_value(), "");
      if (inner.ok()) *inner = AsSuiteType(std::move(*inner), vi->elem_type);
    } else if (op.has_sequence_value()) {
      inner = FromSequenceProto(op.sequence_value(), vi->elem_type);
    } else if (op.has_sparse_tensor_value() || op.has_map_value() || op.has_optional_value()) {
      return fail(absl::UnimplementedError("only optionals of tensors and sequences are supported"));
    }  // no value at all: None
    if (!inner.ok()) return fail(inner.status());
    return inner->defined() ? Tensor::Optional(std::move(*inner)) : Tensor::NoneOptional(vi->elem_type);
  }
  onnx::TensorProto tp;
  if (!tp.ParseFromString(*bytes)) return absl::InvalidArgumentError("cannot parse " + path);
  *name = tp.name();
  auto t = TensorFromProto(tp, "");
  if (!t.ok()) return fail(t.status());
  return AsSuiteType(std::move(*t), vi ? vi->dtype : DataType::kUndefined);
}

// What comparing one output found: `diff` is empty when it passes; `measured` says how
// close it came when judged by scale or against a peer.
struct Verdict {
  std::string diff, measured;
};

std::string Shortest(double v) { return absl::StrFormat("%.3g", v); }

// Float outputs at the output's scale, or against the peer's error (BackendTestOptions).
// NaN must meet NaN and infinities their equal; the finite elements' largest error is
// what is judged.
Verdict CompareAtScale(const Tensor& want, const Tensor& got, const Tensor* peer, const BackendTestOptions& o) {
  const int64_t n = want.numel();
  double err = 0, scale = 0, peer_err = 0;
  int64_t worst = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double w = want.ElementAsDouble(i), g = got.ElementAsDouble(i);
    if (!std::isfinite(w) || !std::isfinite(g)) {
      if ((std::isnan(w) && std::isnan(g)) || w == g) continue;
      return {absl::StrCat("element ", i, " is ", g, ", expected ", w), ""};
    }
    scale = std::max(scale, std::fabs(w));
    if (std::fabs(g - w) > err || worst < 0) {
      err = std::fabs(g - w);
      worst = i;
    }
    if (peer) {
      const double p = peer->ElementAsDouble(i);
      peer_err = std::max(peer_err, std::isfinite(p) ? std::fabs(p - w) : HUGE_VAL);
    }
  }
  if (worst < 0) return {"", "no finite elements"};
  std::string where = absl::StrCat(" at element ", worst, " (got ", got.ElementAsDouble(worst), ", expected ",
                                   want.ElementAsDouble(worst), ")");
  if (peer) {
    const double base = std::max(peer_err, std::ldexp(scale, -23));  // one float32 ulp of the scale
    const double ratio = err / base;
    std::string measured = absl::StrCat("error ", Shortest(err), " = ", Shortest(ratio), "x the peer's ",
                                        Shortest(peer_err), " (scale ", Shortest(scale), ")");
    if (err <= o.peer_ratio * base) return {"", measured};
    return {absl::StrCat("max |error| ", Shortest(err), where, " is ", Shortest(ratio), "x the peer's ",
                         Shortest(peer_err), "; at most ", Shortest(o.peer_ratio), "x is allowed"),
            measured};
  }
  const double relative = scale > 0 ? err / scale : (err > 0 ? HUGE_VAL : 0);
  std::string measured = absl::StrCat("error ", Shortest(relative), " of the scale ", Shortest(scale));
  if (err <= o.scale_tol * scale) return {"", measured};
  return {absl::StrCat("max |error| ", Shortest(err), where, " is ", Shortest(relative), " of the output's scale ",
                       Shortest(scale), " (max |expected|); at most ", Shortest(o.scale_tol), " is allowed"),
          measured};
}

// Compares one output (`peer`: another engine's answer, or null).
Verdict Compare(const Tensor& want, const Tensor& got, const Tensor* peer, const BackendTestOptions& o) {
  if (want.dtype() != got.dtype())
    return {absl::StrCat("type ", DataTypeName(got.dtype()), ", expected ", DataTypeName(want.dtype())), ""};
  if (want.dims() != got.dims())
    return {"shape " + DimsToString(got.dims()) + ", expected " + DimsToString(want.dims()), ""};
  const int64_t n = want.numel();
  if (want.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (want.data<std::string>()[i] != got.data<std::string>()[i])
        return {absl::StrCat("element ", i, " is '", got.data<std::string>()[i], "', expected '",
                             want.data<std::string>()[i], "'"),
                ""};
    return {};
  }
  bool exact = !IsFloatingPoint(want.dtype());
  if (!exact && ((peer && o.peer_ratio > 0) || o.scale_tol > 0))
    return CompareAtScale(want, got, o.peer_ratio > 0 ? peer : nullptr, o);
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double w = want.ElementAsDouble(i), g = got.ElementAsDouble(i);
    bool ok;
    if (IsLowPrecision(want.dtype())) {  // one rounding step apart is a real difference
      ok = (std::isnan(w) && std::isnan(g)) || w == g;
    } else if (exact) {
      ok = want.ElementAsInt64(i) == got.ElementAsInt64(i) && w == g;
    } else if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = w == g;
    } else {
      double err = std::fabs(w - g);
      ok = err <= o.atol + o.rtol * std::fabs(w);
      worst = std::max(worst, err);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (!bad) return {};
  return {absl::StrCat(bad, " of ", n, " elements differ; first at ", first, ": got ", got.ElementAsDouble(first),
                       ", expected ", want.ElementAsDouble(first),
                       exact ? "" : absl::StrCat(" (max abs error ", worst, ")")),
          ""};
}

// Compares tensors, sequences (element-wise) and optionals; a peer applies to tensors.
Verdict CompareValues(const Tensor& want, const Tensor& got, const Tensor* peer, const BackendTestOptions& o) {
  auto kind_name = [](const Tensor& t) {
    return t.is_sequence() ? "a sequence" : t.is_optional() ? "an optional" : "a tensor";
  };
  if (want.kind() != got.kind()) return {absl::StrCat(kind_name(got), ", expected ", kind_name(want)), ""};
  if (want.is_optional()) {
    if (want.has_value() != got.has_value())
      return {got.has_value() ? "a value, expected None" : "None, expected a value", ""};
    return want.has_value() ? CompareValues(want.optional_value(), got.optional_value(), nullptr, o) : Verdict{};
  }
  if (want.is_sequence()) {
    const auto &w = want.sequence(), &g = got.sequence();
    if (w.size() != g.size())
      return {absl::StrCat("sequence of ", g.size(), " tensors, expected ", w.size()), ""};
    for (size_t i = 0; i < w.size(); ++i) {
      Verdict v = CompareValues(w[i], g[i], nullptr, o);
      if (!v.diff.empty()) return {absl::StrCat("sequence element ", i, ": ", v.diff), ""};
    }
    return {};
  }
  return Compare(want, got, peer, o);
}

}  // namespace

std::vector<std::string> FindBackendTests(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (IsFile(p + "/model.onnx")) {
      out.push_back(p);
      continue;
    }
    for (const std::string& sub : ListDir(p))
      if (IsFile(p + "/" + sub + "/model.onnx")) out.push_back(p + "/" + sub);
  }
  return out;
}

BackendTestResult RunBackendTest(const std::string& dir, const BackendTestOptions& options) {
  BackendTestResult r;
  r.name = BaseName(dir);
  r.path = dir;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](BackendTestResult::Outcome outcome, std::string reason) {
    r.outcome = outcome;
    r.reason = std::move(reason);
    r.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  std::vector<std::string> sets;
  for (const std::string& sub : ListDir(dir))
    if (sub.rfind("test_data_set_", 0) == 0 && IsDir(dir + "/" + sub)) sets.push_back(sub);
  if (sets.empty()) return finish(BackendTestResult::kSkip, "no test_data_set_* folder");

  SessionOptions so;
  so.num_threads = options.num_threads;
  so.providers = options.providers;
  auto session = Session::Load(dir + "/model.onnx", so);
  if (!session.ok()) return finish(BackendTestResult::kFail, std::string(session.status().message()));
  Session& s = **session;
  r.nodes_per_provider = s.stats().placement.nodes_per_provider;
  for (const ValueInfo& vi : s.inputs())
    if (vi.kind == ValueKind::kTensor && vi.dtype == DataType::kUndefined)
      return finish(BackendTestResult::kFail, "input '" + vi.name +
                    "' has a type Tandem does not hold (float6 elements, maps, sparse tensors)");

  for (const std::string& set : sets) {
    std::string sd = dir + "/" + set;
    std::map<std::string, Tensor> feeds;
    std::vector<Tensor> expected;
    auto find_input = [&](const std::string& n) -> const ValueInfo* {
      for (const ValueInfo& vi : s.inputs())
        if (vi.name == n) return &vi;
      return nullptr;
    };
    for (int i = 0;; ++i) {
      std::string f = sd + "/input_" + std::to_string(i) + ".pb";
      if (!IsFile(f)) break;
      const ValueInfo* vi = i < static_cast<int>(s.inputs().size()) ? &s.inputs()[i] : nullptr;
      std::string name;
      auto t = ReadValueFile(f, vi, &name);
      if (!t.ok()) return finish(BackendTestResult::kFail, std::string(t.status().message()));
      if (name.empty() && vi) name = vi->name;
      const ValueInfo* named = find_input(name);
      if (named && named != vi) {  // files not in model-input order: read again as that input
        t = ReadValueFile(f, named, &name);
        if (!t.ok()) return finish(BackendTestResult::kFail, std::string(t.status().message()));
      }
      feeds[name] = std::move(*t);
    }
    std::vector<Tensor> peers;  // undefined where the set holds no peer_output_<i>.pb
    for (int i = 0;; ++i) {
      std::string f = sd + "/output_" + std::to_string(i) + ".pb";
      if (!IsFile(f)) break;
      size_t k = expected.size();
      const ValueInfo* vi = k < s.outputs().size() ? &s.outputs()[k] : nullptr;
      std::string name;
      auto t = ReadValueFile(f, vi, &name);
      if (!t.ok()) return finish(BackendTestResult::kFail, std::string(t.status().message()));
      expected.push_back(std::move(*t));
      std::string pf = sd + "/peer_output_" + std::to_string(i) + ".pb";
      peers.emplace_back();
      if (!IsFile(pf)) continue;
      auto p = ReadValueFile(pf, vi, &name);
      if (!p.ok()) return finish(BackendTestResult::kFail, std::string(p.status().message()));
      if (!p->is_tensor() || p->dtype() != expected.back().dtype() || p->dims() != expected.back().dims())
        return finish(BackendTestResult::kFail, pf + ": not a tensor of the type and shape of output_" +
                                                    std::to_string(i) + ".pb");
      peers.back() = std::move(*p);
    }
    auto got = s.Run(feeds);
    if (!got.ok()) return finish(BackendTestResult::kFail, std::string(got.status().message()));
    if (got->size() != expected.size())
      return finish(BackendTestResult::kFail, absl::StrCat(got->size(), " outputs, expected ", expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) {
      Verdict v = CompareValues(expected[i], (*got)[i], peers[i].defined() ? &peers[i] : nullptr, options);
      const std::string what = absl::StrCat(set, " output ", i, " '",
                                            s.outputs()[i].name, "'");
      if (!v.measured.empty()) r.measured += absl::StrCat(r.measured.empty() ? "" : "; ", what, ": ", v.measured);
      if (!v.diff.empty()) return finish(BackendTestResult::kFail, absl::StrCat(what, ": ", v.diff));
    }
  }
  return finish(BackendTestResult::kPass, "");
}

std::map<std::string, std::string> ReadExpectedFailures(const std::string& file, absl::Status* status) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  if (!in) {
    *status = absl::NotFoundError("cannot open expected-failures file " + file);
    return out;
  }
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    size_t end = line.find_first_of(" \t", start);
    std::string name = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string reason;
    if (end != std::string::npos) {
      size_t rs = line.find_first_not_of(" \t", end);
      if (rs != std::string::npos) reason = line.substr(rs);
    }
    out[name] = reason;
  }
  *status = absl::OkStatus();
  return out;
}

}  // namespace tandem
