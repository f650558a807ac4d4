#include "cli/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace tandem {

namespace {
constexpr double kW = 640, kH = 400, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

std::string Polyline(const std::vector<double>& v, double lo, double hi, size_t n,
                     const char* color) {
  std::ostringstream os;
  os << "<polyline fill='none' stroke='" << color << "' stroke-width='2' points='";
  for (size_t i = 0; i < v.size(); ++i) {
    double x = kLeft + (kW - kLeft - kRight) * (n > 1 ? double(i) / double(n - 1) : 0.5);
    double y = kTop + (kH - kTop - kBottom) * (1 - (std::log10(std::max(v[i], 1e-12)) - lo) / (hi - lo));
    os << x << "," << y << " ";
  }
  os << "'/>\n";
  return os.str();
}
}  // namespace

absl::Status WriteLossPlotSvg(const std::string& path, const std::vector<double>& train,
                              const std::vector<double>& validation, const std::string& title) {
  if (train.empty()) return absl::InvalidArgumentError("no loss values to plot");
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* series : {&train, &validation})
    for (double v : *series) {
      double l = std::log10(std::max(v, 1e-12));
      lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
  lo = std::floor(lo);
  hi = std::max(std::ceil(hi), lo + 1);
  size_t n = std::max(train.size(), validation.size());
  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kW << "' height='" << kH
     << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n"
     << "<text x='" << kW / 2 << "' y='22' text-anchor='middle' font-size='15'>" << title << "</text>\n";
  for (double e = lo; e <= hi; e += 1) {
    double y = kTop + (kH - kTop - kBottom) * (1 - (e - lo) / (hi - lo));
    os << "<line x1='" << kLeft << "' x2='" << kW - kRight << "' y1='" << y << "' y2='" << y
       << "' stroke='#ddd'/><text x='" << kLeft - 6 << "' y='" << y + 4
       << "' text-anchor='end'>1e" << static_cast<int>(e) << "</text>\n";
  }
  os << "<text x='" << kW / 2 << "' y='" << kH - 12 << "' text-anchor='middle'>epoch (1.." << n
     << ")</text>\n<text x='16' y='" << kH / 2 << "' transform='rotate(-90 16 " << kH / 2
     << ")' text-anchor='middle'>loss</text>\n";
  os << Polyline(train, lo, hi, n, "#1f77b4");
  if (!validation.empty()) os << Polyline(validation, lo, hi, n, "#ff7f0e");
  os << "<text x='" << kW - kRight - 150 << "' y='" << kTop + 14 << "' fill='#1f77b4'>train</text>\n";
  if (!validation.empty())
    os << "<text x='" << kW - kRight - 100 << "' y='" << kTop + 14 << "' fill='#ff7f0e'>validation</text>\n";
  os << "</svg>\n";
  std::ofstream out(path);
  if (!out) return absl::PermissionDeniedError("cannot write " + path);
  out << os.str();
  return out ? absl::OkStatus() : absl::DataLossError("write failed: " + path);
}

}  // namespace tandem
