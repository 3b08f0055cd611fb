// ctest-label: physics
// The dft method of the spectra (spectra.method = "dft", core/src/field/spectra_dft.cpp): one
// electron in a plane-wave pulse on the angular screen at infinity (the cell of
// tests/test_spectra_fft.cpp), its amplitudes against (1) the fft method on the same samples,
// (2) the direct quadrature over the spline pieces, (3) the sum over ALL the device's far-field
// samples on the host (the untrimmed sum: the range [k_lo, k_hi) must hold every non-zero sample),
// on a linear and on a logarithmic grid; the range itself against the device's cube; the two
// transverse components both series methods transform, against the three Cartesian ones of the
// cube on a grid about another axis; batching and weights; "auto" where a method's buffers do not
// fit; a stop and `edm resume` with the fft and the dft method (spectrum.h5 bit for bit as the
// uninterrupted run); a resume continues with the method that summed the checkpoint's spectra
// ("auto" resolved), refuses a campaign asking for another, and resumes an older checkpoint
// without the record; bad input.
#define BOOST_TEST_MODULE spectra_dft
#include <hdf5.h>
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <complex>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <set>
#include <toml++/toml.h>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"
#include "h5_read.hpp"
#include "spawn.hpp"
#include "far_series_cell.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

using namespace edm;
using cplx = std::complex<double>;

namespace {

// Tolerances.
// dft vs direct, relative L2 per direction: the dft is exact on the device's samples, so what
// differs is the field kernel's series against the spline's exact far field — the fft method's
// bound (tests/test_spectra_fft.cpp kFftVsDirect, test::tol::field_vs_exact, 1e-7).
constexpr double kDftVsDirect = test::tol::field_vs_exact;
// dft vs the host's long-double sum over all samples, and dft vs fft, relative L2 per direction:
// the dft's own rounding is that of one dot product of n ≤ 2048 terms per amplitude (~ε √n) plus
// the phases ω t_k in double (~ε |ω t_k| ≤ 1e-13 rad here); the fft's (kCztRounding of
// tests/test_spectra_fft.cpp, 1e-11) dominates the comparison with it. Measured: see the messages.
constexpr double kSumRounding = 1e-11;
// The component of the device's far field along n̂, relative L2 per direction against the whole
// field: zero in exact arithmetic (at infinity n̂·R·E_far = 0 identically: core/src/field/
// spectra_series.hpp), so what is left is the field kernel's rounding of the two terms that cancel,
// a few ε times their size over |E|; the series methods drop it. Measured: see the message.
constexpr double kLongitudinalRounding = 1e-12;

constexpr int kCount = 1023;
constexpr std::size_t kStride = 8;  // the references' frequencies: every 8th of the grid

using Far = test::FarCell;
using test::rel_l2;

// The electron's spline cut to its intervals [a, z).
SplineBatch cut_spline(const Far& f, std::uint32_t a, std::uint32_t z) {
  SplineBatch b = f.batch;
  ElectronSpline& e = b.electrons[0];
  b.coef.assign(f.batch.coef.begin() + std::ptrdiff_t(e.offset + std::uint64_t(a) * kCoefPerInterval),
                f.batch.coef.begin() + std::ptrdiff_t(e.offset + std::uint64_t(z) * kCoefPerInterval));
  e.offset = 0;
  e.tau0 += e.dtau * double(a);
  e.n_intervals = z - a;
  return b;
}

// The electron's spline cut to its intervals [n/4, 3n/5): a trajectory whose light starts and ends
// inside the burst (the whole electron's spans the interaction, which the window holds with room
// on both sides: at_infinity_a_trajectory_spans_the_interaction_alone).
SplineBatch cut_spline(const Far& f) {
  const std::uint32_t n = f.batch.electrons[0].n_intervals;
  return cut_spline(f, n / 4, 3 * n / 5);
}

// Σ_k E_k e^{iω t_k} dt over every sample of the window, in long double: the untrimmed sum.
std::vector<cplx> host_sum(const std::vector<double>& cube, const Screen& s, std::size_t d,
                           const std::vector<double>& omega) {
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  std::vector<cplx> out;
  for (double w : omega)
    for (int c = 0; c < 3; ++c) {
      std::complex<long double> a = 0;
      for (std::size_t t = 0; t < N; ++t)
        a += (long double)cube[(c * P + d) * N + t] *
             std::polar(1.0L, (long double)w * ((long double)s.t0_rel + (long double)s.dt * t));
      out.emplace_back(double(a.real()) * s.dt, double(a.imag()) * s.dt);
    }
  return out;
}

}  // namespace

// The range holds every sample the kernel wrote (the cube is zero outside it, in every direction
// and component), and it is a proper part of the window (else the trimming is not tested below).
BOOST_AUTO_TEST_CASE(the_sample_range_holds_every_written_sample) {
  const Far f;
  const Screen& s = f.screen();
  const SplineBatch part = cut_spline(f);
  const auto r = far_series_samples(s, part, 0);
  const std::vector<double> cube = f.cube(part);
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  std::size_t outside = 0, inside = 0;
  for (std::size_t q = 0; q < 3 * P; ++q)
    for (std::size_t k = 0; k < N; ++k) {
      const bool in = int(k) >= r[0] && int(k) < r[1];
      if (cube[q * N + k] != 0.0) (in ? inside : outside) += 1;
    }
  BOOST_TEST_MESSAGE("far-field series range [" << r[0] << ", " << r[1] << ") of " << N << " samples; "
                                                << inside << " non-zero samples inside, " << outside
                                                << " outside");
  BOOST_TEST(outside == 0u);
  BOOST_TEST(inside > 0u);
  BOOST_TEST(r[1] - r[0] < int(N));
}

// At infinity a trajectory spans the interaction alone (run/prepare.cpp: a free electron's light
// is zero there), so the whole electron's series covers a part of the window, and the rest of the
// cube stays exactly zero. Before, every trajectory was extended over the whole window, and its
// series covered all samples.
BOOST_AUTO_TEST_CASE(at_infinity_a_trajectory_spans_the_interaction_alone) {
  const Far f;
  const Screen& s = f.screen();
  const auto r = far_series_samples(s, f.batch, 0);
  const std::vector<double> cube = f.cube(f.batch);
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  std::size_t outside = 0;
  for (std::size_t q = 0; q < 3 * P; ++q)
    for (std::size_t k = 0; k < N; ++k)
      if ((int(k) < r[0] || int(k) >= r[1]) && cube[q * N + k] != 0.0) ++outside;
  BOOST_TEST_MESSAGE("the whole electron's series: samples [" << r[0] << ", " << r[1] << ") of " << N);
  BOOST_TEST(outside == 0u);
  BOOST_TEST(r[0] > 0);
  BOOST_TEST(r[1] < int(N));
}

// The free ends count only for solved trajectories: a track (external, never extended) cut inside
// the pulse leaves the window uncovered at infinity as on any screen, and is reported clipped.
BOOST_AUTO_TEST_CASE(at_infinity_a_cut_track_is_still_clipped) {
  const Far f;
  const SplineBatch cut = cut_spline(f);
  BOOST_TEST(check_coverage(f.screen(), cut).clipped_electrons() == 1u);  // as a track: no free ends
  BOOST_TEST(check_coverage(f.screen(), cut, BurstSpec{}, true).clipped_electrons() == 0u);
  BOOST_TEST(check_coverage(f.screen(), f.batch, BurstSpec{}, true).clipped_electrons() == 0u);
}

// A linear grid that is no set of FFT bins: dft against the untrimmed host sum, the fft method and
// the direct quadrature, for the whole electron and for the cut one (its sum trimmed to its range).
// The cut spline's series starts and ends abruptly, so the sum over its samples is no longer close
// to the continuous Fourier integral that the direct method evaluates: direct is compared on the
// whole electron only.
BOOST_AUTO_TEST_CASE(dft_agrees_with_the_untrimmed_sum_fft_and_direct) {
  const Far f;
  for (const bool cut : {false, true}) {
    const SplineBatch b = cut ? cut_spline(f) : f.batch;
    const SpectraGrid g = f.linear(0.31, 3.7, kCount);
    const SpectraSums dft = test::run_spectra(g, SpectraMethod::Dft, b);
    const SpectraSums fft = test::run_spectra(g, SpectraMethod::Fft, b);
    BOOST_TEST(int(dft.method) == int(SpectraMethod::Dft));
    SpectraGrid sub = g;
    sub.omega.clear();
    for (std::size_t k = 0; k < g.omega.size(); k += kStride) sub.omega.push_back(g.omega[k]);
    const SpectraSums dir = test::run_spectra(sub, SpectraMethod::Direct, b);
    const std::vector<double> cube = f.cube(b);
    double worst_sum = 0, worst_fft = 0, worst_direct = 0, worst_inc = 0;
    for (std::size_t d = 0; d < std::size_t(f.screen().pixels()); ++d) {
      const auto a = test::coherent_amplitude(dft, d);
      worst_fft = std::max(worst_fft, rel_l2(a, test::coherent_amplitude(fft, d)));
      worst_sum =
          std::max(worst_sum, rel_l2(test::coherent_amplitude(dft, d, kStride), host_sum(cube, f.screen(), d, sub.omega)));
      worst_direct = std::max(worst_direct, rel_l2(test::coherent_amplitude(dft, d, kStride), test::coherent_amplitude(dir, d)));
      for (std::size_t k = 0; k < g.omega.size(); ++k) {
        double m2 = 0;
        for (int c = 0; c < 3; ++c) m2 += std::norm(a[3 * k + std::size_t(c)]);
        worst_inc =
            std::max(worst_inc, std::abs(dft.incoherent[d * g.omega.size() + k] - m2) / std::max(m2, 1e-300));
      }
    }
    BOOST_TEST_MESSAGE("dft vs the untrimmed host sum: worst relative L2 "
                       << worst_sum << "; vs fft " << worst_fft << "; vs direct " << worst_direct
                       << "; incoherent vs |coherent|² " << worst_inc);
    BOOST_TEST(worst_sum < kSumRounding);
    BOOST_TEST(worst_fft < kSumRounding);
    if (!cut) BOOST_TEST(worst_direct < kDftVsDirect);
    BOOST_TEST(worst_inc < kSumRounding);
  }
}

// The dft folds each series about its centre sample (cl/spectra_dft.cl, dft_fold): for an odd
// number n of samples the centre has h samples on either side, for an even one the first sample
// has no partner. Splines cut to a few intervals in the pulse give short series of both parities;
// each against the untrimmed host sum.
BOOST_AUTO_TEST_CASE(short_series_of_either_parity_fold_exactly) {
  const Far f;
  const std::uint32_t mid = f.batch.electrons[0].n_intervals / 2;
  SpectraGrid g = f.linear(0.31, 3.7, kCount);
  std::set<int> parity;
  double worst = 0;
  int shortest = 1 << 30;
  for (std::uint32_t len = 1; len <= 6; ++len) {
    const SplineBatch b = cut_spline(f, mid, mid + len);
    const auto r = far_series_samples(f.screen(), b, 0);
    const int n = r[1] - r[0];
    parity.insert(n % 2);
    shortest = std::min(shortest, n);
    const SpectraSums dft = test::run_spectra(g, SpectraMethod::Dft, b);
    SpectraGrid sub = g;
    sub.omega.clear();
    for (std::size_t k = 0; k < g.omega.size(); k += kStride) sub.omega.push_back(g.omega[k]);
    const std::vector<double> cube = f.cube(b);
    for (std::size_t d = 0; d < std::size_t(f.screen().pixels()); ++d)
      worst = std::max(worst, rel_l2(test::coherent_amplitude(dft, d, kStride), host_sum(cube, f.screen(), d, sub.omega)));
  }
  BOOST_TEST_MESSAGE("short series (" << shortest << " samples and more): dft vs the untrimmed host sum, worst relative L2 "
                                      << worst);
  BOOST_TEST(parity.size() == 2u, "series of both parities");
  BOOST_TEST(shortest < 16);
  BOOST_TEST(worst < kSumRounding);
}

// The first or last sample of a series is zero whenever the range lies inside the window (its
// margins), so only a window that cuts the burst puts light on the samples the fold pairs last:
// windows that start or end inside the whole electron's series (the range clamped at 0 or at the
// window's end), of both parities, each against the untrimmed host sum on that window.
BOOST_AUTO_TEST_CASE(series_cut_by_the_window_fold_exactly) {
  const Far f;
  const Screen& s = f.screen();
  const auto whole = far_series_samples(s, f.batch, 0);
  std::set<int> parity;
  double worst = 0;
  for (const auto& [first, samples] : std::vector<std::pair<int, int>>{
           {whole[0] + 400, s.samples - whole[0] - 400}, {whole[0] + 401, s.samples - whole[0] - 401},
           {0, whole[1] - 400}, {0, whole[1] - 401}}) {
    Screen w = s;
    w.t0_rel = s.t_rel(first);
    w.samples = samples;
    SpectraGrid g = f.linear(0.31, 3.7, kCount);
    g.far_screen = w;
    const auto r = far_series_samples(w, f.batch, 0);
    const int n = r[1] - r[0];
    parity.insert(n % 2);
    BOOST_TEST((r[0] == 0 || r[1] == samples), "the range is cut by the window");
    const std::vector<double> cube = f.cube(f.batch, &w);
    const std::size_t N = std::size_t(samples), P = std::size_t(w.pixels());
    const std::size_t edge = r[0] == 0 ? 0 : N - 1;
    bool lit = false;
    for (std::size_t q = 0; q < 3 * P; ++q) lit = lit || cube[q * N + edge] != 0.0;
    BOOST_TEST(lit, "light on the window's edge sample");
    const SpectraSums dft = test::run_spectra(g, SpectraMethod::Dft, f.batch);
    SpectraGrid sub = g;
    sub.omega.clear();
    for (std::size_t k = 0; k < g.omega.size(); k += kStride) sub.omega.push_back(g.omega[k]);
    for (std::size_t d = 0; d < P; ++d)
      worst = std::max(worst, rel_l2(test::coherent_amplitude(dft, d, kStride), host_sum(cube, w, d, sub.omega)));
  }
  BOOST_TEST_MESSAGE("series cut by the window: dft vs the untrimmed host sum, worst relative L2 " << worst);
  BOOST_TEST(parity.size() == 2u, "series of both parities");
  BOOST_TEST(worst < kSumRounding);
}

// Both series methods transform two projections per direction, on a transverse basis chosen per
// direction (the axis of n̂'s smallest |component|), and rebuild the three Cartesian amplitudes. On
// a grid about +x (n̂ near x̂, the basis axis ŷ for some directions and ẑ for others; the −z grid of
// the other cases has ẑ nowhere), their amplitudes against the host's long-double sum of all three
// components of the device's cube over every sample, and the cube's own component along n̂.
BOOST_AUTO_TEST_CASE(two_transverse_components_rebuild_the_cartesian_amplitudes) {
  const Far f("x");
  const Screen& s = f.screen();
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  std::set<std::size_t> axes;  // the smallest |component| of each direction
  for (const auto& d : s.directions) {
    std::size_t a = 0;
    for (std::size_t i = 1; i < 3; ++i)
      if (std::fabs(d.n[i]) < std::fabs(d.n[a])) a = i;
    axes.insert(a);
  }
  BOOST_REQUIRE(axes.count(1) == 1 && axes.count(2) == 1);
  const std::vector<double> cube = f.cube(f.batch);
  double worst_long = 0;
  for (std::size_t d = 0; d < P; ++d) {
    double along = 0, all = 0;
    for (std::size_t t = 0; t < N; ++t) {
      double dot = 0;
      for (std::size_t c = 0; c < 3; ++c) {
        const double e = cube[(c * P + d) * N + t];
        dot += s.directions[d].n[c] * e;
        all += e * e;
      }
      along += dot * dot;
    }
    BOOST_REQUIRE(all > 0);
    worst_long = std::max(worst_long, std::sqrt(along / all));
  }
  const SpectraGrid g = f.linear(0.31, 3.7, kCount);
  SpectraGrid sub = g;
  sub.omega.clear();
  for (std::size_t k = 0; k < g.omega.size(); k += kStride) sub.omega.push_back(g.omega[k]);
  for (const SpectraMethod method : {SpectraMethod::Dft, SpectraMethod::Fft}) {
    const SpectraSums sums = test::run_spectra(g, method, f.batch);
    double worst_sum = 0, worst_inc = 0;
    for (std::size_t d = 0; d < P; ++d) {
      const auto a = test::coherent_amplitude(sums, d, kStride);
      worst_sum = std::max(worst_sum, rel_l2(a, host_sum(cube, s, d, sub.omega)));
      for (std::size_t k = 0; k < sub.omega.size(); ++k) {
        double m2 = 0;
        for (int c = 0; c < 3; ++c) m2 += std::norm(a[3 * k + std::size_t(c)]);
        const double inc = sums.incoherent[d * g.omega.size() + k * kStride];
        worst_inc = std::max(worst_inc, std::abs(inc - m2) / std::max(m2, 1e-300));
      }
    }
    BOOST_TEST_MESSAGE(name(method) << " about +x: vs the host's 3-component sum, worst relative L2 " << worst_sum
                                    << "; incoherent vs |coherent|² " << worst_inc
                                    << "; the cube's component along n̂ " << worst_long);
    BOOST_TEST(worst_sum < kSumRounding);
    BOOST_TEST(worst_inc < kSumRounding);
  }
  BOOST_TEST(worst_long < kLongitudinalRounding);
}

// "auto" takes the cheapest method whose buffers fit the device. Electron groups of 2^30: the
// dft's amplitudes and the fft's work buffer exceed any device (spectra.method = "dft" is refused
// with EDM-ACC-076: dft_bad_input_is_refused), so "auto", which takes the dft on these grids by
// cost, falls back past both to the direct method; with groups of 4 it keeps the dft. And a grid
// whose Fourier matrix W (2 nω × (samples/2 + 1) doubles) exceeds the device's max allocation while
// everything of the fft fits, with series predicted short (spectra.series_samples: the dft cheapest
// by far): "auto" takes the fft, the next cheapest.
BOOST_AUTO_TEST_CASE(auto_skips_a_method_whose_buffers_do_not_fit) {
  const Far f;
  std::vector<double> w;
  for (int k = 0; k < 16; ++k) w.push_back(0.3 * std::pow(12.0, double(k) / 15.0));
  SpectraOptions o;
  o.method = SpectraMethod::Auto;
  for (const SpectraGrid& g : {f.grid(w), f.linear(0.5, 3.0, 8)}) {
    o.fft_group = 4;
    BOOST_TEST(int(SpectraAccumulator(test::far_device(), g, o).finish().method) == int(SpectraMethod::Dft));
    o.fft_group = 1 << 30;
    BOOST_TEST(int(SpectraAccumulator(test::far_device(), g, o).finish().method) == int(SpectraMethod::Direct));
  }
  const DeviceInfo& info = device_info(*test::far_device());
  const std::uint64_t samples = std::uint64_t(f.screen().samples);
  // The fewest frequencies past the bound whose chirp-z length L = samples + count − 1 is a power of
  // 2 (clFFT's plan for it builds fastest).
  const std::uint64_t least = info.max_allocation / (2 * (samples / 2 + 1) * sizeof(double)) + 1;
  std::uint64_t L = 1;
  while (L < samples + least - 1) L *= 2;
  const int count = int(L - samples + 1);
  BOOST_TEST_MESSAGE("max allocation " << info.max_allocation << " bytes: " << count << " frequencies");
  o.fft_group = 1;
  o.series_samples = 1;
  BOOST_TEST(int(SpectraAccumulator(test::far_device(), f.linear(0.31, 3.7, count), o).finish().method) ==
             int(SpectraMethod::Fft));
}

// A logarithmic grid (the fft method refuses it): dft against the untrimmed host sum and direct.
BOOST_AUTO_TEST_CASE(dft_on_a_logarithmic_grid) {
  const Far f;
  std::vector<double> w;
  for (int k = 0; k < 64; ++k) w.push_back(0.3 * std::pow(12.0, double(k) / 63.0));
  const SpectraGrid g = f.grid(w);
  const SplineBatch part = cut_spline(f);
  const SpectraSums dft = test::run_spectra(g, SpectraMethod::Dft, f.batch), cut = test::run_spectra(g, SpectraMethod::Dft, part);
  const SpectraSums dir = test::run_spectra(g, SpectraMethod::Direct, f.batch);
  const std::vector<double> cube = f.cube(part);
  double worst_sum = 0, worst_direct = 0;
  for (std::size_t d = 0; d < std::size_t(f.screen().pixels()); ++d) {
    worst_sum = std::max(worst_sum, rel_l2(test::coherent_amplitude(cut, d), host_sum(cube, f.screen(), d, w)));
    worst_direct = std::max(worst_direct, rel_l2(test::coherent_amplitude(dft, d), test::coherent_amplitude(dir, d)));
  }
  BOOST_TEST_MESSAGE("log grid: dft of the cut electron vs the untrimmed host sum "
                     << worst_sum << ", of the whole one vs direct " << worst_direct);
  BOOST_TEST(worst_sum < kSumRounding);
  BOOST_TEST(worst_direct < kDftVsDirect);
  // "auto" on this grid: the fft method cannot serve it, the dft one is far cheaper than the
  // quadrature by the cost model (share/docs/outputs.md "Direct spectra").
  BOOST_TEST(int(dft.method) == int(SpectraMethod::Dft));
  SpectraOptions o;
  o.method = SpectraMethod::Auto;
  BOOST_TEST(int(SpectraAccumulator(test::far_device(), g, o).finish().method) == int(SpectraMethod::Dft));
}

// Three electrons (shifted copies, weights 1, 2, 0.5) in one batch and in batches of 2 + 1, groups
// of 4 and of 1: the same bits. A weight w scales incoherent by w and coherent by w².
BOOST_AUTO_TEST_CASE(dft_batches_are_bit_identical_and_weights_scale) {
  const Far f;
  const SpectraGrid g = f.linear(0.5, 3.0, 257);
  SplineBatch both, first, second;
  for (std::size_t e = 0; e < 3; ++e)
    for (SplineBatch* b : {&both, e < 2 ? &first : &second}) {
      ElectronSpline el = f.batch.electrons[0];
      el.index = e;
      el.offset = b->coef.size();
      el.weight = e == 1 ? 2.0 : e == 2 ? 0.5 : 1.0;
      std::vector<double> c = f.batch.coef;
      for (std::uint32_t j = 0; j < el.n_intervals; ++j)
        c[j * kCoefPerInterval + kSplinePowers] += 0.7 * double(e);
      b->coef.insert(b->coef.end(), c.begin(), c.end());
      b->electrons.push_back(el);
    }
  SpectraOptions o;
  o.method = SpectraMethod::Dft;
  SpectraAccumulator one(test::far_device(), g, o);
  o.fft_group = 1;
  SpectraAccumulator two(test::far_device(), g, o);
  one.accumulate(both);
  two.accumulate(first);
  two.accumulate(second);
  const SpectraSums a = one.finish(), b = two.finish();
  BOOST_TEST(a.electrons == 3u);
  BOOST_TEST(a.weight_sum == 3.5);
  BOOST_TEST(std::memcmp(a.coherent.data(), b.coherent.data(), a.coherent.size() * sizeof(double)) == 0);
  BOOST_TEST(std::memcmp(a.incoherent.data(), b.incoherent.data(), a.incoherent.size() * sizeof(double)) ==
             0);
  SplineBatch only;
  const auto& e1 = both.electrons[1];
  only.coef.assign(
      both.coef.begin() + std::ptrdiff_t(e1.offset),
      both.coef.begin() + std::ptrdiff_t(e1.offset + std::uint64_t(e1.n_intervals) * kCoefPerInterval));
  only.electrons = {e1};
  only.electrons[0].offset = 0;
  const SpectraSums s2 = test::run_spectra(g, SpectraMethod::Dft, only);
  only.electrons[0].weight = 1.0;
  const SpectraSums s1 = test::run_spectra(g, SpectraMethod::Dft, only);
  double worst = 0;
  for (std::size_t i = 0; i < s1.incoherent.size(); ++i) {
    const double m1 = std::norm(cplx(s1.coherent[6 * i], s1.coherent[6 * i + 1]));
    const double m2 = std::norm(cplx(s2.coherent[6 * i], s2.coherent[6 * i + 1]));
    if (m1 > 0) worst = std::max(worst, std::abs(m2 / (4 * m1) - 1));
    worst = std::max(worst, std::abs(s2.incoherent[i] - 2 * s1.incoherent[i]) / s1.incoherent[i]);
  }
  BOOST_TEST(worst < kSumRounding);  // w = 2 is exact in binary: only the product's rounding
}

BOOST_AUTO_TEST_CASE(dft_bad_input_is_refused) {
  const Far f;
  auto refused = [](const SpectraGrid& g, int group, const std::string& id, const std::string& words) {
    test::expect_refused(g, SpectraMethod::Dft, group, id, words);
  };
  SpectraGrid flat = f.linear(0.5, 3.0, 8);
  flat.far_screen = Screen{};
  refused(flat, 4, "EDM-CFG-651", "screen.distance");
  const double nyquist = std::numbers::pi / f.screen().dt;
  refused(f.linear(0.5, nyquist, 8), 4, "EDM-CFG-651", "Nyquist");
  refused(f.linear(0.5, 3.0, 8), 0, "EDM-ACC-077", "group");
  // A group whose amplitudes (3 × 2 × 8 frequencies × 6 directions doubles each) exceed any device.
  refused(f.linear(0.5, 3.0, 8), 1 << 30, "EDM-ACC-076", "spectra.count");
  const std::string text = "[run]\nscenario = \"thomson\"\n[spectra]\nenabled = true\nmethod = \"dft\"\n";
  const Campaign c = parse_campaign(text, "ok", {}, f.registry.get("thomson").keys(), false);
  BOOST_TEST(int(c.spectra.method) == int(SpectraMethod::Dft));
}

namespace {

// The small inverse-Thomson cell (test::small_cell) on an angular screen at infinity, 3 × 3
// directions, 6 frequencies around the backscatter line (γ = 3: about 36 ω_L, below the Nyquist
// frequency 64 ω_L of T/128 sampling), 12 electrons in batches of 2: the cell of
// tests/test_spectra_plumb.cpp's resume case, with the fft or dft method.
std::string series_cell(const std::string& method) {
  return test::small_far_cell({.electrons = 12, .electron_batch = "2"}) + test::small_far_spectra(method);
}

struct StopAt : RunObserver {
  std::atomic<bool>* stop = nullptr;
  std::uint64_t at = 0;
  void progress(const RunProgress& p) override {
    if (p.done >= at) stop->store(true);
  }
};

// Runs `text` into `part` through the library and stops it once the first electron is done: a
// checkpoint holding the spectra sums of the electrons before the stop.
void stop_after_first(const std::string& text, const fs::path& part, const PluginRegistry& registry) {
  std::atomic<bool> stop{false};
  StopAt observer;
  observer.stop = &stop;
  observer.at = 1;
  RunOptions ro;
  ro.stop = &stop;
  ro.checkpoint_every = -1;
  ro.progress_interval = 0.005;
  std::string id;
  try {
    const Campaign c = parse_campaign(text, "cell.toml", {{"run.output", "\"" + part.string() + "\"", Origin::CommandLine}},
                                      registry.get("inverse_thomson").keys(), false);
    run_campaign(c, registry, ro, observer);
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_REQUIRE_EQUAL(id, "EDM-RUN-010");
  const CheckpointState st = read_checkpoint_state(checkpoint_path(part));
  BOOST_REQUIRE(st.next_electron >= 1u && st.next_electron < 12u);
}

}  // namespace

// Stopped once the first electron is done (a checkpoint with the sums of the electrons before the
// stop), then `edm resume`: spectrum.h5's /direct as the uninterrupted run's, bit for bit.
BOOST_AUTO_TEST_CASE(a_stopped_fft_or_dft_run_resumes_to_the_same_spectra) {
  const auto registry = PluginRegistry::discover();
  for (const std::string method : {"fft", "dft"}) {
    const fs::path dir = test::temp_dir("series_resume_" + method), part = dir / "part";
    const std::string text = series_cell(method);
    const auto file = test::write_file(dir, "cell.toml", text);
    const auto full = test::run_edm("run " + file.string() + " --quiet --output " + (dir / "full").string());
    BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);
    stop_after_first(text, part, registry);
    const std::uint64_t next = read_checkpoint_state(checkpoint_path(part)).next_electron;
    BOOST_TEST_MESSAGE(method << ": stopped with " << next << " of 12 electrons summed");
    BOOST_REQUIRE(next < 12u);
    const auto resumed = test::run_edm("resume " + part.string() + " --quiet");
    BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
    for (const char* name :
         {"/direct/coherent_amplitude", "/direct/coherent/d2W_domega_dOmega",
          "/direct/incoherent/d2W_domega_dOmega", "/direct/incoherent/photons_per_omega"}) {
      const auto x = test::h5_raw(dir / "full" / "spectrum.h5", name),
                 y = test::h5_raw(part / "spectrum.h5", name);
      BOOST_TEST(!x.empty());
      BOOST_TEST((x == y), method << ": " << name << " differs after resume");
    }
  }
}

namespace {

// Resumes `part` through the library with the campaign `text` (a program using libedm, or edm
// resume of a checkpoint whose campaign asks for that method).
void resume_with(const std::string& text, const fs::path& part, const PluginRegistry& registry) {
  RunOptions ro;
  ro.resume = true;
  ro.checkpoint_every = -1;
  RunObserver quiet;
  const Campaign c = parse_campaign(text, "cell.toml", {{"run.output", "\"" + part.string() + "\"", Origin::CommandLine}},
                                    registry.get("inverse_thomson").keys(), false);
  run_campaign(c, registry, ro, quiet);
}

// The string attribute `attr` of the object `object` of an HDF5 file ("" when it cannot be read).
std::string h5_string_attr(const fs::path& file, const char* object, const char* attr) {
  std::string out;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return out;
  const hid_t a = H5Aopen_by_name(f, object, attr, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    const hid_t t = H5Aget_type(a);
    if (H5Tis_variable_str(t) > 0) {
      char* v = nullptr;
      if (H5Aread(a, t, &v) >= 0 && v) out = v;
      H5free_memory(v);
    } else {
      std::string buf(H5Tget_size(t), '\0');
      if (H5Aread(a, t, buf.data()) >= 0) out = buf.c_str();
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Fclose(f);
  return out;
}

// spectrum.h5's /direct of `a` and `b`, bit for bit.
void same_direct(const fs::path& a, const fs::path& b, const std::string& what) {
  for (const char* name : {"/direct/coherent_amplitude", "/direct/coherent/d2W_domega_dOmega",
                           "/direct/incoherent/d2W_domega_dOmega", "/direct/incoherent/photons_per_omega"}) {
    const auto x = test::h5_raw(a / "spectrum.h5", name), y = test::h5_raw(b / "spectrum.h5", name);
    BOOST_TEST(!x.empty());
    BOOST_TEST((x == y), what << ": " << name << " differs from the uninterrupted run's");
  }
}

}  // namespace

// A resume let spectra.method = "auto" resolve again, so a run stopped where auto had taken one
// method (another device, another edm's cost model) added the electrons after the stop with
// another: the sums mixed two methods. The checkpoint records the resolved method
// (/spectra/methods) and a resume continues with it: here the sums were made with fft, which auto
// does not take on this cell (it takes dft), and the resumed spectrum.h5 is the uninterrupted fft
// run's, bit for bit. A campaign asking explicitly for another method is refused (EDM-CKP-081)
// with the checkpoint kept; a checkpoint without the record (an older edm) resumes as before, with
// a warning. run.toml [spectra] says which method summed and what chose it: the cost model (its
// cheapest estimate), the campaign, or on a resume the checkpoint.
BOOST_AUTO_TEST_CASE(a_resume_continues_with_the_method_that_summed_before_the_stop) {
  const auto registry = PluginRegistry::discover();
  const fs::path dir = test::temp_dir("series_resume_method");
  const std::string fft = series_cell("fft"), automatic = series_cell(""), dft = series_cell("dft");
  const auto full = test::run_edm("run " + test::write_file(dir, "fft.toml", fft).string() + " --quiet --output " +
                                  (dir / "full").string());
  BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);
  // The premise: auto resolves to another method than fft on this cell and device.
  const auto by_auto = test::run_edm("run " + test::write_file(dir, "auto.toml", automatic).string() +
                                     " --quiet --output " + (dir / "auto").string());
  BOOST_REQUIRE_MESSAGE(by_auto.exit_code == 0, by_auto.output);
  const std::string auto_method = h5_string_attr(dir / "auto" / "spectrum.h5", "/direct", "method");
  BOOST_TEST_MESSAGE("auto resolves to: " << auto_method);
  BOOST_REQUIRE(auto_method.rfind("fft", 0) != 0);
  // run.toml [spectra] records the factory's pick with the cost model's numbers: the cheapest of the
  // three (all serve this cell: it runs with fft and dft here), the method that summed /direct; or
  // direct, where the aliasing rule keeps auto off the series methods (as on this cell at a0 = 0.3).
  const auto recorded = [](const fs::path& run, const char* key) {
    return toml::parse_file((run / "run.toml").string())["spectra"][key].value_or(std::string());
  };
  const toml::table by_auto_toml = toml::parse_file((dir / "auto" / "run.toml").string());
  const double costs[3] = {by_auto_toml["spectra"]["cost_direct"].value_or(-1.0),
                           by_auto_toml["spectra"]["cost_fft"].value_or(-1.0),
                           by_auto_toml["spectra"]["cost_dft"].value_or(-1.0)};
  const char* names[3] = {"direct", "fft", "dft"};
  const std::size_t cheapest = std::size_t(std::min_element(costs, costs + 3) - costs);
  BOOST_TEST(*std::min_element(costs, costs + 3) > 0.0, "run.toml [spectra] lacks the cost model's numbers");
  const std::string chosen_by = recorded(dir / "auto", "chosen_by");
  const bool aliasing = chosen_by.rfind("aliasing rule", 0) == 0;
  BOOST_TEST((aliasing || chosen_by == "cost model"), chosen_by);
  const std::string expected = aliasing ? "direct" : names[cheapest];
  BOOST_TEST(recorded(dir / "auto", "method") == expected);
  BOOST_TEST(auto_method.rfind(expected, 0) == 0u, auto_method);  // "dft: …", "direct quadrature …"
  BOOST_TEST(recorded(dir / "full", "method") == "fft");
  BOOST_TEST(recorded(dir / "full", "chosen_by") == "campaign");

  // Stopped with fft, resumed with auto: continued with fft.
  const fs::path a = dir / "a";
  stop_after_first(fft, a, registry);
  BOOST_TEST(h5_string_attr(checkpoint_path(a), "/spectra", "methods") == "fft");
  resume_with(automatic, a, registry);
  BOOST_TEST(h5_string_attr(a / "spectrum.h5", "/direct", "method").rfind("fft", 0) == 0);
  BOOST_TEST(recorded(a, "method") == "fft");
  BOOST_TEST(recorded(a, "chosen_by").rfind("checkpoint", 0) == 0u, recorded(a, "chosen_by"));
  same_direct(dir / "full", a, "stopped with fft, resumed with auto");

  // Stopped with fft, resumed asking for dft: refused naming the key and both methods, the
  // checkpoint kept; edm resume with its own campaign then finishes it.
  const fs::path b = dir / "b";
  stop_after_first(fft, b, registry);
  const std::string kept = test::slurp(checkpoint_path(b));
  std::string id, message;
  try {
    resume_with(dft, b, registry);
  } catch (const ConfigError& e) {
    id = e.id();
    message = e.what();
  }
  BOOST_TEST(id == "EDM-CKP-081", id << ": " << message);
  for (const char* words : {"spectra.method = \"dft\"", "with the fft method", "spectra.method = \"fft\""})
    BOOST_TEST(message.find(words) != std::string::npos, message);
  BOOST_TEST(test::slurp(checkpoint_path(b)) == kept, "the refused resume changed the checkpoint");
  BOOST_TEST(!fs::exists(b / "field.h5"));
  const auto resumed = test::run_edm("resume " + b.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  same_direct(dir / "full", b, "refused, then resumed with its own campaign");

  // A checkpoint without the record: resumed as the campaign resolves (fft here), with a warning.
  const fs::path c = dir / "c";
  stop_after_first(fft, c, registry);
  {
    const hid_t f = H5Fopen(checkpoint_path(c).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    BOOST_REQUIRE(f >= 0);
    BOOST_REQUIRE(H5Adelete_by_name(f, "/spectra", "methods", H5P_DEFAULT) >= 0);
    H5Fclose(f);
  }
  const auto old = test::run_edm("resume " + c.string());
  BOOST_REQUIRE_MESSAGE(old.exit_code == 0, old.output);
  BOOST_TEST(old.output.find("does not record the method of its direct spectra") != std::string::npos, old.output);
  same_direct(dir / "full", c, "a checkpoint without the record");
}
