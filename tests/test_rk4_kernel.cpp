// ctest-label: physics
// The second retarded-time kernel (accumulator.kernel = "rk4": cl/lw_slot.cl lw_rk4_solve, an RK4
// march of dτ/dt_obs from each chunk's first Newton root) against references it must reproduce:
// Coulomb's field of a static charge and the field of uniform motion from the PRESENT position
// (closed forms), the independent host reference (GSL Brent + 3-vector Liénard–Wiechert) on exact
// plane-wave orbits, the Newton kernel, and the field of the EXACT plane-wave trajectory of a solved
// cell; its fourth order in the sub-step, bit-identity of batched runs, the FLOP count from the
// kernel source, and the refusals (a sub-step count below the bound, what the march does not run on).
#define BOOST_TEST_MODULE rk4_kernel
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>

#include "analytic_splines.hpp"
#include "device_cube.hpp"
#include "edm/accumulator.hpp"
#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/flops.hpp"
#include "edm/run.hpp"
#include "exact_field.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

// The rk4 kernel's stated tolerance with substeps = "auto" (share/docs/design.md, "The second
// kernel"): relative L2 of its cube against the host reference / the Newton kernel on the orbits
// below, and against the exact trajectory's field within test::tol::field_vs_exact as Newton. Measured
// (PoCL): 1.4e-8 at worst, the figure-8 with one chunk per pixel (96 samples marched from one root);
// 2.5e-9 with the device's chunks; a quarter-knot bound left 2.0e-7 there.
constexpr double kRk4VsReference = 3e-8;

KernelOptions rk4(int substeps = 0, int chunks = 0) {  // 0: the key's default, "auto"
  KernelOptions o;
  o.kernel = FieldKernel::Rk4;
  o.substeps = substeps;
  o.sample_chunks = chunks;
  return o;
}

std::vector<double> run_device(const Screen& s, Mode mode, const std::vector<const SplineBatch*>& batches,
                               const KernelOptions& o) {
  FieldAccumulator acc(test::env_device(), s, mode, o);
  for (auto* b : batches) acc.accumulate(*b);
  return test::download_cube(acc, s, mode, 3);
}

// The fixture shared with the other kernel tests (analytic_splines.hpp).
using Setup = test::CoveredBatch;
constexpr auto make_setup = &test::covered_batch;
constexpr auto at = &test::cube_at;

// Thomson figure-8 (a0 = 0.5, from rest on average) seen from behind; 32 samples per period.
Setup thomson() {
  Screen s;
  s.nx = 12, s.ny = 10, s.samples = 96;
  s.half_x = 60, s.half_y = 45, s.z = -150;
  s.dt = 2 * std::numbers::pi / 32;
  return make_setup(s,
                    {test::plane_wave_orbit(0.5, 0, 1.0, +1),
                     test::plane_wave_orbit(0.5, 0, 1.0, +1, 0.7, {1.0, -0.5, 0.3})},
                    2 * std::numbers::pi / 16);
}

// Head-on γ = 5 (h = 5 + √24, a0 = 0.3), screen ahead: 16 samples per Doppler-upshifted period,
// where the root moves about a knot per sample (auto: eight or nine sub-steps).
Setup head_on() {
  Screen s;
  s.nx = 10, s.ny = 9, s.samples = 128;
  s.half_x = 120, s.half_y = 100, s.z = 2000;
  const double h = 5 + std::sqrt(24.0), a0 = 0.3;
  s.dt = 2 * std::numbers::pi * (1 + a0 * a0 / 2) / (h * h) / 16;
  return make_setup(s, {test::plane_wave_orbit(a0, 0, h, -1)}, 2 * std::numbers::pi / h / 16);
}

}  // namespace

BOOST_AUTO_TEST_CASE(static_charge_is_coulomb) {
  // At rest dτ/dt_obs = 1 exactly: the march is exact, so the field is Coulomb's to rounding.
  Screen s;
  s.nx = 8, s.ny = 6, s.samples = 8;
  s.half_x = 20, s.half_y = 15, s.z = 50;
  s.dt = 1.0;
  const double q[3] = {0.3, -0.2, 0.1};
  auto st = make_setup(s, {test::static_charge(q[0], q[1], q[2])}, 1.0);
  s = st.screen;
  const auto cube = run_device(s, Mode::Total, {&st.batch}, rk4(-1, 1));
  double worst = 0;
  for (int iy = 0; iy < s.ny; ++iy)
    for (int ix = 0; ix < s.nx; ++ix) {
      const double r[3] = {s.pixel_x(ix) - q[0], s.pixel_y(iy) - q[1], s.z - q[2]};
      const double R = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
      for (int k = 0; k < s.samples; ++k)
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(at(cube, s, 0, c, iy, ix, k) - r[c] / (R * R * R)) * R * R);
    }
  BOOST_TEST_MESSAGE("rk4, static charge: max |E − Coulomb|/|E| = " << worst);
  BOOST_TEST(worst < 1e-12);
}

BOOST_AUTO_TEST_CASE(uniform_motion_from_present_position) {
  // The field of uniform motion from the charge's PRESENT position (closed form), marched over the
  // whole window from one root (one chunk per pixel).
  Screen s;
  s.nx = 8, s.ny = 8, s.samples = 32;
  s.half_x = 60, s.half_y = 60, s.z = 400;
  s.dt = 0.5;
  const std::array<double, 3> x0 = {1.0, 2.0, 0.0}, u = {0.2, -0.1, 1.5};
  auto st = make_setup(s, {test::uniform_motion(x0, u)}, 0.5);
  s = st.screen;
  const auto cube = run_device(s, Mode::Total, {&st.batch}, rk4(-1, 1));
  const double g = std::sqrt(1 + u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  const double b[3] = {u[0] / g, u[1] / g, u[2] / g};
  const double b2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
  double worst = 0;
  for (int iy = 0; iy < s.ny; ++iy)
    for (int ix = 0; ix < s.nx; ++ix)
      for (int k = 0; k < s.samples; ++k) {
        const double t = s.t_rel(k) + std::abs(s.z);
        const double Rp[3] = {s.pixel_x(ix) - (x0[0] + b[0] * t), s.pixel_y(iy) - (x0[1] + b[1] * t),
                              s.z - (x0[2] + b[2] * t)};
        const double R2 = Rp[0] * Rp[0] + Rp[1] * Rp[1] + Rp[2] * Rp[2], R = std::sqrt(R2);
        const double rb = Rp[0] * b[0] + Rp[1] * b[1] + Rp[2] * b[2];
        const double f = (1 - b2) / (R2 * R * std::pow(1 - b2 * (1 - rb * rb / (R2 * b2)), 1.5));
        const double En = f * R;
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(at(cube, s, 0, c, iy, ix, k) - f * Rp[c]) / En);
      }
  BOOST_TEST_MESSAGE("rk4, uniform motion: max |E − E_present|/|E| = " << worst);
  BOOST_TEST(worst < 5e-10);  // test_accumulator's bound for the Newton kernel (the spline's rounding floor)
}

BOOST_AUTO_TEST_CASE(auto_substeps_meet_the_stated_tolerance) {
  // Against the host reference and the Newton kernel, with the device's chunks and with one chunk
  // per pixel (the longest march: the whole window from one root), in both modes.
  for (const auto& [name, st] : {std::pair{"thomson", thomson()}, std::pair{"head-on", head_on()}})
    for (Mode mode : {Mode::Total, Mode::Split}) {
      const auto ref = host_reference_field(st.screen, mode, st.batch);
      KernelOptions newton;
      newton.sample_chunks = 1;
      const auto nw = run_device(st.screen, mode, {&st.batch}, newton);
      for (int chunks : {0, 1}) {
        const auto rk = run_device(st.screen, mode, {&st.batch}, rk4(-1, chunks));
        const double vs_host = test::relative_l2(rk, ref), vs_newton = test::relative_l2(rk, nw);
        BOOST_TEST_MESSAGE(name << (mode == Mode::Total ? " total" : " split") << ", chunks " << chunks
                                << ": rk4 auto vs host " << vs_host << ", vs newton " << vs_newton
                                << " (newton vs host " << test::relative_l2(nw, ref) << ")");
        BOOST_TEST(vs_host < kRk4VsReference);
        BOOST_TEST(vs_newton < kRk4VsReference);
      }
    }
}

BOOST_AUTO_TEST_CASE(fourth_order_in_the_substep) {
  // Fixed sub-step counts on the head-on orbit with one chunk per pixel (the whole window marched
  // from one root): the march's error against the host reference falls as m⁻⁴ (RK4) until the
  // spline's own floor, so doubling the count must gain at least 2⁴ × 0.6. The counts meet the
  // bound (about a knot per sample here: at least 9).
  const Setup st = head_on();
  const auto ref = host_reference_field(st.screen, Mode::Total, st.batch);
  std::vector<double> err;
  for (int m : {10, 20}) {
    const auto rk = run_device(st.screen, Mode::Total, {&st.batch}, rk4(m, 1));
    err.push_back(test::relative_l2(rk, ref));
    BOOST_TEST_MESSAGE("head-on, " << m << " sub-steps, one chunk: rk4 vs host " << err.back());
  }
  BOOST_TEST(err[0] / err[1] > 16 * 0.6);
}

BOOST_AUTO_TEST_CASE(exact_plane_wave_field) {
  // The whole chain on a solved one-electron cell (thomson, a0 = 0.5 from rest, the plugin's GSL
  // trajectory): the rk4 kernel's field against the EXACT light-front trajectory's at a brute-force
  // root, within the same tolerance as the Newton kernel (test_field_exact).
  const auto registry = PluginRegistry::discover();
  const std::string text =
      "[run]\nscenario = \"thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.5\n"
      "duration = 10.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\ngamma = 1.0\n"
      "[trajectory]\nknots_per_period = 128\n[screen]\ndistance = 0.002\nhalf_width = 2e-5\nnx = 3\nny = 3\n"
      "samples = 384\nsamples_per_period = 64\n";
  const Campaign c = parse_campaign(text, "rk4 exact", {}, registry.get("thomson").keys(), false);
  PreparedCell prepared(c, registry);
  const SplineBatch batch = prepared.solve(0, 1);
  const Screen& screen = prepared.screen();
  const test::ExactElectron e = test::exact_electron(c, prepared, batch);
  const double Z = screen.z, absZ = std::abs(Z);
  auto exact = [&](int ix, int iy, int k) {
    return test::exact_screen_field(e, screen.pixel_x(ix), screen.pixel_y(iy), Z, screen.t_rel(k) + absZ);
  };
  for (int chunks : {0, 1}) {
    const double rel = test::relative_l2_vs_reference(test::kernel_cube(screen, batch, rk4(-1, chunks)), screen, exact);
    BOOST_TEST_MESSAGE("thomson a0 = 0.5 from rest, rk4 auto, chunks " << chunks << ": vs exact field " << rel);
    BOOST_TEST(rel < test::tol::field_vs_exact);
  }
}

BOOST_AUTO_TEST_CASE(rest_electron_map_at_the_rounding_floor) {
  // The regime the march is for: an electron from rest in a weak plane-wave pulse (a0 = 0.1), 256
  // samples per period, 2560 samples marched from one root per pixel (one chunk), the burst window
  // long after the spline's first knot (τ ~ 1e3). Newton's roots there are converged to rounding, so
  // the two kernels' cubes may differ by rounding only: without the compensated sum of τ the march's
  // roundings walked to 6.0e-12 of the field (measured), with it 2.6e-13.
  const auto registry = PluginRegistry::discover();
  const std::string text =
      "[run]\nscenario = \"thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.1\n"
      "duration = 26.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\ngamma = 1.0\n"
      "[screen]\ndistance = 0.01\nhalf_width = 2e-3\nnx = 4\nny = 4\nsamples = 2560\nsamples_per_period = 256\n"
      "window = \"burst\"\n";
  const Campaign c = parse_campaign(text, "rk4 rest map", {}, registry.get("thomson").keys(), false);
  PreparedCell prepared(c, registry);
  const SplineBatch batch = prepared.solve(0, 1);
  const Screen& screen = prepared.screen();
  KernelOptions newton;
  newton.newton_iters = 4;
  newton.sample_chunks = 1;
  const auto nw = test::kernel_cube(screen, batch, newton);
  const auto rk = test::kernel_cube(screen, batch, rk4(-1, 1));
  const double rel = test::relative_l2(rk, nw);
  BOOST_TEST_MESSAGE("rest-electron map (a0 = 0.1, 2560 samples, one chunk): rk4 auto vs newton " << rel);
  BOOST_TEST(rel < 1e-12);
}

BOOST_AUTO_TEST_CASE(batching_is_bit_identical) {
  // share/docs/developing.md: one device, batched = single pass bit for bit. The sub-step count of
  // "auto" depends only on the electron's own march, never on the batch or the launch's group.
  const Setup st = thomson();
  const auto& e = st.batch.electrons;
  SplineBatch first, second;
  test::append_electron(first, test::plane_wave_orbit(0.5, 0, 1.0, +1), e[0].tau0, e[0].dtau, e[0].n_intervals, 0);
  test::append_electron(second, test::plane_wave_orbit(0.5, 0, 1.0, +1, 0.7, {1.0, -0.5, 0.3}), e[1].tau0,
                        e[1].dtau, e[1].n_intervals, 1);
  for (int substeps : {-1, 8}) {
    KernelOptions one_by_one = rk4(substeps), grouped = rk4(substeps);
    one_by_one.electron_group = 1;
    grouped.electron_group = 4;
    const auto single = run_device(st.screen, Mode::Split, {&st.batch}, one_by_one);
    const auto two = run_device(st.screen, Mode::Split, {&first, &second}, one_by_one);
    const auto group = run_device(st.screen, Mode::Split, {&st.batch}, grouped);
    BOOST_TEST(std::memcmp(single.data(), two.data(), single.size() * sizeof(double)) == 0, "substeps " << substeps);
    BOOST_TEST(std::memcmp(single.data(), group.data(), single.size() * sizeof(double)) == 0, "substeps " << substeps);
  }
}

BOOST_AUTO_TEST_CASE(flop_count_from_kernel_source) {
  // flop_per_slot runs lw_rk4_solve with a counting type: exactly linear in the sub-steps, and one
  // sub-step costs what cl/lw_slot.cl writes, counted here by hand (flops.hpp: FMA 2, rsqrt 2):
  //   rate: lc′ 8 FMAs (16); x, y, z with derivatives 3 × 9 FMAs (54) and Δx, Δy, d (3); ρ² (3),
  //         R² (2), R = R² rsqrt(R²) (3), R + d (1), the denominator (9), R(R + d)/den (2); the
  //         interval located in place, s = τ − τ_j (1): 94
  //   step: the three stage arguments (3 FMAs: 6), the weighted sum (4), its FMA less the carried
  //         compensation (2), the compensated addition into τ (3), and four rates (k2, k3, k4 and
  //         the next k1): 15 + 4 × 94 = 391.
  std::vector<double> f;
  for (int m = 1; m <= 3; ++m) f.push_back(flop_per_slot(rk4(m), Mode::Total));
  BOOST_TEST_MESSAGE("rk4 flop/slot (total mode): " << f[0] << ", " << f[1] << ", " << f[2] << " for 1..3 sub-steps");
  BOOST_TEST(f[1] - f[0] == 391.0);
  BOOST_TEST(f[2] - f[1] == 391.0);
  // What is left is the fields (as Newton's, without its steps) and h/2, h/6, h: more than one step's worth.
  KernelOptions newton;
  BOOST_TEST(f[0] - 391.0 > 100.0);
  BOOST_TEST(flop_per_slot(rk4(1), Mode::Split) > f[0]);
  // Auto counts as the kernel auto resolves to (Newton on every device measured so far).
  KernelOptions a;
  a.kernel = FieldKernel::Auto;
  BOOST_TEST(flop_per_slot(a, Mode::Total) == flop_per_slot(newton, Mode::Total));
}

BOOST_AUTO_TEST_CASE(substeps_below_the_bound_are_refused) {
  // Head-on the root moves about a knot per sample: one sub-step would move it eight times the
  // eighth of a knot the bound allows. Refused before the first launch, naming the key and the count.
  const Setup st = head_on();
  FieldAccumulator acc(test::env_device(), st.screen, Mode::Total, rk4(1));
  try {
    acc.accumulate(st.batch);
    BOOST_FAIL("substeps = 1 was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(e.id() == "EDM-ACC-081");
    BOOST_TEST(std::string(e.what()).find("accumulator.substeps = 1") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find(">= ") != std::string::npos, e.what());
  }
  // Outside the key's range, and what the march does not run on: refused at construction.
  try {
    FieldAccumulator bad(test::env_device(), st.screen, Mode::Total, rk4(1025));
    BOOST_FAIL("substeps = 1025 was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(e.id() == "EDM-ACC-081");
  }
  KernelOptions lanes = rk4();
  lanes.simd = 1;
  try {
    FieldAccumulator bad(test::env_device(), st.screen, Mode::Total, lanes);
    BOOST_FAIL("rk4 with simd = 1 was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(e.id() == "EDM-ACC-080");
    BOOST_TEST(std::string(e.what()).find("accumulator.kernel = \"rk4\"") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(edm_run_refuses_a_substep_count_below_the_bound) {
  // Through the binary: exit 2 with the id and the key, and no field.h5 left behind.
  const auto dir = std::filesystem::temp_directory_path() / ("edm_rk4_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  test::SmallCell cell;
  cell.electrons = 2;
  cell.accumulator_lines = "kernel = \"rk4\"\nsubsteps = 1\n";
  const auto toml = test::write_file(dir, "cell.toml", test::small_cell(cell));
  const auto r = test::run_edm("run " + toml.string() + " -o " + (dir / "run").string());
  BOOST_TEST(r.exit_code == 2, r.output);
  BOOST_TEST(r.output.find("EDM-ACC-081") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("accumulator.substeps") != std::string::npos, r.output);
  BOOST_TEST(!std::filesystem::exists(dir / "run" / "field.h5"));
  std::filesystem::remove_all(dir);
}
