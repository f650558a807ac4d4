// Signal-processing kernels (opset 17): HannWindow, HammingWindow, BlackmanWindow, DFT,
// STFT and MelWeightMatrix. Transforms run in double: radix-2 FFT for power-of-two
// lengths, Bluestein's chirp-z (built on the radix-2 FFT) for other long lengths, and a
// direct sum for short ones.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

using cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------
// Element conversions through double.

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

// Converts as ONNX Cast does (float to integer truncates); NaN/inf become 0 for integers.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (!std::isfinite(v)) return T(0);
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    return static_cast<T>(std::trunc(std::min(std::max(v, lo), hi)));
  }
}

// Reads a scalar (or one-element) integer input.
absl::StatusOr<int64_t> ScalarInt(const Tensor* t, const char* name) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + name + "'");
  if (t->numel() != 1)
    return absl::InvalidArgumentError(std::string("input '") + name +
                                      "' must be a scalar, got shape " + DimsToString(t->dims()));
  if (t->dtype() != DataType::kInt32 && t->dtype() != DataType::kInt64)
    return absl::InvalidArgumentError(std::string("input '") + name + "' must be int32 or int64");
  return t->ElementAsInt64(0);
}

// Output types of the window and mel ops (T2/T3: all numeric types).
bool IsNumericOutput(int64_t onnx_type) {
  if (!IsKnownDataType(static_cast<int32_t>(onnx_type))) return false;
  const DataType d = static_cast<DataType>(onnx_type);
  return d != DataType::kString && d != DataType::kBool && d != DataType::kUndefined;
}

// Writes double values into a fresh output of type `dtype`.
void WriteAs(const std::vector<double>& v, Tensor& out) {
  VisitNumericType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = FromDouble<T>(v[i]);
  });
}

// ---------------------------------------------------------------------------------------
// Fourier transforms of one complex line, in place. `inverse` uses exp(+i...) without
// the 1/n scale (callers apply it).

bool IsPow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

void FftPow2(std::vector<cd>& a, bool inverse) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {  // bit reversal
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double ang = 2.0 * kPi / static_cast<double>(len) * (inverse ? 1.0 : -1.0);
    const size_t half = len / 2;
    std::vector<cd> tw(half);
    for (size_t k = 0; k < half; ++k)
      tw[k] = cd(std::cos(ang * static_cast<double>(k)), std::sin(ang * static_cast<double>(k)));
    for (size_t i = 0; i < n; i += len)
      for (size_t k = 0; k < half; ++k) {
        const cd u = a[i + k], v = a[i + k + half] * tw[k];
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
  }
}

// exp(sign * 2*pi*i * m / n) with m reduced mod n for accuracy.
cd Twiddle(uint64_t m, uint64_t n, double sign) {
  const double ang = sign * 2.0 * kPi * static_cast<double>(m % n) / static_cast<double>(n);
  return cd(std::cos(ang), std::sin(ang));
}

void Dft(std::vector<cd>& a, bool inverse) {
  const size_t n = a.size();
  if (n <= 1) return;
  if (IsPow2(static_cast<int64_t>(n))) return FftPow2(a, inverse);
  const double sign = inverse ? 1.0 : -1.0;
  if (n <= 64) {  // direct sum
    std::vector<cd> tw(n), out(n);
    for (size_t k = 0; k < n; ++k) tw[k] = Twiddle(k, n, sign);
    for (size_t k = 0; k < n; ++k) {
      cd s = 0;
      for (size_t j = 0; j < n; ++j) s += a[j] * tw[(k * j) % n];
      out[k] = s;
    }
    a.swap(out);
    return;
  }
  // Bluestein: X_k = c_k * sum_j (x_j c_j) conj(c_{k-j}), c_m = exp(sign*pi*i*m^2/n).
  size_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  std::vector<cd> chirp(n);
  for (size_t k = 0; k < n; ++k)  // exp(sign*pi*i*k^2/n) = Twiddle(k^2 mod 2n, 2n)
    chirp[k] = Twiddle((static_cast<uint64_t>(k) * k) % (2 * n), 2 * n, sign);
  std::vector<cd> fa(m, 0), fb(m, 0);
  for (size_t k = 0; k < n; ++k) fa[k] = a[k] * chirp[k];
  fb[0] = std::conj(chirp[0]);
  for (size_t k = 1; k < n; ++k) fb[k] = fb[m - k] = std::conj(chirp[k]);
  FftPow2(fa, false);
  FftPow2(fb, false);
  for (size_t k = 0; k < m; ++k) fa[k] *= fb[k];
  FftPow2(fa, true);
  for (size_t k = 0; k < n; ++k) a[k] = fa[k] * chirp[k] / static_cast<double>(m);
}

// ---------------------------------------------------------------------------------------
// Cosine-sum windows: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
// (periodic) or size - 1 (symmetric). Computed in float as the ONNX function bodies do.

class CosineWindow : public Kernel {
 public:
  CosineWindow(const KernelInfo& info, float a0, float a1, float a2)
      : a0_(a0), a1_(a1), a2_(a2),
        periodic_(info.node.attr_int("periodic", 1) != 0),
        out_type_(info.node.attr_int("output_datatype", 1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!IsNumericOutput(out_type_))
      return absl::InvalidArgumentError("output_datatype " + std::to_string(out_type_) +
                                        " is not a numeric tensor type");
    auto size = ScalarInt(ctx.input(0), "size");
    if (!size.ok()) return size.status();
    if (*size < 0)
      return absl::InvalidArgumentError("size must be non-negative, got " +
                                        std::to_string(*size));
    Tensor& y = ctx.AllocateOutput(0, static_cast<DataType>(out_type_), {*size});
    const float n_fp = static_cast<float>(*size) - (periodic_ ? 0.f : 1.f);
    const float step = 6.2831853f / n_fp;
    std::vector<double> v(static_cast<size_t>(*size));
    for (int64_t i = 0; i < *size; ++i) {
      const float ang = static_cast<float>(i) * step;
      v[i] = (a0_ - a1_ * std::cos(ang)) + a2_ * std::cos(ang * 2.f);
    }
    WriteAs(v, y);
    return absl::OkStatus();
  }

 private:
  float a0_, a1_, a2_;
  bool periodic_;
  int64_t out_type_;
};

struct HannWindow : CosineWindow {
  explicit HannWindow(const KernelInfo& i) : CosineWindow(i, 0.5f, 0.5f, 0.f) {}
};
struct HammingWindow : CosineWindow {
  explicit HammingWindow(const KernelInfo& i)
      : CosineWindow(i, 0.54347826087f, 0.45652173913f, 0.f) {}
};
struct BlackmanWindow : CosineWindow {
  explicit BlackmanWindow(const KernelInfo& i) : CosineWindow(i, 0.42f, 0.5f, 0.08f) {}
};

// ---------------------------------------------------------------------------------------
// DFT: input [batch, d1..dN, 1|2] (real | complex), transform along `axis` (an attribute
// at opset 17, default 1; an optional input from opset 20, default -2; never the last
// dim), optional dft_length input pads with zeros or truncates; onesided keeps bins
// 0..n/2; inverse scales by 1/n. Output [..., 2]. inverse with onesided is the inverse
// of a real transform: the input holds bins 0..n/2 (n = dft_length, default 2 * (m - 1)),
// the rest follow by conjugate symmetry, and the output is real [..., n, 1].

class DftKernel : public Kernel {
 public:
  explicit DftKernel(const KernelInfo& info)
      : onesided_(info.node.attr_int("onesided", 0) != 0),
        inverse_(info.node.attr_int("inverse", 0) != 0),
        axis_input_(info.opset >= 20),
        axis_attr_(info.node.attr_int("axis", 1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int rank = x.rank();
    if (rank < 2 || (x.dim(-1) != 1 && x.dim(-1) != 2))
      return absl::InvalidArgumentError(
          "input must have rank >= 2 with last dimension 1 (real) or 2 (complex), got " +
          DimsToString(x.dims()));
    const bool complex_in = x.dim(-1) == 2;
    const bool real_inverse = onesided_ && inverse_;
    if (onesided_ && complex_in && !inverse_)
      return absl::InvalidArgumentError("onesided output needs a real input (last dim 1)");
    int64_t axis_given = axis_input_ ? -2 : axis_attr_;
    if (axis_input_ && ctx.input(2)) {
      auto a = ScalarInt(ctx.input(2), "axis");
      if (!a.ok()) return a.status();
      axis_given = *a;
    }
    if (axis_given < -rank || axis_given >= rank - 1 || axis_given == -1)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_given) +
                                        " is out of range for input " + DimsToString(x.dims()) +
                                        " (the last dimension holds real/imaginary parts)");
    const int axis = static_cast<int>(axis_given < 0 ? axis_given + rank : axis_given);
    const int64_t in_len = x.dim(axis);
    int64_t n = real_inverse ? 2 * (in_len - 1) : in_len;
    if (const Tensor* len = ctx.input(1)) {
      auto v = ScalarInt(len, "dft_length");
      if (!v.ok()) return v.status();
      if (*v <= 0)
        return absl::InvalidArgumentError("dft_length must be positive, got " +
                                          std::to_string(*v));
      n = *v;
    }
    if (n <= 0) return absl::InvalidArgumentError("the transform length must be positive");
    const int64_t out_len = onesided_ && !real_inverse ? n / 2 + 1 : n;
    Dims out_dims = x.dims();
    out_dims[axis] = out_len;
    out_dims.back() = real_inverse ? 1 : 2;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_dims);
    if (y.numel() == 0) return absl::OkStatus();

    const int64_t outer = DimProduct(x.dims(), 0, axis);
    const int64_t inner = DimProduct(x.dims(), axis + 1, rank - 1);  // excludes re/im dim
    const int64_t comps = x.dim(-1);
    const int64_t copy_len = std::min(in_len, real_inverse ? n / 2 + 1 : n);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        const T* px = x.data<T>();
        T* py = y.data<T>();
        std::vector<cd> line(static_cast<size_t>(n));
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            std::fill(line.begin(), line.end(), cd(0, 0));
            for (int64_t k = 0; k < copy_len; ++k) {
              const T* e = px + ((o * in_len + k) * inner + i) * comps;
              line[k] = cd(ToDouble(e[0]), complex_in ? ToDouble(e[1]) : 0.0);
            }
            if (real_inverse) {  // Hermitian spectrum; bins 0 and n/2 count as real
              line[0].imag(0);
              if (n % 2 == 0) line[n / 2].imag(0);
              for (int64_t k = n / 2 + 1; k < n; ++k) line[k] = std::conj(line[n - k]);
            }
            Dft(line, inverse_);
            const int64_t out_comps = real_inverse ? 1 : 2;
            for (int64_t k = 0; k < out_len; ++k) {
              T* e = py + ((o * out_len + k) * inner + i) * out_comps;
              e[0] = FromDouble<T>(line[k].real() * scale);
              if (!real_inverse) e[1] = FromDouble<T>(line[k].imag() * scale);
            }
          }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool onesided_, inverse_, axis_input_;
  int64_t axis_attr_;
};

// ---------------------------------------------------------------------------------------
// STFT-17: signal [batch, length, 1|2], frame_step, optional window [frame_length] and
// frame_length. Output [batch, frames, bins, 2], frames = (length - frame_length) /
// frame_step + 1, bins = frame_length / 2 + 1 when onesided (default) else frame_length.

class Stft : public Kernel {
 public:
  explicit Stft(const KernelInfo& info) : onesided_(info.node.attr_int("onesided", 1) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
      return absl::InvalidArgumentError(
          "signal must have shape [batch, length, 1|2], got " + DimsToString(x.dims()));
    const bool complex_in = x.dim(2) == 2;
    if (onesided_ && complex_in)
      return absl::InvalidArgumentError(
          "onesided output needs a real signal (last dim 1); set onesided=0 for complex input");
    auto step = ScalarInt(ctx.input(1), "frame_step");
    if (!step.ok()) return step.status();
    if (*step <= 0)
      return absl::InvalidArgumentError("frame_step must be positive, got " +
                                        std::to_string(*step));
    const Tensor* window = ctx.input(2);
    if (window && window->rank() != 1)
      return absl::InvalidArgumentError("window must be 1-D, got " +
                                        DimsToString(window->dims()));
    if (window && window->dtype() != x.dtype())
      return absl::InvalidArgumentError("window must have the same type as signal");
    int64_t frame_len = window ? window->dim(0) : -1;
    if (const Tensor* fl = ctx.input(3)) {
      auto v = ScalarInt(fl, "frame_length");
      if (!v.ok()) return v.status();
      if (window && *v != frame_len)
        return absl::InvalidArgumentError("frame_length " + std::to_string(*v) +
                                          " differs from the window length " +
                                          std::to_string(frame_len));
      frame_len = *v;
    }
    if (frame_len < 0)
      return absl::InvalidArgumentError("either window or frame_length must be given");
    if (frame_len == 0) return absl::InvalidArgumentError("frame_length must be positive");
    const int64_t batch = x.dim(0), length = x.dim(1);
    if (length < frame_len)
      return absl::InvalidArgumentError("signal length " + std::to_string(length) +
                                        " is shorter than the frame length " +
                                        std::to_string(frame_len));
    const int64_t frames = (length - frame_len) / *step + 1;
    const int64_t bins = onesided_ ? frame_len / 2 + 1 : frame_len;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {batch, frames, bins, 2});
    if (y.numel() == 0) return absl::OkStatus();
    const int64_t comps = x.dim(2);
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        const T* px = x.data<T>();
        const T* pw = window ? window->data<T>() : nullptr;
        T* py = y.data<T>();
        std::vector<cd> line(static_cast<size_t>(frame_len));
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t f = 0; f < frames; ++f) {
            const T* src = px + (b * length + f * *step) * comps;
            for (int64_t k = 0; k < frame_len; ++k) {
              const double w = pw ? ToDouble(pw[k]) : 1.0;
              line[k] = cd(ToDouble(src[k * comps]) * w,
                           complex_in ? ToDouble(src[k * comps + 1]) * w : 0.0);
            }
            Dft(line, false);
            T* dst = py + (b * frames + f) * bins * 2;
            for (int64_t k = 0; k < bins; ++k) {
              dst[2 * k] = FromDouble<T>(line[k].real());
              dst[2 * k + 1] = FromDouble<T>(line[k].imag());
            }
          }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool onesided_;
};

// ---------------------------------------------------------------------------------------
// MelWeightMatrix-17: [dft_length/2 + 1, num_mel_bins] triangular filters whose edges are
// num_mel_bins + 2 points spaced evenly on the mel scale mel(f) = 2595 log10(1 + f/700),
// mapped to DFT bins floor((dft_length + 1) * f / sample_rate).

class MelWeightMatrix : public Kernel {
 public:
  explicit MelWeightMatrix(const KernelInfo& info)
      : out_type_(info.node.attr_int("output_datatype", 1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!IsNumericOutput(out_type_))
      return absl::InvalidArgumentError("output_datatype " + std::to_string(out_type_) +
                                        " is not a numeric tensor type");
    auto mel_bins = ScalarInt(ctx.input(0), "num_mel_bins");
    if (!mel_bins.ok()) return mel_bins.status();
    auto dft_len = ScalarInt(ctx.input(1), "dft_length");
    if (!dft_len.ok()) return dft_len.status();
    auto rate = ScalarInt(ctx.input(2), "sample_rate");
    if (!rate.ok()) return rate.status();
    const Tensor* lo_t = ctx.input(3);
    const Tensor* hi_t = ctx.input(4);
    if (!lo_t || !hi_t || lo_t->numel() != 1 || hi_t->numel() != 1 ||
        !IsFloatingPoint(lo_t->dtype()) || !IsFloatingPoint(hi_t->dtype()))
      return absl::InvalidArgumentError(
          "lower_edge_hertz and upper_edge_hertz must be floating-point scalars");
    if (*mel_bins < 0 || *dft_len <= 0 || *rate <= 0)
      return absl::InvalidArgumentError(
          "num_mel_bins must be >= 0 and dft_length, sample_rate > 0");
    const int64_t M = *mel_bins, bins = *dft_len / 2 + 1;
    Tensor& y = ctx.AllocateOutput(0, static_cast<DataType>(out_type_), {bins, M});
    if (y.numel() == 0) return absl::OkStatus();
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double lo_mel = to_mel(lo_t->ElementAsDouble(0));
    const double hi_mel = to_mel(hi_t->ElementAsDouble(0));
    const double mel_step = (hi_mel - lo_mel) / static_cast<double>(M + 2);
    std::vector<int64_t> edge(static_cast<size_t>(M + 2));
    for (int64_t i = 0; i < M + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (i * mel_step + lo_mel) / 2595.0) - 1.0);
      edge[i] = static_cast<int64_t>(
          std::floor(static_cast<double>(*dft_len + 1) * hz / static_cast<double>(*rate)));
    }
    std::vector<double> w(static_cast<size_t>(bins * M), 0.0);
    auto set = [&](int64_t row, int64_t col, double v) {
      if (row >= 0 && row < bins) w[row * M + col] = v;
    };
    for (int64_t i = 0; i < M; ++i) {
      const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
      if (center == left) {
        set(center, i, 1.0);
      } else {
        for (int64_t j = left; j <= center; ++j)
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      }
      if (right > center)
        for (int64_t j = center; j < right; ++j)
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
    WriteAs(w, y);
    return absl::OkStatus();
  }

 private:
  int64_t out_type_;
};

}  // namespace

void RegisterSignalKernels(KernelRegistry& r) {
  const std::vector<DataType> ints = {DataType::kInt32, DataType::kInt64};
  r.Add("HannWindow", 17, kMaxOpset, ints, Make<HannWindow>());
  r.Add("HammingWindow", 17, kMaxOpset, ints, Make<HammingWindow>());
  r.Add("BlackmanWindow", 17, kMaxOpset, ints, Make<BlackmanWindow>());
  r.Add("DFT", 17, 19, types::kFloats, Make<DftKernel>());
  r.Add("DFT", 20, kMaxOpset, types::kFloats, Make<DftKernel>());  // axis is an input
  r.Add("STFT", 17, kMaxOpset, types::kFloats, Make<Stft>());
  r.Add("MelWeightMatrix", 17, kMaxOpset, ints, Make<MelWeightMatrix>());
}

}  // namespace tandem::cpu
