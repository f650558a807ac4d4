#include "tools/onnx_backend_test.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<onnx::TensorProto> ReadTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(ss.str())) return absl::InvalidArgumentError("cannot parse " + path);
  return proto;
}

// Compares one output; returns "" when equal within tolerance, else a description.
std::string Compare(const Tensor& want, const Tensor& got, const BackendTestOptions& o) {
  if (want.dtype() != got.dtype())
    return absl::StrCat("type ", DataTypeName(got.dtype()), ", expected ", DataTypeName(want.dtype()));
  if (want.dims() != got.dims())
    return "shape " + DimsToString(got.dims()) + ", expected " + DimsToString(want.dims());
  const int64_t n = want.numel();
  if (want.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (want.data<std::string>()[i] != got.data<std::string>()[i])
        return absl::StrCat("element ", i, " is '", got.data<std::string>()[i], "', expected '",
                            want.data<std::string>()[i], "'");
    return "";
  }
  bool exact = !IsFloatingPoint(want.dtype());
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double w = want.ElementAsDouble(i), g = got.ElementAsDouble(i);
    bool ok;
    if (exact) {
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
  if (!bad) return "";
  return absl::StrCat(bad, " of ", n, " elements differ; first at ", first, ": got ",
                      got.ElementAsDouble(first), ", expected ", want.ElementAsDouble(first),
                      exact ? "" : absl::StrCat(" (max abs error ", worst, ")"));
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
  auto session = Session::Load(dir + "/model.onnx", so);
  if (!session.ok()) return finish(BackendTestResult::kFail, std::string(session.status().message()));
  Session& s = **session;
  for (const ValueInfo& vi : s.inputs())
    if (vi.dtype == DataType::kUndefined)
      return finish(BackendTestResult::kFail, "input '" + vi.name + "' is not a tensor (sequence/optional types are unsupported)");

  for (const std::string& set : sets) {
    std::string sd = dir + "/" + set;
    std::map<std::string, Tensor> feeds;
    std::vector<Tensor> expected;
    for (int i = 0;; ++i) {
      std::string f = sd + "/input_" + std::to_string(i) + ".pb";
      if (!IsFile(f)) break;
      auto proto = ReadTensorFile(f);
      if (!proto.ok()) return finish(BackendTestResult::kFail, std::string(proto.status().message()));
      auto t = TensorFromProto(*proto, "");
      if (!t.ok()) return finish(BackendTestResult::kFail, f + ": " + std::string(t.status().message()));
      std::string name = proto->name();
      if (name.empty() && i < static_cast<int>(s.inputs().size())) name = s.inputs()[i].name;
      feeds[name] = std::move(*t);
    }
    for (int i = 0;; ++i) {
      std::string f = sd + "/output_" + std::to_string(i) + ".pb";
      if (!IsFile(f)) break;
      auto proto = ReadTensorFile(f);
      if (!proto.ok()) return finish(BackendTestResult::kFail, std::string(proto.status().message()));
      auto t = TensorFromProto(*proto, "");
      if (!t.ok()) return finish(BackendTestResult::kFail, f + ": " + std::string(t.status().message()));
      expected.push_back(std::move(*t));
    }
    auto got = s.Run(feeds);
    if (!got.ok()) return finish(BackendTestResult::kFail, std::string(got.status().message()));
    if (got->size() != expected.size())
      return finish(BackendTestResult::kFail, absl::StrCat(got->size(), " outputs, expected ", expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string diff = Compare(expected[i], (*got)[i], options);
      if (!diff.empty())
        return finish(BackendTestResult::kFail,
                      absl::StrCat(set, " output ", i, " '", s.outputs()[i].name, "': ", diff));
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
