// ctest-label: physics
// The fft method of the spectra (spectra.method = "fft", core/src/field/spectra_fft.cpp): one
// electron in a plane-wave pulse on the angular screen at infinity, its amplitudes on a linear grid
// that is not a set of FFT bins, against (1) the direct quadrature over the spline pieces (an
// independent method on the same spline), (2) the sum over the device's own far-field samples
// evaluated on the host at each ω (what the chirp-z transform must reproduce), (3) the discrete
// Parseval identity per direction; batching; the cost model's choice; bad input.
#define BOOST_TEST_MODULE spectra_fft
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstring>
#include <numbers>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"
#include "far_series_cell.hpp"
#include "test_support.hpp"

using namespace edm;
using cplx = std::complex<double>;

namespace {

// Tolerances.
// fft vs direct, relative L2 per direction: the fft method is exact on the device's samples
// (below), so what differs is the field kernel's series against the spline's exact far field — the
// bound of the existing device-FFT comparison in test_spectra (test::tol::field_vs_exact, 1e-7);
// measured 3.8e-8 (PoCL), and 3.6e-8 on the H200 for the coherent d²W/dωdΩ of 64 electrons
// (BENCHMARKS.md "fft spectra").
constexpr double kFftVsDirect = test::tol::field_vs_exact;
// fft vs the host's sum Σ_k E_k e^{iω t_k} dt over the same samples, relative L2 per direction: the
// chirp-z transform's rounding (three FFTs of L points, ~ε log2 L each, and the chirp phases α k²/2
// of up to ~1e3 rad, ~1e-13 rad of rounding); measured 1.1e-14.
constexpr double kCztRounding = 1e-11;
// Discrete Parseval: ∫₀^{π/dt} |A|² dω = π dt Σ_k |E_k|² holds exactly for the samples' transform
// (|A|² is a trigonometric polynomial of degree < samples in ω·dt, so the trapezoid rule with more
// than `samples` points per half period is exact); what is left is rounding; measured 4.1e-15.
constexpr double kParsevalRounding = 1e-10;

// Every case uses one transform size (the samples, kCount frequencies, groups of 4), so clFFT
// generates the same kernels each time and the OpenCL compiler's cache serves them after the first.
constexpr int kCount = 1023;
constexpr std::size_t kStride = 8;  // the references' frequencies: every 8th of the grid

using Far = test::FarCell;
using test::rel_l2;

}  // namespace

// A grid of kCount frequencies from 0.31 to 3.7 laser ω: its spacing and offset are no FFT bins of the
// 2048-sample window (the chirp-z transform evaluates every ω exactly).
BOOST_AUTO_TEST_CASE(fft_agrees_with_direct_and_with_the_sum_over_samples) {
  const Far f;
  const SpectraGrid g = f.linear(0.31, 3.7, kCount);
  const SpectraSums fft = test::run_spectra(g, SpectraMethod::Fft, f.batch);
  // The references on every 8th frequency of the grid (the same values): the direct quadrature and
  // the host sum cost per frequency, the chirp-z transform does not.
  SpectraGrid sub = g;
  sub.omega.clear();
  for (std::size_t k = 0; k < g.omega.size(); k += kStride) sub.omega.push_back(g.omega[k]);
  const SpectraSums dir = test::run_spectra(sub, SpectraMethod::Direct, f.batch);
  BOOST_TEST(int(fft.method) == int(SpectraMethod::Fft));
  BOOST_TEST(int(dir.method) == int(SpectraMethod::Direct));
  const std::vector<double> cube = f.cube(f.batch);
  const Screen& s = f.screen();
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  double worst_direct = 0, worst_sum = 0, worst_inc = 0;
  for (std::size_t d = 0; d < P; ++d) {
    std::vector<cplx> host(3 * sub.omega.size()), a_sub;
    for (std::size_t k = 0; k < sub.omega.size(); ++k)
      for (int c = 0; c < 3; ++c) {
        std::complex<long double> a = 0;
        for (std::size_t t = 0; t < N; ++t)
          a += (long double)cube[(c * P + d) * N + t] *
               std::polar(1.0L, (long double)sub.omega[k] * ((long double)s.t0_rel + (long double)s.dt * t));
        host[3 * k + std::size_t(c)] = cplx(double(a.real()), double(a.imag())) * s.dt;
      }
    const auto a = test::coherent_amplitude(fft, d);
    for (std::size_t k = 0; k < g.omega.size(); k += kStride)
      for (int c = 0; c < 3; ++c) a_sub.push_back(a[3 * k + std::size_t(c)]);
    worst_direct = std::max(worst_direct, rel_l2(a_sub, test::coherent_amplitude(dir, d)));
    worst_sum = std::max(worst_sum, rel_l2(a_sub, host));
    for (std::size_t k = 0; k < g.omega.size(); ++k) {
      double m2 = 0;
      for (int c = 0; c < 3; ++c) m2 += std::norm(a[3 * k + std::size_t(c)]);
      worst_inc = std::max(worst_inc, std::abs(fft.incoherent[d * g.omega.size() + k] - m2) /
                                          std::max(m2, 1e-300));
    }
  }
  BOOST_TEST_MESSAGE("fft vs direct: worst relative L2 " << worst_direct << "; fft vs the host sum over the samples "
                                                         << worst_sum << "; incoherent vs |coherent|² " << worst_inc);
  BOOST_TEST(worst_direct < kFftVsDirect);
  BOOST_TEST(worst_sum < kCztRounding);
  BOOST_TEST(worst_inc < kCztRounding);  // one electron of weight 1: Σ w|A|² = |Σ w A|²
}

// Per direction: the trapezoid over ω_j = j π/(K dt), j = 0..K (K = kCount + 1 = samples / 2; ω = 0
// from the host, as the method refuses ω ≤ 0) of |A|² against π dt Σ_k |E_k|² of the device's
// samples. |A|² has cosines of m ω dt, m < samples ≤ 2K only, which this rule integrates exactly.
BOOST_AUTO_TEST_CASE(fft_parseval_per_direction) {
  const Far f;
  const Screen& s = f.screen();
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels()), K = std::size_t(kCount) + 1;
  BOOST_REQUIRE(2 * K >= N);
  const double h = std::numbers::pi / (double(K) * s.dt);
  // ω_j for j = 1..K−1 (the Nyquist end j = K is not below the Nyquist frequency: refused; it is
  // added from the host like ω = 0).
  const SpectraGrid g = f.linear(h, h * double(K - 1), int(K - 1));
  const SpectraSums fft = test::run_spectra(g, SpectraMethod::Fft, f.batch);
  const std::vector<double> cube = f.cube(f.batch);
  double worst = 0;
  for (std::size_t d = 0; d < P; ++d) {
    double energy = 0, ends = 0;
    for (int c = 0; c < 3; ++c) {
      cplx a0 = 0, aK = 0;
      for (std::size_t t = 0; t < N; ++t) {
        const double e = cube[(c * P + d) * N + t];
        energy += e * e;
        a0 += e * s.dt * std::polar(1.0, 0.0);
        aK += e * s.dt * std::polar(1.0, std::numbers::pi / s.dt * (s.t0_rel + s.dt * double(t)));
      }
      ends += 0.5 * (std::norm(a0) + std::norm(aK));
    }
    double integral = ends;
    for (std::size_t j = 0; j + 1 < K; ++j) integral += fft.incoherent[d * (K - 1) + j];
    integral *= h;
    const double expected = std::numbers::pi * s.dt * energy;
    worst = std::max(worst, std::abs(integral - expected) / expected);
  }
  BOOST_TEST_MESSAGE("fft Parseval: worst relative difference " << worst << " over " << P << " directions");
  BOOST_TEST(worst < kParsevalRounding);
}

// Three electrons (shifted copies, weights 1, 2, 0.5) in one batch and in batches of 2 + 1, with
// groups of 4 electrons per transform (one group, against a group of 2 and one of 1): the same bits (electron order and summation order fixed).
BOOST_AUTO_TEST_CASE(fft_batches_are_bit_identical) {
  const Far f;
  const SpectraGrid g = f.linear(0.5, 3.0, kCount);
  SplineBatch both, first, second;
  for (std::size_t e = 0; e < 3; ++e)
    for (SplineBatch* b : {&both, e < 2 ? &first : &second}) {
      ElectronSpline el = f.batch.electrons[0];
      el.index = e;
      el.offset = b->coef.size();
      el.weight = e == 1 ? 2.0 : e == 2 ? 0.5 : 1.0;
      std::vector<double> c = f.batch.coef;
      for (std::uint32_t j = 0; j < el.n_intervals; ++j) c[j * kCoefPerInterval + kSplinePowers] += 0.7 * double(e);
      b->coef.insert(b->coef.end(), c.begin(), c.end());
      b->electrons.push_back(el);
    }
  SpectraOptions o;
  o.method = SpectraMethod::Fft;
  SpectraAccumulator one(test::far_device(), g, o), two(test::far_device(), g, o);
  one.accumulate(both);
  two.accumulate(first);
  two.accumulate(second);
  const SpectraSums a = one.finish(), b = two.finish();
  BOOST_TEST(a.electrons == 3u);
  BOOST_TEST(a.weight_sum == 3.5);
  BOOST_TEST(std::memcmp(a.coherent.data(), b.coherent.data(), a.coherent.size() * sizeof(double)) == 0);
  BOOST_TEST(std::memcmp(a.incoherent.data(), b.incoherent.data(), a.incoherent.size() * sizeof(double)) == 0);
  // A weight w scales the incoherent sum by w and the coherent one by w² (electron 1 alone, w = 2).
  SplineBatch only;
  only.coef.assign(both.coef.begin() + std::ptrdiff_t(both.electrons[1].offset),
                   both.coef.begin() + std::ptrdiff_t(both.electrons[1].offset +
                                                         std::uint64_t(both.electrons[1].n_intervals) * kCoefPerInterval));
  only.electrons = {both.electrons[1]};
  only.electrons[0].offset = 0;
  SpectraAccumulator w2(test::far_device(), g, o);
  w2.accumulate(only);
  only.electrons[0].weight = 1.0;
  SpectraAccumulator w1(test::far_device(), g, o);
  w1.accumulate(only);
  const SpectraSums s2 = w2.finish(), s1 = w1.finish();
  double worst = 0;
  for (std::size_t i = 0; i < s1.incoherent.size(); ++i) {
    const double m1 = std::norm(cplx(s1.coherent[6 * i], s1.coherent[6 * i + 1]));
    const double m2 = std::norm(cplx(s2.coherent[6 * i], s2.coherent[6 * i + 1]));
    if (m1 > 0) worst = std::max(worst, std::abs(m2 / (4 * m1) - 1));
    worst = std::max(worst, std::abs(s2.incoherent[i] - 2 * s1.incoherent[i]) / s1.incoherent[i]);
  }
  BOOST_TEST(worst < kCztRounding);  // w = 2 is exact in binary: only the product's rounding
}

// "auto": a series method on the far screen's dense linear grid — fft on a CPU, where the cost
// constants of PoCL make it the cheaper; on a GPU either (the H200's, with its CLBlast parameters,
// make dft the cheaper here: share/docs/outputs.md, the cost model of `auto`) — and the direct one where no
// series method can serve (a flat screen: no far_screen).
BOOST_AUTO_TEST_CASE(auto_chooses_by_availability_and_cost) {
  const Far f;
  SpectraGrid g = f.linear(0.5, 3.0, kCount);
  const SpectraMethod m = test::run_spectra(g, SpectraMethod::Auto, f.batch).method;
  BOOST_TEST((m == SpectraMethod::Fft || m == SpectraMethod::Dft), "auto took " << int(m));
  if (device_info(*test::far_device()).type == "CPU") BOOST_TEST(int(m) == int(SpectraMethod::Fft));
  SpectraGrid flat = f.linear(0.5, 3.0, 16);
  flat.far_screen = Screen{};
  BOOST_TEST(int(test::run_spectra(flat, SpectraMethod::Auto, f.batch).method) == int(SpectraMethod::Direct));
}

BOOST_AUTO_TEST_CASE(fft_bad_input_is_refused) {
  const Far f;
  auto refused = [](const SpectraGrid& g, int group, const std::string& id, const std::string& words) {
    test::expect_refused(g, SpectraMethod::Fft, group, id, words);
  };
  SpectraGrid log = f.linear(0.5, 3.0, 8);
  for (std::size_t k = 0; k < log.omega.size(); ++k) log.omega[k] = 0.5 * std::pow(6.0, double(k) / 7.0);
  refused(log, 4, "EDM-CFG-650", "spectra.scale");
  SpectraGrid flat = f.linear(0.5, 3.0, 8);
  flat.far_screen = Screen{};
  refused(flat, 4, "EDM-CFG-650", "screen.distance");
  const double nyquist = std::numbers::pi / f.screen().dt;
  refused(f.linear(0.5, nyquist, 8), 4, "EDM-CFG-650", "Nyquist");
  refused(f.linear(0.5, 3.0, 8), 0, "EDM-ACC-074", "group");
  // The key: an unknown method is refused by the campaign parser, naming the key.
  const std::string text = "[run]\nscenario = \"thomson\"\n[spectra]\nenabled = true\nmethod = \"fast\"\n";
  try {
    (void)parse_campaign(text, "bad", {}, f.registry.get("thomson").keys(), false);
    BOOST_ERROR("spectra.method = \"fast\" accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.what()).find("method") != std::string::npos, e.what());
  }
}
