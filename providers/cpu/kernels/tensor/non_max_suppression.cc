// NonMaxSuppression (opset 10+), float boxes and scores. Per batch item and class the
// candidates (score > score_threshold when given) are taken in descending score order (ties
// in box order) and each is kept unless its IoU with a box kept before it exceeds
// iou_threshold, up to max_output_boxes_per_class; a box of no area is kept and suppresses
// nothing. The (batch, class) pairs run in parallel on the OpenMP team and their
// selections are joined in that order, as ONNX lists them; the overlap test runs over the
// kept boxes as arrays (microkernels/box_overlap.h), only those in buckets of x1 that can
// reach the candidate. Float arithmetic, as ONNX Runtime's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/box_overlap.h"

namespace tandem::cpu {
namespace {

// Every box of one batch item as corners (y1 <= y2, x1 <= x2) and area, one array each.
struct Corners {
  std::vector<float> y1, x1, y2, x2, area;
};

Corners ToCorners(const float* boxes, int64_t n, bool center_point_box) {
  Corners c;
  for (auto* v : {&c.y1, &c.x1, &c.y2, &c.x2, &c.area}) v->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const float* b = boxes + i * 4;
    float y1, x1, y2, x2;
    if (center_point_box) {  // [x_center, y_center, width, height]
      x1 = b[0] - b[2] / 2;
      x2 = b[0] + b[2] / 2;
      y1 = b[1] - b[3] / 2;
      y2 = b[1] + b[3] / 2;
    } else {  // [y1, x1, y2, x2], either corner first
      y1 = std::min(b[0], b[2]);
      y2 = std::max(b[0], b[2]);
      x1 = std::min(b[1], b[3]);
      x2 = std::max(b[1], b[3]);
    }
    c.y1[i] = y1;
    c.x1[i] = x1;
    c.y2[i] = y2;
    c.x2[i] = x2;
    c.area[i] = (y2 - y1) * (x2 - x1);
  }
  return c;
}

// Boxes as (box_overlap.h) arrays.
class BoxSet {
 public:
  void Add(const Corners& c, int64_t i) {
    y1_.push_back(c.y1[i]);
    y2_.push_back(c.y2[i]);
    x1_.push_back(c.x1[i]);
    x2_.push_back(c.x2[i]);
    area_.push_back(c.area[i]);
  }
  nms::BoxArrays arrays() const { return {y1_.data(), x1_.data(), y2_.data(), x2_.data(), area_.data()}; }
  int64_t size() const { return static_cast<int64_t>(area_.size()); }

 private:
  std::vector<float> y1_, x1_, y2_, x2_, area_;
};

// The boxes kept for one class: their indices in the order kept, and the boxes that can
// suppress (area > 0) in buckets by x1, `width_` apart, width_ at least every candidate's
// width, so that a candidate is tested only against the buckets whose boxes can reach it.
// (torchvision's batched_nms moves each class's boxes apart, so of thousands kept a
// candidate meets a few buckets' worth.) Boxes with a coordinate that is not finite go to
// one list every candidate meets. Which boxes are kept does not depend on the buckets.
class Kept {
 public:
  // Buckets for the candidates `order` of `c`.
  Kept(const Corners& c, const std::vector<int64_t>& order) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo, widest = 0.f;
    for (int64_t i : order)
      if (Bucketed(c, i)) {
        lo = std::min(lo, c.x1[i]);
        hi = std::max(hi, c.x1[i]);
        widest = std::max(widest, c.x2[i] - c.x1[i]);
      }
    if (!(hi >= lo)) return;  // nothing to bucket
    constexpr double kMaxBuckets = 4096;
    double width = std::max<double>(widest, (static_cast<double>(hi) - lo) / (kMaxBuckets - 1));
    if (!(width > 0)) width = 1.0;
    lo_ = lo;
    width_ = width;
    buckets_.resize(static_cast<size_t>(std::floor((static_cast<double>(hi) - lo) / width)) + 1);
  }

  // Whether the box i of `c` (area > 0) overlaps a kept box by more than iou_threshold.
  bool Suppresses(const nms::Kernels& kernels, const Corners& c, int64_t i, float iou_threshold) const {
    auto hits = [&](const BoxSet& set) {
      return set.size() > 0 && kernels.overlaps_any(set.arrays(), set.size(), c.y1[i], c.x1[i], c.y2[i], c.x2[i],
                                                    c.area[i], iou_threshold);
    };
    if (hits(wide_)) return true;
    if (buckets_.empty() || !Bucketed(c, i)) {
      for (const BoxSet& set : buckets_)
        if (hits(set)) return true;
      return false;
    }
    // A kept box reaching this one has x1 in (c.x1 - width_, c.x2); one bucket more each side
    // for the rounding of the bucket arithmetic.
    const int64_t first = std::max<int64_t>(BucketOf(static_cast<double>(c.x1[i]) - width_) - 1, 0);
    const int64_t last = std::min<int64_t>(BucketOf(c.x2[i]) + 1, static_cast<int64_t>(buckets_.size()) - 1);
    for (int64_t b = first; b <= last; ++b)
      if (hits(buckets_[b])) return true;
    return false;
  }

  void Add(const Corners& c, int64_t i) {
    index_.push_back(i);
    if (!(c.area[i] > 0)) return;  // suppresses nothing
    if (buckets_.empty() || !Bucketed(c, i))
      wide_.Add(c, i);
    else
      buckets_[BucketOf(c.x1[i])].Add(c, i);
  }

  int64_t size() const { return static_cast<int64_t>(index_.size()); }
  const std::vector<int64_t>& indices() const { return index_; }

 private:
  static bool Bucketed(const Corners& c, int64_t i) {
    return c.area[i] > 0 && std::isfinite(c.area[i]) && std::isfinite(c.x1[i]) && std::isfinite(c.x2[i]);
  }
  // The bucket of x1 = x, clamped to the buckets (a candidate's reach may lie outside them).
  int64_t BucketOf(double x) const {
    const double b = std::floor((x - lo_) / width_);
    return static_cast<int64_t>(std::min(std::max(b, 0.0), static_cast<double>(buckets_.size() - 1)));
  }

  std::vector<int64_t> index_;
  BoxSet wide_;
  std::vector<BoxSet> buckets_;
  double lo_ = 0, width_ = 1;
};

class NonMaxSuppression : public Kernel {
 public:
  explicit NonMaxSuppression(const KernelInfo& info)
      : center_point_box_(info.node.attr_int("center_point_box", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& boxes_t = *ctx.input(0);
    const Tensor* scores_p = ctx.input(1);
    if (!scores_p) return absl::InvalidArgumentError("missing input 1 (scores)");
    const Tensor& scores_t = *scores_p;
    if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4)
      return absl::InvalidArgumentError("boxes must have shape [batch, boxes, 4], got " +
                                        DimsToString(boxes_t.dims()));
    if (scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) || scores_t.dim(2) != boxes_t.dim(1))
      return absl::InvalidArgumentError("scores shape " + DimsToString(scores_t.dims()) +
                                        " does not match boxes shape " + DimsToString(boxes_t.dims()));
    if (center_point_box_ != 0 && center_point_box_ != 1)
      return absl::InvalidArgumentError("center_point_box must be 0 or 1");
    int64_t max_out = 0;
    if (const Tensor* t = ctx.input(2); t && t->numel() > 0) max_out = t->ElementAsInt64(0);
    float iou_threshold = 0;
    if (const Tensor* t = ctx.input(3); t && t->numel() > 0) iou_threshold = static_cast<float>(t->ElementAsDouble(0));
    const Tensor* score_t = ctx.input(4);
    const bool has_score_threshold = score_t && score_t->numel() > 0;
    const float score_threshold = has_score_threshold ? static_cast<float>(score_t->ElementAsDouble(0)) : 0.f;
    if (!(iou_threshold >= 0 && iou_threshold <= 1))
      return absl::InvalidArgumentError("iou_threshold must be in [0, 1]");
    const int64_t batches = boxes_t.dim(0), n = boxes_t.dim(1), classes = scores_t.dim(1);
    std::vector<Corners> corners;
    for (int64_t b = 0; b < batches && max_out > 0; ++b)
      corners.push_back(ToCorners(boxes_t.data<float>() + b * n * 4, n, center_point_box_ != 0));
    const nms::Kernels& kernels = nms::Builds().best();
    const int64_t tasks = max_out > 0 ? batches * classes : 0;
    std::vector<Kept> kept(tasks, Kept(Corners{}, {}));
    ParallelForIf(tasks > 1 && n * tasks >= 4096, tasks, [&](int64_t task) {
      const int64_t b = task / classes;
      const float* scores = scores_t.data<float>() + task * n;
      std::vector<int64_t> order;
      order.reserve(n);
      for (int64_t i = 0; i < n; ++i)
        if (!has_score_threshold || scores[i] > score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return scores[p] > scores[q]; });
      const Corners& c = corners[b];
      Kept& k = kept[task];
      k = Kept(c, order);
      for (int64_t i : order) {
        if (k.size() >= max_out) break;
        if (c.area[i] > 0 && k.Suppresses(kernels, c, i, iou_threshold)) continue;
        k.Add(c, i);
      }
    });
    int64_t selected = 0;
    for (const Kept& k : kept) selected += k.size();
    Tensor& out = ctx.AllocateOutput(0, DataType::kInt64, {selected, 3});
    int64_t* o = out.data<int64_t>();
    for (int64_t task = 0; task < tasks; ++task)
      for (int64_t i : kept[task].indices()) {
        *o++ = task / classes;
        *o++ = task % classes;
        *o++ = i;
      }
    return absl::OkStatus();
  }

 private:
  int64_t center_point_box_;
};

}  // namespace

void RegisterNonMaxSuppressionKernels(KernelRegistry& r) {
  r.Add("NonMaxSuppression", 10, kMaxOpset, types::kFloat, Make<NonMaxSuppression>());
}

}  // namespace tandem::cpu
