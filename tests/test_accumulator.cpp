// ctest-label: physics
// The OpenCL field accumulator against physics it must reproduce: the independent host reference
// (GSL Brent + 3-vector Liénard–Wiechert) on exact plane-wave orbits (Thomson figure-8, head-on γ = 5),
// Coulomb's field of a static charge, the field of uniform motion from the PRESENT position, the 1/R
// and 1/R² scaling of far and near parts; plus the kernel's tunables (coefficient reuse bit-identical,
// chunks, Newton iterations, batching) and the intended errors. Device from EDM_DEVICE (default auto).
#define BOOST_TEST_MODULE accumulator
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>

#include "analytic_splines.hpp"
#include "edm/accumulator.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/flops.hpp"
#include "test_support.hpp"
#include "device_cube.hpp"

using namespace edm;
namespace tt = boost::test_tools;

namespace {

// The cube from the device, in the slab layout [bucket][comp][iy][ix][k] (small slabs on purpose:
// rows_per_slab = 3 exercises several transposes per component).
std::vector<double> run_device(const Screen& s, Mode mode, const std::vector<const SplineBatch*>& batches,
                               KernelOptions o = {}, AccumulatorTiming* timing = nullptr) {
  auto make = [&] {
    try {
      return FieldAccumulator(test::env_device(), s, mode, o);
    } catch (const BuildError& e) {
      BOOST_TEST_MESSAGE("build options: " << e.options() << "\nbuild log:\n" << e.log());
      throw;
    }
  };
  FieldAccumulator acc = make();
  for (auto* b : batches) acc.accumulate(*b);
  auto cube = test::download_cube(acc, s, mode, 3);
  if (timing) *timing = acc.timing();
  return cube;
}

std::vector<double> bucket(const std::vector<double>& cube, const Screen& s, int b) {
  const std::size_t n = 3 * std::size_t(s.ny) * s.nx * s.samples;
  return {cube.begin() + std::ptrdiff_t(b * n), cube.begin() + std::ptrdiff_t((b + 1) * n)};
}

// The fixture shared with the other kernel tests (analytic_splines.hpp).
using Setup = test::CoveredBatch;
constexpr auto make_setup = &test::covered_batch;
constexpr auto at = &test::cube_at;

// Thomson: electrons at rest on average in a plane wave along +z (h = 1, a0 = 0.5, figure-8), seen
// on a screen BEHIND them (z < 0, the backscatter side). nx ≠ ny to catch transposition mistakes.
Setup thomson() {
  Screen s;
  s.nx = 12, s.ny = 10, s.samples = 96;
  s.half_x = 60, s.half_y = 45, s.z = -150;
  s.dt = 2 * std::numbers::pi / 32;
  const double h = 1.0, a0 = 0.5;
  return make_setup(s,
                    {test::plane_wave_orbit(a0, 0, h, +1),
                     test::plane_wave_orbit(a0, 0, h, +1, 0.7, {1.0, -0.5, 0.3})},
                    2 * std::numbers::pi / h / 16);
}

// Head-on (inverse Thomson): γ = 5 electron along +z meets a laser along −z (s = −1,
// h = γ(1 + β) = 5 + √24), a0 = 0.3; screen ahead at z = +2000 inside the 1/γ cone.
Setup head_on() {
  Screen s;
  s.nx = 10, s.ny = 9, s.samples = 128;
  s.half_x = 120, s.half_y = 100, s.z = 2000;
  const double h = 5 + std::sqrt(24.0), a0 = 0.3;
  // Doppler-upshifted fundamental on axis ≈ 2γ h/(1 + a0²/2) ≈ 97 ω: 16 samples per its period.
  s.dt = 2 * std::numbers::pi * (1 + a0 * a0 / 2) / (h * h) / 16;
  return make_setup(s, {test::plane_wave_orbit(a0, 0, h, -1)}, 2 * std::numbers::pi / h / 16);
}

// The kernel against the host reference three times: with the device's sample chunks (at least 16
// samples each, whose first two at a pixel are cold solves, iterated to convergence), with one chunk
// per pixel, where all but a pixel's first two samples are warm (the midpoint predictor and exactly
// newton_iters steps: what a production screen runs almost everywhere), and with a chunk per sample
// (every solve cold). On a device with FP64
// vectors (a CPU) both kernels: the vector lanes (its default) and the scalar kernel as GPUs run it
// (one solve after the other: no phase-by-phase interleave).
void compare_with_host(const char* name, const Setup& st, Mode mode, KernelOptions o = {}) {
  auto ref = host_reference_field(st.screen, mode, st.batch);
  const bool lanes = device_info(*test::env_device()).double_width > 1 && o.fast_recip <= 0;
  for (int simd : {-1, 1}) {
    if (simd > 0 && !lanes) continue;
    o.simd = simd;
    o.interleave = -1;
    if (simd > 0) o.fast_recip = -1;  // the lanes have the built-in divisions only
    for (int chunks : {0, 1, st.screen.samples}) {
      o.sample_chunks = chunks;
      auto dev = run_device(st.screen, mode, {&st.batch}, o);
      for (int b = 0; b < bucket_count(mode); ++b) {
        auto d = bucket(dev, st.screen, b), r = bucket(ref, st.screen, b);
        const double l2 = test::relative_l2(d, r);
        double norm = 0;
        for (double v : r) norm += v * v;
        BOOST_TEST_MESSAGE(name << " " << (mode == Mode::Total ? "total" : "split") << " bucket "
                                << bucket_name(b) << (simd > 0 ? ", lanes" : ", scalar kernel")
                                << (chunks == 1 ? ", warm solves" : chunks == 0 ? ", device chunks" : ", cold solves")
                                << ": rel L2 kernel vs host = " << l2 << " (|ref| = " << std::sqrt(norm) << ")");
        BOOST_TEST(norm > 0);  // the comparison means something
        BOOST_TEST(l2 < test::tol::kernel_vs_host);
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(kernel_vs_host_thomson) {
  auto st = thomson();
  compare_with_host("thomson figure-8", st, Mode::Total);
  compare_with_host("thomson figure-8", st, Mode::Split);
}

BOOST_AUTO_TEST_CASE(kernel_vs_host_head_on) {
  auto st = head_on();
  compare_with_host("head-on gamma=5", st, Mode::Total);
  compare_with_host("head-on gamma=5", st, Mode::Split);
}

// The GPU default (refined half-precision seeds for divisions and square roots) on this device too,
// so CI without a GPU checks that path against the host reference.
BOOST_AUTO_TEST_CASE(kernel_vs_host_fast_recip) {
  KernelOptions fast;
  fast.fast_recip = 1;
  compare_with_host("fast_recip thomson figure-8", thomson(), Mode::Split, fast);
  compare_with_host("fast_recip head-on gamma=5", head_on(), Mode::Split, fast);
}

BOOST_AUTO_TEST_CASE(kernel_vs_host_helix) {
  // Helical orbit (β⊥ = 0.6, βz = 0.5, γ ≈ 1.5): transverse acceleration in x and y, screen ahead.
  Screen s;
  s.nx = 8, s.ny = 8, s.samples = 80;
  s.half_x = 150, s.half_y = 150, s.z = 400;
  s.dt = 0.5;
  const double omega = 0.05;
  auto st = make_setup(s, {test::helical_orbit(0.6 / omega, omega, 0.5)}, 1.0);
  compare_with_host("helix", st, Mode::Split);
}

BOOST_AUTO_TEST_CASE(coef_reuse_is_bit_identical) {
  auto st = head_on();
  KernelOptions on, off;
  on.coef_reuse = true;
  off.coef_reuse = false;
  auto a = run_device(st.screen, Mode::Split, {&st.batch}, on);
  auto b = run_device(st.screen, Mode::Split, {&st.batch}, off);
  BOOST_REQUIRE(a.size() == b.size());
  BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

BOOST_AUTO_TEST_CASE(layouts_are_bit_identical) {
  // Where the solver state lives (registers or local memory, the GPU default) and which pixels share
  // a work-group (rings, the default; tiles that overhang the screen; rows) change only the schedule:
  // every slot gets the same additions in the same order, so the cube must not change by a bit —
  // also with groups of electrons and a last work-group that is only partly on the screen.
  auto st = thomson();
  KernelOptions ref_o;
  ref_o.state_local = -1;
  ref_o.electron_group = 1;
  ref_o.pixel_order = PixelOrder::Rows;
  auto ref = run_device(st.screen, Mode::Split, {&st.batch}, ref_o);
  for (PixelOrder order : {PixelOrder::Rings, PixelOrder::Tiles, PixelOrder::Rows})
    for (int local : {-1, 1})
      for (int g : {1, 2}) {
        KernelOptions o;
        o.pixel_order = order;
        o.state_local = local;
        o.electron_group = g;
        o.work_group = 16;
        o.tile_width = 8;  // tiles: 8 × 2 over 12 × 10 pixels, the right-hand tiles overhang
        auto d = run_device(st.screen, Mode::Split, {&st.batch}, o);
        BOOST_TEST(std::memcmp(ref.data(), d.data(), ref.size() * sizeof(double)) == 0,
                   pixel_order_name(order) << ", state_local " << local << ", G = " << g);
      }
}

BOOST_AUTO_TEST_CASE(pixel_permutations_are_permutations) {
  // Every order lists every pixel exactly once (odd sizes, one row, one column, one pixel).
  for (auto [nx, ny] : {std::pair{12, 10}, {1, 7}, {9, 1}, {1, 1}, {33, 17}})
    for (PixelOrder order : {PixelOrder::Rings, PixelOrder::Tiles, PixelOrder::Rows}) {
      Screen s;
      s.nx = nx, s.ny = ny, s.half_x = 3.0, s.half_y = 2.0;
      const auto p = pixel_permutation(s, order, 4, 8);
      std::vector<int> seen(std::size_t(nx * ny), 0);
      for (auto v : p) {
        BOOST_REQUIRE(v >= 0 && v < nx * ny);
        ++seen[std::size_t(v)];
      }
      BOOST_TEST(p.size() == seen.size());
      BOOST_TEST(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }),
                 pixel_order_name(order) << " " << nx << " x " << ny);
    }
  // Rings: the band (distance from the axis in half pitches) never decreases along the order.
  Screen s;
  s.nx = 41, s.ny = 41, s.half_x = 20, s.half_y = 20;
  const auto p = pixel_permutation(s, PixelOrder::Rings);
  long band = -1;
  for (auto v : p) {
    const double x = s.pixel_x(v % s.nx), y = s.pixel_y(v / s.nx);
    const long b = long(std::floor(std::sqrt(x * x + y * y) / 0.5));
    BOOST_TEST(b >= band);
    band = b;
  }
}

BOOST_AUTO_TEST_CASE(sample_chunks_agree) {
  auto st = head_on();
  KernelOptions o;
  o.sample_chunks = 1;
  auto ref = run_device(st.screen, Mode::Split, {&st.batch}, o);
  for (int c : {3, 8}) {
    o.sample_chunks = c;
    auto d = run_device(st.screen, Mode::Split, {&st.batch}, o);
    const double l2 = test::relative_l2(d, ref);
    BOOST_TEST_MESSAGE("C = 1 vs C = " << c << ": rel L2 = " << l2);
    BOOST_TEST(l2 < test::tol::chunks);
  }
}

BOOST_AUTO_TEST_CASE(newton_iterations_agree) {
  auto st = head_on();
  KernelOptions o2, o4;
  o2.newton_iters = 2;
  o4.newton_iters = 4;
  auto a = run_device(st.screen, Mode::Split, {&st.batch}, o2);
  auto b = run_device(st.screen, Mode::Split, {&st.batch}, o4);
  const double l2 = test::relative_l2(a, b);
  BOOST_TEST_MESSAGE("newton_iters 2 vs 4: rel L2 = " << l2);
  BOOST_TEST(l2 < test::tol::newton);
}

BOOST_AUTO_TEST_CASE(batching_is_bit_identical) {
  // share/docs/developing.md: on one device a batched run equals the single pass bit for bit.
  auto st = thomson();
  SplineBatch first, second;
  const auto& e = st.batch.electrons;
  test::append_electron(first, test::plane_wave_orbit(0.5, 0, 1.0, +1), e[0].tau0, e[0].dtau, e[0].n_intervals, 0);
  test::append_electron(second, test::plane_wave_orbit(0.5, 0, 1.0, +1, 0.7, {1.0, -0.5, 0.3}), e[1].tau0,
                        e[1].dtau, e[1].n_intervals, 1);
  AccumulatorTiming t;
  KernelOptions per_electron;
  per_electron.electron_group = 1;  // one launch per electron (the device default may group them)
  auto one = run_device(st.screen, Mode::Total, {&st.batch}, per_electron, &t);
  auto two = run_device(st.screen, Mode::Total, {&first, &second}, per_electron);
  // And with the device's default group size, which may put both electrons of the single pass into
  // one launch but the two batches into two: still the same additions in the same order.
  auto grouped = run_device(st.screen, Mode::Total, {&st.batch});
  BOOST_TEST(std::memcmp(one.data(), grouped.data(), one.size() * sizeof(double)) == 0);
  BOOST_TEST(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)) == 0);
  BOOST_TEST(t.launches == 2u);
  BOOST_TEST(t.kernel_seconds > 0.0);
  BOOST_TEST_MESSAGE("2 launches, kernel time " << t.kernel_seconds << " s");
}

// Three electrons on a 9 × 7 screen (63 pixels: no multiple of a warp or of the vector lanes),
// shared by the bit-identity cases below.
Setup three_orbits() {
  Screen s;
  s.nx = 9, s.ny = 7, s.samples = 64;
  s.half_x = 60, s.half_y = 45, s.z = -150;
  s.dt = 2 * std::numbers::pi / 32;
  return make_setup(s,
                    {test::plane_wave_orbit(0.5, 0, 1.0, +1), test::plane_wave_orbit(0.5, 0, 1.0, +1, 0.7, {1, -0.5, 0.3}),
                     test::plane_wave_orbit(0.3, 0.3, 1.0, +1, 1.9, {-2, 1, 0})},
                    2 * std::numbers::pi / 16);
}

BOOST_AUTO_TEST_CASE(electron_groups_are_bit_identical) {
  // G electrons per launch read and write each slot once but add in electron order: the cube must be
  // bit-identical to one launch per electron, also when the last group is partial (3 = 2 + 1),
  // with coefficient reuse on or off, and for each schedule of the group's solves.
  auto st = three_orbits();
  const Screen& s = st.screen;
  // Each grouped run also with and without the phase-by-phase solve of the group (interleave), with
  // the built-in divisions and with the refined seeds (fast_recip, the GPU default: the first of a
  // warm solve's steps takes the rough quotient on every schedule), on the scalar kernel (the lanes'
  // groups: simd_lanes_give_the_scalar_kernels_cube). The device's chunks hold 16 samples here, so
  // most solves are warm.
  for (bool reuse : {true, false})
    for (int fast : {-1, 1}) {
      KernelOptions o;
      o.coef_reuse = reuse;
      o.fast_recip = fast;
      o.simd = -1;
      o.electron_group = 1;
      o.interleave = -1;
      AccumulatorTiming t1, tg;
      auto one = run_device(st.screen, Mode::Split, {&st.batch}, o, &t1);
      // Schedules: one electron after the other with the state in registers; phase by phase (the CPU
      // default); the state and the contributions in local memory (the GPU default).
      for (int g : {2, 3, 8})
        for (auto [interleave, local] : {std::pair{-1, -1}, {1, -1}, {-1, 1}}) {
          o.electron_group = g;
          o.interleave = interleave;
          o.state_local = local;
          auto grouped = run_device(st.screen, Mode::Split, {&st.batch}, o, &tg);
          BOOST_TEST(std::memcmp(one.data(), grouped.data(), one.size() * sizeof(double)) == 0,
                     "G = " << g << ", coef_reuse " << reuse << ", fast_recip " << fast << ", interleave " << interleave
                            << ", state_local " << local);
          BOOST_TEST(tg.launches == std::uint64_t((3 + g - 1) / g));
          BOOST_TEST(tg.electrons == 3u);
        }
      BOOST_TEST(t1.launches == 3u);
    }
}

namespace {
// three_orbits with macro-particle weights other than 1.
SplineBatch weighted_three_orbits(const SplineBatch& b) {
  SplineBatch w = b;
  for (std::size_t e = 0; e < w.electrons.size(); ++e) w.electrons[e].weight = 0.5 + 0.75 * double(e);
  return w;
}
// The cube of one batch with `simd` lanes (−1: the scalar kernel), G electrons per launch and C sample
// chunks, in one launch per group or in slabs of 3 rows. Few chunks, so that most solves are warm (the
// lanes' own arithmetic; a chunk's first two samples at a pixel are cold solves, done lane by lane).
std::vector<double> lanes_cube(const std::shared_ptr<Device>& device, const Screen& s, Mode mode,
                               const SplineBatch& batch, int g, int chunks, int simd, bool slabs) {
  KernelOptions o;
  o.sample_chunks = chunks;
  o.electron_group = g;
  o.fast_recip = -1;  // the lanes have the built-in divisions only (also on a GPU with FP64 vectors)
  o.simd = simd;
  FieldAccumulator acc(device, s, mode, o);
  BOOST_TEST(acc.options().simd == (simd < 0 ? -1 : simd == 1 ? int(device_info(*device).double_width) : simd));
  if (slabs)
    acc.accumulate_in_slabs(batch, 3);
  else
    acc.accumulate(batch);
  return test::download_cube(acc, s, mode, 3);
}
}  // namespace

// The vector-lane kernel (cl/lw_simd.cl, the CPU default where the device has FP64 vectors) does the
// scalar kernel's operations lane by lane: the same cube to the bit, in both modes, for a screen
// whose pixel count is no multiple of the lanes, partial groups, weighted electrons and the slab
// launches of accumulate_in_slabs (positions gathered per lane).
BOOST_AUTO_TEST_CASE(simd_lanes_give_the_scalar_kernels_cube) {
  const auto device = test::env_device();
  if (device_info(*device).double_width < 2) {
    BOOST_TEST_MESSAGE("device has no FP64 vectors: only the scalar kernel runs");
    return;
  }
  const auto st = three_orbits();
  const SplineBatch weighted = weighted_three_orbits(st.batch);
  for (Mode mode : {Mode::Total, Mode::Split})
    for (int g : {1, 2, 4})
      for (const SplineBatch* batch : {&st.batch, &weighted})
        for (bool slabs : {false, true}) {
          const int chunks = g == 2 ? 4 : 1;
          const auto scalar = lanes_cube(device, st.screen, mode, *batch, g, chunks, -1, slabs);
          const auto lanes = lanes_cube(device, st.screen, mode, *batch, g, chunks, 1, slabs);
          BOOST_TEST(std::memcmp(scalar.data(), lanes.data(), scalar.size() * sizeof(double)) == 0,
                     "mode " << int(mode) << ", G = " << g << ", weighted " << (batch == &weighted) << ", slabs "
                             << slabs);
        }
}

// Every lane count the kernel takes (2, 4, 8, 16, whatever the device's native width): 4 and 8
// lanes load the intervals by transposing each lane's rows, the others gather coefficient by
// coefficient (cl/lw_simd.cl, lw_vgather); all give the scalar kernel's cube to the bit.
BOOST_AUTO_TEST_CASE(simd_every_width_gives_the_scalar_kernels_cube) {
  const auto device = test::env_device();
  if (device_info(*device).double_width < 2) {
    BOOST_TEST_MESSAGE("device has no FP64 vectors: only the scalar kernel runs");
    return;
  }
  auto st = three_orbits();
  const SplineBatch weighted = weighted_three_orbits(st.batch);
  for (Mode mode : {Mode::Total, Mode::Split})
    for (bool slabs : {false, true}) {
      const int chunks = slabs ? 4 : 1;
      const auto scalar = lanes_cube(device, st.screen, mode, weighted, 2, chunks, -1, slabs);
      for (int w : {2, 4, 8, 16}) {
        const auto lanes = lanes_cube(device, st.screen, mode, weighted, 2, chunks, w, slabs);
        BOOST_TEST(std::memcmp(scalar.data(), lanes.data(), scalar.size() * sizeof(double)) == 0,
                   "mode " << int(mode) << ", " << w << " lanes, slabs " << slabs);
      }
    }
}

BOOST_AUTO_TEST_CASE(flop_count_from_kernel_source) {
  // edm::flop_per_slot runs cl/lw_slot.cl with a counting type: deterministic, exactly linear in the
  // Newton steps (a fixed per-step cost), split mode costs more than total (the far sums), and the
  // memory-only tunables (group size, sample chunks, coefficient reuse) change nothing.
  KernelOptions o;
  std::vector<double> f;
  for (int it = 1; it <= 4; ++it) {
    o.newton_iters = it;
    f.push_back(flop_per_slot(o, Mode::Total));
    BOOST_TEST(flop_per_slot(o, Mode::Total) == f.back());
  }
  const double step = f[1] - f[0];
  BOOST_TEST_MESSAGE("flop/slot (total mode): " << f[0] << ", " << f[1] << ", " << f[2] << ", " << f[3]
                                                 << " for 1..4 Newton steps (" << step << " per step)");
  BOOST_TEST(step > 72.0);  // a step evaluates four quintics with derivatives: 36 FMAs
  BOOST_TEST(f[2] - f[1] == step);
  BOOST_TEST(f[3] - f[2] == step);
  BOOST_TEST(f[0] - step > 100.0);  // the fields: x, u, a of 3 quintics, a⁰, a square root, 1/R, 1/D
  o.newton_iters = 2;
  BOOST_TEST(flop_per_slot(o, Mode::Split) > flop_per_slot(o, Mode::Total));
  // The schedule (electrons per launch, sample chunks) does not change a slot's arithmetic.
  KernelOptions m = o;
  m.electron_group = 8;
  m.sample_chunks = 5;
  BOOST_TEST(flop_per_slot(m, Mode::Total) == flop_per_slot(o, Mode::Total));
  // Nor does coefficient reuse: without it every evaluation reloads its interval, but a load does no
  // arithmetic (the light front is formed once per uploaded batch, lw_form_light_front).
  m.coef_reuse = false;
  BOOST_TEST(flop_per_slot(m, Mode::Total) == flop_per_slot(o, Mode::Total));
}

BOOST_AUTO_TEST_CASE(static_charge_is_coulomb) {
  Screen s;
  s.nx = 8, s.ny = 6, s.samples = 8;
  s.half_x = 20, s.half_y = 15, s.z = 50;
  s.dt = 1.0;
  const double q[3] = {0.3, -0.2, 0.1};
  auto st = make_setup(s, {test::static_charge(q[0], q[1], q[2])}, 1.0);
  s = st.screen;  // with its auto window
  auto cube = run_device(s, Mode::Split, {&st.batch});
  double worst = 0, worst_b = 0, worst_far = 0;
  for (int iy = 0; iy < s.ny; ++iy)
    for (int ix = 0; ix < s.nx; ++ix) {
      const double r[3] = {s.pixel_x(ix) - q[0], s.pixel_y(iy) - q[1], s.z - q[2]};
      const double R = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
      for (int k = 0; k < s.samples; ++k)
        for (int c = 0; c < 3; ++c) {
          // Unit positive charge, 1/(4πε0) = 1: E = r/R³ (the writer applies q k²/(4πε0)).
          const double want = r[c] / (R * R * R);
          worst = std::max(worst, std::abs(at(cube, s, 0, c, iy, ix, k) - want) * R * R);
          worst_b = std::max(worst_b, std::abs(at(cube, s, 1, c, iy, ix, k)) * R * R);
          worst_far = std::max(worst_far, std::abs(at(cube, s, 2, c, iy, ix, k)) * R * R);
        }
    }
  BOOST_TEST_MESSAGE("static charge: max |E − Coulomb|/|E| = " << worst << ", max |B|/|E| = " << worst_b
                                                              << ", max |E_far|/|E| = " << worst_far);
  BOOST_TEST(worst < 1e-12);
  BOOST_TEST(worst_b < 1e-12);
  BOOST_TEST(worst_far == 0.0);  // zero acceleration spline: the far part is exactly zero
}

BOOST_AUTO_TEST_CASE(uniform_motion_from_present_position) {
  Screen s;
  s.nx = 8, s.ny = 8, s.samples = 32;
  s.half_x = 60, s.half_y = 60, s.z = 400;
  s.dt = 0.5;
  const std::array<double, 3> x0 = {1.0, 2.0, 0.0}, u = {0.2, -0.1, 1.5};
  auto st = make_setup(s, {test::uniform_motion(x0, u)}, 0.5);
  s = st.screen;  // with its auto window
  auto cube = run_device(s, Mode::Total, {&st.batch});
  const double g = std::sqrt(1 + u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  const double b[3] = {u[0] / g, u[1] / g, u[2] / g};
  const double b2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
  double worst = 0, worst_b = 0;
  for (int iy = 0; iy < s.ny; ++iy)
    for (int ix = 0; ix < s.nx; ++ix)
      for (int k = 0; k < s.samples; ++k) {
        // Present position at the observer's lab time t = t_rel + |Z| (x = x0 + β t).
        const double t = s.t_rel(k) + std::abs(s.z);
        const double Rp[3] = {s.pixel_x(ix) - (x0[0] + b[0] * t), s.pixel_y(iy) - (x0[1] + b[1] * t),
                              s.z - (x0[2] + b[2] * t)};
        const double R2 = Rp[0] * Rp[0] + Rp[1] * Rp[1] + Rp[2] * Rp[2], R = std::sqrt(R2);
        const double rb = (Rp[0] * b[0] + Rp[1] * b[1] + Rp[2] * b[2]);
        const double sin2 = 1 - rb * rb / (R2 * b2);  // sin²ψ between R_p and β
        const double f = (1 - b2) / (R2 * R * std::pow(1 - b2 * sin2, 1.5));
        const double E[3] = {f * Rp[0], f * Rp[1], f * Rp[2]};
        const double En = std::sqrt(E[0] * E[0] + E[1] * E[1] + E[2] * E[2]);
        const double B[3] = {b[1] * E[2] - b[2] * E[1], b[2] * E[0] - b[0] * E[2], b[0] * E[1] - b[1] * E[0]};
        for (int c = 0; c < 3; ++c) {
          worst = std::max(worst, std::abs(at(cube, s, 0, c, iy, ix, k) - E[c]) / En);
          worst_b = std::max(worst_b, std::abs(at(cube, s, 1, c, iy, ix, k) - B[c]) / En);
        }
      }
  BOOST_TEST_MESSAGE("uniform motion (beta = " << std::sqrt(b2) << "): max |E − E_present|/|E| = " << worst
                                                << ", max |B − beta x E|/|E| = " << worst_b);
  // The floor is rounding, not the method: u and a are derivatives of the position quintic, so the
  // knots' own rounding (ε|t| with |t| up to ~2700 here, h = 0.5) becomes an acceleration noise of
  // ≈ 3 ε|t|/h² ≈ 8e-12, whose far field at R ≈ 400 is ~1e-10 of this weak velocity field.
  BOOST_TEST(worst < 5e-10);
  BOOST_TEST(worst_b < 5e-10);
}

BOOST_AUTO_TEST_CASE(distance_scaling_far_and_near) {
  // Two pixels at ±θ (θ = 0.3) on screens at Z and 2Z, and windows aligned so that sample 0 of each
  // receives light emitted at the same τ_a: the retarded times then agree to O(|x|²/Z) and the
  // directions to O(|x|/Z), |x| ≲ 0.05 — so far·R and near·R² must agree to ~1e-7 at Z = 1e5.
  const double theta = 0.3, tau_a = 20;
  auto w = test::plane_wave_orbit(0.05, 0, 1.0, +1);
  std::vector<double> far_series[2], near_series[2];
  for (int m = 0; m < 2; ++m) {
    Screen s;
    s.nx = 2, s.ny = 1, s.samples = 64;
    s.z = 1e5 * (m + 1);
    s.half_x = s.z * std::tan(theta), s.half_y = 0;
    s.dt = 2 * std::numbers::pi / 32;
    const auto ya = test::state_at(w, tau_a);
    s.t0_rel = s.arrival_rel(ya.data(), s.pixel_x(1), 0.0);
    SplineBatch batch;
    test::append_electron(batch, w, 0.0, 2 * std::numbers::pi / 16, 16 * 8, 0);
    BOOST_REQUIRE(check_coverage(s, batch).clipped_electrons() == 0u);
    auto cube = run_device(s, Mode::Split, {&batch});
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < s.samples; ++k) {
        const double total = at(cube, s, 0, c, 0, 1, k), far = at(cube, s, 2, c, 0, 1, k);
        far_series[m].push_back(far * (m + 1));                   // × distance ratio
        near_series[m].push_back((total - far) * (m + 1) * (m + 1));  // × ratio²
      }
  }
  const double lf = test::relative_l2(far_series[1], far_series[0]);
  const double ln = test::relative_l2(near_series[1], near_series[0]);
  BOOST_TEST_MESSAGE("distance 2x: far x2 vs far rel L2 = " << lf << ", near x4 vs near rel L2 = " << ln);
  BOOST_TEST(lf < test::tol::distance_scaling);
  BOOST_TEST(ln < test::tol::distance_scaling);
  // And the scalings are not interchangeable: far does not scale like 1/R².
  BOOST_TEST(test::relative_l2(far_series[1], near_series[0]) > 0.1);
}

namespace {
// The id of the ConfigError an accumulator with these options is refused with on a 4 × 4 screen
// ("accepted" when it is built).
std::string refused_options(const KernelOptions& o) {
  Screen s;
  s.nx = 4, s.ny = 4, s.samples = 8;
  s.half_x = s.half_y = 1, s.z = 10, s.dt = 0.1;
  try {
    FieldAccumulator acc(test::env_device(), s, Mode::Total, o);
  } catch (const ConfigError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
    return e.id();
  }
  return "accepted";
}
}  // namespace

BOOST_AUTO_TEST_CASE(intended_errors) {
  // A device index that does not exist, and a filter that matches nothing: ConfigError naming the spec.
  const std::size_t n = list_devices().size();
  try {
    select_devices(std::to_string(n + 7));
    BOOST_ERROR("a device index that does not exist was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
    BOOST_TEST(std::string(e.what()).find(std::to_string(n + 7)) != std::string::npos);
  }
  try {
    select_devices("no-such-device-xyzzy");
    BOOST_ERROR("a device filter that matches nothing was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
    BOOST_TEST(std::string(e.what()).find("no-such-device-xyzzy") != std::string::npos);
  }
  // The phase-by-phase group solve keeps the state in registers: with the state in local memory
  // it is refused by name.
  {
    Screen s;
    s.nx = 4, s.ny = 4, s.samples = 8;
    s.half_x = s.half_y = 1, s.z = 10, s.dt = 0.1;
    KernelOptions o;
    o.interleave = 1;
    o.state_local = 1;
    BOOST_TEST(refused_options(o) == "EDM-ACC-024", "interleave with the state in local memory");
    // The lanes and the phase-by-phase solve are two kernels: asking for both is refused by name;
    // interleave alone keeps the scalar kernel.
    o.state_local = -1;
    o.simd = 1;
    BOOST_TEST(refused_options(o) == "EDM-ACC-026", "simd together with interleave");
    o.simd = 0;
    FieldAccumulator acc(test::env_device(), s, Mode::Total, o);
    BOOST_TEST(acc.options().simd == -1);
    BOOST_TEST(acc.options().interleave == 1);
  }
  // NVIDIA's seeds (inline PTX) need an NVIDIA device with fast_recip: elsewhere, and with the
  // built-in divisions, they are refused by name (on an NVIDIA device only the second case applies).
  {
    const bool nvidia = device_info(*test::env_device()).vendor.find("NVIDIA") != std::string::npos;
    for (const int fast : {1, -1}) {
      if (nvidia && fast > 0) continue;
      KernelOptions o;
      o.nv_seed = 1;
      o.fast_recip = fast;
      BOOST_TEST(refused_options(o) == "EDM-ACC-025",
                 "nv_seed with fast_recip " << fast << " on " << device_info(*test::env_device()).name);
    }
  }
  // nx = 0.
  ScreenSection sec;
  sec.nx = 0;
  BOOST_CHECK_THROW(make_screen(sec, Normalization::from_wavelength(800e-9)), ConfigError);
  // A cube that cannot fit the device: DeviceError naming the numbers and the screen setting.
  Screen big;
  big.nx = 20000, big.ny = 20000, big.samples = 100000;
  big.half_x = big.half_y = 1, big.z = 10, big.dt = 0.1;
  try {
    FieldAccumulator acc(test::env_device(), big, Mode::Total, {});
    BOOST_ERROR("a field buffer larger than the device was accepted");
  } catch (const DeviceError& e) {
    BOOST_TEST_MESSAGE("[" << e.id() << "] " << e.what());
    BOOST_TEST(std::string(e.what()).find("nx = 20000") != std::string::npos);
  }
}

// The benchmark cell (share/docs/design.md, performance model) on the selected device, for GPU runs by hand; disabled unless
// EDM_BENCH=1 (it is ~2.7e8 slots per electron: minutes on a CPU). Inverse Thomson γ = 5 (exact
// plane-wave orbit, a0 = 0.1), 401² pixels, 1666 samples at T/512, screen at 5 cm with 2 mm half
// width (λ = 800 nm), total mode. Tunables from EDM_NEWTON_ITERS, EDM_COEF_REUSE, EDM_SAMPLE_CHUNKS,
// EDM_WORK_GROUP, EDM_ELECTRON_GROUP; electrons from EDM_BENCH_ELECTRONS (default 3); EDM_BENCH_PIXELS (per side) and
// EDM_BENCH_SAMPLES shrink the cell for a smoke run. Prints kernel time per electron
// and slots/s; checks that the cube is finite and non-zero.
namespace {
bool bench_enabled() {
  const char* v = std::getenv("EDM_BENCH");
  return v && std::string(v) == "1";
}
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
}  // namespace

BOOST_AUTO_TEST_CASE(benchmark_cell, *boost::unit_test::precondition([](boost::unit_test::test_unit_id) {
  return boost::test_tools::assertion_result(bench_enabled());
})) {
  const auto units = Normalization::from_wavelength(800e-9);
  ScreenSection sec;
  sec.distance = 0.05;
  sec.half_width_x = sec.half_width_y = 2e-3;
  sec.nx = sec.ny = env_int("EDM_BENCH_PIXELS", 401);  // scaled-down smoke runs on a CPU
  sec.samples = env_int("EDM_BENCH_SAMPLES", 1666);
  sec.samples_per_period = 512;
  Screen s = make_screen(sec, units);
  const double gamma = 5, h = gamma + std::sqrt(gamma * gamma - 1), a0 = 0.1;
  const int n_el = env_int("EDM_BENCH_ELECTRONS", 3);
  std::vector<test::Worldline> ws;
  for (int i = 0; i < n_el; ++i) ws.push_back(test::plane_wave_orbit(a0, 0, h, -1, 0.3 * i, {0.5 * i, -0.3 * i, 0}));
  auto st = make_setup(s, ws, 2 * std::numbers::pi / h / 16);
  KernelOptions o;
  o.newton_iters = env_int("EDM_NEWTON_ITERS", 2);
  o.coef_reuse = env_int("EDM_COEF_REUSE", 1) != 0;
  o.sample_chunks = env_int("EDM_SAMPLE_CHUNKS", 0);
  o.work_group = env_int("EDM_WORK_GROUP", 0);
  o.electron_group = env_int("EDM_ELECTRON_GROUP", 0);
  FieldAccumulator acc(test::env_device(), st.screen, Mode::Total, o);
  const auto t0 = std::chrono::steady_clock::now();
  acc.accumulate(st.batch);
  acc.drain();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double sum = 0, nonzero = 0;
  bool finite = true;
  acc.finish([&](int, int, int iy0, int iy1, const double* d) {
    const std::size_t n = std::size_t(iy1 - iy0) * st.screen.nx * st.screen.samples;
    for (std::size_t i = 0; i < n; ++i) {
      finite = finite && std::isfinite(d[i]);
      sum += std::abs(d[i]);
      nonzero += d[i] != 0;
    }
  });
  const auto t = acc.timing();
  const double slots = double(st.screen.slots_per_electron()) * n_el;
  BOOST_TEST_MESSAGE("benchmark cell: " << n_el << " electrons, " << st.screen.slots_per_electron()
                                        << " slots/electron, spline " << st.batch.electrons[0].n_intervals
                                        << " intervals; newton_iters " << acc.options().newton_iters
                                        << ", coef_reuse " << acc.options().coef_reuse << ", chunks "
                                        << acc.options().sample_chunks << ", work-group " << acc.options().work_group
                                        << ", electron group " << acc.options().electron_group);
  BOOST_TEST_MESSAGE("  kernel " << t.kernel_seconds / n_el * 1e3 << " ms/electron, " << slots / t.kernel_seconds
                                 << " slots/s (kernel events), wall " << wall << " s incl. upload; "
                                 << nonzero << " non-zero values, sum |F| = " << sum);
  BOOST_TEST(finite);
  BOOST_TEST(nonzero > 0);
}
