// ctest-label: unit
// Device runtime: enumeration and selection specs, the on-disk program cache (written atomically,
// reused, a corrupt entry is a miss, EDM_NO_KERNEL_CACHE=1 disables it), EDM_CL_PATH loading kernels
// from disk (a broken kernel gives a BuildError with the log and options), `edm devices`, and the
// measured kernel rates kept per kernel path for dry-run estimates.
#define BOOST_TEST_MODULE device
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "analytic_splines.hpp"
#include "edm/accumulator.hpp"
#include "edm/device_rate.hpp"
#include "edm/flops.hpp"
#include "edm/error.hpp"
#include "test_support.hpp"

using namespace edm;
namespace fs = std::filesystem;

namespace {

DeviceInfo pick() {
  const char* spec = std::getenv("EDM_DEVICE");
  return select_devices(spec ? spec : "auto").front();
}

// A tiny accumulation (static charge, 3×2 pixels, 4 samples): builds the program, returns E.
std::vector<double> tiny_run(const std::shared_ptr<Device>& dev, int newton_iters = 2) {
  Screen s;
  s.nx = 3, s.ny = 2, s.samples = 4;
  s.half_x = 5, s.half_y = 5, s.z = 20, s.dt = 0.5;
  auto w = test::static_charge(0.1, 0.2, 0.3);
  choose_window(s, {test::state_at(w, 0.0)});
  SplineBatch b;
  test::append_electron(b, w, 0.0, 1.0, 40, 0);
  KernelOptions o;
  o.newton_iters = newton_iters;
  FieldAccumulator acc(dev, s, Mode::Total, o);
  acc.accumulate(b);
  std::vector<double> out;
  acc.finish([&](int bucket, int, int iy0, int iy1, const double* d) {
    if (bucket == 0) out.insert(out.end(), d, d + (iy1 - iy0) * s.nx * s.samples);
  });
  return out;
}

std::vector<fs::path> bins(const fs::path& dir) {
  std::vector<fs::path> r;
  if (fs::exists(dir))
    for (auto& e : fs::directory_iterator(dir)) r.push_back(e.path());
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(enumeration_and_selection) {
  const auto all = list_devices();
  BOOST_REQUIRE(!all.empty());
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& d = all[i];
    BOOST_TEST_MESSAGE("[" << d.index << "] " << d.name << " | " << d.platform << " | " << d.vendor << " | "
                           << d.driver_version << " | " << d.type << " | CUs " << d.compute_units << " | mem "
                           << d.global_memory << " | max alloc " << d.max_allocation << " | FP64 "
                           << (d.fp64 ? "yes" : "no"));
    BOOST_TEST(d.index == int(i));
    BOOST_TEST(!d.name.empty());
    BOOST_TEST(d.compute_units > 0u);
    BOOST_TEST(d.max_allocation <= d.global_memory);
  }
  const auto a = select_devices("auto");
  BOOST_TEST(a.size() == 1u);
  BOOST_TEST(a.front().fp64);
  const auto every = select_devices("all");
  for (auto& d : every) BOOST_TEST(d.fp64);
  const auto zero = select_devices(" 0 ");
  BOOST_TEST(zero.front().index == 0);
  // By type and by a name substring (case-insensitive) of the auto device.
  const auto by_type = select_devices(a.front().type == "GPU" ? "gpu" : "cpu");
  BOOST_TEST(!by_type.empty());
  std::string sub = a.front().name.substr(0, std::min<size_t>(6, a.front().name.size()));
  for (auto& c : sub) c = char(std::toupper((unsigned char)c));
  BOOST_TEST(select_devices(sub).front().name == a.front().name);
  // Errors name the spec.
  BOOST_CHECK_THROW(select_devices("0,0"), ConfigError);
  BOOST_CHECK_THROW(select_devices(std::to_string(all.size())), ConfigError);
  BOOST_CHECK_THROW(select_devices("zz-no-such-gpu"), ConfigError);
  BOOST_CHECK_THROW(FieldAccumulator(nullptr, Screen{}, Mode::Total, {}), ConfigError);
}

BOOST_AUTO_TEST_CASE(program_cache) {
  const auto cache = test::temp_dir("cache");
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  unsetenv("EDM_NO_KERNEL_CACHE");
  unsetenv("EDM_CL_PATH");
  const auto info = pick();

  // Disabled: nothing written.
  setenv("EDM_NO_KERNEL_CACHE", "1", 1);
  const auto reference = tiny_run(open_device(info));
  BOOST_TEST(bins(cache / "edm").empty());
  unsetenv("EDM_NO_KERNEL_CACHE");

  // Enabled: one binary per program, no temporary left behind; a second device object (no
  // in-memory memo) gets the same results from it.
  BOOST_TEST(tiny_run(open_device(info)) == reference);
  auto files = bins(cache / "edm");
  BOOST_REQUIRE(files.size() == 1u);
  BOOST_TEST(files[0].extension() == ".bin");
  BOOST_TEST(fs::file_size(files[0]) > 0u);
  const auto written = fs::last_write_time(files[0]);
  BOOST_TEST(tiny_run(open_device(info)) == reference);
  BOOST_TEST(bins(cache / "edm").size() == 1u);
  BOOST_TEST((fs::last_write_time(files[0]) == written));  // a hit does not rewrite

  // Different tunables are a different key.
  tiny_run(open_device(info), 3);
  BOOST_TEST(bins(cache / "edm").size() == 2u);

  // A corrupt entry is a miss (rebuilt from source, then rewritten).
  {
    std::ofstream f(files[0], std::ios::binary | std::ios::trunc);
    f << "not a program binary";
  }
  BOOST_TEST(tiny_run(open_device(info)) == reference);
  BOOST_TEST(fs::file_size(files[0]) > 32u);
}

BOOST_AUTO_TEST_CASE(kernels_from_disk_and_build_errors) {
  unsetenv("EDM_CL_PATH");
  setenv("EDM_NO_KERNEL_CACHE", "1", 1);
  const auto info = pick();
  const auto reference = tiny_run(open_device(info));

  // EDM_CL_PATH pointing at the source tree's cl/ gives the same result as the embedded copy.
  const auto src_cl = test::source_dir() / "cl";
  BOOST_REQUIRE(fs::exists(src_cl / "lienard_wiechert.cl"));
  setenv("EDM_CL_PATH", src_cl.c_str(), 1);
  BOOST_TEST(tiny_run(open_device(info)) == reference);

  // A broken kernel on disk: BuildError carrying the log (naming the file) and the options.
  const auto broken = test::temp_dir("cl");
  fs::copy_file(src_cl / "common.cl", broken / "common.cl");
  fs::copy_file(src_cl / "lw_slot.cl", broken / "lw_slot.cl");  // the field kernel's per-slot part
  fs::copy_file(src_cl / "lw_simd.cl", broken / "lw_simd.cl");  // its vector-lane launch (CPUs)
  {
    std::ofstream f(broken / "lienard_wiechert.cl");
    f << "__kernel void lw_accumulate(__global double* x) { x[0] = undefined_symbol; }\n";
  }
  setenv("EDM_CL_PATH", broken.c_str(), 1);
  try {
    tiny_run(open_device(info));
    BOOST_ERROR("a broken kernel built");
  } catch (const BuildError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what() << "\noptions: " << e.options() << "\nlog:\n" << e.log());
    BOOST_TEST(e.log().find("undefined_symbol") != std::string::npos);
    BOOST_TEST(e.log().find("lienard_wiechert.cl") != std::string::npos);
    BOOST_TEST(e.options().find("-cl-std=CL1.2") != std::string::npos);
  }
  // A folder without the file: IoError naming it.
  setenv("EDM_CL_PATH", (broken / "nowhere").c_str(), 1);
  BOOST_CHECK_THROW(tiny_run(open_device(info)), IoError);
  unsetenv("EDM_CL_PATH");
  unsetenv("EDM_NO_KERNEL_CACHE");
}

BOOST_AUTO_TEST_CASE(edm_devices_command) {
  auto r = test::run_command(test::edm_binary().string() + " devices");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.output.find("[0]") != std::string::npos);
  BOOST_TEST(r.output.find("FP64") != std::string::npos);
  BOOST_TEST(r.output.find(list_devices().front().name) != std::string::npos);
  auto j = test::run_command(test::edm_binary().string() + " devices --json");
  BOOST_TEST(j.exit_code == 0);
  BOOST_TEST(j.output.find("\"fp64\": true") != std::string::npos);
  BOOST_TEST(j.output.front() == '[');
}

BOOST_AUTO_TEST_CASE(fp64_peak_probe) {
  auto dev = open_device(pick());
  const double peak = measure_fp64_peak(*dev);
  BOOST_TEST_MESSAGE("measured FP64 peak of " << device_info(*dev).name << ": " << peak * 1e-9 << " GFLOP/s");
  BOOST_TEST(std::isfinite(peak));
  // Sanity bounds: above 100 MFLOP/s (any FP64 device) and below 1 PFLOP/s (no device today).
  BOOST_TEST(peak > 1e8);
  BOOST_TEST(peak < 1e15);
}

// The rate `edm bench` leaves for `edm run --dry-run` is kept per kernel path (edm/device_rate.hpp):
// one rate per device let a run on the lanes be estimated from a rate the scalar kernel measured.
// Another Newton step count on the same path scales by the FLOP count; another path or screen kind
// has no estimate.
BOOST_AUTO_TEST_CASE(kernel_rate_per_path) {
  const auto cache = test::temp_dir("rate_cache");
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const DeviceInfo info = pick();
  KernelOptions lanes;
  lanes.simd = 8;
  KernelOptions scalar;
  scalar.simd = -1;
  Screen flat;
  BOOST_TEST(cached_kernel_rate(info, lanes, flat, Mode::Total) == 0.0);
  record_kernel_rate(info, lanes, flat, Mode::Total, 4e7);
  BOOST_TEST(cached_kernel_rate(info, lanes, flat, Mode::Total) == 4e7, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(cached_kernel_rate(info, scalar, flat, Mode::Total) == 0.0);
  KernelOptions interleaved = scalar;
  interleaved.interleave = 1;
  BOOST_TEST(cached_kernel_rate(info, interleaved, flat, Mode::Total) == 0.0);
  Screen sphere;
  sphere.type = ScreenType::Angular;
  sphere.z = 1.0;
  BOOST_TEST(cached_kernel_rate(info, lanes, sphere, Mode::Total) == 0.0);
  KernelOptions three = lanes;
  three.newton_iters = 3;
  const double expect = 4e7 * flop_per_slot(lanes, Mode::Total) / flop_per_slot(three, Mode::Total);
  BOOST_TEST(expect < 4e7);
  BOOST_TEST(cached_kernel_rate(info, three, flat, Mode::Total) == expect, boost::test_tools::tolerance(1e-12));
  unsetenv("XDG_CACHE_HOME");
}
