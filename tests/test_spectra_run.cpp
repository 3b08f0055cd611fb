// The direct spectra through `edm run` ([spectra] enabled on an angular screen at infinity), and the
// Gaussian form factor applied to them: with electrons.form_factor_sigma_r set, every coherent
// d²W/dωdΩ is the point-particle one times F², F = exp(−(ω/c)² σ_r² (n_x² + n_y²) / 2)
// (share/docs/ensembles.md; written out here from the formula, not from the library), and the
// incoherent sum does not change at all.
#define BOOST_TEST_MODULE spectra_run
#include <hdf5.h>

#include <boost/test/included/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "spawn.hpp"
#include "test_support.hpp"
#include "h5_read.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// The factor is applied to the summed amplitude in double precision: F² then matches to rounding.
constexpr double kFormFactorRounding = 1e-12;

std::string exact(double v) {
  std::ostringstream o;
  o << std::setprecision(17) << v;
  return o.str();
}

std::string cell_text(const std::string& out, double sigma_r) {
  std::string t = test::small_far_cell({.electrons = 4});
  t.replace(t.find("[run]\n"), 6, "[run]\noutput = \"" + out + "\"\n");
  if (sigma_r > 0) t.replace(t.find("[electrons]\n"), 12, "[electrons]\nform_factor_sigma_r = " + exact(sigma_r) + "\n");
  return t + test::small_far_spectra();
}

}  // namespace

BOOST_AUTO_TEST_CASE(transverse_form_factor_scales_the_coherent_spectrum) {
  const fs::path dir = test::temp_dir("spectra_run");
  const double sigma_r = 7e-8;  // m: (ω/c) σ_r θ of order 1 at the grid's edge (γ = 3 inverse Thomson)
  const auto plain = test::write_file(dir, "plain.toml", cell_text((dir / "plain").string(), 0));
  const auto shaped = test::write_file(dir, "shaped.toml", cell_text((dir / "shaped").string(), sigma_r));
  for (const auto& c : {plain, shaped}) {
    const auto r = test::run_edm("run " + c.string());
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, c.string() << ": " << r.output);
  }
  const fs::path a = dir / "plain" / "spectrum.h5", b = dir / "shaped" / "spectrum.h5";
  BOOST_REQUIRE(fs::exists(a) && fs::exists(b));
  const auto omega = test::h5_doubles(a, "/direct/axes/omega");
  const auto n = test::h5_doubles(a, "/direct/axes/direction");
  const auto coh_a = test::h5_doubles(a, "/direct/coherent/d2W_domega_dOmega");
  const auto coh_b = test::h5_doubles(b, "/direct/coherent/d2W_domega_dOmega");
  const auto inc_a = test::h5_doubles(a, "/direct/incoherent/d2W_domega_dOmega");
  const auto inc_b = test::h5_doubles(b, "/direct/incoherent/d2W_domega_dOmega");
  const std::size_t nw = omega.size(), nd = n.size() / 3;
  BOOST_REQUIRE_EQUAL(nd, 9u);
  BOOST_REQUIRE_EQUAL(coh_a.size(), nd * nw);
  BOOST_TEST(inc_a == inc_b);  // the incoherent sum knows no form factor: bit for bit
  const double c = 299792458.0;
  double smallest = 1;
  for (std::size_t d = 0; d < nd; ++d)
    for (std::size_t k = 0; k < nw; ++k) {
      const double t2 = n[3 * d] * n[3 * d] + n[3 * d + 1] * n[3 * d + 1];
      const double q = omega[k] / c * sigma_r;
      const double F = std::exp(-q * q * t2 / 2);
      smallest = std::min(smallest, F);
      const std::size_t i = d * nw + k;
      BOOST_REQUIRE(coh_a[i] > 0);
      BOOST_TEST(std::abs(coh_b[i] / (coh_a[i] * F * F) - 1) < kFormFactorRounding,
                 "direction " << d << ", omega " << omega[k] << ": " << coh_b[i] << " vs " << coh_a[i] * F * F);
    }
  BOOST_TEST(smallest < 0.9);  // the factor really bites somewhere on this grid
}
