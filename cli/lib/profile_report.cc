#include "cli/lib/profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tandem::cli {

std::map<std::string, OpTypeTime> ByOpType(const std::vector<StepProfile>& profile, int64_t steps) {
  std::map<std::string, OpTypeTime> by_op;
  for (const StepProfile& p : profile) {
    OpTypeTime& t = by_op[p.op];
    t.us_per_step += steps > 0 ? p.total_us / static_cast<double>(steps) : 0;
    ++t.nodes;
  }
  return by_op;
}

std::optional<int64_t> Crossover(const std::vector<int64_t>& batch_sizes, const std::vector<double>& cpu_us,
                                 const std::vector<double>& accelerator_us) {
  std::optional<int64_t> best;
  for (size_t i = 0; i < batch_sizes.size() && i < cpu_us.size() && i < accelerator_us.size(); ++i)
    if (accelerator_us[i] < cpu_us[i] && (!best || batch_sizes[i] < *best)) best = batch_sizes[i];
  return best;
}

std::string BatchChartSvg(const std::vector<int64_t>& batch_sizes,
                          const std::map<std::string, std::vector<double>>& series, const std::string& title) {
  const double W = 640, H = 400, left = 70, right = 120, top = 40, bottom = 50;
  double lo = 1e300, hi = -1e300;
  for (const auto& [device, us] : series)
    for (size_t i = 0; i < us.size() && i < batch_sizes.size(); ++i) {
      const double per_sample = us[i] / static_cast<double>(std::max<int64_t>(1, batch_sizes[i]));
      if (per_sample > 0) lo = std::min(lo, std::log10(per_sample)), hi = std::max(hi, std::log10(per_sample));
    }
  if (lo > hi) lo = 0, hi = 1;
  if (hi - lo < 1e-9) hi = lo + 1;
  const double bx_lo = std::log10(std::max<int64_t>(1, *std::min_element(batch_sizes.begin(), batch_sizes.end())));
  double bx_hi = std::log10(std::max<int64_t>(1, *std::max_element(batch_sizes.begin(), batch_sizes.end())));
  if (bx_hi - bx_lo < 1e-9) bx_hi = bx_lo + 1;
  auto x = [&](int64_t b) { return left + (std::log10(std::max<int64_t>(1, b)) - bx_lo) / (bx_hi - bx_lo) * (W - left - right); };
  auto y = [&](double v) { return top + (hi - v) / (hi - lo) * (H - top - bottom); };
  char buf[256];
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\" font-family=\"sans-serif\" font-size=\"12\">\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"20\" font-size=\"14\">%s</text>\n", left, title.c_str());
  svg += buf;
  std::snprintf(buf, sizeof buf, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", left, H - bottom, W - right, H - bottom);
  svg += buf;
  std::snprintf(buf, sizeof buf, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", left, top, left, H - bottom);
  svg += buf;
  for (int64_t b : batch_sizes) {
    std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%lld</text>\n", x(b), H - bottom + 16,
                  static_cast<long long>(b));
    svg += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">batch size</text>\n", (left + W - right) / 2, H - 12);
  svg += buf;
  for (double v : {lo, (lo + hi) / 2, hi}) {
    std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.3g</text>\n", left - 6, y(v) + 4, std::pow(10, v));
    svg += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" text-anchor=\"middle\">us per sample</text>\n",
                (top + H - bottom) / 2, (top + H - bottom) / 2);
  svg += buf;
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  int k = 0;
  for (const auto& [device, us] : series) {
    const char* color = colors[k % 4];
    std::string points;
    for (size_t i = 0; i < us.size() && i < batch_sizes.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", points.empty() ? "" : " ", x(batch_sizes[i]),
                    y(std::log10(std::max(1e-9, us[i] / static_cast<double>(std::max<int64_t>(1, batch_sizes[i]))))));
      points += buf;
    }
    svg += "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" fill=\"%s\">%s</text>\n", W - right + 8, top + 16.0 * (k + 1), color,
                  device.c_str());
    svg += buf;
    ++k;
  }
  return svg + "</svg>\n";
}

}  // namespace tandem::cli
