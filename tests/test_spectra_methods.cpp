// ctest-label: physics
// The one factory of the spectra methods (core/src/field/spectra_method.hpp, choose_spectra_method
// in edm/spectra.hpp): spectra.method = "auto" builds the method the cost model finds cheapest among
// those that can serve the grid on the device, and a method the campaign names is built whatever
// the costs. Which methods serve is found here independently of the factory's own rule: a method
// serves when an accumulator asking for it by name can be built (the fft method refuses a grid that
// is not linear or a flat screen, both series methods buffers that do not fit). The accumulator the
// factory built must then sum one electron bit for bit as the one asked for that method by name:
// its sums are that method's, not only its label.
#define BOOST_TEST_MODULE spectra_methods
#include <boost/test/unit_test.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <set>

#include "edm/error.hpp"
#include "edm/spectra.hpp"
#include "far_series_cell.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

using Far = test::FarCell;
constexpr std::array<SpectraMethod, 3> kMethods = {SpectraMethod::Direct, SpectraMethod::Fft, SpectraMethod::Dft};

double cost_of(const SpectraCost& c, SpectraMethod m) {
  return m == SpectraMethod::Fft ? c.fft : m == SpectraMethod::Dft ? c.dft : c.direct;
}

bool same_sums(const SpectraSums& a, const SpectraSums& b) {
  return a.coherent == b.coherent && a.incoherent == b.incoherent && a.electrons == b.electrons &&
         a.weight_sum == b.weight_sum;
}

// One case: the grid and options (method left to the case), its name for the messages.
struct Case {
  const char* name;
  SpectraGrid grid;
  SpectraOptions options;
};

// Builds every method by name on `c` (those refused do not serve), "auto" through the factory; checks
// the factory's choice against the cheapest serving method by the cost model's numbers, and that
// its sums are that method's. Returns the method expected.
SpectraMethod check_auto(const Case& c, const SplineBatch& batch) {
  const auto device = test::far_device();
  SpectraOptions o = c.options;
  o.method = SpectraMethod::Auto;
  const SpectraChoice model = choose_spectra_method(c.grid, o, device_info(*device));
  std::array<std::optional<SpectraAccumulator>, 3> by_name;
  std::optional<SpectraMethod> expected;
  for (std::size_t i = 0; i < kMethods.size(); ++i) {
    SpectraOptions named = c.options;
    named.method = kMethods[i];
    try {
      by_name[i].emplace(device, c.grid, named);
    } catch (const Error& e) {
      BOOST_TEST_MESSAGE(c.name << ": " << name(kMethods[i]) << " does not serve: " << e.id());
      BOOST_TEST(std::isinf(cost_of(model.cost, kMethods[i])), c.name << ": " << name(kMethods[i])
                                                                   << " does not serve, yet has a finite cost");
      continue;
    }
    BOOST_TEST(int(by_name[i]->choice().asked) == int(kMethods[i]));
    BOOST_TEST(int(by_name[i]->method()) == int(kMethods[i]), c.name << ": asked for " << name(kMethods[i]));
    if (!expected || cost_of(model.cost, kMethods[i]) < cost_of(model.cost, *expected)) expected = kMethods[i];
  }
  BOOST_REQUIRE(expected.has_value());  // the direct method serves every checked grid
  BOOST_TEST_MESSAGE(c.name << ": cost model direct " << model.cost.direct << ", fft " << model.cost.fft << ", dft "
                            << model.cost.dft << " s/electron: expected " << name(*expected));
  SpectraAccumulator automatic(device, c.grid, o);
  BOOST_TEST(int(automatic.choice().asked) == int(SpectraMethod::Auto));
  BOOST_TEST(int(automatic.method()) == int(*expected), c.name << ": auto built " << name(automatic.method())
                                                               << ", the cost model's pick is " << name(*expected));
  BOOST_TEST(int(automatic.choice().method) == int(*expected));
  BOOST_TEST(automatic.choice().cost.direct == model.cost.direct);
  BOOST_TEST(automatic.choice().cost.fft == model.cost.fft);
  BOOST_TEST(automatic.choice().cost.dft == model.cost.dft);
  SpectraAccumulator& reference = *by_name[std::size_t(*expected == SpectraMethod::Direct ? 0
                                                       : *expected == SpectraMethod::Fft  ? 1
                                                                                           : 2)];
  automatic.accumulate(batch);
  reference.accumulate(batch);
  const SpectraSums a = automatic.finish(), r = reference.finish();
  BOOST_TEST(int(a.method) == int(*expected));
  BOOST_TEST(same_sums(a, r), c.name << ": auto's sums are not the " << name(*expected) << " method's");
  return *expected;
}

}  // namespace

// Grids on which the cost model (or what serves) picks each of the three methods: a dense linear
// grid over the whole window (the fft on PoCL's constants), a logarithmic one (no fft), a short
// predicted series (the dft by far), a flat screen (no series method) and electron groups whose
// buffers fit no device (direct). The picks must not all be one method, or the test could not
// tell a factory that ignores the model.
BOOST_AUTO_TEST_CASE(auto_builds_the_cost_models_cheapest_serving_method) {
  const Far f;
  std::vector<double> log_w;
  for (int k = 0; k < 16; ++k) log_w.push_back(0.3 * std::pow(12.0, double(k) / 15.0));
  std::vector<Case> cases;
  cases.push_back({"linear, 1023 ω", f.linear(0.5, 3.0, 1023), {}});
  cases.push_back({"logarithmic, 16 ω", f.grid(log_w), {}});
  cases.push_back({"linear, 8 ω, short series", f.linear(0.5, 3.0, 8), {}});
  cases.back().options.series_samples = 1;
  cases.push_back({"flat screen", f.linear(0.5, 3.0, 16), {}});
  cases.back().grid.far_screen = Screen{};
  cases.push_back({"groups of 2^30", f.linear(0.5, 3.0, 8), {}});
  cases.back().options.fft_group = 1 << 30;
  std::set<int> picked;
  for (const Case& c : cases) picked.insert(int(check_auto(c, f.batch)));
  BOOST_TEST(picked.size() >= 2u, "every case picked the same method: the cases cannot tell the model's pick");
  BOOST_TEST(picked.count(int(SpectraMethod::Direct)) == 1u);
}

// A method the campaign names is built whatever the cost model says, and its costs are still
// reported (run.toml records them): on a grid where auto takes a series method, direct; and each
// series method where auto would take the other or direct.
BOOST_AUTO_TEST_CASE(a_named_method_is_built_whatever_the_costs) {
  const Far f;
  const SpectraGrid g = f.linear(0.5, 3.0, 8);
  SpectraOptions o;
  o.method = SpectraMethod::Auto;
  const SpectraChoice model = choose_spectra_method(g, o, device_info(*test::far_device()));
  for (SpectraMethod m : kMethods) {
    o.method = m;
    SpectraAccumulator acc(test::far_device(), g, o);
    BOOST_TEST(int(acc.method()) == int(m));
    BOOST_TEST(int(acc.choice().asked) == int(m));
    BOOST_TEST(acc.choice().cost.direct == model.cost.direct);
    BOOST_TEST(acc.choice().cost.dft == model.cost.dft);
    acc.accumulate(f.batch);
    BOOST_TEST(int(acc.finish().method) == int(m));
  }
}
