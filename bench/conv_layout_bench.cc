// tandem_conv_layout_bench: oneDNN's float32 convolution on this CPU in each activation
// layout the CPU provider can choose (providers/cpu/channel_block.h): channels-last and
// 16- or 8-channel blocks, for the convolution shapes of the cpu_bench models at batch 1
// (or shapes given as arguments). The layouts run in turns of 20 calls, so that a machine
// whose speed drifts slows them alike; prints the median call per layout and the kernel
// oneDNN picked (reference kernels are left out). The data behind the layouts the CPU
// provider asks for (providers/cpu/rewrites/blocked_layout.h, dnnl_util.h ConvChannelBlock()).
// Each layout's rate is also given as a share of a register-only FMA loop timed in the same
// turns (bench/fma_loop.h; the median over turns of the turn's ratio): what arithmetic
// headroom oneDNN's kernel leaves.
//
// usage: tandem_conv_layout_bench [--rounds N] [--cold] [N,C,H,W,M,K,S[,P] ...]
//   (K: square kernel, S: stride, P: padding (K/2); a C under 8 reads a plain NCHW input;
//   --cold: 64 MiB of other data is written before each call, so that the weights come
//   from memory as in a whole model whose weights outgrow the caches)
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/fma_loop.h"

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Shape {
  int64_t n, c, h, w, m, k, s;
  int64_t p = -1;  // padding on every side (-1: K/2)

  int64_t Pad() const { return p >= 0 ? p : k / 2; }
  int64_t OutH() const { return (h + 2 * Pad() - k) / s + 1; }
  int64_t OutW() const { return (w + 2 * Pad() - k) / s + 1; }
  double Flops() const { return 2.0 * n * OutH() * OutW() * m * c * k * k; }
};

// resnet18, mobilenet_v2 (pointwise), squeezenet1_1 and densenet121 convolutions, and the
// CIFAR CNN's, at batch 1.
const std::vector<Shape> kDefaultShapes = {
    {1, 3, 224, 224, 64, 7, 2},   {1, 64, 56, 56, 64, 3, 1},    {1, 64, 56, 56, 128, 3, 2},
    {1, 128, 28, 28, 128, 3, 1},  {1, 128, 28, 28, 256, 3, 2},  {1, 256, 14, 14, 256, 3, 1},
    {1, 256, 14, 14, 512, 3, 2},  {1, 512, 7, 7, 512, 3, 1},    {1, 128, 28, 28, 32, 1, 1},
    {1, 128, 14, 14, 32, 3, 1},   {1, 512, 14, 14, 128, 1, 1},  {1, 1024, 7, 7, 128, 1, 1},
    {1, 64, 56, 56, 16, 1, 1},    {1, 32, 28, 28, 128, 1, 1},   {1, 48, 13, 13, 192, 3, 1},
    {1, 384, 13, 13, 48, 1, 1},   {1, 96, 56, 56, 24, 1, 1},    {1, 576, 14, 14, 96, 1, 1},
    {1, 960, 7, 7, 160, 1, 1},    {1, 3, 32, 32, 32, 3, 1},     {1, 32, 32, 32, 32, 3, 1},
    {1, 64, 16, 16, 64, 3, 1},
};

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Candidate {
  std::string name;
  dnnl::convolution_forward prim;
  std::string impl;
  dnnl::memory src, wei, bias, dst;
  std::vector<double> ms;
  std::vector<double> fma_shares;  // per turn: its median call's GFLOP/s over the turn's FMA loop's
};

bool MakeCandidate(dnnl::engine& eng, const Shape& s, tag act, const char* name,
                   Candidate& out) {
  const int64_t p = s.Pad(), oh = s.OutH(), ow = s.OutW();
  const tag src_tag = s.c < 8 ? tag::nchw : act;  // a first layer reads the image as it comes
  const dnnl::memory::desc src({s.n, s.c, s.h, s.w}, dt::f32, src_tag), dst({s.n, s.m, oh, ow}, dt::f32, act),
      wei({s.m, s.c, s.k, s.k}, dt::f32, tag::any), bias({s.m}, dt::f32, tag::x);
  if (s.c >= 8 && act != tag::nhwc && s.c % (act == tag::nChw16c ? 16 : 8) != 0) return false;
  if (act != tag::nhwc && s.m % (act == tag::nChw16c ? 16 : 8) != 0) return false;
  try {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, wei, bias, dst, {s.s, s.s}, {p, p}, {p, p});
    const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
    out.name = name;
    out.impl = pd.impl_info_str();
    if (out.impl.rfind("ref", 0) == 0) return false;  // reference loops: not a candidate
    out.prim = dnnl::convolution_forward(pd);
    out.src = dnnl::memory(pd.src_desc(), eng);
    out.wei = dnnl::memory(pd.weights_desc(), eng);
    out.bias = dnnl::memory(pd.bias_desc(), eng);
    out.dst = dnnl::memory(pd.dst_desc(), eng);
    for (dnnl::memory* m : {&out.src, &out.wei, &out.bias, &out.dst}) {
      float* f = static_cast<float*>(m->get_data_handle());
      const size_t count = m->get_desc().get_size() / sizeof(float);
      for (size_t i = 0; i < count; ++i) f[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
    }
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// Pushes the weights out of the caches by writing 64 MiB (more than a 2-core guest keeps of a shared L3).
void Evict() {
  static std::vector<char> junk(64 << 20);
  static char value = 0;
  std::memset(junk.data(), ++value, junk.size());
}

void Run(dnnl::stream& strm, Candidate& c) {
  c.prim.execute(strm, {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_WEIGHTS, c.wei}, {DNNL_ARG_BIAS, c.bias},
                        {DNNL_ARG_DST, c.dst}});
  strm.wait();
}

// Calls of one layout per turn, and steps of the FMA loop per turn (about a millisecond on
// a current core).
constexpr int kCallsPerTurn = 20;
constexpr long kFmaLoopSteps = 200000;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  bool cold = false;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: %s [--rounds N] [--cold] [N,C,H,W,M,K,S[,P] ...]\n", argv[0]);
      return 0;
    }
    if (!std::strcmp(argv[i], "--cold")) {
      cold = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
      continue;
    }
    Shape s{};
    const int got =
        std::sscanf(argv[i], "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld", &s.n, &s.c, &s.h, &s.w, &s.m, &s.k, &s.s, &s.p);
    if (got < 7 || s.n < 1 || s.c < 1 || s.h < 1 || s.w < 1 || s.m < 1 || s.k < 1 || s.s < 1 || (got == 8 && s.p < 0)) {
      std::fprintf(stderr, "error: '%s' is not N,C,H,W,M,K,S[,P] (positive integers, P >= 0)\n", argv[i]);
      return 2;
    }
    const int64_t pad = got == 8 ? s.p : s.k / 2;
    if (s.h + 2 * pad < s.k || s.w + 2 * pad < s.k) {
      std::fprintf(stderr, "error: '%s': the %ldx%ld kernel is larger than the padded %ldx%ld input\n", argv[i], s.k,
                   s.k, s.h + 2 * pad, s.w + 2 * pad);
      return 2;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) shapes = kDefaultShapes;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  if (tandem::bench::FmaLoopBits() > 0)
    std::printf("FMA loop: %d-bit float32 FMAs on every OpenMP thread, timed in each turn\n",
                tandem::bench::FmaLoopBits());
  std::printf("%-28s %-10s %9s %7s %8s %8s  %s\n", "N,C,H,W,M,K,S,P", "layout", "ms", "vs nhwc", "GFLOP/s",
              "of FMA", "oneDNN kernel");
  for (const Shape& s : shapes) {
    std::vector<Candidate> cands;
    const std::pair<tag, const char*> layouts[] = {{tag::nhwc, "nhwc"}, {tag::nChw16c, "nChw16c"},
                                                   {tag::nChw8c, "nChw8c"}};
    for (const auto& [t, name] : layouts) {
      Candidate c;
      if (MakeCandidate(eng, s, t, name, c)) cands.push_back(std::move(c));
    }
    for (Candidate& c : cands)
      for (int i = 0; i < 5; ++i) Run(strm, c);  // warm up
    for (int r = 0; r < rounds; ++r) {
      const double fma = tandem::bench::FmaLoopGflops(kFmaLoopSteps);
      for (size_t j = 0; j < cands.size(); ++j) {
        Candidate& c = cands[(j + r) % cands.size()];
        for (int i = 0; i < kCallsPerTurn; ++i) {
          if (cold) Evict();
          const double t0 = Seconds();
          Run(strm, c);
          c.ms.push_back((Seconds() - t0) * 1e3);
        }
        const std::vector<double> turn(c.ms.end() - kCallsPerTurn, c.ms.end());
        if (fma > 0) c.fma_shares.push_back(s.Flops() / (Median(turn) * 1e-3) * 1e-9 / fma);
      }
    }
    char label[80];
    std::snprintf(label, sizeof label, "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld", s.n, s.c, s.h, s.w, s.m, s.k, s.s,
                  s.Pad());
    if (cands.empty()) std::printf("%-28s (no layout has a kernel other than oneDNN's reference loops)\n", label);
    const double base = cands.empty() || cands[0].name != "nhwc" ? 0 : Median(cands[0].ms);
    for (const Candidate& c : cands) {
      const double m = Median(c.ms);
      char ratio[16] = "-";  // no channels-last kernel to compare with
      if (base > 0) std::snprintf(ratio, sizeof ratio, "%.2f", m / base);
      const double gflops = s.Flops() / (m * 1e-3) * 1e-9;
      char share[16] = "-";  // no FMA loop on this CPU
      if (!c.fma_shares.empty()) std::snprintf(share, sizeof share, "%.2f", Median(c.fma_shares));
      std::printf("%-28s %-10s %9.4f %7s %8.1f %8s  %s\n", label, c.name.c_str(), m, ratio, gflops, share,
                  c.impl.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
