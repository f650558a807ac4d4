// Spatial rearrangement ops of opsets 18-20 (CenterCropPad is beside Pad in layout_ops.cc):
// - Col2Im: sums sliding blocks [N, C*prod(block), L] back into images [N, C, *image],
//   the inverse of im2col with strides, dilations and pads.
// - AffineGrid: sampling grids [N, H, W, 2] (or [N, D, H, W, 3]) from affine matrices
//   theta [N, 2, 3] (or [N, 3, 4]) over normalized coordinates in [-1, 1].
// - DeformConv (19, 2-D): a convolution whose every kernel tap samples X bilinearly at
//   its regular position plus a learned offset (zero outside the image), times an
//   optional mask; group and offset_group split the channels.
#include <cmath>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class Col2Im : public Kernel {
 public:
  explicit Col2Im(const KernelInfo& info)
      : dilations_(info.node.attr_ints("dilations", {})),
        pads_(info.node.attr_ints("pads", {})),
        strides_(info.node.attr_ints("strides", {})) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const std::vector<int64_t> image = ReadInt64s(*ctx.input(1)), block = ReadInt64s(*ctx.input(2));
    const size_t n = image.size();
    if (x.rank() != 3 || block.size() != n || n == 0)
      return absl::InvalidArgumentError("input must be [N, C*prod(block_shape), L] and image_shape/block_shape of "
                                        "one length, got input " + DimsToString(x.dims()));
    auto attr = [&](const std::vector<int64_t>& v, size_t len, int64_t fill, const char* name)
        -> absl::StatusOr<std::vector<int64_t>> {
      if (v.empty()) return std::vector<int64_t>(len, fill);
      if (v.size() != len)
        return absl::InvalidArgumentError(std::string("attribute ") + name + " must have " + std::to_string(len) +
                                          " values");
      return v;
    };
    auto dil = attr(dilations_, n, 1, "dilations");
    auto pads = attr(pads_, 2 * n, 0, "pads");
    auto str = attr(strides_, n, 1, "strides");
    for (auto* s : {&dil, &str, &pads})
      if (!s->ok()) return s->status();
    int64_t kernel = 1, blocks = 1;
    std::vector<int64_t> nblocks(n);
    for (size_t d = 0; d < n; ++d) {
      kernel *= block[d];
      nblocks[d] = (image[d] + (*pads)[d] + (*pads)[d + n] - (*dil)[d] * (block[d] - 1) - 1) / (*str)[d] + 1;
      if (block[d] <= 0 || image[d] < 0 || (*str)[d] <= 0 || (*dil)[d] <= 0 || nblocks[d] <= 0)
        return absl::InvalidArgumentError("image_shape, block_shape, strides and dilations give no sliding block "
                                          "on dim " + std::to_string(d));
      blocks *= nblocks[d];
    }
    if (kernel == 0 || x.dim(1) % kernel != 0 || x.dim(2) != blocks)
      return absl::InvalidArgumentError("input " + DimsToString(x.dims()) + " must be [N, C*" +
                                        std::to_string(kernel) + ", " + std::to_string(blocks) + "]");
    const int64_t N = x.dim(0), C = x.dim(1) / kernel;
    Dims out = {N, C};
    out.insert(out.end(), image.begin(), image.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    const int64_t plane = NumElements(Dims(image.begin(), image.end()));
    const std::vector<int64_t> img_strides = Strides(Dims(image.begin(), image.end()));
    absl::Status s = absl::InvalidArgumentError(std::string("unsupported element type ") + DataTypeName(x.dtype()));
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        using A = ComputeT<T>;
        std::vector<A> acc(plane);
        const T* in = x.data<T>();
        T* o = y.data<T>();
        std::vector<int64_t> kidx(n), bidx(n);
        for (int64_t nc = 0; nc < N * C; ++nc) {
          std::fill(acc.begin(), acc.end(), A(0));
          for (int64_t k = 0; k < kernel; ++k) {
            for (int64_t rem = k, d = n - 1; d >= 0; --d) kidx[d] = rem % block[d], rem /= block[d];
            const T* col = in + (nc * kernel + k) * blocks;
            for (int64_t b = 0; b < blocks; ++b) {
              int64_t at = 0, rem = b;
              bool inside = true;
              for (int64_t d = n - 1; d >= 0 && inside; --d) {
                const int64_t p = (rem % nblocks[d]) * (*str)[d] - (*pads)[d] + kidx[d] * (*dil)[d];
                rem /= nblocks[d];
                inside = p >= 0 && p < image[d];
                at += p * img_strides[d];
              }
              if (inside) acc[at] += static_cast<A>(col[b]);
            }
          }
          for (int64_t i = 0; i < plane; ++i) o[nc * plane + i] = FromCompute<T>(acc[i]);
        }
        s = absl::OkStatus();
      }
    });
    return s;
  }

 private:
  std::vector<int64_t> dilations_, pads_, strides_;
};

class AffineGrid : public Kernel {
 public:
  explicit AffineGrid(const KernelInfo& info) : align_corners_(info.node.attr_int("align_corners", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& theta = *ctx.input(0);
    const std::vector<int64_t> size = ReadInt64s(*ctx.input(1));
    const int64_t sd = static_cast<int64_t>(size.size()) - 2;  // spatial dims: 2 or 3
    if ((sd != 2 && sd != 3) || theta.rank() != 3 || theta.dim(1) != sd || theta.dim(2) != sd + 1 ||
        theta.dim(0) != size[0])
      return absl::InvalidArgumentError("theta " + DimsToString(theta.dims()) + " and size of " +
                                        std::to_string(size.size()) +
                                        " values must be [N, 2, 3] with [N, C, H, W] or [N, 3, 4] with "
                                        "[N, C, D, H, W]");
    const int64_t N = size[0];
    const Dims spatial(size.begin() + 2, size.end());  // [H, W] or [D, H, W]
    for (int64_t v : spatial)
      if (v < 0) return absl::InvalidArgumentError("size has a negative dim");
    Dims out = {N};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(sd);
    Tensor& y = ctx.AllocateOutput(0, theta.dtype(), out);
    // Normalized coordinate of index i along a dim of n points.
    auto coord = [&](int64_t i, int64_t n) -> double {
      if (align_corners_) return n > 1 ? -1.0 + 2.0 * i / (n - 1) : -1.0;
      return -1.0 + (2.0 * i + 1.0) / n;
    };
    const int64_t points = NumElements(spatial);
    absl::Status s = absl::InvalidArgumentError("theta must be a float tensor");
    VisitNumericType(theta.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T>) {
        const T* th = theta.data<T>();
        T* o = y.data<T>();
        for (int64_t b = 0; b < N; ++b) {
          const T* m = th + b * sd * (sd + 1);
          for (int64_t p = 0; p < points; ++p) {
            // Homogeneous point (x, y[, z], 1): x runs along the last dim.
            double h[4];
            for (int64_t rem = p, d = sd - 1; d >= 0; --d) {
              h[sd - 1 - d] = coord(rem % spatial[d], spatial[d]);
              rem /= spatial[d];
            }
            h[sd] = 1.0;
            for (int64_t r = 0; r < sd; ++r) {
              double v = 0;
              for (int64_t c = 0; c <= sd; ++c) v += static_cast<double>(static_cast<ComputeT<T>>(m[r * (sd + 1) + c])) * h[c];
              o[(b * points + p) * sd + r] = FromCompute<T>(v);
            }
          }
        }
        s = absl::OkStatus();
      }
    });
    return s;
  }

 private:
  bool align_corners_;
};

// X [N, C, H, W], W [M, C/group, kH, kW], offset [N, G*kH*kW*2, oH, oW] ((dy, dx) per
// tap), B [M], mask [N, G*kH*kW, oH, oW]; G = offset_group. Reference loops in double.
class DeformConv : public Kernel {
 public:
  explicit DeformConv(const KernelInfo& info)
      : group_(info.node.attr_int("group", 1)),
        offset_group_(info.node.attr_int("offset_group", 1)),
        dilations_(info.node.attr_ints("dilations", {1, 1})),
        pads_(info.node.attr_ints("pads", {0, 0, 0, 0})),
        strides_(info.node.attr_ints("strides", {1, 1})) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor &x = *ctx.input(0), &w = *ctx.input(1), &offset = *ctx.input(2);
    const Tensor *bias = ctx.input(3), *mask = ctx.input(4);
    if (x.rank() != 4 || w.rank() != 4 || offset.rank() != 4)
      return absl::UnimplementedError("DeformConv is implemented for 2-D images (X, W and offset of rank 4)");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), Wd = x.dim(3);
    const int64_t M = w.dim(0), kH = w.dim(2), kW = w.dim(3), K = kH * kW;
    const int64_t oH = offset.dim(2), oW = offset.dim(3), G = offset_group_;
    if (group_ <= 0 || G <= 0 || C != w.dim(1) * group_ || M % group_ != 0 || C % G != 0 ||
        dilations_.size() != 2 || strides_.size() != 2 || pads_.size() != 4)
      return absl::InvalidArgumentError("X " + DimsToString(x.dims()) + " and W " + DimsToString(w.dims()) +
                                        " do not fit group " + std::to_string(group_) + " and offset_group " +
                                        std::to_string(G));
    if (offset.dim(0) != N || offset.dim(1) != G * K * 2)
      return absl::InvalidArgumentError("offset has shape " + DimsToString(offset.dims()) + ", expected [" +
                                        std::to_string(N) + ", " + std::to_string(G * K * 2) + ", oH, oW]");
    if (mask && mask->dims() != Dims{N, G * K, oH, oW})
      return absl::InvalidArgumentError("mask has shape " + DimsToString(mask->dims()) + ", expected " +
                                        DimsToString({N, G * K, oH, oW}));
    if (bias && bias->numel() != M) return absl::InvalidArgumentError("B must hold one value per output channel");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {N, M, oH, oW});
    const int64_t c_per_group = C / group_, m_per_group = M / group_, c_per_offset = C / G;
    return VisitFloatLike(x.dtype(), "X", [&](auto tag) {
      using T = decltype(tag);
      auto at = [](const Tensor& t, int64_t i) { return static_cast<double>(static_cast<ComputeT<T>>(t.data<T>()[i])); };
      // Bilinear sample of channel plane `p` at (h, w); corners outside the image count 0.
      auto sample = [&](int64_t p, double h, double wc) {
        const double h0 = std::floor(h), w0 = std::floor(wc);
        double v = 0;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            const int64_t yy = static_cast<int64_t>(h0) + dy, xx = static_cast<int64_t>(w0) + dx;
            if (yy < 0 || yy >= H || xx < 0 || xx >= Wd) continue;
            const double wy = dy ? h - h0 : 1 - (h - h0), wx = dx ? wc - w0 : 1 - (wc - w0);
            v += wy * wx * at(x, p * H * Wd + yy * Wd + xx);
          }
        return v;
      };
      std::vector<double> cols(static_cast<size_t>(C * K));  // sampled taps of one output pixel
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < oH; ++i)
          for (int64_t j = 0; j < oW; ++j) {
            for (int64_t c = 0; c < C; ++c) {
              const int64_t g = c / c_per_offset;
              for (int64_t k = 0; k < K; ++k) {
                const int64_t kh = k / kW, kw = k % kW;
                const int64_t off = ((n * G * K + g * K + k) * 2) * oH * oW + i * oW + j;
                const double h = -pads_[0] + strides_[0] * i + kh * dilations_[0] + at(offset, off);
                const double wc = -pads_[1] + strides_[1] * j + kw * dilations_[1] + at(offset, off + oH * oW);
                const double m = mask ? at(*mask, ((n * G + g) * K + k) * oH * oW + i * oW + j) : 1.0;
                cols[c * K + k] = m * sample(n * C + c, h, wc);
              }
            }
            for (int64_t oc = 0; oc < M; ++oc) {
              const int64_t grp = oc / m_per_group;
              double acc = bias ? at(*bias, oc) : 0.0;
              for (int64_t cl = 0; cl < c_per_group; ++cl)
                for (int64_t k = 0; k < K; ++k)
                  acc += at(w, (oc * c_per_group + cl) * K + k) * cols[(grp * c_per_group + cl) * K + k];
              y.data<T>()[((n * M + oc) * oH + i) * oW + j] = FromCompute<T>(acc);
            }
          }
      return absl::OkStatus();
    });
  }

 private:
  int64_t group_, offset_group_;
  std::vector<int64_t> dilations_, pads_, strides_;
};

}  // namespace

void RegisterSpatialKernels(KernelRegistry& r) {
  r.Add("Col2Im", 18, kMaxOpset, types::kNumeric, Make<Col2Im>());
  r.Add("AffineGrid", 20, kMaxOpset, types::kFloats, Make<AffineGrid>());
  r.Add("DeformConv", 19, kMaxOpset, types::kFloats, Make<DeformConv>());
}

}  // namespace tandem::cpu
