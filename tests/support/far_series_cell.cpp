#include "far_series_cell.hpp"

#include "edm/error.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace edm::test {

std::shared_ptr<Device> far_device() {
  static auto d = open_device(select_devices("0").front());
  return d;
}

FarCell::FarCell(const std::string& axis) {
  const std::string text =
      "[run]\nscenario = \"thomson\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.3\n"
      "duration = 5.35e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\n"
      "[trajectory]\nknots_per_period = 64\n[screen]\ntype = \"angular\"\ndistance = \"infinity\"\n"
      "axis = \"" + axis + "\"\nangles = \"polar\"\ntheta_min = 0.0\ntheta_max = 0.6\nphi_min = 0.0\n"
      "phi_max = 1.5\nnx = 3\nny = 2\nsamples = 2048\nsamples_per_period = 64\n";
  campaign = std::make_unique<Campaign>(parse_campaign(text, "far", {}, registry.get("thomson").keys(), false));
  cell = std::make_unique<PreparedCell>(*campaign, registry);
  batch = cell->solve(0, 1);
}

SpectraGrid FarCell::grid(std::vector<double> omega) const {
  SpectraGrid g;
  g.omega = std::move(omega);
  for (const auto& d : screen().directions) g.directions.push_back(d.n);
  g.far_screen = screen();
  return g;
}

SpectraGrid FarCell::linear(double lo, double hi, int n) const {
  std::vector<double> w;
  for (int k = 0; k < n; ++k) w.push_back(n == 1 ? lo : lo + (hi - lo) * double(k) / double(n - 1));
  return grid(std::move(w));
}

std::vector<double> FarCell::cube(const SplineBatch& b, const Screen* on) const {
  const Screen& s = on ? *on : screen();
  const std::size_t N = std::size_t(s.samples), P = std::size_t(s.pixels());
  std::vector<double> out(3 * P * N);
  FieldAccumulator acc(far_device(), s, Mode::Total, KernelOptions{});
  acc.accumulate(b);
  acc.finish([&](int bucket, int comp, int y0, int y1, const double* d) {
    if (bucket == 0) std::copy(d, d + std::size_t(y1 - y0) * s.nx * N, out.begin() + (comp * P + y0 * s.nx) * N);
  });
  return out;
}

SpectraSums run_spectra(const SpectraGrid& g, SpectraMethod method, const SplineBatch& b, int group) {
  SpectraOptions o;
  o.method = method;
  o.fft_group = group;
  SpectraAccumulator acc(far_device(), g, o);
  acc.accumulate(b);
  return acc.finish();
}

std::vector<std::complex<double>> coherent_amplitude(const SpectraSums& s, std::size_t d, std::size_t stride) {
  std::vector<std::complex<double>> v;
  for (std::size_t k = 0; k < s.frequencies; k += stride)
    for (int c = 0; c < 3; ++c) {
      const std::size_t i = ((d * s.frequencies + k) * 3 + std::size_t(c)) * 2;
      v.emplace_back(s.coherent[i], s.coherent[i + 1]);
    }
  return v;
}

void expect_refused(const SpectraGrid& g, SpectraMethod method, int group, const std::string& id,
                    const std::string& words) {
  SpectraOptions o;
  o.method = method;
  o.fft_group = group;
  try {
    SpectraAccumulator acc(far_device(), g, o);
    BOOST_ERROR("accepted: " << words);
  } catch (const Error& e) {
    BOOST_TEST(e.id() == id);
    BOOST_TEST(std::string(e.what()).find(words) != std::string::npos, e.what());
  }
}

double rel_l2(const std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

}  // namespace edm::test
