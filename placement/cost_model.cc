#include "placement/cost_model.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace tandem {

namespace {

double Elements(const Shape& s) {
  if (!s.rank_known || !s.fully_known()) return -1;
  double n = 1;
  for (const Dim& d : s.dims) n *= static_cast<double>(d.value);
  return n;
}

double Bytes(const Shape& s, DataType t) {
  const double n = Elements(s);
  return n < 0 ? 4096.0 : n * static_cast<double>(t == DataType::kUndefined ? 4 : SizeOf(t));
}

std::filesystem::path CacheFile() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg ? std::filesystem::path(xdg) : std::filesystem::path(home ? home : "/tmp") / ".cache";
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return dir / "tandem" / ("cpu-speed-" + std::string(host) + "-" + std::to_string(std::thread::hardware_concurrency()));
}

double CopyBandwidth() {
  const size_t bytes = 64u << 20;
  std::vector<char> a(bytes, 1), b(bytes);
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * bytes / best;  // read + write
}

}  // namespace

NodeWork EstimateWork(const KernelInfo& info) {
  NodeWork w;
  for (size_t i = 0; i < info.input_shapes.size(); ++i) w.bytes += Bytes(info.input_shapes[i], info.input_type(i));
  double out_elements = 0;
  for (size_t i = 0; i < info.output_shapes.size(); ++i) {
    const DataType t = i < info.output_types.size() ? info.output_types[i] : DataType::kUndefined;
    w.bytes += Bytes(info.output_shapes[i], t);
    const double n = Elements(info.output_shapes[i]);
    out_elements += n < 0 ? 1024 : n;
  }
  const std::string& op = info.node.op_type;
  const auto& in = info.input_shapes;
  if ((op == "MatMul" || op == "Gemm" || op == "FusedGemm" || op == "FusedMatMul") && in.size() >= 2 &&
      in[0].rank_known && !in[0].dims.empty()) {
    const bool trans_a = op.find("Gemm") != std::string::npos && info.node.attr_int("transA", 0) != 0;
    const Dim& k = in[0].dims.size() >= 2 && trans_a ? in[0].dims[in[0].dims.size() - 2] : in[0].dims.back();
    w.flops = 2.0 * out_elements * static_cast<double>(k.known() ? k.value : 64);
  } else if ((op == "Conv" || op == "FusedConv" || op == "ConvTranspose") && in.size() >= 2 &&
             Elements(in[1]) > 0 && !in[1].dims.empty() && in[1].dims[0].value > 0) {
    w.flops = 2.0 * out_elements * Elements(in[1]) / static_cast<double>(in[1].dims[0].value);
  } else {
    w.flops = out_elements;
  }
  return w;
}

double EstimateUs(const NodeWork& work, const DeviceSpeed& speed) {
  const double compute = speed.flops_per_us > 0 ? work.flops / speed.flops_per_us : 0;
  const double memory = speed.bytes_per_us > 0 ? work.bytes / speed.bytes_per_us : 0;
  return speed.launch_us + std::max(compute, memory);
}

DeviceSpeed DefaultGpuSpeed() { return DeviceSpeed{20e6, 2e6, 10.0}; }

double GpuCopyCostUs(int64_t bytes) { return 10.0 + static_cast<double>(bytes) / 20e3; }

DeviceSpeed CpuSpeed(double (*sgemm_us)()) {
  static std::mutex mu;
  static DeviceSpeed cached;
  std::lock_guard<std::mutex> lock(mu);
  if (cached.flops_per_us > 0) return cached;
  const std::filesystem::path file = CacheFile();
  {
    std::ifstream in(file);
    DeviceSpeed s;
    if (in >> s.flops_per_us >> s.bytes_per_us >> s.launch_us && s.flops_per_us > 0 && s.bytes_per_us > 0)
      return cached = s;
  }
  DeviceSpeed s;
  double best = 1e300;
  for (int i = 0; i < 3; ++i) best = std::min(best, sgemm_us());
  s.flops_per_us = 2.0 * 512 * 512 * 512 / std::max(best, 1e-3);
  s.bytes_per_us = CopyBandwidth();
  s.launch_us = 0.5;  // a node's dispatch on the host: the plan's bookkeeping
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file);
  if (out) out << s.flops_per_us << " " << s.bytes_per_us << " " << s.launch_us << "\n";  // best effort
  return cached = s;
}

}  // namespace tandem
