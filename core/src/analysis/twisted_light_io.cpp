// edm spectrum's part of spectrum.h5 with the twisted-light groups (layout in share/docs/outputs.md):
// the spectrum (write_spectrum) and the groups go into one SpectrumWriter, which the caller commits
// (edm/spectrum_file.hpp: one rename; a failure leaves the spectrum.h5 already there untouched).
// Complex maps are HDF5 compounds {r, i} of float64, which h5py reads as complex128.
#include <cmath>
#include <complex>

#include "edm/twisted_light.hpp"
#include "io/h5.hpp"

namespace edm {
namespace {

using Path = std::filesystem::path;

template <class F>
std::vector<double> map_values(const std::vector<std::complex<double>>& v, F f) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f(v[i]);
  return out;
}

void write_harmonic_field(hid_t f, const TwistedLightResult& t, const SpectrumResult& sp, const Path& where) {
  const HarmonicMaps& m = t.maps;
  const hsize_t nh = m.harmonics(), ny = m.ny, nx = m.nx;
  auto g = h5::create_group(f, "harmonic_field", where);
  const hid_t id = g.get();
  std::vector<double> order(m.order.begin(), m.order.end()), bin(m.bin.begin(), m.bin.end());
  h5::write_dataset(id, "order", {nh}, order.data(), "", where);
  h5::write_dataset(id, "omega", {nh}, m.omega.data(), "rad/s", where);
  h5::write_dataset(id, "omega_bin", {nh}, m.omega_bin.data(), "rad/s", where);
  h5::write_dataset(id, "bin", {nh}, bin.data(), "", where);
  h5::write_dataset(id, "band_share", {nh}, t.band_share.data(), "", where);
  std::vector<double> line(t.line.size());
  for (std::size_t h = 0; h < line.size(); ++h) line[h] = double(int(t.line[h]));
  h5::write_dataset(id, "line", {nh}, line.data(), "", where);
  h5::write_dataset(id, "line_omega_min", {nh}, t.line_omega_min.data(), "rad/s", where);
  h5::write_dataset(id, "line_omega_max", {nh}, t.line_omega_max.data(), "rad/s", where);
  const double sigma[2] = {double(kSigmas[0]), double(kSigmas[1])};
  h5::write_dataset(id, "sigma", {2}, sigma, "", where);
  h5::write_complex(id, "cartesian", {nh, 3, ny, nx}, m.cartesian, "V*s", where);
  h5::write_complex(id, "circular", {nh, 2, ny, nx}, m.circular, "V*s", where);
  auto abs_f = [](std::complex<double> z) { return std::abs(z); };
  auto arg_f = [](std::complex<double> z) { return std::arg(z); };
  h5::write_dataset(id, "cartesian_amplitude", {nh, 3, ny, nx}, map_values(m.cartesian, abs_f).data(), "V*s",
                    where);
  h5::write_dataset(id, "cartesian_phase", {nh, 3, ny, nx}, map_values(m.cartesian, arg_f).data(), "rad",
                    where);
  h5::write_dataset(id, "circular_amplitude", {nh, 2, ny, nx}, map_values(m.circular, abs_f).data(), "V*s",
                    where);
  h5::write_dataset(id, "circular_phase", {nh, 2, ny, nx}, map_values(m.circular, arg_f).data(), "rad",
                    where);
  std::vector<double> az(m.pixels());
  for (std::size_t j = 0; j < m.ny; ++j)
    for (std::size_t i = 0; i < m.nx; ++i) az[j * m.nx + i] = screen_azimuth(sp.x[i], sp.y[j], m.normal);
  h5::write_dataset(id, "azimuth", {ny, nx}, az.data(), "rad", where);
  h5::write_attr(id, "normal", double(m.normal));
  h5::write_attr(id, "field", sp.field_used);
  h5::write_attr(id, "window", std::string(window_name(sp.window)));
  h5::write_attr(id, "bin_rule", std::string(harmonic_bin_name(t.bin)));
  h5::write_attr(id, "convention",
                 "A(omega_k) = R exp(-i omega_k R/c) dt/sqrt(2 pi) sum_j w_j E(t_j) exp(+i omega_k t_j), "
                 "t_j absolute (/axes/t), R = |pixel| from the origin: phase of the exp(-i omega t) "
                 "convention relative to a spherical wave from the origin; circular A_sigma = (A_x - i sigma "
                 "nu A_y)/sqrt2, "
                 "azimuth atan2(nu y, x), nu = sign(screen_z): spin sigma and orbital l about the screen "
                 "normal; see share/docs/twisted_light.md");
}

void write_observables(hid_t f, const TwistedLightResult& t, const SpectrumResult& sp, const Path& where) {
  const ScreenObservables& o = t.observables;
  const hsize_t nw = o.dW_domega.size(), ny = sp.ny, nx = sp.nx, nh = o.band_energy.size();
  auto g = h5::create_group(f, "observables", where);
  const hid_t id = g.get();
  h5::write_dataset(id, "dW_domega", {nw}, o.dW_domega.data(), "J*s/rad", where);
  h5::write_dataset(id, "dLz_domega", {nw}, o.dLz_domega.data(), "J*s^2/rad", where);
  h5::write_dataset(id, "c_dU_domega", {nw}, o.c_dU_domega.data(), "J*s/rad", where);
  {
    auto p = h5::create_group(id, "pixel", where);
    h5::write_dataset(p.get(), "fluence", {ny, nx}, o.fluence.data(), "J/m^2", where);
    h5::write_dataset(p.get(), "energy_density", {ny, nx}, o.energy_density.data(), "J*s/m^3", where);
    h5::write_dataset(p.get(), "lz_density", {ny, nx}, o.lz_density.data(), "J*s/m^2", where);
  }
  {
    auto b = h5::create_group(id, "harmonic", where);
    std::vector<double> order(sp.harmonic_orders.begin(), sp.harmonic_orders.end());
    h5::write_dataset(b.get(), "order", {nh}, order.data(), "", where);
    h5::write_dataset(b.get(), "energy", {nh}, o.band_energy.data(), "J", where);
    h5::write_dataset(b.get(), "lz", {nh}, o.band_lz.data(), "J*s", where);
    h5::write_dataset(b.get(), "photon_weight", {nh}, o.band_photon_weight.data(), "J*s", where);
    h5::write_dataset(b.get(), "j_per_photon", {nh}, o.band_j_per_photon.data(), "hbar", where);
    h5::write_dataset(b.get(), "photon_j", {nh}, o.photon_j_per_photon.data(), "hbar", where);
    h5::write_dataset(b.get(), "photon_j_orbital", {nh}, o.photon_j_orbital.data(), "hbar", where);
    h5::write_dataset(b.get(), "photon_j_spin", {nh}, o.photon_j_spin.data(), "hbar", where);
    const std::vector<double> cut(o.screen_cut.begin(), o.screen_cut.end());
    h5::write_dataset(b.get(), "screen_cut", {nh}, cut.data(), "", where);
    h5::write_dataset(b.get(), "rings_j", {nh}, o.rings_j.data(), "hbar", where);
    const std::vector<double> suspect(o.photon_j_suspect.begin(), o.photon_j_suspect.end());
    h5::write_dataset(b.get(), "photon_j_suspect", {nh}, suspect.data(), "", where);
    h5::write_dataset(b.get(), "fluence", {nh, ny, nx}, o.band_fluence.data(), "J/m^2", where);
    h5::write_dataset(b.get(), "lz_density", {nh, ny, nx}, o.band_lz_density.data(), "J*s/m^2", where);
  }
  h5::write_attr(id, "flux_field", o.flux_field);
  h5::write_attr(id, "lz_field", o.lz_field);
  h5::write_attr(id, "window", std::string("none"));
  h5::write_attr(id, "axis", std::string("z through the origin"));
  h5::write_attr(id, "energy_time", o.energy_time);
  h5::write_attr(id, "energy_bins", o.energy_bins);
  h5::write_attr(id, "lz_time", o.lz_time);
  h5::write_attr(id, "lz_bins", o.lz_bins);
  h5::write_attr(id, "cu_time", o.cu_time);
  h5::write_attr(id, "cu_bins", o.cu_bins);
}

void write_oam(hid_t f, const TwistedLightResult& t, const Path& where) {
  const hsize_t nh = t.maps.harmonics(), nr = t.rings.radii.size(), np = t.rings.points;
  auto g = h5::create_group(f, "oam", where);
  const hid_t id = g.get();
  h5::write_dataset(id, "radius", {nr}, t.rings.radii.data(), "m", where);
  const auto phi = ring_azimuths(t.rings.points);
  h5::write_dataset(id, "azimuth", {np}, phi.data(), "rad", where);
  std::vector<double> ell(nh * 2 * nr), wind(nh * 2 * nr), res(nh * 2 * nr), frac(nh * 2 * nr),
      amp(nh * 2 * nr), ppp(nh * 2 * nr), status(nh * 2 * nr), cut(nh * 2 * nr), above_noise(nh * 2 * nr),
      phase(nh * 2 * nr * np), samples(nh * 2 * nr * np);
  std::vector<double> s_ell(nh * 2), s_wind(nh * 2), s_acc(nh * 2), s_cons(nh * 2), s_pass(nh * 2),
      s_spread(nh * 2);
  std::string messages;
  for (std::size_t hs = 0; hs < nh * 2; ++hs) {
    for (std::size_t r = 0; r < nr; ++r) {
      const RingFit& fit = t.fits[hs][r];
      const std::size_t i = hs * nr + r;
      ell[i] = fit.ell_fit;
      wind[i] = fit.winding;
      res[i] = fit.residual_rms;
      frac[i] = fit.fraction_above_floor;
      amp[i] = fit.mean_amplitude;
      ppp[i] = fit.phase_per_pixel;
      status[i] = double(int(fit.status));
      cut[i] = double(int(fit.cut));
      above_noise[i] = fit.fraction_above_noise;
      for (std::size_t k = 0; k < np; ++k) {
        phase[i * np + k] = k < fit.phase.size() ? fit.phase[k] : std::nan("");
        samples[i * np + k] = k < fit.amplitude.size() ? fit.amplitude[k] : std::nan("");
      }
      for (const std::string* m : {&fit.message, &fit.cut_message})
        if (!m->empty())
          messages += "harmonic " + std::to_string(t.maps.order[hs / 2]) + " sigma " +
                      std::to_string(kSigmas[hs % 2]) + ": " + *m + "\n";
    }
    const WindingSummary& s = t.summary[hs];
    s_ell[hs] = s.ell;  // NaN when no ring passes or the rings share no winding
    s_wind[hs] = s.passed ? double(s.winding) : std::nan("");
    s_pass[hs] = double(s.passed);
    s_spread[hs] = s.passed ? s.ell_spread : std::nan("");
    s_acc[hs] = double(s.accepted);
    s_cons[hs] = s.consistent ? 1 : 0;
  }
  h5::write_dataset(id, "ell_fit", {nh, 2, nr}, ell.data(), "", where);
  h5::write_dataset(id, "winding", {nh, 2, nr}, wind.data(), "", where);
  h5::write_dataset(id, "residual_rms", {nh, 2, nr}, res.data(), "rad", where);
  h5::write_dataset(id, "fraction_above_floor", {nh, 2, nr}, frac.data(), "", where);
  h5::write_dataset(id, "mean_amplitude", {nh, 2, nr}, amp.data(), "V*s", where);
  h5::write_dataset(id, "phase_per_pixel", {nh, 2, nr}, ppp.data(), "rad", where);
  h5::write_dataset(id, "status", {nh, 2, nr}, status.data(), "", where);
  h5::write_dataset(id, "cut", {nh, 2, nr}, cut.data(), "", where);
  h5::write_dataset(id, "fraction_above_noise", {nh, 2, nr}, above_noise.data(), "", where);
  h5::write_dataset(id, "phase_unwrapped", {nh, 2, nr, np}, phase.data(), "rad", where);
  h5::write_dataset(id, "amplitude", {nh, 2, nr, np}, samples.data(), "V*s", where);
  h5::write_dataset(id, "floor", {nh, 2}, t.floor_abs.data(), "V*s", where);
  h5::write_dataset(id, "ell", {nh, 2}, s_ell.data(), "", where);
  h5::write_dataset(id, "ell_winding", {nh, 2}, s_wind.data(), "", where);
  h5::write_dataset(id, "accepted", {nh, 2}, s_acc.data(), "", where);
  h5::write_dataset(id, "consistent", {nh, 2}, s_cons.data(), "", where);
  h5::write_dataset(id, "passed", {nh, 2}, s_pass.data(), "", where);
  h5::write_dataset(id, "ell_spread", {nh, 2}, s_spread.data(), "", where);
  h5::write_attr(id, "centre_x", t.rings.centre_x);
  h5::write_attr(id, "centre_y", t.rings.centre_y);
  h5::write_attr(id, "largest_radius", t.rings.largest_radius);
  h5::write_attr(id, "floor_relative", t.floor_relative);
  h5::write_attr(id, "min_fraction", t.min_fraction);
  h5::write_attr(id, "max_residual", t.max_residual);
  h5::write_attr(id, "noise_floor", t.noise_floor);
  h5::write_attr(id, "cube_relative_error", t.cube_relative_error);
  h5::write_attr(id, "strongest_peak", t.strongest_peak);
  h5::write_attr(id, "knots_per_period", double(t.knots_per_period));
  h5::write_attr(id, "cut_codes",
                 "0 in the headline ell; 1 fit refused (see status); 2 below the noise floor; 3 phase "
                 "residual above max_residual; 4 winds differently from the winding most rings share; 5 "
                 "no winding shared by more than half the rings");
  h5::write_attr(id, "status_codes",
                 "0 ok; 1 refused: amplitude below the floor on too much of the ring; 2 refused: no sample "
                 "above the floor; 3 skipped: the harmonic holds no energy; 4 skipped: no line in its band");
  h5::write_attr(id, "messages", messages);
}

void write_envelope(hid_t f, const TwistedLightResult& t, const SpectrumResult& sp, const Path& where) {
  const hsize_t nh = t.envelope.size(), ny = sp.ny, nx = sp.nx;
  const hsize_t nb = nh ? t.envelope[0].radius.size() : 0, na = nh ? t.envelope[0].azimuth.size() : 0;
  auto g = h5::create_group(f, "envelope", where);
  const hid_t id = g.get();
  std::vector<double> radial, contrast, azimuthal, map;
  for (const auto& e : t.envelope) {
    radial.insert(radial.end(), e.radial_mean.begin(), e.radial_mean.end());
    contrast.insert(contrast.end(), e.radial_contrast.begin(), e.radial_contrast.end());
    azimuthal.insert(azimuthal.end(), e.azimuthal_mean.begin(), e.azimuthal_mean.end());
    map.insert(map.end(), e.map.begin(), e.map.end());
  }
  h5::write_dataset(id, "radius", {nb}, nh ? t.envelope[0].radius.data() : nullptr, "m", where);
  h5::write_dataset(id, "azimuth", {na}, nh ? t.envelope[0].azimuth.data() : nullptr, "rad", where);
  h5::write_dataset(id, "radial_mean", {nh, nb}, radial.data(), "J/sr", where);
  h5::write_dataset(id, "radial_contrast", {nh, nb}, contrast.data(), "", where);
  h5::write_dataset(id, "azimuthal_mean", {nh, na}, azimuthal.data(), "J/sr", where);
  h5::write_dataset(id, "map", {nh, ny, nx}, map.data(), "J/sr", where);
  h5::write_attr(id, "centre_x", t.rings.centre_x);
  h5::write_attr(id, "centre_y", t.rings.centre_y);
  h5::write_attr(id, "source", std::string("/harmonics/maps"));
}

}  // namespace

void write_spectrum_with_twisted_light(SpectrumWriter& out, const SpectrumResult& sp, const TwistedLightResult& t) {
  write_spectrum(out, sp);
  if (!t.enabled) return;
  const hid_t f = out.file();
  write_harmonic_field(f, t, sp, out.partial());
  write_observables(f, t, sp, out.partial());
  write_oam(f, t, out.partial());
  write_envelope(f, t, sp, out.partial());
}

}  // namespace edm
