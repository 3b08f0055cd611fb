// edm devices — lists every OpenCL device of every platform (index as accumulator.devices uses it,
// platform, vendor, name, driver, type, compute units, memory, max allocation, FP64) as a table or,
// with --json, as a JSON array for scripts; --probe measures the FP64 peak (FMA-chain probe) and caches it per device and driver;
// --peak shows the cached value (measuring it once if needed).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "options.hpp"
#include "edm/device.hpp"
#include "edm/device_rate.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if ((unsigned char)c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

std::string gib(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(b) / double(1ull << 30));
  return buf;
}

}  // namespace

int cmd_devices(const Args& args) {
  po::options_description opts("edm devices [options]");
  opts.add_options()("help,h", "this help")("json", "print a JSON array instead of a table")(
      "probe", "measure each FP64 device's peak with an FMA-chain probe (a second or so each) and cache it")(
      "peak", "show each FP64 device's peak: the cached measurement, or a new one if there is none");
  po::variables_map vm;
  std::string none;
  if (!parse_command(args, opts, nullptr, none, vm)) return 0;  // --help
  const auto devices = list_devices();
  // Measured FP64 peak per device index (0 = not measured / no FP64).
  std::vector<double> peak(devices.size(), 0.0);
  const bool show_peak = vm.count("peak") || vm.count("probe");
  if (show_peak)
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i].fp64) peak[i] = fp64_peak(devices[i], vm.count("probe") > 0);
  if (vm.count("json")) {
    std::cout << "[";
    for (size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      std::cout << (i ? ",\n " : "\n ") << "{\"index\": " << d.index << ", \"platform\": \""
                << json_escape(d.platform) << "\", \"vendor\": \"" << json_escape(d.vendor)
                << "\", \"name\": \"" << json_escape(d.name) << "\", \"driver\": \""
                << json_escape(d.driver_version) << "\", \"version\": \"" << json_escape(d.device_version)
                << "\", \"type\": \"" << d.type << "\", \"compute_units\": " << d.compute_units
                << ", \"global_memory\": " << d.global_memory << ", \"max_allocation\": " << d.max_allocation
                << ", \"fp64\": " << (d.fp64 ? "true" : "false");
      if (show_peak) std::cout << ", \"fp64_peak_flops\": " << peak[i];
      std::cout << "}";
    }
    std::cout << (devices.empty() ? "]\n" : "\n]\n");
    return 0;
  }
  if (devices.empty()) {
    std::cout << "no OpenCL device found (is an ICD installed? see /etc/OpenCL/vendors)\n";
    return 0;
  }
  for (const auto& d : devices) {
    std::cout << "[" << d.index << "] " << d.name << "\n"
              << "    platform  " << d.platform << "\n"
              << "    vendor    " << d.vendor << "\n"
              << "    driver    " << d.driver_version << " (" << d.device_version << ")\n"
              << "    type      " << d.type << ", " << d.compute_units << " compute units\n"
              << "    memory    " << gib(d.global_memory) << " global, " << gib(d.max_allocation)
              << " max allocation\n"
              << "    FP64      " << (d.fp64 ? "yes" : "no (edm cannot use this device)");
    if (peak[size_t(d.index)] > 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", measured peak %.1f GFLOP/s (FMA chain)", peak[size_t(d.index)] * 1e-9);
      std::cout << buf;
    }
    std::cout << "\n";
  }
  return 0;
}

}  // namespace edm::app
