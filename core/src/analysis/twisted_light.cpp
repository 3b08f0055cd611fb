// The twisted-light pass over field.h5 (edm/twisted_light.hpp): a slab of rows at a time, rows in
// parallel (each row writes its own pixels; the screen sums are added row by row in order, so results
// do not depend on threads or slab size). Per pixel: the complex amplitudes at the harmonic bins
// (direct DFT rows), the time-domain fluence, energy and angular-momentum densities, and the
// unwindowed FFTs whose cross spectra give the per-bin observables. Then the ring fits and envelopes.
#include "edm/twisted_light.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "analysis/real_fft.hpp"
#include "analysis/slab_rows.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/units.hpp"

namespace edm {
namespace {

constexpr double kPi = std::numbers::pi;
// Amplitude floor relative to the strongest circular component of the harmonic: field.h5 holds
// ~1e-11 relative round-off (share/docs/developing.md), so below 1e-9 a phase is noise.
constexpr double kRoundoffFloor = 1e-9;

std::string format_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// What the pass needs, fixed before any data is read.
struct Pass {
  std::size_t nx = 0, ny = 0, n = 0, nw = 0, nh = 0;
  double dt = 0, t0 = 0, dw = 0, area = 0, zabs = 0;
  int normal = 1;
  bool split = false;
  std::vector<std::array<int, 2>> datasets;  // (bucket, comp): flux E x y z, flux B x y z[, total E, B]
  std::vector<std::vector<std::complex<double>>> kernels;  // per harmonic: the DFT row of its bin
  std::vector<double> omega_bin;                           // per harmonic: ω_k of its bin
  std::vector<double> base_phase;                          // per harmonic: ω_k (t_0 − |z|/c) mod 2π
  std::vector<std::pair<std::size_t, std::size_t>> bands;
  std::vector<std::size_t> bins;  // per harmonic: the bin of its map
  // The DFT row of the screen-integrated spectrum's peak bin (HarmonicMaps::reference); empty when
  // the spectrum has no bin above 0.
  std::size_t reference_bin = 0;
  std::vector<std::complex<double>> reference_kernel;
  std::vector<double> g;          // Parseval weights
  std::vector<double> x, y;
  // The bins of every band for the photons' J (twisted_light.hpp): index, harmonic, weight g_k/ω_k.
  std::vector<std::size_t> jbin, jband;
  std::vector<double> jweight;
};

Pass plan_pass(const FieldFile& field, const SpectrumResult& sp, HarmonicBin bin) {
  Pass P;
  P.nx = sp.nx;
  P.ny = sp.ny;
  P.n = sp.samples;
  P.nw = sp.omega.size();
  P.nh = sp.harmonic_orders.size();
  P.dt = sp.dt;
  P.x = sp.x;
  P.y = sp.y;
  // The spectrum must be this file's: its pass indexes the cube with the spectrum's shape.
  const FieldGeometry& g = field.geometry();
  if (g.samples != P.n || g.nx != P.nx || g.ny != P.ny)
    throw IoError("EDM-IO-071", field.path().string() + " /E/x: shape (" + std::to_string(g.ny) + ", " +
                                    std::to_string(g.nx) + ", " + std::to_string(g.samples) +
                                    "), the spectrum was computed from another (" + std::to_string(P.ny) + ", " +
                                    std::to_string(P.nx) + ", " + std::to_string(P.n) + ")");
  P.t0 = g.t.front();
  P.dw = 2 * kPi / (double(P.n) * P.dt);
  P.area = sp.pixel_dx * sp.pixel_dy;
  P.normal = sp.screen_z > 0 ? 1 : -1;
  P.zabs = std::abs(sp.screen_z);
  P.split = sp.field_used == "E_far";
  const int eb = P.split ? kBucketEFar : kBucketE, bb = P.split ? kBucketBFar : kBucketB;
  for (const int b : {eb, bb})
    for (int c = 0; c < 3; ++c) P.datasets.push_back({b, c});
  if (P.split)
    for (const int b : {int(kBucketE), int(kBucketB)})
      for (int c = 0; c < 3; ++c) P.datasets.push_back({b, c});
  P.g = parseval_weights(P.n);
  const std::vector<double> w = window_weights(sp.window, P.n);
  for (std::size_t h = 0; h < P.nh; ++h) {
    const double half = sp.band * sp.base_omega;
    P.bands.push_back(band_bins(sp.harmonic_omega[h] - half, sp.harmonic_omega[h] + half, P.dw, P.nw));
    const auto [klo, khi] = P.bands[h];
    const std::size_t k = bin == HarmonicBin::Peak
                              ? harmonic_peak_bin(sp.integrated, klo, khi)
                              : harmonic_nominal_bin(sp.harmonic_omega[h], P.dw, klo, khi);
    P.bins.push_back(k);
    P.kernels.push_back(bin_kernel(w, k));
    // ω_k (t_0 − |z|/c) reduced mod 2π in long double: t_0 and |z|/c are each ~1e5 periods for a far
    // screen, their difference a few.
    const long double wk = (long double)(P.dw) * (long double)(k);
    const long double lag = (long double)(P.t0) - (long double)(P.zabs) / (long double)(si::c);
    P.omega_bin.push_back(double(wk));
    P.base_phase.push_back(double(std::remainder(wk * lag, 2.0L * std::numbers::pi_v<long double>)));
  }
  for (std::size_t h = 0; h < P.nh; ++h)
    for (std::size_t k = std::max<std::size_t>(P.bands[h].first, 1); k <= P.bands[h].second; ++k) {
      P.jbin.push_back(k);
      P.jband.push_back(h);
      P.jweight.push_back(P.g[k] / (double(k) * P.dw));
    }
  if (P.nw > 1) {
    P.reference_bin = harmonic_peak_bin(sp.integrated, 1, P.nw - 1);
    P.reference_kernel = bin_kernel(w, P.reference_bin);
  }
  return P;
}

struct Scratch {
  explicit Scratch(const Pass& P)
      : fft(P.n), buf(P.datasets.size() * P.n), spectra(2 * P.nw), acc(3 * P.nw) {
    if (!fft.allocated()) throw Error("EDM-OAM-030", "cannot allocate an FFT of length " + std::to_string(P.n));
  }
  analysis::RealFft fft;
  std::vector<double> buf, spectra, acc;
};

// max_σ |𝒜_σ| of a pixel at the spectrum's peak bin (the phase does not matter here).
double reference_amplitude(const Pass& P, const double* const E[3], double R) {
  std::complex<double> a[2] = {0, 0};
  for (int c = 0; c < 2; ++c)
    for (std::size_t j = 0; j < P.n; ++j) a[c] += P.reference_kernel[j] * E[c][j];
  const double scale = R * P.dt / std::sqrt(2 * kPi);
  return scale * std::max(std::abs(circular_component(a[0], a[1], +1, P.normal)),
                          std::abs(circular_component(a[0], a[1], -1, P.normal)));
}

// The e^{−iωt} amplitudes of E at every band bin of one pixel, from its half-complex DFTs (GSL
// layout: Re X_k = d[2k−1], Im X_k = d[2k], X_{N/2} = d[N−1]; X_k is e^{−iω_k t}-signed, so its
// conjugate), the spherical phase e^{iω(R − |z|)/c} taken out as in the maps: out[b * 3 + c].
void store_band_amplitudes(const Pass& P, const double* const hE[3], double excess, std::complex<double>* out) {
  for (std::size_t b = 0; b < P.jbin.size(); ++b) {
    const std::size_t k = P.jbin[b];
    const std::complex<double> turn = std::polar(1.0, -double(k) * P.dw * excess);
    for (int c = 0; c < 3; ++c) {
      const double re = 2 * k == P.n ? hE[c][P.n - 1] : hE[c][2 * k - 1];
      const double im = 2 * k == P.n ? 0.0 : hE[c][2 * k];
      out[b * 3 + c] = std::complex<double>(re, -im) * turn;
    }
  }
}

// The photons' J of one row's pixels (twisted_light.hpp): for each harmonic the spin, the photon
// weight and the orbital part of ∂_φ = x ∂_y − y ∂_x along the row (−y ∂_x); the x ∂_y part needs
// the neighbouring rows and is added pair by pair (add_row_pair). Weights cos θ · g_k/ω_k.
void row_photon_j(const Pass& P, std::size_t iy, const std::complex<double>* amp, double* sums) {
  const std::size_t nj = P.jbin.size();
  for (std::size_t ix = 0; ix < P.nx; ++ix) {
    const double cos_t = P.zabs / std::sqrt(P.x[ix] * P.x[ix] + P.y[iy] * P.y[iy] + P.zabs * P.zabs);
    const std::size_t lo = ix == 0 ? 0 : ix - 1, hi = ix + 1 == P.nx ? ix : ix + 1;
    const double dx = P.nx > 1 ? P.x[hi] - P.x[lo] : 1.0;
    for (std::size_t b = 0; b < nj; ++b) {
      const double w = cos_t * P.jweight[b];
      const std::complex<double>* a = amp + (ix * nj + b) * 3;
      double* out = sums + P.jband[b] * 3;  // orbital, spin, photons
      for (int c = 0; c < 3; ++c) {
        const std::complex<double> d = (amp[(hi * nj + b) * 3 + c] - amp[(lo * nj + b) * 3 + c]) / dx;
        out[0] -= w * P.y[iy] * std::imag(std::conj(a[c]) * d);
        out[2] += w * std::norm(a[c]);
      }
      out[1] += w * 2 * std::imag(std::conj(a[0]) * a[1]);
    }
  }
}

// The x ∂_y part between rows j and j + 1 (lo, hi): central differences give each row
// Im(A_j* A_{j+1}) / d_j from its upper neighbour and the same product / d_{j+1} at row j + 1
// from its lower one, d the span of each row's difference (one-sided at the screen's edges).
void add_row_pair(const Pass& P, std::size_t j, const std::complex<double>* lo, const std::complex<double>* hi,
                  std::vector<double>& orbital) {
  const std::size_t nj = P.jbin.size(), n = P.ny;
  auto span = [&](std::size_t r) { return P.y[std::min(r + 1, n - 1)] - P.y[r == 0 ? 0 : r - 1]; };
  const double dj = span(j), dk = span(j + 1);
  for (std::size_t ix = 0; ix < P.nx; ++ix) {
    const double x2 = P.x[ix] * P.x[ix], z2 = P.zabs * P.zabs;
    const double cj = P.zabs / std::sqrt(x2 + P.y[j] * P.y[j] + z2);
    const double ck = P.zabs / std::sqrt(x2 + P.y[j + 1] * P.y[j + 1] + z2);
    for (std::size_t b = 0; b < nj; ++b) {
      double pair = 0;
      for (int c = 0; c < 3; ++c)
        pair += std::imag(std::conj(lo[(ix * nj + b) * 3 + c]) * hi[(ix * nj + b) * 3 + c]);
      orbital[P.jband[b]] += P.x[ix] * pair * P.jweight[b] * (cj / dj + ck / dk);
    }
  }
}

// One row of pixels; the row's share of dW/dω, c·dU/dω, dL_z/dω goes to s.acc.
void process_row(const Pass& P, std::size_t iy, std::size_t iy0, const std::vector<std::vector<double>>& slab,
                 Scratch& s, HarmonicMaps& maps, ScreenObservables& obs, std::complex<double>* band_amp) {
  const std::size_t np = P.nx * P.ny, N = P.n, nw = P.nw, nc = P.datasets.size();
  std::fill(s.acc.begin(), s.acc.end(), 0.0);
  for (std::size_t ix = 0; ix < P.nx; ++ix) {
    const std::size_t p = iy * P.nx + ix, off = ((iy - iy0) * P.nx + ix) * N;
    const double* E[3] = {slab[0].data() + off, slab[1].data() + off, slab[2].data() + off};
    const double* B[3] = {slab[3].data() + off, slab[4].data() + off, slab[5].data() + off};
    const double* const* Et = E;
    const double* const* Bt = B;
    const double* Es[3] = {};
    const double* Bs[3] = {};
    if (P.split) {
      for (int c = 0; c < 3; ++c) Es[c] = slab[6 + c].data() + off, Bs[c] = slab[9 + c].data() + off;
      Et = Es;
      Bt = Bs;
    }
    // Far-field amplitude R Ẽ e^{−iω_k R/c} (harmonics.hpp), R − |z| = ρ²/(R + |z|) without cancellation.
    const double rho2 = P.x[ix] * P.x[ix] + P.y[iy] * P.y[iy], R = std::sqrt(rho2 + P.zabs * P.zabs);
    const double excess = rho2 / (R + P.zabs) / si::c;  // (R − |z|)/c
    for (std::size_t h = 0; h < P.nh; ++h) {
      const std::complex<double> scale =
          std::polar(R * P.dt / std::sqrt(2 * kPi), P.base_phase[h] - P.omega_bin[h] * excess);
      for (int c = 0; c < 3; ++c) {
        std::complex<double> sum = 0;
        const auto& kern = P.kernels[h];
        for (std::size_t j = 0; j < N; ++j) sum += kern[j] * E[c][j];
        maps.cartesian[(h * 3 + c) * np + p] = scale * sum;
      }
    }
    if (!P.reference_kernel.empty()) maps.reference[p] = reference_amplitude(P, E, R);
    const PixelTotals t = pixel_flux_and_density(E, B, N, P.dt, P.normal);
    obs.fluence[p] = t.fluence;
    obs.energy_density[p] = t.energy_density;
    obs.lz_density[p] = pixel_lz_density(Et, Bt, N, P.dt, P.x[ix], P.y[iy], P.normal);

    const double* series[12] = {E[0], E[1], E[2], B[0], B[1], B[2]};
    if (P.split)
      for (int c = 0; c < 3; ++c) series[6 + c] = Et[c], series[9 + c] = Bt[c];
    const double* hc[12];
    for (std::size_t q = 0; q < nc; ++q) {
      double* d = s.buf.data() + q * N;
      std::copy(series[q], series[q] + N, d);
      if (!s.fft.transform(d))
        throw Error("EDM-OAM-031", "GSL real FFT failed (length " + std::to_string(N) + ")");
      hc[q] = d;
    }
    const double* const hE[3] = {hc[0], hc[1], hc[2]};
    store_band_amplitudes(P, hE, excess, band_amp + ix * P.jbin.size() * 3);
    const double* const hB[3] = {hc[3], hc[4], hc[5]};
    const double* const hEt[3] = {hc[P.split ? 6 : 0], hc[P.split ? 7 : 1], hc[P.split ? 8 : 2]};
    const double* const hBt[3] = {hc[P.split ? 9 : 3], hc[P.split ? 10 : 4], hc[P.split ? 11 : 5]};
    add_pixel_spectra(hE, hB, hEt, hBt, N, P.dt, P.x[ix], P.y[iy], P.normal, P.area, s.acc.data(),
                      s.acc.data() + nw, s.acc.data() + 2 * nw, s.spectra.data());
    for (std::size_t h = 0; h < P.nh; ++h) {
      double f = 0, m = 0;
      for (std::size_t k = P.bands[h].first; k <= P.bands[h].second; ++k) {
        f += P.g[k] * s.spectra[k];
        m += P.g[k] * s.spectra[nw + k];
      }
      obs.band_fluence[h * np + p] = f * P.dw;
      obs.band_lz_density[h * np + p] = m * P.dw;
    }
  }
}

// The slab loop of spectrum.cpp: rows of a slab in parallel, screen sums added in row order.
// The photons' J sums (orbital, spin, photons per harmonic) go to jsums; the band amplitudes of a
// slab's rows are kept until its row pairs are summed, and its last row for the next slab's first.
void run_pass(const FieldFile& field, const Pass& P, const TwistedLightOptions& opt,
              HarmonicMaps& maps, ScreenObservables& obs, std::vector<double>& jsums) {
  const std::size_t nc = P.datasets.size(), nw = P.nw, row_amp = P.nx * P.jbin.size() * 3;
  const analysis::SlabRows plan =
      analysis::plan_slab_rows(nc * P.nx * P.n * sizeof(double), opt.slab_bytes, opt.threads);
  std::vector<std::vector<double>> slab(nc);
  std::vector<std::vector<double>> row_acc(plan.rows_per_slab), row_j(plan.rows_per_slab);
  std::vector<std::complex<double>> amp(plan.rows_per_slab * row_amp), previous(row_amp);
  std::vector<double> orbital_y(P.nh, 0.0);
  for (std::size_t iy0 = 0; iy0 < P.ny; iy0 += plan.rows_per_slab) {
    const std::size_t iy1 = std::min(P.ny, iy0 + plan.rows_per_slab);
    // Every component has the spectrum's shape: FieldFile checked them all at open.
    for (std::size_t q = 0; q < nc; ++q) field.read_rows(P.datasets[q][0], P.datasets[q][1], iy0, iy1, slab[q]);
    analysis::for_rows_in_parallel(
        iy0, iy1, plan.threads, [&] { return Scratch(P); },
        [&](std::size_t iy, Scratch& s) {
          std::complex<double>* a = amp.data() + (iy - iy0) * row_amp;
          process_row(P, iy, iy0, slab, s, maps, obs, a);
          row_acc[iy - iy0] = s.acc;
          row_j[iy - iy0].assign(P.nh * 3, 0.0);
          row_photon_j(P, iy, a, row_j[iy - iy0].data());
        });
    for (std::size_t iy = iy0; iy < iy1; ++iy) {
      for (std::size_t k = 0; k < nw; ++k) {
        obs.dW_domega[k] += row_acc[iy - iy0][k];
        obs.c_dU_domega[k] += row_acc[iy - iy0][nw + k];
        obs.dLz_domega[k] += row_acc[iy - iy0][2 * nw + k];
      }
      for (std::size_t q = 0; q < P.nh * 3; ++q) jsums[q] += row_j[iy - iy0][q];
      const std::complex<double>* row = amp.data() + (iy - iy0) * row_amp;
      if (iy > 0) add_row_pair(P, iy - 1, iy == iy0 ? previous.data() : row - row_amp, row, orbital_y);
    }
    std::copy(amp.begin() + (iy1 - 1 - iy0) * row_amp, amp.begin() + (iy1 - iy0) * row_amp, previous.begin());
  }
  for (std::size_t h = 0; h < P.nh; ++h) jsums[h * 3] += orbital_y[h];
}

// Totals from the time series and from the bins, and the per-band books.
void finish_observables(const Pass& P, const SpectrumResult& sp, ScreenObservables& o) {
  for (double v : o.fluence) o.energy_time += v;
  o.energy_time *= P.area;
  for (double v : o.lz_density) o.lz_time += v;
  o.lz_time *= P.area;
  for (double v : o.energy_density) o.cu_time += v;
  o.cu_time *= si::c * P.area;
  for (std::size_t k = 0; k < P.nw; ++k) {
    o.energy_bins += P.g[k] * o.dW_domega[k];
    o.lz_bins += P.g[k] * o.dLz_domega[k];
    o.cu_bins += P.g[k] * o.c_dU_domega[k];
  }
  o.energy_bins *= P.dw;
  o.lz_bins *= P.dw;
  o.cu_bins *= P.dw;
  for (std::size_t h = 0; h < P.nh; ++h) {
    double w = 0, l = 0, ph = 0;
    for (std::size_t k = P.bands[h].first; k <= P.bands[h].second; ++k) {
      w += P.g[k] * o.dW_domega[k];
      l += P.g[k] * o.dLz_domega[k];
      if (k > 0) ph += P.g[k] * o.dW_domega[k] / sp.omega[k];
    }
    o.band_energy.push_back(w * P.dw);
    o.band_lz.push_back(l * P.dw);
    o.band_photon_weight.push_back(ph * P.dw);
    o.band_j_per_photon.push_back(ph != 0 ? l / ph : std::nan(""));
  }
  if (!(P.area > 0)) o.energy_time = o.lz_time = o.cu_time = std::nan("");
}

// Each band's share of the screen-integrated (windowed) spectrum; a requested harmonic without
// energy is refused before any data is read.
std::vector<double> band_shares(const Pass& P, const SpectrumResult& sp, const TwistedLightOptions& opt) {
  double total = 0;
  for (std::size_t k = 0; k < P.nw; ++k) total += P.g[k] * sp.integrated[k];
  std::vector<double> share;
  for (std::size_t h = 0; h < P.nh; ++h) {
    double e = 0;
    for (std::size_t k = P.bands[h].first; k <= P.bands[h].second; ++k) e += P.g[k] * sp.integrated[k];
    share.push_back(total > 0 ? e / total : 0.0);
    if (opt.harmonics_explicit && !(share.back() >= kNoEnergyFraction))
      throw ConfigError("EDM-OAM-010", "--harmonics: harmonic " + std::to_string(sp.harmonic_orders[h]) +
                                           " of the " + harmonic_base_name(sp.of) +
                                           " (ω = " + format_g(sp.harmonic_omega[h] / sp.laser_omega) +
                                           " ω_laser) holds no energy on this screen (" +
                                           format_g(share.back()) + " of the spectrum's, below " +
                                           format_g(kNoEnergyFraction) +
                                           "): it has no phase to map; drop it from --harmonics");
  }
  return share;
}

// The half width at half maximum of the fundamental in the screen spectrum, rad/s: about the peak
// between half its range's low end and 1.5 times its high end (not the spectrum's strongest bin,
// which in total mode can be an approaching electron's Coulomb field near ω → 0), the distance to
// the first bin at or below half of the peak, on the wider side.
double fundamental_hwhm(const Pass& P, const SpectrumResult& sp, double lo, double hi) {
  const auto [klo, khi] = band_bins(0.5 * lo, 1.5 * hi, P.dw, P.nw);
  if (klo > khi || khi == 0) return 0;
  const std::size_t k0 = harmonic_peak_bin(sp.integrated, std::max<std::size_t>(klo, 1), khi);
  const double half = 0.5 * sp.integrated[k0];
  std::size_t below = k0, above = k0;
  while (below > 0 && sp.integrated[below] > half) --below;
  while (above + 1 < P.nw && sp.integrated[above] > half) ++above;
  return double(std::max(k0 - below, above - k0)) * P.dw;
}

// Harmonic 1 of the emission at cos θ and M = 1 + u_⊥0² + a²/2 (twisted_light.hpp, HarmonicLine).
double emission_omega(double laser_omega, double h, double q, double cos_theta, double M) {
  return laser_omega * 2 * h * h / ((h * h + M) - q * cos_theta * (M - h * h));
}

// Which bands hold their harmonic's line: the band's peak bin against the range where the line can
// peak on this screen. A rim peak is no verdict by itself: off the axis the line moves down with
// the angle (inverse Thomson: to 0.58 of its on-axis ω at 0.5 rad, γ = 2), to the band's lower
// edge; what a band must not hold is a peak where no angle of the screen puts the harmonic.
void judge_lines(const Pass& P, const SpectrumResult& sp, const RunPhysics& phys, TwistedLightResult& r) {
  r.line.assign(P.nh, HarmonicLine::NotJudged);
  r.line_omega_min.assign(P.nh, std::nan(""));
  r.line_omega_max.assign(P.nh, std::nan(""));
  r.band_peak_omega.assign(P.nh, std::nan(""));
  const EnsembleKinematics& k = phys.kinematics;
  if (k.electrons == 0 || k.laser_direction == 0 || !(k.light_front_h > 0) || !(phys.laser_omega > 0) || P.nw < 2)
    return;
  double x2 = 0, y2 = 0;
  for (double v : P.x) x2 = std::max(x2, v * v);
  for (double v : P.y) y2 = std::max(y2, v * v);
  const double cos_min = P.zabs / std::sqrt(x2 + y2 + P.zabs * P.zabs);
  const double q = double(P.normal * k.laser_direction), h = k.light_front_h;
  const double m0 = 1 + k.u_perp2_mean, ma = m0 + 0.5 * phys.a0 * phys.a0;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const double c : {cos_min, 1.0})
    for (const double M : {m0, ma}) {
      lo = std::min(lo, emission_omega(phys.laser_omega, h, q, c, M));
      hi = std::max(hi, emission_omega(phys.laser_omega, h, q, c, M));
    }
  const double hwhm = fundamental_hwhm(P, sp, lo, hi);
  for (std::size_t i = 0; i < P.nh; ++i) {
    const double n = sp.harmonic_orders[i], margin = std::max(kLineMarginBins * P.dw, n * hwhm);
    r.line_omega_min[i] = n * lo - margin;
    r.line_omega_max[i] = n * hi + margin;
    if (!(r.band_share[i] >= kNoEnergyFraction)) continue;
    const double peak = sp.omega[harmonic_peak_bin(sp.integrated, P.bands[i].first, P.bands[i].second)];
    r.band_peak_omega[i] = peak;
    const bool inside = peak >= r.line_omega_min[i] && peak <= r.line_omega_max[i];
    r.line[i] = inside ? HarmonicLine::Line : HarmonicLine::NoLine;
  }
}

// The photons' J of each band from the pass's sums, and whether the flux book through the screen
// agrees with it; a band without its line gets neither J (NaN), only the mark.
void photon_angular_momentum(const std::vector<double>& jsums, TwistedLightResult& r) {
  auto& o = r.observables;
  for (std::size_t h = 0; h < r.maps.harmonics(); ++h) {
    const double photons = jsums[h * 3 + 2];
    double orbital = photons > 0 ? jsums[h * 3] / photons : std::nan("");
    double spin = photons > 0 ? jsums[h * 3 + 1] / photons : std::nan("");
    if (r.line[h] == HarmonicLine::NoLine) {
      orbital = spin = std::nan("");
      o.band_j_per_photon[h] = std::nan("");
    }
    const double total = orbital + spin, book = o.band_j_per_photon[h];
    const double tol = std::max(kScreenCutTolerance, kScreenCutRelative * std::abs(total));
    o.photon_j_orbital.push_back(orbital);
    o.photon_j_spin.push_back(spin);
    o.photon_j_per_photon.push_back(total);
    o.screen_cut.push_back(std::abs(book - total) > tol ? 1 : 0);
  }
}

// trajectory.knots_per_period of the run that wrote field.h5, from the run's manifest beside it;
// 0 for a field.h5 outside a run folder (no manifest: not made by edm's trajectories). The lead's
// analyse_run hands its one RunManifest down instead (issue 29 item 1).
// The absolute noise floor of the headline ℓ: the cube's relative error times the strongest map's
// peak over every harmonic and both components. Not each component's own peak: a weak component
// (a θ²-suppressed counter-rotating one near the axis, a high harmonic) carries the same absolute
// error as the strongest, so relative to its own peak its phase can be all noise.
void set_noise_floor(TwistedLightResult& r) {
  r.cube_relative_error = cube_relative_error(r.knots_per_period);
  r.strongest_peak = 0;
  for (const auto& a : r.maps.circular) r.strongest_peak = std::max(r.strongest_peak, std::abs(a));
  for (double a : r.maps.reference) r.strongest_peak = std::max(r.strongest_peak, a);
  r.noise_floor = kNoiseMargin * r.cube_relative_error * r.strongest_peak;
}

// Ring fits of every harmonic and circular component, and the speckle envelopes of the band maps.
void fit_rings(const SpectrumResult& sp, TwistedLightResult& r) {
  const std::size_t nh = r.maps.harmonics(), np = r.maps.pixels();
  set_noise_floor(r);
  const RingCuts cuts{r.noise_floor, r.max_residual, r.min_fraction};
  r.fits.assign(nh * 2, {});
  r.summary.assign(nh * 2, {});
  r.floor_abs.assign(nh * 2, 0.0);
  for (std::size_t h = 0; h < nh; ++h) {
    double strongest = 0, peak[2] = {0, 0};
    for (std::size_t s = 0; s < 2; ++s) {
      const auto* m = r.maps.circular_map(h, s);
      for (std::size_t p = 0; p < np; ++p) peak[s] = std::max(peak[s], std::abs(m[p]));
      strongest = std::max(strongest, peak[s]);
    }
    for (std::size_t s = 0; s < 2; ++s) {
      const double floor = std::max(r.floor_relative * peak[s], kRoundoffFloor * strongest);
      r.floor_abs[h * 2 + s] = floor;
      auto& fits = r.fits[h * 2 + s];
      for (double radius : r.rings.radii) {
        const bool no_energy = !(r.band_share[h] >= kNoEnergyFraction);
        if (no_energy || r.line[h] == HarmonicLine::NoLine) {
          RingFit f;
          f.radius = radius;
          f.status = no_energy ? RingStatus::NoEnergy : RingStatus::NoLine;
          f.message = "harmonic " + std::to_string(r.maps.order[h]) +
                      (no_energy ? " holds no energy on this screen" : ": no line of it in its band");
          fits.push_back(f);
          continue;
        }
        fits.push_back(fit_ring(r.maps.circular_map(h, s), r.grid, r.maps.normal, r.rings.centre_x,
                                r.rings.centre_y, radius, r.rings.points, floor, r.min_fraction));
      }
      r.summary[h * 2 + s] = summarise_rings(fits, cuts);
    }
    r.envelope.push_back(speckle_envelope(sp.harmonic_maps.data() + h * np, r.grid, r.maps.normal,
                                          r.rings.centre_x, r.rings.centre_y, r.rings.largest_radius));
  }
}

// The photons' J of each band against its ring fits (ScreenObservables::rings_j): the circular
// components are about the screen's normal ν, so J_z = ν Σ_σ w_σ (ℓ_σ + σ) with w_± = (1 ± ν s_z)/2
// from the photons' spin s_z. A component with more than kRingsShare of the photons and no headline
// ℓ leaves it unknown. flat_top_helix's harmonic 2 (a weak band beside the line's leakage, whose
// J is −1) gave −1.39 ħ per photon where its rings say ℓ = −1 in σ = −1, J = −2: printed as a result.
void check_against_rings(TwistedLightResult& r) {
  constexpr double kRingsShare = 0.05, kRingsTolerance = 0.1;  // of the photons; ħ per photon
  auto& o = r.observables;
  const double nu = double(r.maps.normal);
  for (std::size_t h = 0; h < r.maps.harmonics(); ++h) {
    const double j = o.photon_j_per_photon[h], spin = nu * o.photon_j_spin[h];
    double expected = std::isfinite(j) ? 0.0 : std::nan("");
    for (std::size_t s = 0; s < 2 && std::isfinite(expected); ++s) {
      const double share = 0.5 * (1.0 + double(kSigmas[s]) * spin);
      const WindingSummary& w = r.summary[h * 2 + s];
      if (w.passed > 0) expected += share * (w.ell + double(kSigmas[s]));
      else if (share > kRingsShare) expected = std::nan("");
    }
    expected *= nu;
    o.rings_j.push_back(expected);
    o.photon_j_suspect.push_back(std::isfinite(expected) && std::abs(j - expected) > kRingsTolerance ? 1 : 0);
  }
}

}  // namespace

double cube_relative_error(int knots_per_period) {
  if (knots_per_period <= 0) return kCubeRoundoff;
  const double ratio = 16.0 / double(knots_per_period);
  return std::max(kCubeRoundoff, kCubeErrorAt16 * std::pow(ratio, ratio > 1 ? 6 : 4));
}

void check_ring_options(const FieldFile& field, const RingOptions& rings) {
  plan_rings(grid_geometry(field.geometry().x, field.geometry().y), rings);
}

TwistedLightResult compute_twisted_light(const FieldFile& field, const SpectrumResult& sp,
                                         const TwistedLightOptions& opt) {
  TwistedLightResult r;
  if (!opt.enabled) return r;
  r.enabled = true;
  r.grid = grid_geometry(sp.x, sp.y);
  r.rings = plan_rings(r.grid, opt.rings);
  r.floor_relative = opt.rings.floor;
  r.min_fraction = opt.rings.min_fraction;
  r.max_residual = opt.rings.max_residual;
  r.knots_per_period = opt.knots_per_period;
  r.bin = opt.bin;
  const Pass P = plan_pass(field, sp, opt.bin);
  r.band_share = band_shares(P, sp, opt);
  judge_lines(P, sp, opt.physics, r);

  auto& m = r.maps;
  m.nx = P.nx;
  m.ny = P.ny;
  m.normal = P.normal;
  m.order = sp.harmonic_orders;
  m.omega = sp.harmonic_omega;
  m.bin = P.bins;
  for (std::size_t k : P.bins) m.omega_bin.push_back(sp.omega[k]);
  const std::size_t np = P.nx * P.ny;
  m.cartesian.assign(P.nh * 3 * np, {});
  m.reference_bin = P.reference_bin;
  m.reference.assign(P.reference_kernel.empty() ? 0 : np, 0.0);
  auto& o = r.observables;
  o.flux_field = P.split ? "E_far,B_far" : "E,B";
  o.lz_field = "E,B";
  o.dW_domega.assign(P.nw, 0.0);
  o.dLz_domega.assign(P.nw, 0.0);
  o.c_dU_domega.assign(P.nw, 0.0);
  o.fluence.assign(np, 0.0);
  o.energy_density.assign(np, 0.0);
  o.lz_density.assign(np, 0.0);
  o.band_fluence.assign(P.nh * np, 0.0);
  o.band_lz_density.assign(P.nh * np, 0.0);

  std::vector<double> jsums(P.nh * 3, 0.0);
  run_pass(field, P, opt, m, o, jsums);
  fill_circular(m);
  finish_observables(P, sp, o);
  photon_angular_momentum(jsums, r);
  fit_rings(sp, r);
  check_against_rings(r);
  return r;
}

}  // namespace edm
