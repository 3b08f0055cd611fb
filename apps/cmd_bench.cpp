// edm bench [CAMPAIGN] [--electrons N]: the benchmark cell (share/campaigns/inverse_thomson_bench.toml)
// or any campaign, for a few electrons after a warm-up launch: per-launch time from OpenCL
// profiling events (median, min, max), slots/s, FLOP/slot counted from the kernel source
// (edm::flop_per_slot), FLOP/s and their fraction of the device's measured FP64 peak, and the
// compiler's resource lines (registers, spills) where it logs them.
// Every kernel tunable is an [accumulator] key (`edm schema` lists them with their environment
// names, EDM_ELECTRON_GROUP, EDM_PIXEL_ORDER, EDM_FAST_RECIP, …), read through the campaign like
// any other key: --set accumulator.KEY=VALUE or the variable (0 or unset = chosen from the device).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/device_rate.hpp"
#include "edm/error.hpp"
#include "edm/flops.hpp"
#include "edm/run.hpp"
#include "options.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

std::filesystem::path default_bench_campaign() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const auto& rel : {"../../share/campaigns", "../share/edm/campaigns", "../share/campaigns"}) {
    const auto p = exe.parent_path() / rel / "inverse_thomson_bench.toml";
    if (std::filesystem::exists(p)) return p;
  }
  return "share/campaigns/inverse_thomson_bench.toml";
}

// The timed electron count of -n/--electrons. It was read as an unsigned number, so -1 wrapped to
// 2^64 - 1 and the bench's own electrons.count = N + 1 override was refused as
// "--set electrons.count=0" (or 18446744073709551615 for -2), an option the user never typed. The
// text is parsed here and checked against electrons.count's range (1 … 1e9, less the warm-up
// electron), naming the option as given.
std::uint64_t bench_electrons(const std::string& text) {
  constexpr long long kMax = 1000000000LL - 1;  // electrons.count <= 1e9, one of them the warm-up
  long long n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec == std::errc() && ptr == end && n >= 1 && n <= kMax) return std::uint64_t(n);
  throw ConfigError("EDM-CLI-003", "edm bench -n/--electrons " + text + ": must be a whole number from 1 to " +
                                       std::to_string(kMax) + " (the electrons timed after the warm-up one)");
}

}  // namespace

int cmd_bench(const Args& args) {
  po::options_description desc("edm bench [CAMPAIGN] [options]");
  std::vector<std::string> sets;
  std::string campaign_file, device = "auto";
  std::string electrons_text = "4";
  desc.add_options()("help,h", "this help")(
      "electrons,n", po::value(&electrons_text), "electrons timed after the warm-up (default 4)")(
      "device", po::value(&device), "device spec (auto | 0 | gpu | name substring; default EDM_DEVICE, else auto)")(
      "set", po::value(&sets)->composing(), "override a campaign key: section.key=value")(
      "no-peak", "skip the FP64 peak")("probe", "re-measure the FP64 peak instead of using the cached value")("json", "print one JSON object");
  po::variables_map vm;
  if (!parse_command(args, desc, "campaign", campaign_file, vm)) return 0;  // --help
  if (campaign_file.empty()) campaign_file = default_bench_campaign().string();
  if (!std::filesystem::exists(campaign_file))
    throw ConfigError("EDM-CFG-002", campaign_file + ": no such campaign file");
  const std::uint64_t electrons = bench_electrons(electrons_text);

  auto overrides = parse_set_options(sets);
  overrides.push_back({"electrons.count", std::to_string(electrons + 1), Origin::CommandLine});
  // --device, else EDM_DEVICE (as for edm run: the environment over the file), else auto — never
  // the campaign file's list: the bench times one device. It ignored EDM_DEVICE (hostile review).
  const char* env_device = std::getenv("EDM_DEVICE");
  if (vm.count("device") || !env_device || !*env_device)
    overrides.push_back({"accumulator.devices", "\"" + device + "\"", Origin::CommandLine});
  const auto registry = PluginRegistry::discover();
  const std::string scenario = peek_scenario(campaign_file, overrides);
  const Campaign campaign = load_campaign(campaign_file, overrides, registry.get(scenario).keys());

  const bool json = vm.count("json") > 0;
  if (!json) std::cerr << "bench: solving " << electrons + 1 << " trajectories…\n";
  PreparedCell cell(campaign, registry);
  const auto t0 = std::chrono::steady_clock::now();
  SplineBatch warm = cell.solve(0, 1);
  SplineBatch timed = cell.solve(1, electrons);
  const double solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const auto info = select_devices(campaign.accumulator.devices, value_origin(campaign, "accumulator.devices")).front();
  auto dev = open_device(info);
  KernelOptions options = kernel_options(campaign.accumulator);
  options.ensemble_radius = cell.transverse_rms();  // the pixel order of `edm run` for this cell
  FieldAccumulator acc(dev, cell.screen(), cell.mode(), options);
  if (!json) std::cerr << "bench: warm-up launch (kernel build) on " << info.name << "…\n";
  acc.accumulate(warm);
  acc.drain();
  const auto warm_timing = acc.timing();
  const auto w0 = std::chrono::steady_clock::now();
  acc.accumulate(timed);
  acc.drain();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  auto t = acc.timing();
  std::vector<double> launches(t.launch_seconds.begin() + warm_timing.launch_seconds.size(), t.launch_seconds.end());
  const double kernel = t.kernel_seconds - warm_timing.kernel_seconds;
  std::sort(launches.begin(), launches.end());
  const double median = launches.empty() ? 0 : launches[launches.size() / 2];
  const double slots = double(cell.screen().slots_per_electron()) * double(electrons);
  const double slots_per_s = kernel > 0 ? slots / kernel : 0;
  double peak = 0;
  if (!vm.count("no-peak")) peak = fp64_peak(info, vm.count("probe") > 0);  // cached per device + driver
  const auto& eff = acc.options();
  const double ms_per_electron = kernel / double(electrons) * 1e3;
  // For `edm run --dry-run` time estimates, per kernel path (edm/device_rate.hpp).
  record_kernel_rate(info, eff, cell.screen(), cell.mode(), slots_per_s);
  // FLOPs counted from the kernel source (edm/flops.hpp), the rate they give, and its share of the
  // measured peak.
  const double flop_slot = flop_per_slot(eff, cell.mode());
  const double flops = flop_slot * slots_per_s;
  const double peak_fraction = peak > 0 ? flops / peak : 0;
  // The resource lines of the build log (NVIDIA with -cl-nv-verbose: "ptxas info : Used N registers",
  // spill stores/loads), one string; other compilers log nothing of the kind.
  std::string resources;
  {
    std::istringstream log(acc.build_log());
    for (std::string line; std::getline(log, line);)
      if (line.find("registers") != std::string::npos || line.find("spill") != std::string::npos) {
        for (auto& c : line)
          if (c == '"' || c == '\\' || c == '\t') c = ' ';
        resources += (resources.empty() ? "" : " | ") + line;
      }
  }

  if (json) {
    std::printf(
        "{\"device\": \"%s\", \"electrons\": %llu, \"pixels\": %llu, \"samples\": %d, \"slots_per_electron\": %.0f, "
        "\"launches\": %zu, \"launch_median_s\": %.6g, \"launch_min_s\": %.6g, \"launch_max_s\": %.6g, "
        "\"kernel_s\": %.6g, \"wall_s\": %.6g, \"ms_per_electron\": %.6g, \"slots_per_s\": %.6g, "
        "\"fp64_peak_flops\": %.6g, \"flop_per_slot\": %.6g, \"flops\": %.6g, \"peak_fraction\": %.6g, \"newton_iters\": %d, \"coef_reuse\": %s, \"sample_chunks\": %d, "
        "\"work_group\": %d, \"electron_group\": %d, \"tile_width\": %d, \"pixel_order\": \"%s\", \"max_registers\": %d, \"state_local\": %s, \"fast_recip\": %s, \"nv_seed\": %s, \"interleave\": %s, \"simd\": %d, \"trajectory_solve_s\": %.6g, "
        "\"kernel_resources\": \"%s\"}\n",
        info.name.c_str(), (unsigned long long)electrons, (unsigned long long)cell.screen().pixels(),
        cell.screen().samples, double(cell.screen().slots_per_electron()), launches.size(), median,
        launches.empty() ? 0 : launches.front(), launches.empty() ? 0 : launches.back(), kernel, wall,
        ms_per_electron, slots_per_s, peak, flop_slot, flops, peak_fraction, eff.newton_iters, eff.coef_reuse ? "true" : "false",
        eff.sample_chunks, eff.work_group, eff.electron_group, eff.tile_width, pixel_order_name(eff.pixel_order), eff.max_registers, eff.state_local > 0 ? "true" : "false", eff.fast_recip > 0 ? "true" : "false", eff.nv_seed > 0 ? "true" : "false", eff.interleave > 0 ? "true" : "false", std::max(0, eff.simd), solve_s, resources.c_str());
    return 0;
  }
  std::printf("device          %s (%s)\n", info.name.c_str(), info.platform.c_str());
  std::printf("cell            %d x %d pixels x %d samples = %.3g slots/electron, %llu electrons timed\n",
              cell.screen().nx, cell.screen().ny, cell.screen().samples,
              double(cell.screen().slots_per_electron()), (unsigned long long)electrons);
  std::printf("kernel options  newton_iters %d, coef_reuse %s, sample_chunks %d, work_group %d, electron_group %d, "
              "pixel_order %s, fast_recip %s%s, simd %d\n",
              eff.newton_iters, eff.coef_reuse ? "on" : "off", eff.sample_chunks, eff.work_group,
              eff.electron_group, pixel_order_name(eff.pixel_order), eff.fast_recip > 0 ? "on" : "off",
              eff.nv_seed > 0 ? " (NVIDIA seeds)" : "", std::max(0, eff.simd));
  std::printf("launches        %zu: median %.3f ms, min %.3f ms, max %.3f ms\n", launches.size(), median * 1e3,
              launches.empty() ? 0 : launches.front() * 1e3, launches.empty() ? 0 : launches.back() * 1e3);
  std::printf("per electron    %.3f ms (kernel), wall %.3f ms\n", ms_per_electron, wall / double(electrons) * 1e3);
  std::printf("rate            %.4g slots/s\n", slots_per_s);
  std::printf("arithmetic      %.0f FLOP/slot (counted from the kernel source) -> %.4g FLOP/s\n", flop_slot, flops);
  if (peak > 0)
    std::printf("FP64 peak       %.4g FLOP/s (FMA-chain probe): %.1f %% of it\n", peak, 100 * peak_fraction);
  std::printf("trajectories    %.3f s for %llu electrons (CPU)\n", solve_s, (unsigned long long)electrons + 1);
  if (!resources.empty()) std::printf("kernel build    %s\n", resources.c_str());
  return 0;
}

}  // namespace edm::app
