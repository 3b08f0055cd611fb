// ctest-label: physics
// The analysis tools on synthetic run folders (field.h5 written by edm::FieldWriter with a known
// analytic field, a hand-written run.toml), so no `edm run` is needed: one frequency gives one peak
// at its bin; discrete Parseval with window none; d²I/dωdΩ of a Gaussian pulse against its analytic
// transform; the Nyquist guard; the energy through the screen of a plane-wave-like pulse against
// ∫S·n dt × area; split mode uses E_far; slab size does not change results; `edm spectrum`,
// `edm info`, `edm plot` through the binary.
#define BOOST_TEST_MODULE spectrum
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <sstream>
#include <numbers>

#include "edm/error.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_files.hpp"
#include "edm/spectrum.hpp"
#include "edm/units.hpp"
#include "edm/writer.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace tol = edm::test::tol;
using edm::si::c;
using edm::si::eps0;
constexpr double kPi = std::numbers::pi;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A synthetic run: the screen in SI, the laser at 800 nm, dt = T / samples_per_period.
struct Synthetic {
  int nx = 5, ny = 5, samples = 256, samples_per_period = 32;
  double half_width = 2e-3, z = 0.05;  // m
  edm::Mode mode = edm::Mode::Total;
  std::string scenario = "inverse_thomson";
  double gamma = 5.0, a0 = 0.1;
  bool with_gamma_trace = false;
  std::string kinematics;  // TOML lines of a [kinematics] section; empty = none (a run.toml of an older edm)

  edm::Normalization units = edm::Normalization::from_wavelength(800e-9);
  double omega() const { return units.omega; }
  double dt() const { return 2 * kPi / omega() / samples_per_period; }  // s
  double pixel_x(int i) const { return nx == 1 ? 0 : -half_width + 2 * half_width * i / (nx - 1); }
  double pixel_y(int j) const { return ny == 1 ? 0 : -half_width + 2 * half_width * j / (ny - 1); }
};

// Field of one bucket at pixel (ix, iy), sample k (time from the first sample = k·dt): 3 components, SI.
using FieldFn = std::function<std::array<double, 3>(int bucket, int ix, int iy, int k)>;

fs::path make_run(const std::string& tag, const Synthetic& s, const FieldFn& field) {
  const fs::path dir = edm::test::temp_dir(tag);
  const auto& u = s.units;
  edm::Screen sc;
  sc.nx = s.nx;
  sc.ny = s.ny;
  sc.samples = s.samples;
  sc.half_x = s.half_width / u.length();
  sc.half_y = s.half_width / u.length();
  sc.z = s.z / u.length();
  sc.dt = s.dt() / u.time();
  sc.t0_rel = 0;
  edm::FieldFileInfo info{"synthetic-" + tag, "test", s.scenario, 1, s.mode};
  {
    edm::FieldWriter w(dir / "field.h5", sc, u, info);
    std::vector<double> slab(std::size_t(s.nx) * s.samples);
    for (int b = 0; b < edm::bucket_count(s.mode); ++b) {
      const double scale = (b % 2 == 0) ? u.lw_efield() : u.lw_bfield();  // the writer multiplies by it
      for (int comp = 0; comp < 3; ++comp)
        for (int iy = 0; iy < s.ny; ++iy) {  // one row per slab, as the accumulator streams them
          for (int ix = 0; ix < s.nx; ++ix)
            for (int k = 0; k < s.samples; ++k)
              slab[std::size_t(ix) * s.samples + k] = field(b, ix, iy, k)[comp] / scale;
          w.write_slab(b, comp, iy, iy + 1, slab.data());
        }
    }
    if (s.with_gamma_trace) {
      edm::GammaTrace g;
      g.dtau = 0.5;
      for (int j = 0; j < 64; ++j) {
        const double gm = s.gamma - 0.01 * j / 64.0;
        g.sum.push_back(edm::GammaTrace::to_fixed(gm));
        g.min.push_back(gm - 0.001);
        g.max.push_back(gm + 0.001);
        g.count.push_back(1);
      }
      g.drain.push_back({0, 0.01});
      w.write_gamma_trace(g, u);
    }
    w.commit();
  }
  std::ofstream m(dir / "run.toml");
  m << "[provenance]\nrun_id = \"synthetic-" << tag << "\"\nformat = " << edm::kRunFormat
    << "\nedm_version = \"test\"\n"
    << "[config]\nscenario = \"" << s.scenario << "\"\nknots_per_period = 0\nmode = \""
    << (s.mode == edm::Mode::Total ? "total" : "split") << "\"\n"
    << "[laser]\nwavelength = 8e-7\nomega = " << std::setprecision(17) << s.omega() << "\na0 = " << s.a0
    << "\n"
    << "[electrons]\ncount = 1\n"
    << "[field_file]\nname = \"field.h5\"\nrun_id = \"synthetic-" << tag << "\"\nbytes = "
    << std::filesystem::file_size(dir / "field.h5") << "\n"
    << "[screen]\ntype = \"flat\"\nnx = " << s.nx << "\nny = " << s.ny << "\nsamples = " << s.samples << "\ndistance = " << s.z
    << "\ndt = " << s.dt() << "\n"
    << "[window]\ncovered = true\nclipped_electrons = 0\n"
    << "[timing]\ntotal = 1.5\nfield = 1.0\n"
    << "[campaign.electrons]\ngamma = " << s.gamma << "\n";
  if (!s.kinematics.empty()) m << "[kinematics]\n" << s.kinematics;
  return dir;
}

edm::SpectrumOptions options(edm::Window w, std::vector<int> harmonics = {}) {
  edm::SpectrumOptions o;
  o.window = w;
  o.harmonics = std::move(harmonics);
  return o;
}

}  // namespace

// One frequency (3 ω, exactly on bin 24 of N = 256 at dt = T/32) gives one peak at that bin in every
// pixel, and the harmonic map of order 3 holds the energy while order 1 sees only window leakage.
BOOST_AUTO_TEST_CASE(single_frequency_peaks_at_its_bin) {
  Synthetic s;
  const double w3 = 3 * s.omega(), dt = s.dt();
  const auto dir = make_run("peak", s, [&](int b, int ix, int, int k) -> std::array<double, 3> {
    const double e = (1e3 + 100 * ix) * std::sin(w3 * k * dt);
    return b == 0 ? std::array<double, 3>{e, 0, 0} : std::array<double, 3>{0, e / c, 0};
  });
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::Hann, {1, 3}));
  const std::size_t k0 = 3 * s.samples / s.samples_per_period;  // 24
  BOOST_TEST_REQUIRE(r.omega.size() == std::size_t(s.samples / 2 + 1));
  std::size_t kmax = 1;
  for (std::size_t k = 1; k < r.on_axis.size(); ++k)
    if (r.on_axis[k] > r.on_axis[kmax]) kmax = k;
  BOOST_TEST_MESSAGE("single frequency: on-axis peak at bin "
                     << kmax << " = " << r.peak_omega_on_axis / s.omega() << " ω (expected bin " << k0
                     << " = 3 ω)");
  BOOST_TEST(kmax == k0);
  BOOST_TEST(r.peak_omega_on_axis / s.omega() == 3.0, boost::test_tools::tolerance(1e-12));
  for (double p : r.peak_omega) BOOST_TEST(p / s.omega() == 3.0, boost::test_tools::tolerance(1e-12));
  const std::size_t npix = r.nx * r.ny, centre = r.center_iy * r.nx + r.center_ix;
  const double h1 = r.harmonic_maps[0 * npix + centre], h3 = r.harmonic_maps[1 * npix + centre];
  BOOST_TEST_MESSAGE("harmonic maps at the centre: n=1 " << h1 << " J/sr, n=3 " << h3 << " J/sr");
  BOOST_TEST(h3 > 0);
  BOOST_TEST(h1 < 1e-6 * h3);
  // The band n=3 (2.5–3.5 ω) holds essentially all the windowed energy of that pixel.
  BOOST_TEST(h3 / r.spectral_energy[centre] == 1.0, boost::test_tools::tolerance(1e-6));
}

// Discrete Parseval with window none, N even and N odd (the one-sided weights differ): per pixel,
// Σ_k g_k d²I/dωdΩ Δω equals ε0 c R² Σ_j |E_j|² dt computed here from the file as written.
BOOST_AUTO_TEST_CASE(parseval_window_none) {
  for (int N : {256, 255}) {
    Synthetic s;
    s.samples = N;
    const double dt = s.dt(), w = s.omega();
    // A chirped, off-centre pulse plus an offset: a broad spectrum with a DC bin and a Nyquist tail.
    auto E = [&](int ix, int iy, int k) {
      const double t = k * dt, tc = (0.4 + 0.05 * ix) * N * dt, tau = 2.5 / w;
      const double g = std::exp(-std::pow((t - tc) / tau, 2));
      return std::array<double, 3>{g * std::cos(w * (t - tc) * (1 + 0.3 * (t - tc) * w / 20)) + 0.01 * iy,
                                   0.5 * g * std::sin(2.7 * w * t), 0.1 * g * g + 1e-3 * (k % 3)};
    };
    const auto dir = make_run("parseval" + std::to_string(N), s, [&](int b, int ix, int iy, int k) {
      auto e = E(ix, iy, k);
      if (b == 1)
        for (auto& v : e) v /= c;
      return e;
    });
    const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::None));
    std::size_t ny, nx, ns;
    std::array<std::vector<double>, 3> F;
    const char* names[3] = {"/E/x", "/E/y", "/E/z"};
    for (int q = 0; q < 3; ++q) F[q] = edm::read_field_component(dir / "field.h5", names[q], &ny, &nx, &ns);
    const auto tt = edm::read_dataset_1d(dir / "field.h5", "/axes/t");
    const double dtf = (tt.back() - tt.front()) / double(tt.size() - 1);
    double worst = 0, integrated_time = 0;
    for (std::size_t iy = 0; iy < ny; ++iy)
      for (std::size_t ix = 0; ix < nx; ++ix) {
        long double sum = 0;
        for (int q = 0; q < 3; ++q)
          for (std::size_t k = 0; k < ns; ++k)
            sum += (long double)F[q][(iy * nx + ix) * ns + k] * F[q][(iy * nx + ix) * ns + k];
        const double R2 = r.x[ix] * r.x[ix] + r.y[iy] * r.y[iy] + s.z * s.z;
        const double time_domain = eps0 * c * R2 * double(sum) * dtf;
        const std::size_t p = iy * nx + ix;
        worst = std::max(worst, std::abs(r.spectral_energy[p] / time_domain - 1));
        integrated_time += time_domain * r.solid_angle[p];
      }
    const double integ = std::abs(r.integrated_energy / integrated_time - 1);
    BOOST_TEST_MESSAGE("Parseval N=" << N << ": worst pixel relative error " << worst
                                     << ", screen-integrated " << integ);
    BOOST_TEST(worst < tol::parseval);
    BOOST_TEST(integ < tol::parseval);
  }
}

// The normalisation that frequency-domain codes compare with: E = E0 exp(−(t−tc)²/τ²) cos(ω0 (t−tc))
// has d²I/dωdΩ(ω0) = ε0 c R² E0² τ² / 4 (spectrum.hpp; the e^{−ω0²τ²} cross term is ~e^{−355}).
BOOST_AUTO_TEST_CASE(gaussian_pulse_spectral_density) {
  Synthetic s;
  s.nx = s.ny = 3;
  s.samples = 1024;  // 32 periods; the pulse (τ = 3 T) sits in the middle, edges at e^{−28}
  const double T = 2 * kPi / s.omega(), tau = 3 * T, tc = 16 * T, E0 = 2e4, dt = s.dt();
  const auto dir = make_run("gauss", s, [&](int b, int, int, int k) -> std::array<double, 3> {
    const double t = k * dt, e = E0 * std::exp(-std::pow((t - tc) / tau, 2)) * std::cos(s.omega() * (t - tc));
    return b == 0 ? std::array<double, 3>{0, e, 0} : std::array<double, 3>{-e / c, 0, 0};
  });
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::None));
  const std::size_t k0 = s.samples / s.samples_per_period;  // ω0 = ω on bin 32
  BOOST_TEST_REQUIRE(std::abs(r.omega[k0] / s.omega() - 1) < 1e-12);
  const double expected = eps0 * c * s.z * s.z * E0 * E0 * tau * tau / 4;
  BOOST_TEST_MESSAGE("Gaussian pulse: d2I/domega dOmega(omega0) = "
                     << r.on_axis[k0] << " J s/rad/sr, analytic " << expected << ", relative error "
                     << r.on_axis[k0] / expected - 1);
  BOOST_TEST(r.on_axis[k0] / expected == 1.0, boost::test_tools::tolerance(tol::spectrum_norm));

  // Off-bin carrier 1.03 ω (bins are ω/32 apart): |Ẽ|² is a Gaussian in ω, so the parabola through
  // the log of three bins finds its centre, while the bin peak is off by up to half a bin.
  const double w1 = 1.03 * s.omega();
  const auto dir1 = make_run("gauss_offbin", s, [&](int b, int, int, int k) -> std::array<double, 3> {
    const double t = k * dt, e = E0 * std::exp(-std::pow((t - tc) / tau, 2)) * std::cos(w1 * (t - tc));
    return b == 0 ? std::array<double, 3>{0, e, 0} : std::array<double, 3>{-e / c, 0, 0};
  });
  const auto r1 = edm::compute_spectrum(edm::RunFolder(dir1), options(edm::Window::None));
  BOOST_TEST_MESSAGE("off-bin peak: bin " << r1.peak_omega_on_axis / s.omega() << " ω, interpolated "
                                          << r1.peak_omega_on_axis_interp / s.omega() << " ω (true 1.03 ω)");
  BOOST_TEST(std::abs(r1.peak_omega_on_axis / w1 - 1) < 0.5 / 32 / 1.03 + 1e-12);
  BOOST_TEST(r1.peak_omega_on_axis_interp / w1 == 1.0, boost::test_tools::tolerance(1e-9));
}

// Nyquist guard: π/dt = 16 ω at dt = T/32. Harmonic 15 (band to 15.5 ω) is allowed; 16 (band to
// 16.5 ω) and 20 are errors naming the harmonic; the backscatter line of γ = 5 (≈ 97.5 ω) too.
BOOST_AUTO_TEST_CASE(nyquist_guard_names_the_harmonic) {
  Synthetic s;
  s.nx = s.ny = 1;
  // The line is the recorded ensemble's: a head-on beam of γ = 5 against a laser along −z.
  std::ostringstream k;
  k << std::setprecision(17) << "electrons = 1\nlaser_direction = -1\nlight_front_h = " << 5 + std::sqrt(24.0)
    << "\ngamma_mean = 5.0\nu_perp2_mean = 0.0\n";
  s.kinematics = k.str();
  const auto dir = make_run("nyquist", s, [&](int, int, int, int k) -> std::array<double, 3> {
    return {std::sin(0.1 * k), 0, 0};
  });
  BOOST_CHECK_NO_THROW(edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::Hann, {1, 15})));
  for (int n : {16, 20}) {
    try {
      edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::Hann, {1, n}));
      BOOST_ERROR("harmonic " << n << " above Nyquist did not throw");
    } catch (const edm::ConfigError& e) {
      BOOST_TEST_MESSAGE("Nyquist guard: " << e.what());
      BOOST_TEST(e.id() == "EDM-SPEC-020");
      BOOST_TEST(contains(e.what(), "harmonic " + std::to_string(n) + " of the laser"));
      BOOST_TEST(contains(e.what(), "Nyquist"));
    }
  }
  auto line = options(edm::Window::Hann, {1});
  line.of = edm::HarmonicBase::Line;
  BOOST_CHECK_EXCEPTION(edm::compute_spectrum(edm::RunFolder(dir), line), edm::ConfigError, [](const edm::ConfigError& e) {
    return e.id() == "EDM-SPEC-020" && contains(e.what(), "harmonic 1 of the line");
  });
  // The line itself: (1+β)/(1−β)/(1 + a0²/2), here against the direct long-double formula.
  const long double g = 5, b = std::sqrt(1.0L - 1 / (g * g));
  const double direct = double((1 + b) / (1 - b) / (1 + 0.005L));
  BOOST_TEST(edm::backscatter_line_omega(1.0, 5.0, 0.1) == direct, boost::test_tools::tolerance(1e-14));
}

// Energy through the screen of a plane-wave-like pulse, E = E0(ix) g(t) cos ωt x̂, B = s E/c ŷ,
// moving away from the interaction (s = sign z): S·n̂ = ε0 c E², and
// ∫ g² cos²(ωt) dt = (τ/2)√(π/2) (1 + e^{−ω²τ²/2} cos 2ωt_c) for g = exp(−(t−t_c)²/τ²).
// Total = Σ_pixels ε0 c E0(ix)² ∫… × dx dy. Both screen sides (z > 0 with +z travel, z < 0 with −z).
BOOST_AUTO_TEST_CASE(energy_through_screen_plane_wave) {
  for (double z : {0.05, -0.05}) {
    Synthetic s;
    s.nx = 4;
    s.ny = 3;
    s.z = z;
    s.samples = 512;
    const double T = 2 * kPi / s.omega(), tau = 1.5 * T, tc = 8 * T, dt = s.dt(), side = z > 0 ? 1 : -1;
    auto E0 = [](int ix) { return 1e5 * (1 + 0.25 * ix); };
    const auto dir =
        make_run(z > 0 ? "energy_p" : "energy_m", s, [&](int b, int ix, int, int k) -> std::array<double, 3> {
          const double t = k * dt,
                       e = E0(ix) * std::exp(-std::pow((t - tc) / tau, 2)) * std::cos(s.omega() * t);
          return b == 0 ? std::array<double, 3>{e, 0, 0} : std::array<double, 3>{0, side * e / c, 0};
        });
    const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::Hann));
    const double w = s.omega();
    const double I =
        tau / 2 * std::sqrt(kPi / 2) * (1 + std::exp(-w * w * tau * tau / 2) * std::cos(2 * w * tc));
    const double dx = 2 * s.half_width / (s.nx - 1), dy = 2 * s.half_width / (s.ny - 1);
    double expected = 0;
    for (int iy = 0; iy < s.ny; ++iy)
      for (int ix = 0; ix < s.nx; ++ix) {
        const double f = eps0 * c * E0(ix) * E0(ix) * I;
        BOOST_TEST(r.fluence[iy * s.nx + ix] / f == 1.0, boost::test_tools::tolerance(tol::energy_screen));
        expected += f * dx * dy;
      }
    BOOST_TEST_MESSAGE("energy through the screen (z = " << z << " m): " << r.total_energy << " J, analytic "
                                                         << expected << " J, relative error "
                                                         << r.total_energy / expected - 1);
    BOOST_TEST(r.total_energy / expected == 1.0, boost::test_tools::tolerance(tol::energy_screen));
  }
}

// Split mode: the spectrum and the fluence use E_far/B_far, not the total E/B (whose E here carries
// an extra static 50 V/m that would put a strong DC line into the spectrum).
BOOST_AUTO_TEST_CASE(split_mode_uses_far_field) {
  Synthetic s;
  s.mode = edm::Mode::Split;
  s.nx = s.ny = 3;
  const double dt = s.dt();
  const auto dir = make_run("split", s, [&](int b, int, int, int k) -> std::array<double, 3> {
    const double far = std::sin(2 * s.omega() * k * dt), coulomb = (b < 2) ? 50.0 : 0.0;  // b 0,1 = total
    const double e = far + coulomb;
    return (b % 2 == 0) ? std::array<double, 3>{e, 0, 0} : std::array<double, 3>{0, far / c, 0};
  });
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::None));
  BOOST_TEST(r.field_used == "E_far");
  BOOST_TEST(r.peak_omega_on_axis / s.omega() == 2.0, boost::test_tools::tolerance(1e-12));
  // E_far = sin, so the DC bin is the sine's own tiny leakage, far below what 50 V/m would give.
  BOOST_TEST(r.on_axis[0] < 1e-6 * r.on_axis[s.samples * 2 / s.samples_per_period]);
}

// Bounded memory and threads: one row per slab on one thread gives bit-identical results to one slab
// for the whole screen on three threads.
BOOST_AUTO_TEST_CASE(slab_size_does_not_change_results) {
  Synthetic s;
  s.ny = 7;
  const auto dir = make_run("slabs", s, [&](int b, int ix, int iy, int k) -> std::array<double, 3> {
    const double e = std::cos(0.37 * k + ix) * (1 + iy);
    return b == 0 ? std::array<double, 3>{e, 0.5 * e, 0} : std::array<double, 3>{0, e / c, 0};
  });
  auto big = options(edm::Window::BlackmanHarris, {1});
  big.threads = 3;
  auto small = big;
  small.slab_bytes = 1;  // → one row per slab
  small.threads = 1;
  const auto a = edm::compute_spectrum(edm::RunFolder(dir), big), b = edm::compute_spectrum(edm::RunFolder(dir), small);
  BOOST_TEST(a.integrated == b.integrated);
  BOOST_TEST(a.fluence == b.fluence);
  BOOST_TEST(a.harmonic_maps == b.harmonic_maps);
  BOOST_TEST(a.cut_x == b.cut_x);
  BOOST_TEST(a.spectral_energy == b.spectral_energy);
  BOOST_TEST(a.on_axis == b.on_axis);
}

// spectrum.h5 round trip and the run folder summary (edm info's data).
BOOST_AUTO_TEST_CASE(spectrum_file_and_run_folder_summary) {
  Synthetic s;
  const double dt = s.dt();
  const auto dir = make_run("file", s, [&](int b, int, int, int k) -> std::array<double, 3> {
    const double e = std::sin(s.omega() * k * dt);
    return b == 0 ? std::array<double, 3>{e, 0, 0} : std::array<double, 3>{0, e / c, 0};
  });
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), options(edm::Window::Hann, {1}));
  {
    auto out = edm::SpectrumWriter::open(dir / "spectrum.h5", edm::SpectrumPart::Analysis);
    edm::write_spectrum(out, r);
    out.commit();
  }
  BOOST_TEST(!fs::exists(dir / "spectrum.h5.partial"));
  const auto back = edm::read_dataset_1d(dir / "spectrum.h5", "/on_axis/d2I_domega_dOmega");
  BOOST_TEST(back == r.on_axis);
  const auto info = edm::inspect_run_folder(dir);
  BOOST_TEST_REQUIRE(info.spectrum.has_value());
  BOOST_TEST(info.spectrum->total_energy == r.total_energy);
  BOOST_TEST_REQUIRE(info.field.has_value());
  BOOST_TEST(info.field->nx == std::size_t(s.nx));
  BOOST_TEST(info.field->samples == std::size_t(s.samples));
  BOOST_CHECK_EXCEPTION(edm::inspect_run_folder(dir / "nothing_here"), edm::ConfigError,
                        [](const edm::ConfigError& e) { return e.id() == "EDM-INFO-001"; });
}

// The binary: `edm spectrum` prints the peak in ω and the energy; a harmonic above Nyquist is exit 2
// naming it; `edm info` summarises and refuses a folder without run.toml; `edm plot` writes PNGs.
BOOST_AUTO_TEST_CASE(command_line_spectrum_info_plot) {
  Synthetic s;
  s.nx = 9;
  s.ny = 7;
  s.with_gamma_trace = true;
  s.scenario = "thomson";  // no beam γ: the default harmonics are of the laser (1–3 fit under 16 ω)
  const double dt = s.dt();
  const auto dir = make_run("cli", s, [&](int b, int ix, int iy, int k) -> std::array<double, 3> {
    const double g = std::exp(-std::pow((k - 128.0) / 40.0, 2));
    const double e = (1 + 0.1 * ix + 0.05 * iy) * g *
                     (std::sin(s.omega() * k * dt) + 0.1 * std::sin(3 * s.omega() * k * dt));
    return b == 0 ? std::array<double, 3>{e, 0, 0} : std::array<double, 3>{0, e / c, 0};
  });
  const std::string bin = edm::test::edm_binary().string();
  const auto sp = edm::test::run_command(bin + " spectrum " + dir.string() + " --of laser --harmonics 1,3");
  BOOST_TEST_MESSAGE("edm spectrum:\n" << sp.output);
  BOOST_TEST(sp.exit_code == 0);
  BOOST_TEST(contains(sp.output, "on-axis peak"));
  BOOST_TEST(contains(sp.output, ": 1 ω"));
  BOOST_TEST(contains(sp.output, "energy through the screen"));
  BOOST_TEST(fs::exists(dir / "spectrum.h5"));

  const auto nq = edm::test::run_command(bin + " spectrum " + dir.string() + " --of laser --harmonics 1,17");
  BOOST_TEST(nq.exit_code == 2);
  BOOST_TEST(contains(nq.output, "EDM-SPEC-020"));
  BOOST_TEST(contains(nq.output, "harmonic 17"));

  // A repeated order is refused (it gave two maps of one harmonic), and spectrum.h5 stays.
  const auto twice = edm::test::run_command(bin + " spectrum " + dir.string() + " --of laser --harmonics 1,3,1");
  BOOST_TEST(twice.exit_code == 2);
  BOOST_TEST(contains(twice.output, "harmonic 1 is listed twice"), twice.output);
  BOOST_TEST(fs::exists(dir / "spectrum.h5"));

  // The line of --gamma 3 (about 35 ω) lies above this field's Nyquist frequency (16 ω): no default
  // orders, which edm spectrum now says (it was silent, base_omega = 0), and the yield is given at
  // that line, not at the run's (found by a hostile tester).
  const auto high = edm::test::run_command(bin + " spectrum " + dir.string() + " --of line --gamma 3");
  BOOST_TEST(high.exit_code == 0, high.output);
  BOOST_TEST(contains(high.output, "warning: no harmonic maps: the line's first band"), high.output);
  BOOST_TEST(contains(high.output, "above the Nyquist frequency 16 ω"), high.output);
  BOOST_TEST(contains(high.output, "ω_b = 33.8016 ω"), high.output);
  const auto low = edm::test::run_command(bin + " spectrum " + dir.string() + " --of line --gamma 1.5");
  BOOST_TEST(low.exit_code == 0, low.output);
  BOOST_TEST(!contains(low.output, "no harmonic maps"), low.output);
  // This Thomson run records no beam line: the yield is that of --gamma's line, or none.
  BOOST_TEST(contains(low.output, "on-axis photon yield at the line ω_1 = "), low.output);

  const auto in = edm::test::run_command(bin + " info " + dir.string());
  BOOST_TEST_MESSAGE("edm info:\n" << in.output);
  BOOST_TEST(in.exit_code == 0);
  BOOST_TEST(contains(in.output, "energy through the screen"));
  BOOST_TEST(contains(in.output, "field.h5"));
  const auto empty = edm::test::temp_dir("norun");
  const auto bad = edm::test::run_command(bin + " info " + empty.string());
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(contains(bad.output, empty.string()));
  BOOST_TEST(contains(bad.output, "run.toml"));

  // edm plot needs an interpreter with numpy, h5py, matplotlib (this machine has one).
  if (!edm::test::have_plotting_python()) {
    BOOST_TEST_MESSAGE("skipping edm plot: no python3 with numpy, h5py and matplotlib");
    return;
  }
  fs::remove(dir / "spectrum.h5");  // edm plot must compute it itself
  const auto pl = edm::test::run_command(bin + " plot " + dir.string());
  BOOST_TEST_MESSAGE("edm plot:\n" << pl.output);
  BOOST_TEST(pl.exit_code == 0);
  BOOST_TEST(fs::exists(dir / "spectrum.h5"));
  for (const char* png : {"fluence.png", "spectrum_on_axis.png", "spectrum_integrated.png",
                          "spectrum_vs_angle.png", "field_trace.png", "gamma.png", "harmonic_1.png"}) {
    const fs::path p = dir / "plots" / png;
    BOOST_TEST_INFO(p.string());
    BOOST_TEST_REQUIRE(fs::exists(p));
    BOOST_TEST(fs::file_size(p) > 1000u);
    std::ifstream f(p, std::ios::binary);
    char magic[8] = {};
    f.read(magic, 8);
    BOOST_TEST(std::string(magic + 1, 3) == "PNG");
  }
  const auto pe = edm::test::run_command(bin + " plot " + empty.string());
  BOOST_TEST(pe.exit_code != 0);
}

// The expected line from the recorded kinematics (spectrum.hpp, share/docs/outputs.md), against the
// closed forms of the validation facts: a head-on beam seen downstream is the backscatter line
// γ²(1+β)²/(1+a0²/2); along the laser the line is ω whatever the electron; an electron from rest seen
// back toward the source is ω/(1+a0²/2); a transverse momentum adds u⊥² to the denominator.
BOOST_AUTO_TEST_CASE(expected_line_from_the_kinematics) {
  auto beam = [](double gamma, int s) {
    edm::RunPhysics p;
    p.laser_omega = 2.0;
    p.a0 = 0.3;
    p.gamma = gamma;
    const double uz = -s * std::sqrt((gamma - 1) * (gamma + 1));  // against the laser
    p.kinematics = {1, s, gamma - s * uz, gamma, 0.0};
    return p;
  };
  edm::RunPhysics p = beam(3.0, -1);
  p.screen_side = +1;  // downstream of the beam, looking back at the laser's source
  BOOST_TEST(edm::expected_line_omega(p) == edm::backscatter_line_omega(2.0, 3.0, 0.3),
             boost::test_tools::tolerance(tol::line_forms));
  BOOST_TEST(edm::expected_line_omega(p, 0, 0.0) == edm::backscatter_line_omega(2.0, 3.0, 0.0),
             boost::test_tools::tolerance(tol::line_forms));  // a0 override
  BOOST_TEST(edm::expected_line_omega(p, 7.0) == edm::backscatter_line_omega(2.0, 7.0, 0.3));  // γ override
  p.screen_side = -1;  // along the laser
  BOOST_TEST(edm::expected_line_omega(p) == 2.0);
  p = beam(3.0, +1);  // the mirror image: laser along +z, beam along −z, screen at −z
  p.screen_side = -1;
  BOOST_TEST(edm::expected_line_omega(p) == edm::backscatter_line_omega(2.0, 3.0, 0.3),
             boost::test_tools::tolerance(tol::line_forms));

  edm::RunPhysics rest = beam(1.0, +1);  // Thomson from rest: h = 1
  rest.screen_side = +1;
  BOOST_TEST(edm::expected_line_omega(rest) == 2.0);
  rest.screen_side = -1;
  BOOST_TEST(edm::expected_line_omega(rest) == 2.0 / (1 + 0.25 * 0.3 * 0.3 * 2),
             boost::test_tools::tolerance(tol::line_forms));
  rest.kinematics.u_perp2_mean = 0.5;
  BOOST_TEST(edm::expected_line_omega(rest) == 2.0 / (1.5 + 0.045), boost::test_tools::tolerance(tol::line_forms));
  BOOST_TEST(edm::line_known(rest));

  edm::RunPhysics none;  // nothing recorded, no γ
  none.laser_omega = 2.0;
  none.screen_side = 1;
  BOOST_TEST(!edm::line_known(none));
  BOOST_CHECK_EXCEPTION(edm::expected_line_omega(none), edm::ConfigError,
                        [](const edm::ConfigError& e) { return e.id() == "EDM-SPEC-022"; });
  BOOST_CHECK_EXCEPTION(edm::expected_line_omega(none, 0.5), edm::ConfigError,
                        [](const edm::ConfigError& e) { return e.id() == "EDM-SPEC-022"; });
}

// run.toml [kinematics] decides the line, not the scenario's name or [campaign.electrons] gamma: an
// inverse_thomson run whose beam is γ = 3 (as [inverse_thomson] gamma_minus_one = 2 sets it) while
// the γ key holds its default 5 gets the γ = 3 line; a thomson run seen downstream gets ω. Without
// [kinematics] the run has no line. A malformed section is refused naming the key.
BOOST_AUTO_TEST_CASE(line_from_run_toml_kinematics) {
  Synthetic s;
  s.nx = s.ny = 1;
  s.samples_per_period = 128;  // Nyquist 64 ω: room for the γ = 3 line (≈ 33.5 ω) and its band
  const double h3 = 3 + std::sqrt(8.0);
  std::ostringstream k;
  k << std::setprecision(17) << "electrons = 4\nlaser_direction = -1\nlight_front_h = " << h3
    << "\ngamma_mean = 3.0\nu_perp2_mean = 0.0\n";
  s.kinematics = k.str();
  auto field = [&](int, int, int, int kk) -> std::array<double, 3> { return {std::sin(0.1 * kk), 0, 0}; };
  const auto dir = make_run("kin-it", s, field);
  const auto phys = edm::read_run_physics(edm::RunFolder(dir));
  BOOST_TEST(phys.gamma == 3.0);
  BOOST_TEST(phys.screen_side == 1);
  BOOST_TEST(phys.kinematics.light_front_h == h3);
  auto line = options(edm::Window::Hann, {1});
  line.of = edm::HarmonicBase::Line;
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), line);
  const double expect3 = edm::backscatter_line_omega(s.omega(), 3.0, s.a0);
  BOOST_TEST(r.base_omega == expect3, boost::test_tools::tolerance(tol::line_forms));
  BOOST_TEST(std::abs(r.base_omega / edm::backscatter_line_omega(s.omega(), 5.0, s.a0) - 1) > 0.5);

  Synthetic t = s;  // thomson from rest, laser along +z, screen downstream: the line is the laser's
  t.scenario = "thomson";
  t.kinematics = "electrons = 4\nlaser_direction = 1\nlight_front_h = 1.0\ngamma_mean = 1.0\nu_perp2_mean = 0.0\n";
  const auto rt = edm::compute_spectrum(edm::RunFolder(make_run("kin-t", t, field)), line);
  BOOST_TEST(rt.base_omega == s.omega());

  // No [kinematics]: no line, whatever [campaign.electrons] gamma says (the fallback to it for
  // run.toml files of an older edm is gone: such a folder is refused by its format).
  Synthetic old = s;
  old.kinematics.clear();
  const auto dir_old = make_run("kin-old", old, field);
  BOOST_TEST(edm::read_run_physics(edm::RunFolder(dir_old)).gamma == 0.0);
  BOOST_TEST(!edm::line_known(edm::read_run_physics(edm::RunFolder(dir_old))));

  Synthetic bad = s;
  bad.kinematics = "electrons = 4\nlaser_direction = 0\nlight_front_h = 1.0\ngamma_mean = 1.0\nu_perp2_mean = 0.0\n";
  BOOST_CHECK_EXCEPTION(edm::read_run_physics(edm::RunFolder(make_run("kin-bad", bad, field))), edm::ConfigError,
                        [](const edm::ConfigError& e) {
                          return e.id() == "EDM-INFO-005" && contains(e.what(), "kinematics.laser_direction");
                        });
}
