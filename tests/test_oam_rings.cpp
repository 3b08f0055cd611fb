// ctest-label: unit
// The topological-charge machinery on synthetic complex maps (no run): the interpolation (exact for
// quadratics in the interior, bilinear at the edge), pure vortices f(r) e^{iℓφ} fitted on rings for
// ℓ = −6 … 6 on both screen sides, an off-centre vortex with --ring-centre, unwrapping across a gap,
// the refusals (centre off the screen, a ring that leaves it, low amplitude, no signal, bad options),
// the circular components about the normal, and the speckle envelope of known maps.
#define BOOST_TEST_MODULE oam_rings
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <complex>
#include <numbers>

#include "edm/error.hpp"
#include "edm/harmonics.hpp"
#include "edm/oam.hpp"
#include "oam_maps.hpp"
#include "test_support.hpp"

namespace tol = edm::test::tol;
using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

namespace {

using edm::test::contains;
edm::GridGeometry grid(std::size_t n, double half) { return edm::test::square_grid(n, half); }
template <class F>
std::vector<cd> sample(const edm::GridGeometry& g, F f) {
  return edm::test::sample_map(g, f);
}

// A Laguerre–Gauss-like vortex about (cx, cy): r^|ℓ| e^{−r²/w²} e^{iℓφ}, φ about the normal ν.
std::vector<cd> vortex(const edm::GridGeometry& g, int ell, int normal, double w, double cx = 0,
                       double cy = 0) {
  return sample(g, [&](double x, double y) {
    const double r = std::hypot(x - cx, y - cy), phi = edm::screen_azimuth(x - cx, y - cy, normal);
    return std::pow(r / w, std::abs(ell)) * std::exp(-r * r / (w * w)) * std::polar(1.0, ell * phi + 0.3);
  });
}

edm::RingOptions radii(std::vector<double> r) {
  edm::RingOptions o;
  o.radii = std::move(r);
  return o;
}

}  // namespace

// Keys' cubic reproduces quadratics exactly where its 4×4 stencil fits; the outermost cell is
// bilinear, exact for bilinear functions.
BOOST_AUTO_TEST_CASE(interpolation_is_exact_for_low_orders) {
  const auto g = grid(9, 1.0);
  auto quad = [](double x, double y) {
    return cd(1 + 0.5 * x - 0.25 * y + 0.7 * x * x - 0.3 * x * y + 0.2 * y * y, x * y);
  };
  const auto m = sample(g, quad);
  for (double x : {-0.7, -0.11, 0.0, 0.33, 0.74})
    for (double y : {-0.72, -0.2, 0.05, 0.5})
      BOOST_TEST(std::abs(edm::interpolate(m.data(), g, x, y) - quad(x, y)) < tol::interpolation_exact);
  auto bil = [](double x, double y) { return cd(2 + x - 3 * y + 0.5 * x * y, -x); };
  const auto b = sample(g, bil);
  for (double x : {-0.99, 0.9, 1.0})
    for (double y : {-1.0, -0.93, 0.97})
      BOOST_TEST(std::abs(edm::interpolate(b.data(), g, x, y) - bil(x, y)) < tol::interpolation_exact);
}

// A pure vortex has winding ℓ on every ring around its core; the least-squares slope matches it to
// tol::winding_fit with a quarter-pixel sampling, and the azimuth is about the normal: the same map
// read on a screen behind the interaction (ν = −1) has the opposite charge.
BOOST_AUTO_TEST_CASE(pure_vortices_on_both_screen_sides) {
  const auto g = grid(33, 1.0);
  for (int normal : {+1, -1})
    for (int ell = -6; ell <= 6; ++ell) {
      const auto m = vortex(g, ell, normal, 0.5);
      const auto plan = edm::plan_rings(g, radii({0.3, 0.45, 0.6}));
      for (double r : plan.radii) {
        const auto f = edm::fit_ring(m.data(), g, normal, 0, 0, r, plan.points, 1e-6, 0.95);
        BOOST_TEST_INFO("ℓ = " << ell << ", ν = " << normal << ", r = " << r << ": fit " << f.ell_fit
                               << ", residual " << f.residual_rms << " rad, " << f.phase_per_pixel
                               << " rad/pixel");
        BOOST_TEST_REQUIRE(int(f.status) == int(edm::RingStatus::Ok));
        BOOST_TEST(f.winding == ell);
        BOOST_TEST(std::abs(f.ell_fit - ell) < tol::winding_fit);
        BOOST_TEST(f.fraction_above_floor == 1.0);
      }
      // Seen about the other normal, the same map winds the other way.
      if (ell != 0) {
        const auto f = edm::fit_ring(m.data(), g, -normal, 0, 0, 0.45, 256, 1e-6, 0.95);
        BOOST_TEST(f.winding == -ell);
      }
    }
}

// An off-centre vortex: rings about its core find ℓ; rings about the axis that do not enclose the
// core find 0; a ring enclosing it finds ℓ again.
BOOST_AUTO_TEST_CASE(off_centre_vortex_and_ring_centre) {
  const auto g = grid(41, 1.0);
  const auto m = vortex(g, 3, 1, 0.3, 0.4, -0.2);
  edm::RingOptions o = radii({0.15, 0.25});
  o.centre_given = true;
  o.centre_x = 0.4;
  o.centre_y = -0.2;
  const auto plan = edm::plan_rings(g, o);
  for (double r : plan.radii) {
    const auto f = edm::fit_ring(m.data(), g, 1, 0.4, -0.2, r, plan.points, 1e-4, 0.95);
    BOOST_TEST(f.winding == 3);
    BOOST_TEST(std::abs(f.ell_fit - 3) < tol::winding_fit);
  }
  // With a weak constant background the field's zeros all sit about the core (0.45 m from the axis):
  // a small ring about the axis encloses none of them and sees no winding.
  std::vector<cd> b = m;
  for (auto& v : b) v += 0.05;
  BOOST_TEST(edm::fit_ring(b.data(), g, 1, 0, 0, 0.1, 512, 1e-4, 0.95).winding == 0);
}

// Unwrapping bridges samples below the floor when enough of the ring is above it; too many below is
// refused with a message naming the floor, and a ring of zeros has no signal.
BOOST_AUTO_TEST_CASE(low_amplitude_is_refused_by_name) {
  const auto g = grid(33, 1.0);
  // A smooth dip of the amplitude about φ = 0, 1 − exp(−(φ/w)²) ≈ (φ/w)²: below 1e-3 where
  // |φ| < 0.0316 w (the map stays smooth, as a physical one is, so the interpolation does not ring).
  auto dip = [&](double w) {
    return sample(g, [&](double x, double y) {
      const double phi = std::atan2(y, x);
      return std::polar(1 - std::exp(-(phi / w) * (phi / w)), 2 * phi);
    });
  };
  const auto gap = dip(4.0);  // 4 % of the ring below the floor
  const auto ok = edm::fit_ring(gap.data(), g, 1, 0, 0, 0.5, 512, 1e-3, 0.95);
  BOOST_TEST(int(ok.status) == int(edm::RingStatus::Ok));
  BOOST_TEST(ok.winding == 2);
  BOOST_TEST(ok.fraction_above_floor < 1.0);
  BOOST_TEST(ok.fraction_above_floor > 0.95);

  const auto dark = dip(30.0);  // 30 % below it
  const auto low = edm::fit_ring(dark.data(), g, 1, 0, 0, 0.5, 512, 1e-3, 0.95);
  BOOST_TEST_MESSAGE("low amplitude: " << low.message);
  BOOST_TEST(int(low.status) == int(edm::RingStatus::LowAmplitude));
  BOOST_TEST(contains(low.message, "below the floor"));
  BOOST_TEST(contains(low.message, "--ring-floor"));

  const std::vector<cd> zero(g.nx * g.ny, 0.0);
  const auto none = edm::fit_ring(zero.data(), g, 1, 0, 0, 0.5, 512, 1e-3, 0.95);
  BOOST_TEST(int(none.status) == int(edm::RingStatus::NoSignal));
  BOOST_TEST(contains(none.message, "no sample above"));
}

// Bad ring options are refused before any fit, each naming its option.
BOOST_AUTO_TEST_CASE(bad_ring_options_name_the_option) {
  const auto g = grid(17, 1e-3);
  auto refused = [&](const edm::RingOptions& o, const std::string& id, const std::string& option) {
    try {
      edm::plan_rings(g, o);
      BOOST_ERROR("no refusal for " << option);
    } catch (const edm::ConfigError& e) {
      BOOST_TEST_MESSAGE(e.what());
      BOOST_TEST(e.id() == id);
      BOOST_TEST(contains(e.what(), option));
    }
  };
  edm::RingOptions off;
  off.centre_given = true;
  off.centre_x = 2e-3;
  refused(off, "EDM-OAM-001", "--ring-centre");
  refused(radii({5e-4, 1.2e-3}), "EDM-OAM-002", "--ring-radii");
  refused(radii({-1e-4}), "EDM-OAM-007", "--ring-radii");
  edm::RingOptions shifted = radii({8e-4});  // fits about the axis, not about (5e-4, 0)
  shifted.centre_given = true;
  shifted.centre_x = 5e-4;
  refused(shifted, "EDM-OAM-002", "leaves the screen");
  edm::RingOptions pts;
  pts.points = 4;
  refused(pts, "EDM-OAM-003", "--ring-points");
  edm::RingOptions fl;
  fl.floor = 2;
  refused(fl, "EDM-OAM-004", "--ring-floor");
  edm::RingOptions fr;
  fr.min_fraction = 0;
  refused(fr, "EDM-OAM-005", "--ring-min-fraction");
  for (double bad : {0.0, -0.1, 4.0, std::nan("")}) {
    edm::RingOptions mr;
    mr.max_residual = bad;
    refused(mr, "EDM-OAM-008", "--ring-max-residual");
  }
  // Auto radii: 4 rings up to the largest that fits, none on a screen 3 pixels wide.
  const auto plan = edm::plan_rings(g, {});
  BOOST_TEST(plan.radii.size() == 4u);
  BOOST_TEST(plan.radii.back() <= plan.largest_radius);
  BOOST_TEST(edm::plan_rings(grid(3, 1e-3), {}).radii.empty());
}

// Summaries: the mean slope of the accepted rings, the winding they share, refused rings left out.
BOOST_AUTO_TEST_CASE(ring_summary) {
  std::vector<edm::RingFit> fits(3);
  fits[0].ell_fit = 2.002, fits[0].winding = 2;
  fits[1].ell_fit = 1.998, fits[1].winding = 2;
  fits[2].status = edm::RingStatus::LowAmplitude;
  auto s = edm::summarise_rings(fits);
  BOOST_TEST(s.accepted == 2u);
  BOOST_TEST(s.winding == 2);
  BOOST_TEST(s.consistent);
  BOOST_TEST(s.ell == 2.0, boost::test_tools::tolerance(1e-12));
  fits[2].status = edm::RingStatus::Ok, fits[2].winding = 3, fits[2].ell_fit = 3;
  s = edm::summarise_rings(fits);
  BOOST_TEST(!s.consistent);
  BOOST_TEST(s.winding == 2);
}

// Circular components about the normal: e_σ = (x̂' + iσŷ')/√2 with ŷ' = ν ŷ. A field (x̂ + iŷ)/√2
// (counter-clockwise about +ẑ in the e^{−iωt} convention) is σ = +1 about +ẑ and σ = −1 about −ẑ.
BOOST_AUTO_TEST_CASE(circular_components_about_the_normal) {
  const cd ex = 1 / std::sqrt(2.0), ey(0, 1 / std::sqrt(2.0));
  BOOST_TEST(std::abs(edm::circular_component(ex, ey, +1, +1) - 1.0) < 1e-15);
  BOOST_TEST(std::abs(edm::circular_component(ex, ey, -1, +1)) < 1e-15);
  BOOST_TEST(std::abs(edm::circular_component(ex, ey, -1, -1) - 1.0) < 1e-15);
  BOOST_TEST(std::abs(edm::circular_component(ex, ey, +1, -1)) < 1e-15);
  BOOST_TEST(edm::screen_azimuth(0, 1, +1) == kPi / 2);
  BOOST_TEST(edm::screen_azimuth(0, 1, -1) == -kPi / 2);
  // The DFT row of bin k is exactly periodic: c_{j+N} would equal c_j, here c_j·c_{N−j} = w_j w_{N−j}.
  const std::vector<double> w(10, 1.0);
  const auto c = edm::bin_kernel(w, 3);
  for (std::size_t j = 1; j < 10; ++j) BOOST_TEST(std::abs(c[j] * c[10 - j] - 1.0) < 1e-15);
}

// The speckle envelope: an axisymmetric map is its own envelope (radial mean = the profile,
// contrast ≈ 0, flat azimuthal profile); a cos²φ modulation shows in the azimuthal profile.
BOOST_AUTO_TEST_CASE(speckle_envelope_of_known_maps) {
  const auto g = grid(41, 1.0);
  std::vector<double> m(g.nx * g.ny), a(g.nx * g.ny);
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) {
      const double x = g.x0 + g.dx * double(i), y = g.y0 + g.dy * double(j), r2 = x * x + y * y;
      m[j * g.nx + i] = std::exp(-r2 / 0.3);
      a[j * g.nx + i] = std::exp(-r2 / 0.3) * (1 + 0.5 * std::cos(2 * std::atan2(y, x)));
    }
  const auto e = edm::speckle_envelope(m.data(), g, 1, 0, 0, 1.0);
  BOOST_TEST_REQUIRE(e.radius.size() == 20u);  // pitch 0.05 up to 1.0
  for (std::size_t b = 0; b < e.radius.size(); ++b) {
    const double truth = std::exp(-e.radius[b] * e.radius[b] / 0.3);
    // The outermost ring runs through the bilinear edge cells (coarser than the bicubic interior).
    const double bound = b + 1 < e.radius.size() ? 2e-3 : 1e-2;
    BOOST_TEST_INFO("ring " << b << " r = " << e.radius[b]);
    BOOST_TEST(std::abs(e.radial_mean[b] / truth - 1) < bound);
    BOOST_TEST(e.radial_contrast[b] < bound);
  }
  double lo = 1e9, hi = 0;
  for (double v : e.azimuthal_mean) lo = std::min(lo, v), hi = std::max(hi, v);
  BOOST_TEST(hi / lo - 1 < 2e-3);
  // The envelope map is the radial profile: at pixel (20, 30), r = 0.5.
  BOOST_TEST(std::abs(e.map[30 * g.nx + 20] / std::exp(-0.25 / 0.3) - 1) < 5e-3);  // linear between rings
  BOOST_TEST(std::isnan(e.map[0]));  // the corner is beyond the largest ring

  const auto ea = edm::speckle_envelope(a.data(), g, 1, 0, 0, 1.0);
  // Azimuthal profile ∝ 1 + ½ cos 2φ: maxima at φ = 0 and π, minima at ±π/2.
  const std::size_t na = ea.azimuth.size();
  BOOST_TEST(ea.azimuthal_mean[0] > ea.azimuthal_mean[na / 4]);
  BOOST_TEST(ea.azimuthal_mean[0] / ea.azimuthal_mean[na / 4] == 3.0, boost::test_tools::tolerance(0.02));
}
