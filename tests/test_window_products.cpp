// ctest-label: e2e
// The observer window against the light the run's products need (share/docs/campaign.md, "The
// observer window", "The burst, and windows that miss it"): the automatic window of every screen
// type is centred on the interaction's light, checked here from the field itself (each pixel's
// brightest sample), not from the window code's own prediction; window = "burst" holds all of the
// emission when the run's spectra are computed from the samples (checked against the direct
// method, which never looks at the window); a window that cuts that light, and harmonics that would
// alias into such spectra, are warned about or refused under screen.strict; and a track that starts
// before the pulse and ends after it covers any window at infinity.
#define BOOST_TEST_MODULE window_products
#include <toml++/toml.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>

#include "edm/tracks.hpp"
#include "h5_read.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// Inverse Thomson at γ = 5 on a 26.7 fs, 800 nm pulse (the shipped far-field campaign's physics):
// the light of an electron at r reaches direction n̂ at t − n̂·r/c, so a ±0.1 rad grid over a 5 µm
// disk spreads it by ±1.7 fs, six times the Doppler-compressed pulse on axis.
std::string far_campaign(const std::string& screen, const std::string& extra = "", double a0 = 0.1) {
  return "[run]\nscenario = \"inverse_thomson\"\n"
         "[laser]\nprofile = \"gaussian\"\nwavelength = 800e-9\na0 = " + std::to_string(a0) +
         "\nduration = 26.7e-15\nwaist = 20e-6\n"
         "[electrons]\ndistribution = \"sunflower\"\ncount = 8\nradius = 5e-6\ngamma = 5.0\n"
         "[screen]\n" + screen + extra;
}

const std::string kAngular =
    "type = \"angular\"\nangles = \"xy\"\ntheta_x_min = -0.1\ntheta_x_max = 0.1\ntheta_y_min = -0.1\n"
    "theta_y_max = 0.1\nnx = 5\nny = 5\nsamples = 2048\nsamples_per_period = 512\n";

struct Run {
  int exit_code = -1;
  std::string output;
  fs::path dir;
};

Run run(const std::string& tag, const std::string& campaign, const std::string& args = "") {
  const fs::path dir = test::temp_dir(tag);
  const fs::path file = test::write_file(dir, "c.toml", campaign);
  const auto r = test::run_command(test::edm_binary().string() + " run " + file.string() + " --quiet --output " +
                                   (dir / "run").string() + " " + args + " 2>&1");
  return {r.exit_code, r.output, dir / "run"};
}

// Each pixel's brightest sample (|E|², after removing the first sample's field: a finite screen also
// sees the electrons' slowly varying Coulomb field), as a fraction of the window: 0 at sample 0, 1 at
// the last. Read from field.h5, independent of the window's placement code.
std::vector<double> peak_positions(const fs::path& run_dir) {
  const fs::path f = run_dir / "field.h5";
  const auto t = test::h5_doubles(f, "/axes/t");
  const std::size_t S = t.size();
  std::vector<double> e2;
  for (const char* c : {"/E/x", "/E/y", "/E/z"}) {
    const auto v = test::h5_doubles(f, c);
    if (e2.empty()) e2.assign(v.size(), 0.0);
    for (std::size_t p = 0; p < v.size() / S; ++p)
      for (std::size_t k = 0; k < S; ++k) e2[p * S + k] += std::pow(v[p * S + k] - v[p * S], 2);
  }
  std::vector<double> pos;
  for (std::size_t p = 0; p < e2.size() / S; ++p) {
    const auto it = std::max_element(e2.begin() + std::ptrdiff_t(p * S), e2.begin() + std::ptrdiff_t((p + 1) * S));
    pos.push_back(double(it - (e2.begin() + std::ptrdiff_t(p * S))) / double(S - 1));
  }
  return pos;
}

// Every pixel's pulse well inside the window, and the pulses' midrange at its centre.
void check_centred(const std::string& tag, const std::string& campaign) {
  const Run r = run(tag, campaign);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto pos = peak_positions(r.dir);
  const auto [lo, hi] = std::minmax_element(pos.begin(), pos.end());
  BOOST_TEST_MESSAGE(tag << ": brightest samples from " << *lo << " to " << *hi << " of the window");
  constexpr double kEdge = 0.1;        // no pulse in the first or last tenth of the window
  constexpr double kCentring = 0.05;   // the pulses' midrange within 5 % of the window's length of its centre
  BOOST_TEST(*lo > kEdge, tag);
  BOOST_TEST(*hi < 1 - kEdge, tag);
  BOOST_TEST(std::abs(0.5 * (*lo + *hi) - 0.5) < kCentring, tag);
  const toml::table m = toml::parse_file((r.dir / "run.toml").string());
  BOOST_TEST(m["window"]["burst_in_window"].value_or(false), tag);
}

// spectrum.h5's /direct attribute `method` (which method summed the direct spectra).
std::string direct_method_attribute(const fs::path& run_dir) {
  const hid_t f = H5Fopen((run_dir / "spectrum.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const hid_t a = H5Aopen_by_name(f, "direct", "method", H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(a >= 0);
  const hid_t type = H5Aget_type(a);
  std::string text;
  if (H5Tis_variable_str(type) > 0) {
    char* p = nullptr;
    if (H5Aread(a, type, &p) >= 0 && p) text = p;
    H5free_memory(p);
  } else {
    text.resize(H5Tget_size(type));
    H5Aread(a, type, text.data());
    text = text.c_str();
  }
  H5Tclose(type);
  H5Aclose(a);
  H5Fclose(f);
  return text;
}

// The coherent direct spectra of a run.
std::vector<double> coherent(const fs::path& run_dir) { return test::h5_doubles(run_dir / "spectrum.h5", "/direct/coherent/d2W_domega_dOmega"); }

const std::string kSpectra = "[spectra]\nenabled = true\nunit = \"laser\"\nomega_min = 15\nomega_max = 120\ncount = 24\n";
// Out to θ = 2/γ at the corners, where the line sits near 20 ω.
const std::string kWideAngular =
    "type = \"angular\"\nangles = \"xy\"\ntheta_x_min = -0.28\ntheta_x_max = 0.28\ntheta_y_min = -0.28\n"
    "theta_y_max = 0.28\nnx = 3\nny = 3\nsamples_per_period = 1600\n";

}  // namespace

// The far field (the case: the pulse sat at sample 1458 of 2048, Hann-weighted to a third of
// its yield by edm spectrum), a sphere at a finite distance, and a flat screen.
BOOST_AUTO_TEST_CASE(auto_window_is_centred_on_the_light_at_infinity) {
  check_centred("centred_far", far_campaign(kAngular + "distance = \"infinity\"\n"));
}

BOOST_AUTO_TEST_CASE(auto_window_is_centred_on_the_light_on_a_sphere) {
  check_centred("centred_sphere", far_campaign(kAngular + "distance = 0.05\n"));
}

BOOST_AUTO_TEST_CASE(auto_window_is_centred_on_the_light_on_a_flat_screen) {
  check_centred("centred_flat",
                far_campaign("distance = 0.05\nhalf_width = 1.5e-4\nnx = 5\nny = 5\nsamples = 2048\n"
                             "samples_per_period = 1024\n"));
}

// window = "burst" with dft spectra: the window holds the emission, not the 1/e burst alone, so the
// dft spectra (from the samples) agree with the direct ones (from the trajectories). It held the
// burst only, and a track's dft spectrum was off by a relative L2 of 37 at θ = 2/γ.
BOOST_AUTO_TEST_CASE(burst_window_holds_the_light_the_dft_spectra_need) {
  const std::string screen = kWideAngular + "distance = \"infinity\"\nwindow = \"burst\"\nsamples = \"auto\"\n";
  const Run dft = run("burst_dft", far_campaign(screen, kSpectra + "method = \"dft\"\n", 0.05));
  const Run direct = run("burst_direct", far_campaign(screen, kSpectra + "method = \"direct\"\n", 0.05));
  BOOST_REQUIRE_MESSAGE(dft.exit_code == 0, dft.output);
  BOOST_REQUIRE_MESSAGE(direct.exit_code == 0, direct.output);
  BOOST_TEST(dft.output.find("warning") == std::string::npos, dft.output);
  const toml::table m = toml::parse_file((dft.dir / "run.toml").string());
  BOOST_TEST(m["window"]["emission_in_window"].value_or(false));
  BOOST_TEST(m["window"]["emission_cut_electrons"].value_or(int64_t(-1)) == 0);
  // The dft sum of the samples against the direct quadrature, direction by direction: both converge
  // on the same spectrum. The corners (θ ≈ 2/γ) see the weakest line, where a cut tail shows most.
  constexpr double kDftAgainstDirect = 1e-5;  // 6e-7 measured; 2.8e-2 with the window on the burst alone
  const auto a = coherent(dft.dir), b = coherent(direct.dir);
  const std::size_t nw = 24;
  BOOST_REQUIRE(a.size() == b.size() && a.size() % nw == 0);
  double worst = 0;
  for (std::size_t d = 0; d < a.size() / nw; ++d) {
    const std::vector<double> x(a.begin() + std::ptrdiff_t(d * nw), a.begin() + std::ptrdiff_t((d + 1) * nw));
    const std::vector<double> y(b.begin() + std::ptrdiff_t(d * nw), b.begin() + std::ptrdiff_t((d + 1) * nw));
    worst = std::max(worst, test::relative_l2(x, y));
  }
  BOOST_TEST_MESSAGE("dft against direct, burst window: worst direction's relative L2 " << worst);
  BOOST_TEST(worst < kDftAgainstDirect);
}

// A window that holds the burst but cuts the emission's tails, with dft spectra: warned about, and
// refused under screen.strict before any device time.
BOOST_AUTO_TEST_CASE(a_window_that_cuts_the_emission_of_dft_spectra_is_named) {
  const std::string screen = kWideAngular + "distance = \"infinity\"\nwindow = \"burst\"\nsamples = \"auto\"\n";
  const Run direct = run("cut_probe", far_campaign(screen, kSpectra + "method = \"direct\"\n", 0.05));
  BOOST_REQUIRE_MESSAGE(direct.exit_code == 0, direct.output);
  // The direct run's burst window (spectra not from the samples) holds the burst only.
  const toml::table m = toml::parse_file((direct.dir / "run.toml").string());
  BOOST_TEST(m["window"]["burst_in_window"].value_or(false));
  BOOST_TEST(!m["window"]["emission_in_window"].value_or(true));
  const double t0 = *m["screen"]["t_start"].value<double>();
  const int64_t samples = *m["screen"]["samples"].value<int64_t>();
  char start[64];
  std::snprintf(start, sizeof start, "%.17g", t0);
  const std::string narrow = kWideAngular + "distance = \"infinity\"\nwindow = \"explicit\"\nt_start = " + start +
                             "\nsamples = " + std::to_string(samples) + "\n";
  const Run warned = run("cut_warned", far_campaign(narrow, kSpectra + "method = \"dft\"\n", 0.05));
  BOOST_TEST(warned.exit_code == 0, warned.output);
  BOOST_TEST(warned.output.find("cuts the light of the emission") != std::string::npos, warned.output);
  const toml::table w = toml::parse_file((warned.dir / "run.toml").string());
  BOOST_TEST(!w["window"]["emission_in_window"].value_or(true));
  const Run strict = run("cut_strict", far_campaign(narrow + "strict = true\n", kSpectra + "method = \"dft\"\n", 0.05));
  BOOST_TEST(strict.exit_code == 6, strict.output);
  BOOST_TEST(strict.output.find("EDM-WIN-011") != std::string::npos, strict.output);
  BOOST_TEST(!fs::exists(strict.dir / "field.h5"));
}

// Harmonics above the samples' Nyquist frequency: at a0 = 0.3 and 512 samples per period the 5th
// folded onto the line of the dft spectra. Named dft: a warning naming the samples_per_period that
// resolves them, EDM-WIN-022 under strict; auto takes the direct method instead.
BOOST_AUTO_TEST_CASE(harmonics_that_would_alias_into_sampled_spectra_are_named) {
  const std::string screen = kAngular + "distance = \"infinity\"\n";
  const Run dft = run("alias_dft", far_campaign(screen, kSpectra + "method = \"dft\"\n", 0.3));
  BOOST_TEST(dft.exit_code == 0, dft.output);
  BOOST_TEST(dft.output.find("fold back into the spectra as aliases") != std::string::npos, dft.output);
  const Run strict = run("alias_strict", far_campaign(screen + "strict = true\n", kSpectra + "method = \"dft\"\n", 0.3));
  BOOST_TEST(strict.exit_code == 6, strict.output);
  BOOST_TEST(strict.output.find("EDM-WIN-022") != std::string::npos, strict.output);
  const Run autom = run("alias_auto", far_campaign(screen, kSpectra + "method = \"auto\"\n", 0.3), "--verbose");
  BOOST_TEST(autom.exit_code == 0, autom.output);
  BOOST_TEST(autom.output.find("fold back") == std::string::npos, autom.output);
  BOOST_TEST(direct_method_attribute(autom.dir).rfind("direct", 0) == 0, direct_method_attribute(autom.dir));
  // Resolved: 1600 samples per period hold every harmonic above 1e-14 of the line's power at a0 = 0.1.
  const Run resolved =
      run("alias_resolved", far_campaign(kWideAngular + "distance = \"infinity\"\nsamples = 4096\n",
                                         kSpectra + "method = \"dft\"\n", 0.1));
  BOOST_TEST(resolved.exit_code == 0, resolved.output);
  BOOST_TEST(resolved.output.find("fold back") == std::string::npos, resolved.output);
}

// An external track at infinity that starts before the pulse and ends after it covers any window:
// no allow_clipping needed, covered = true, no electron clipped (it needed allow_clipping and then
// reported every electron clipped).
BOOST_AUTO_TEST_CASE(a_track_through_the_whole_pulse_covers_the_window_at_infinity) {
  const fs::path dir = test::temp_dir("track_far");
  // A free electron's straight line (γ = 5 along +z) through the whole pulse is a valid track too:
  // the laser's emission span is |ξ| ≤ 3.7 τ0 ≈ 99 fs, so ±400 fs in t covers it on both sides.
  std::vector<TrackData> tracks(1);
  auto& tr = tracks[0];
  const double c = 299792458.0, uz = std::sqrt(5.0 * 5.0 - 1.0), vz = c * uz / 5.0;
  for (int k = 0; k <= 4000; ++k) {
    const double t = -400e-15 + 800e-15 * k / 4000.0;
    tr.t.push_back(t);
    tr.x.push_back(1e-6);
    tr.y.push_back(0);
    tr.z.push_back(vz * t);
    tr.ux.push_back(0);
    tr.uy.push_back(0);
    tr.uz.push_back(uz);
  }
  write_tracks((dir / "tracks.h5").string(), tracks);
  const std::string campaign = far_campaign(kAngular + "distance = \"infinity\"\n", "[trajectory]\nmodel = \"tracks\"\nfile = \"" +
                                                                                     (dir / "tracks.h5").string() + "\"\n");
  const Run r = run("track_far_run", campaign);
  BOOST_TEST(r.exit_code == 0, r.output);
  const toml::table m = toml::parse_file((r.dir / "run.toml").string());
  BOOST_TEST(m["window"]["covered"].value_or(false));
  BOOST_TEST(m["window"]["clipped_electrons"].value_or(int64_t(-1)) == 0);
}
