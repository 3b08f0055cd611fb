// Per-device cache of the measured field rate (~/.cache/edm/rate-<hash>.txt), written atomically.
#include "edm/device_rate.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

namespace edm {
namespace {
std::filesystem::path rate_file(const DeviceInfo& info) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg ? std::filesystem::path(xdg) / "edm"
                              : home     ? std::filesystem::path(home) / ".cache" / "edm"
                                         : std::filesystem::path();
  if (dir.empty()) return {};
  const auto key = std::hash<std::string>{}(info.platform + '\0' + info.name + '\0' + info.driver_version);
  return dir / ("rate-" + std::to_string(key) + ".txt");
}
}  // namespace

void record_device_rate(const DeviceInfo& info, double slots_per_second) {
  const auto f = rate_file(info);
  if (f.empty() || !(slots_per_second > 0)) return;
  std::error_code ec;
  std::filesystem::create_directories(f.parent_path(), ec);
  auto tmp = f;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    out.precision(17);
    out << slots_per_second << "\n";
    if (!out) return;  // a cache that cannot be written is only a missed estimate
  }
  std::filesystem::rename(tmp, f, ec);
}

double cached_device_rate(const DeviceInfo& info) {
  const auto f = rate_file(info);
  if (f.empty()) return 0;
  std::ifstream in(f);
  double v = 0;
  return (in >> v && v > 0) ? v : 0;
}

}  // namespace edm
