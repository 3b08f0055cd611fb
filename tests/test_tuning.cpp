// ctest-label: unit
// The field kernel's host side: the tuning table (core/src/field/tuning.cpp) gives each kind of
// device the defaults BENCHMARKS.md "Tuning defaults" records, explicit values win over it, and
// combinations that cannot work are refused by name; and the kernels' arguments, bound by name from
// the lists in core/src/field/kernel_args.hpp, are checked against the kernel source that is built:
// a kernel (through EDM_CL_PATH) whose signature differs from its list is refused (EDM-CL-030).
#define BOOST_TEST_MODULE tuning
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#include "../core/src/field/tuning.hpp"
#include "edm/accumulator.hpp"
#include "edm/error.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

DeviceInfo device_like(const std::string& vendor, const std::string& type, unsigned compute_units) {
  DeviceInfo d;
  d.name = vendor + " " + type;
  d.vendor = vendor;
  d.type = type;
  d.compute_units = compute_units;
  d.max_work_group = 1024;
  d.local_memory = 48 * 1024;
  return d;
}

// The benchmark cell's screen: 401² pixels, 1666 samples.
Screen bench_screen() {
  Screen s;
  s.nx = s.ny = 401;
  s.samples = 1666;
  s.half_x = s.half_y = 1, s.z = 10, s.dt = 0.1;
  return s;
}

detail::KernelTuning resolve(const KernelOptions& o, const DeviceInfo& d, const Screen& s = bench_screen()) {
  return detail::resolve_tuning(o, d, 4096, s, "test device");
}

template <class F>
std::string refused_id(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
    return e.id();
  }
  return "accepted";
}

}  // namespace

BOOST_AUTO_TEST_CASE(rows_match_devices_in_order) {
  BOOST_TEST(std::string(detail::tuning_row(device_like("NVIDIA Corporation", "GPU", 132)).name) ==
             "NVIDIA GPUs");
  BOOST_TEST(std::string(detail::tuning_row(device_like("Advanced Micro Devices, Inc.", "GPU", 96)).name) ==
             "Other GPUs");
  BOOST_TEST(std::string(detail::tuning_row(device_like("AuthenticAMD", "CPU", 2)).name) == "CPUs");
  BOOST_TEST(std::string(detail::tuning_row(device_like("Some vendor", "ACCELERATOR", 8)).name) ==
             "Other devices");
  // The last row matches every device.
  const auto table = detail::tuning_table();
  BOOST_TEST(std::string(table.back().vendor).empty());
  BOOST_TEST(std::string(table.back().type).empty());
}

// The H200's defaults are the ones its measurements were taken with (BENCHMARKS.md): G 4, C 7 on
// the benchmark cell (8192 work-items per compute unit, 132 units), 128 registers, the state in
// local memory, fast_recip with NVIDIA's seeds, no interleave, work-group 128, rings.
BOOST_AUTO_TEST_CASE(nvidia_gpu_defaults) {
  auto t = resolve({}, device_like("NVIDIA Corporation", "GPU", 132));
  const KernelOptions& o = t.options;
  BOOST_TEST(o.sample_chunks == 7);
  BOOST_TEST(o.electron_group == 4);
  BOOST_TEST(o.max_registers == 128);
  BOOST_TEST(o.state_local == 1);
  BOOST_TEST(t.fixed_work_group == 128u);
  BOOST_TEST(o.fast_recip == 1);
  BOOST_TEST(o.nv_seed == 1);
  BOOST_TEST(o.interleave == -1);
  detail::resolve_launch_shape(t, device_like("NVIDIA Corporation", "GPU", 132), 1024, 32, "test device");
  BOOST_TEST(t.options.work_group == 128);
  BOOST_TEST(std::string(pixel_order_name(t.options.pixel_order)) == pixel_order_name(PixelOrder::Rings));
  BOOST_TEST(t.options.tile_width == 0);
}

// A small screen: the work-item target would give every sample its own chunk, but a chunk keeps at
// least 16 samples (a chunk's first two samples at a pixel are cold solves); below 32 samples, one.
BOOST_AUTO_TEST_CASE(chunks_keep_sixteen_samples) {
  Screen s = bench_screen();
  s.nx = s.ny = 3;
  s.samples = 384;
  BOOST_TEST(resolve({}, device_like("NVIDIA Corporation", "GPU", 132), s).options.sample_chunks == 24);
  BOOST_TEST(resolve({}, device_like("AuthenticAMD", "CPU", 2), s).options.sample_chunks == 24);
  s.samples = 20;
  BOOST_TEST(resolve({}, device_like("AuthenticAMD", "CPU", 2), s).options.sample_chunks == 1);
  s.samples = 2000;  // the row's cap of 64 chunks
  BOOST_TEST(resolve({}, device_like("AuthenticAMD", "CPU", 2), s).options.sample_chunks == 64);
  KernelOptions asked;
  asked.sample_chunks = 100;  // a set value is the user's (at most one chunk per sample)
  s.samples = 384;
  BOOST_TEST(resolve(asked, device_like("AuthenticAMD", "CPU", 2), s).options.sample_chunks == 100);
}

// CPUs (PoCL): G 4, the state in registers, the built-in divisions, interleave on, no register cap.
BOOST_AUTO_TEST_CASE(cpu_defaults) {
  Screen s = bench_screen();
  s.nx = s.ny = 41;  // the PoCL cell
  auto t = resolve({}, device_like("AuthenticAMD", "CPU", 2), s);
  const KernelOptions& o = t.options;
  BOOST_TEST(o.sample_chunks == 10);
  BOOST_TEST(o.electron_group == 4);
  BOOST_TEST(o.state_local == -1);
  BOOST_TEST(t.fixed_work_group == 0u);
  BOOST_TEST(o.fast_recip == -1);
  BOOST_TEST(o.nv_seed == -1);
  BOOST_TEST(o.interleave == 1);
  BOOST_TEST(o.max_registers == -1);
  detail::resolve_launch_shape(t, device_like("AuthenticAMD", "CPU", 2), 4096, 1, "test device");
  BOOST_TEST(t.options.work_group == 128);
}

BOOST_AUTO_TEST_CASE(other_gpus_and_devices) {
  auto amd = resolve({}, device_like("Advanced Micro Devices, Inc.", "GPU", 96)).options;
  BOOST_TEST(amd.fast_recip == 1);
  BOOST_TEST(amd.nv_seed == -1);  // inline PTX is NVIDIA's only
  BOOST_TEST(amd.max_registers == -1);
  BOOST_TEST(amd.state_local == 1);
  auto acc = resolve({}, device_like("Some vendor", "ACCELERATOR", 8)).options;
  BOOST_TEST(acc.state_local == -1);
  BOOST_TEST(acc.fast_recip == -1);
  BOOST_TEST(acc.interleave == -1);
}

// Explicit values win over the row, and the dependent defaults follow them.
BOOST_AUTO_TEST_CASE(explicit_values_win) {
  const auto nvidia = device_like("NVIDIA Corporation", "GPU", 132);
  KernelOptions o;
  o.sample_chunks = 3;
  o.electron_group = 2;
  o.max_registers = -1;
  o.fast_recip = -1;  // without fast_recip the seeds default off too
  o.state_local = -1;
  auto t = resolve(o, nvidia);
  BOOST_TEST(t.options.sample_chunks == 3);
  BOOST_TEST(t.options.electron_group == 2);
  BOOST_TEST(t.options.max_registers == -1);
  BOOST_TEST(t.options.nv_seed == -1);
  BOOST_TEST(t.fixed_work_group == 0u);
  // Never more chunks than samples.
  Screen few = bench_screen();
  few.samples = 2;
  o.sample_chunks = 16;
  BOOST_TEST(resolve(o, nvidia, few).options.sample_chunks == 2);
  // Tiles when a tile width is set; rows when it is negative.
  KernelOptions tiles;
  tiles.tile_width = 8;
  auto tt = resolve(tiles, nvidia);
  detail::resolve_launch_shape(tt, nvidia, 1024, 32, "test device");
  BOOST_TEST(std::string(pixel_order_name(tt.options.pixel_order)) == pixel_order_name(PixelOrder::Tiles));
  BOOST_TEST(tt.options.tile_width == 8);
  KernelOptions rows;
  rows.tile_width = -1;
  auto tr = resolve(rows, nvidia);
  detail::resolve_launch_shape(tr, nvidia, 1024, 32, "test device");
  BOOST_TEST(std::string(pixel_order_name(tr.options.pixel_order)) == pixel_order_name(PixelOrder::Rows));
}

BOOST_AUTO_TEST_CASE(conflicts_are_refused_by_name) {
  const auto nvidia = device_like("NVIDIA Corporation", "GPU", 132);
  const auto cpu = device_like("AuthenticAMD", "CPU", 2);
  KernelOptions o;
  o.newton_iters = 0;
  BOOST_TEST(refused_id([&] { resolve(o, cpu); }) == "EDM-ACC-005");
  o = {};
  o.electron_group = 65;
  BOOST_TEST(refused_id([&] { resolve(o, cpu); }) == "EDM-ACC-008");
  o = {};
  o.electron_group = 64;  // 64 × 48 bytes do not fit 1 KiB of kernel parameters
  BOOST_TEST(refused_id([&] { detail::resolve_tuning(o, cpu, 1024, bench_screen(), "test device"); }) ==
             "EDM-ACC-015");
  o = {};
  o.state_local = 1;
  o.electron_group = 16;  // 16 × 128 states of 44 bytes exceed 48 KiB of local memory
  BOOST_TEST(refused_id([&] { resolve(o, nvidia); }) == "EDM-ACC-013");
  o = {};
  o.nv_seed = 1;
  BOOST_TEST(refused_id([&] { resolve(o, cpu); }) == "EDM-ACC-025");
  o.fast_recip = -1;
  BOOST_TEST(refused_id([&] { resolve(o, nvidia); }) == "EDM-ACC-025");
  o = {};
  o.interleave = 1;
  BOOST_TEST(refused_id([&] { resolve(o, nvidia); }) == "EDM-ACC-024");  // the state is in local memory there
  o = {};
  o.work_group = 2048;
  o.state_local = -1;
  auto t = resolve(o, nvidia);
  BOOST_TEST(refused_id([&] { detail::resolve_launch_shape(t, nvidia, 1024, 32, "test device"); }) ==
             "EDM-ACC-007");
  o = {};
  o.tile_width = 5;
  t = resolve(o, nvidia);
  BOOST_TEST(refused_id([&] { detail::resolve_launch_shape(t, nvidia, 1024, 32, "test device"); }) ==
             "EDM-ACC-009");
}

// ---- arguments by name -------------------------------------------------------------------------

namespace {

// A copy of the source tree's cl/ with `edit` applied to lienard_wiechert.cl.
fs::path kernel_variant(const std::string& tag, const std::function<std::string(std::string)>& edit) {
  const auto dir = test::temp_dir(tag);
  for (const auto& f : fs::directory_iterator(test::source_dir() / "cl"))
    if (f.path().extension() == ".cl") fs::copy_file(f.path(), dir / f.path().filename());
  std::ifstream in(dir / "lienard_wiechert.cl");
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  const std::string edited = edit(text.str());
  BOOST_REQUIRE(edited != text.str());
  std::ofstream(dir / "lienard_wiechert.cl") << edited;
  return dir;
}

// Builds a small accumulator from the kernels in `cl_dir` (no program cache).
void build_from(const fs::path& cl_dir) {
  setenv("EDM_CL_PATH", cl_dir.c_str(), 1);
  setenv("EDM_NO_KERNEL_CACHE", "1", 1);
  Screen s;
  s.nx = 4, s.ny = 4, s.samples = 8;
  s.half_x = s.half_y = 1, s.z = 10, s.dt = 0.1;
  struct Reset {
    ~Reset() {
      unsetenv("EDM_CL_PATH");
      unsetenv("EDM_NO_KERNEL_CACHE");
    }
  } reset;
  FieldAccumulator acc(open_device(select_devices("auto").front()), s, Mode::Total, {});
}

// The source, with the parameter `from` of the kernel `kernel` renamed `to` in its signature and
// body (the next kernel's text is left alone).
std::string rename_parameter(const std::string& src, const std::string& kernel, const std::string& from,
                             const std::string& to) {
  const std::size_t begin = src.find("__kernel void " + kernel + "(");
  BOOST_REQUIRE(begin != std::string::npos);
  std::size_t end = src.find("__kernel void ", begin + 1);
  if (end == std::string::npos) end = src.size();
  const std::string body =
      std::regex_replace(src.substr(begin, end - begin), std::regex("\\b" + from + "\\b"), to);
  return src.substr(0, begin) + body + src.substr(end);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_source_trees_kernels_match_their_argument_lists) {
  BOOST_CHECK_NO_THROW(build_from(test::source_dir() / "cl"));
}

BOOST_AUTO_TEST_CASE(a_kernel_whose_signature_differs_is_refused) {
  struct Case {
    const char* kernel;
    const char* from;
    const char* to;
  } cases[] = {{"lw_accumulate", "zs", "z_screen"},
               {"lw_light_front", "intervals", "n_intervals"},
               {"slab_transpose", "iy0", "row0"}};
  for (const auto& c : cases) {
    const auto dir = kernel_variant(std::string("sig_") + c.kernel, [&](std::string s) {
      return rename_parameter(s, c.kernel, c.from, c.to);
    });
    try {
      build_from(dir);
      BOOST_ERROR(c.kernel << " with " << c.from << " renamed " << c.to << " was accepted");
    } catch (const DeviceError& e) {
      BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
      BOOST_TEST(e.id() == "EDM-CL-030");
      BOOST_TEST(std::string(e.what()).find(c.kernel) != std::string::npos);
      BOOST_TEST(std::string(e.what()).find(c.to) != std::string::npos);
    }
  }
  // Two parameters of the same type swapped: the program builds, the binding would be wrong.
  const auto swapped = kernel_variant("sig_swap", [](std::string s) {
    const std::string from = "const double half_x, const double half_y,";
    const std::size_t at = s.find(from);
    BOOST_REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), "const double half_y, const double half_x,");
  });
  BOOST_CHECK_EXCEPTION(build_from(swapped), DeviceError,
                        [](const DeviceError& e) { return e.id() == "EDM-CL-030"; });
}

// The automatic pixel order follows the ensemble's spread against the screen's (field/tuning.cpp,
// kTilesAbove): rings for a beam near the axis, tiles for electrons spread as wide as the screen;
// an explicit order or tile width always wins, and without an ensemble radius it stays rings.
BOOST_AUTO_TEST_CASE(the_automatic_pixel_order_follows_the_ensemble_spread) {
  const auto gpu = device_like("NVIDIA Corporation", "GPU", 132);
  const Screen s = bench_screen();
  const double pixels_rms = std::sqrt((s.half_x * s.half_x + s.half_y * s.half_y) / 3.0);
  KernelOptions o;
  BOOST_TEST(int(resolve(o, gpu).options.pixel_order) == int(PixelOrder::Auto));  // resolved after the build
  o.ensemble_radius = 0.03 * pixels_rms;  // the benchmark cell
  BOOST_TEST(int(resolve(o, gpu).options.pixel_order) == int(PixelOrder::Rings));
  o.ensemble_radius = 0.94 * pixels_rms;  // the reference's strong cell
  BOOST_TEST(int(resolve(o, gpu).options.pixel_order) == int(PixelOrder::Tiles));
  o.pixel_order = PixelOrder::Rings;
  BOOST_TEST(int(resolve(o, gpu).options.pixel_order) == int(PixelOrder::Rings));
  o.pixel_order = PixelOrder::Auto;
  o.tile_width = -1;  // rows asked for
  BOOST_TEST(int(resolve(o, gpu).options.pixel_order) == int(PixelOrder::Auto));
}
