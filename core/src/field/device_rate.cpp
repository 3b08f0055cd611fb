// Per-device cache of measured values (~/.cache/edm/<name>-<hash>.txt), written atomically.
#include "edm/device_rate.hpp"

#include "edm/flops.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

namespace edm {
namespace {
std::filesystem::path value_file(const DeviceInfo& info, const std::string& name) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg ? std::filesystem::path(xdg) / "edm"
                              : home     ? std::filesystem::path(home) / ".cache" / "edm"
                                         : std::filesystem::path();
  if (dir.empty()) return {};
  const auto key = std::hash<std::string>{}(info.platform + '\0' + info.name + '\0' + info.driver_version);
  return dir / (name + "-" + std::to_string(key) + ".txt");
}
}  // namespace

void record_device_value(const DeviceInfo& info, const std::string& name, double value) {
  const auto f = value_file(info, name);
  if (f.empty() || !(value > 0)) return;
  std::error_code ec;
  std::filesystem::create_directories(f.parent_path(), ec);
  auto tmp = f;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    out.precision(17);
    out << value << "\n";
    if (!out) return;  // a cache that cannot be written is only a missed estimate
  }
  std::filesystem::rename(tmp, f, ec);
}

double cached_device_value(const DeviceInfo& info, const std::string& name) {
  const auto f = value_file(info, name);
  if (f.empty()) return 0;
  std::ifstream in(f);
  double v = 0;
  return (in >> v && v > 0) ? v : 0;
}

namespace {
// The cache entry of a kernel path: "flops-" + the kernel (scalar, interleave, simdW) + the screen.
std::string kernel_rate_name(const KernelOptions& o, const Screen& screen) {
  const std::string kernel = o.simd > 0        ? "simd" + std::to_string(o.simd)
                             : o.interleave > 0 ? std::string("interleave")
                                                : std::string("scalar");
  const char* where = screen.far_field() ? "far" : screen.angular() ? "sphere" : "flat";
  return "flops-" + kernel + "-" + where;
}
}  // namespace

void record_kernel_rate(const DeviceInfo& info, const KernelOptions& effective, const Screen& screen, Mode mode,
                        double slots_per_second) {
  record_device_value(info, kernel_rate_name(effective, screen), slots_per_second * flop_per_slot(effective, mode));
}

double cached_kernel_rate(const DeviceInfo& info, const KernelOptions& effective, const Screen& screen, Mode mode) {
  const double flops = cached_device_value(info, kernel_rate_name(effective, screen));
  const double per_slot = flop_per_slot(effective, mode);
  return flops > 0 && per_slot > 0 ? flops / per_slot : 0;
}

double fp64_peak(const DeviceInfo& info, bool remeasure) {
  if (!remeasure)
    if (const double v = cached_device_value(info, kPeakValue); v > 0) return v;
  auto dev = open_device(info);
  const double v = measure_fp64_peak(*dev);
  record_device_value(info, kPeakValue, v);
  return v;
}

}  // namespace edm
