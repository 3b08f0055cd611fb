// ctest-label: physics
// Macro-particle weights (share/docs/ensembles.md): the CSV weight column and the tracks' w dataset
// (defaults, round trips, bad values refused naming the file and row or dataset), and the field: a
// weight w scales an electron's time-domain field by w (the coherent sum), in the kernel and in the
// host reference; weights survive batching bit for bit; an ensemble of unit weights gives the cube it
// gave before weights existed (the weighted kernel build changes no bit at w = 1). Device from
// EDM_DEVICE (default auto).
#define BOOST_TEST_MODULE weights
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>

#include "analytic_splines.hpp"
#include "edm/accumulator.hpp"
#include "edm/device.hpp"
#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/tracks.hpp"
#include "test_support.hpp"
#include "device_cube.hpp"
#include "h5_read.hpp"
#include "spawn.hpp"

using namespace edm;
namespace fs = std::filesystem;

namespace {

std::vector<double> run_device(const Screen& s, Mode mode, const std::vector<const SplineBatch*>& batches,
                               KernelOptions o = {}) {
  FieldAccumulator acc(test::env_device(), s, mode, o);
  for (auto* b : batches) acc.accumulate(*b);
  return test::download_cube(acc, s, mode, 0);
}

// Thomson figure-8 orbits (plane wave along +z, a0 = 0.5) at a few offsets, seen from behind; the
// window is the auto one of the initial states and every spline covers it.
struct Setup {
  Screen screen;
  std::vector<test::Worldline> lines;
  std::vector<std::uint32_t> intervals;
  double dtau = 0;
};

Setup thomson(int electrons) {
  Setup st;
  Screen& s = st.screen;
  s.nx = 6, s.ny = 5, s.samples = 64;
  s.half_x = 60, s.half_y = 45, s.z = -150;
  s.dt = 2 * std::numbers::pi / 32;
  st.dtau = 2 * std::numbers::pi / 16;
  for (int i = 0; i < electrons; ++i)
    st.lines.push_back(test::plane_wave_orbit(0.5, 0, 1.0, +1, 0.3 * i, {0.4 * i, -0.2 * i, 0.1 * i}));
  std::vector<std::array<double, 8>> init;
  for (auto& w : st.lines) init.push_back(test::state_at(w, 0.0));
  choose_window(s, init);
  const double t_last = s.t_rel(s.samples - 1);
  for (auto& w : st.lines) {
    double T = st.dtau;
    while (s.earliest_arrival_rel(test::state_at(w, T).data()) <= t_last + 4 * s.dt) T *= 1.25;
    st.intervals.push_back(std::uint32_t(std::ceil(T / st.dtau)));
  }
  return st;
}

// Electrons [first, first + count) of the setup as one batch, with the given weights (by index).
SplineBatch batch_of(const Setup& st, std::size_t first, std::size_t count, const std::vector<double>& w) {
  SplineBatch b;
  for (std::size_t i = first; i < first + count; ++i) {
    test::append_electron(b, st.lines[i], 0.0, st.dtau, st.intervals[i], i);
    b.electrons.back().weight = w[i];
  }
  return b;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

template <class E>
void check_error(const std::function<void()>& f, const std::string& id, const std::vector<std::string>& parts) {
  try {
    f();
    BOOST_ERROR("no error, expected " << id);
  } catch (const E& e) {
    BOOST_TEST(e.id() == id);
    for (const auto& p : parts) BOOST_TEST(std::string(e.what()).find(p) != std::string::npos, e.what() << " names " << p);
  }
}

fs::path write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(csv_weight_column) {
  const fs::path dir = test::temp_dir("weights_csv");
  // Without the column every weight is 1; with it, the 8th column is the weight.
  auto plain = read_electron_csv(write_file(dir, "plain.csv", "t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,0\n0,1e-6,0,0,0,0,0\n").string());
  BOOST_TEST(plain.size() == 2u);
  BOOST_TEST(plain[0].weight == 1.0);
  BOOST_TEST(plain[1].weight == 1.0);
  auto weighted = read_electron_csv(
      write_file(dir, "w.csv", "t0,x,y,z,ux,uy,uz,weight\n0,0,0,0,0,0,0,2.5e6\n# a comment\n0,1e-6,0,0,0,0,0.1,0\n").string());
  BOOST_TEST(weighted.size() == 2u);
  BOOST_TEST(weighted[0].weight == 2.5e6);
  BOOST_TEST(weighted[1].weight == 0.0);  // a zero weight is allowed: it adds nothing
  BOOST_TEST(weighted[1].uz == 0.1);
}

BOOST_AUTO_TEST_CASE(csv_bad_weights_are_refused) {
  const fs::path dir = test::temp_dir("weights_csv_bad");
  const std::string head = "t0,x,y,z,ux,uy,uz,weight\n0,0,0,0,0,0,0,1\n";
  auto refuse = [&](const std::string& name, const std::string& row, const std::string& id, const std::string& says) {
    const fs::path p = write_file(dir, name, head + row + "\n");
    check_error<ConfigError>([&] { read_electron_csv(p.string()); }, id, {name + ":3", says});
  };
  refuse("negative.csv", "0,0,0,0,0,0,0,-2", "EDM-CFG-643", "weight");
  refuse("nan.csv", "0,0,0,0,0,0,0,nan", "EDM-CFG-204", "column weight is not finite");
  refuse("inf.csv", "0,0,0,0,0,0,0,inf", "EDM-CFG-204", "column weight is not finite");
  refuse("text.csv", "0,0,0,0,0,0,0,heavy", "EDM-CFG-203", "column weight is not a number");
  refuse("missing.csv", "0,0,0,0,0,0,0", "EDM-CFG-642", "the first row has 8");
  refuse("nine.csv", "0,0,0,0,0,0,0,1,1", "EDM-CFG-202", "found 9");
}

BOOST_AUTO_TEST_CASE(tracks_weight_dataset) {
  const fs::path dir = test::temp_dir("weights_tracks");
  std::vector<TrackData> tracks(2);
  for (std::size_t i = 0; i < 2; ++i) {
    TrackData& t = tracks[i];
    t.index = i;
    for (int k = 0; k < 5; ++k) {
      t.t.push_back(1e-15 * k);
      for (auto* c : {&t.x, &t.y, &t.z, &t.ux, &t.uy}) c->push_back(0.0);
      t.uz.push_back(0.1);
    }
  }
  tracks[1].w = 3.25;
  const fs::path p = dir / "tracks.h5";
  write_tracks(p.string(), tracks);
  auto back = read_tracks(p.string());
  BOOST_TEST(back[0].w == 1.0);  // no dataset w: weight 1
  BOOST_TEST(back[1].w == 3.25);
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    tracks[1].w = bad;
    write_tracks(p.string(), tracks);  // the writer writes what it is given; the reader is the gate
    check_error<IoError>([&] { read_tracks(p.string()); }, "EDM-IO-111", {p.string(), "/tracks/000001/w"});
  }
}

BOOST_AUTO_TEST_CASE(weight_scales_the_field) {
  // One electron: the slot sums start at 0, so E of weight w is fl(w·E₁) exactly, for every w; B =
  // n̂ × (wE) rounds once more than w(n̂ × E), within tol::weight_scaling. A power of two scales every
  // operation exactly: then both buckets and both modes agree bit for bit.
  const Setup st = thomson(1);
  const SplineBatch one = batch_of(st, 0, 1, {1.0});
  for (Mode mode : {Mode::Total, Mode::Split}) {
    const auto ref = run_device(st.screen, mode, {&one});
    double norm = 0;
    for (double v : ref) norm += v * v;
    BOOST_TEST(norm > 0);
    for (double w : {4.0, 0.3, 1.7e6}) {
      const SplineBatch b = batch_of(st, 0, 1, {w});
      const auto got = run_device(st.screen, mode, {&b});
      std::vector<double> scaled(ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) scaled[i] = w * ref[i];
      const std::size_t bucket = ref.size() / std::size_t(bucket_count(mode));
      // E (bucket 0) and, in split mode, E_far (bucket 2): exact.
      for (int b : {0, 2}) {
        if (b >= bucket_count(mode)) continue;
        BOOST_TEST(std::memcmp(got.data() + b * bucket, scaled.data() + b * bucket, bucket * sizeof(double)) == 0,
                   "bucket " << b << " at w = " << w);
      }
      const double l2 = test::relative_l2(got, scaled);
      BOOST_TEST_MESSAGE((mode == Mode::Total ? "total" : "split") << " w = " << w << ": rel L2 vs w × field = " << l2);
      BOOST_TEST(l2 < test::tol::weight_scaling);
      if (w == 4.0) BOOST_TEST(same_bits(got, scaled));
      // The host reference carries the same weight.
      const auto host = host_reference_field(st.screen, mode, b);
      BOOST_TEST(test::relative_l2(got, host) < test::tol::kernel_vs_host);
    }
  }
}

BOOST_AUTO_TEST_CASE(weights_survive_batching) {
  // Weighted ensemble: the single pass, batches of one and two, and groups of one launch per
  // electron give the same cube bit for bit; the coherent sum is Σ w_i E_i (checked against the
  // host reference of the same weighted batch).
  const Setup st = thomson(4);
  const std::vector<double> w = {0.5, 1.0, 3.0, 0.0};
  const SplineBatch all = batch_of(st, 0, 4, w);
  const auto single = run_device(st.screen, Mode::Split, {&all});
  std::vector<SplineBatch> ones;
  for (std::size_t i = 0; i < 4; ++i) ones.push_back(batch_of(st, i, 1, w));
  const auto by_one = run_device(st.screen, Mode::Split, {&ones[0], &ones[1], &ones[2], &ones[3]});
  const SplineBatch a = batch_of(st, 0, 2, w), b = batch_of(st, 2, 2, w);
  KernelOptions g1;
  g1.electron_group = 1;
  const auto by_two = run_device(st.screen, Mode::Split, {&a, &b}, g1);
  BOOST_TEST(same_bits(single, by_one));
  BOOST_TEST(same_bits(single, by_two));
  const auto host = host_reference_field(st.screen, Mode::Split, all);
  BOOST_TEST(test::relative_l2(single, host) < test::tol::kernel_vs_host);
  // A batch of unit weights before a weighted one: the first runs on the unweighted build, the
  // second switches to the weighted one — still the single pass, bit for bit (×1 is exact).
  const std::vector<double> w2 = {1.0, 1.0, 3.0, 0.5};
  const SplineBatch all2 = batch_of(st, 0, 4, w2), c = batch_of(st, 0, 2, w2), d = batch_of(st, 2, 2, w2);
  BOOST_TEST(same_bits(run_device(st.screen, Mode::Total, {&all2}), run_device(st.screen, Mode::Total, {&c, &d})));
}

BOOST_AUTO_TEST_CASE(unit_weights_change_no_bit) {
  // The cube of unit weights on the unweighted build (what every run did before weights) equals the
  // same electrons on the weighted build: a first batch of weight 0 switches the accumulator to it
  // (0 × E = ±0, and +0 + (±0) = +0, so that batch leaves the zeroed cube as it was).
  const Setup st = thomson(3);
  const SplineBatch ones = batch_of(st, 0, 3, {1.0, 1.0, 1.0});
  const SplineBatch zero = batch_of(st, 0, 1, {0.0, 1.0, 1.0});
  for (Mode mode : {Mode::Total, Mode::Split}) {
    const auto plain = run_device(st.screen, mode, {&ones});
    const auto via_weighted = run_device(st.screen, mode, {&zero, &ones});
    BOOST_TEST(same_bits(plain, via_weighted));
  }
}

// A weighted ensemble on an angular screen at infinity: the weighted build of the field kernel
// must carry the angular observer too (it once built from the flat screen's files alone). Weight 2
// on one electron doubles its field exactly (2·x is exact in binary floating point).
BOOST_AUTO_TEST_CASE(weights_on_an_angular_screen) {
  const fs::path dir = test::temp_dir("weights_angular");
  auto run = [&](const std::string& name, const std::string& weight) {
    write_file(dir, name + ".csv", "t0,x,y,z,ux,uy,uz,weight\n0,0,0,0,0,0,0," + weight + "\n");
    const std::string text = "[run]\nscenario = \"thomson\"\nmode = \"total\"\noutput = \"" + (dir / name).string() +
                             "\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.3\nduration = 5.35e-15\n"
                             "[electrons]\ndistribution = \"list\"\nfile = \"" + name + ".csv\"\n"
                             "[screen]\ntype = \"angular\"\ndistance = \"infinity\"\naxis = \"-z\"\n"
                             "theta_x_min = -0.2\ntheta_x_max = 0.2\ntheta_y_min = -0.2\ntheta_y_max = 0.2\n"
                             "nx = 3\nny = 3\nsamples = 64\n";
    const auto r = test::run_edm("run " + write_file(dir, name + ".toml", text).string() + " --quiet");
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, name << ": " << r.output);
    return test::h5_doubles(dir / name / "field.h5", "/E/x");
  };
  const auto one = run("one", "1"), two = run("two", "2");
  BOOST_REQUIRE(one.size() == two.size());
  double peak = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    BOOST_TEST(two[i] == 2 * one[i]);
    peak = std::max(peak, std::abs(one[i]));
  }
  BOOST_TEST(peak > 0);  // the directions see the burst: the case compares fields, not zeros
}
