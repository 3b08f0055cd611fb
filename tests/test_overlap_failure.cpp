// ctest-label: e2e
// A batch solve that fails mid-run with batch_overlap on (the device still busy with the previous
// batch, the overlap watcher running): the run stops with the solver's error (PhysicsError
// EDM-TRJ-023, exit code 6), leaves neither field.h5 nor field.h5.partial, and the checkpoint written
// before the failure is intact — with the bad input mended, `edm resume` from it gives a field
// bit-identical to an uninterrupted run. Also the watcher's own contract: an error thrown while it
// drains the device comes back to the driving thread, and one never collected does not abort.
#define BOOST_TEST_MODULE overlap_failure
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "../core/src/run/overlap.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/tracks.hpp"
#include "edm/writer.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// The "tracks" model reads trajectories from a file, so one electron's input can be bad in a way
// only its solve finds: a track shorter than two knot spacings of proper time (EDM-TRJ-023). Six
// electrons, one per batch; checkpoints every 2 batches, so the checkpoint after batch 2 is written
// and the solve of electron 3 runs while the watcher drains electron 2's launches.
constexpr int kElectrons = 6;
constexpr int kBadElectron = 3;

const char* kCell = R"(
[run]
scenario = "thomson"
mode = "split"
[laser]
profile = "plane_wave"
a0 = 0.1
[electrons]
count = 6
[screen]
distance = 0.02
half_width = 4e-5
nx = 5
ny = 4
samples = 96
samples_per_period = 32
[accumulator]
electron_batch = 1
batch_overlap = true
devices = "0"
)";

// Electron e moves uniformly (u = γβ along x and z) through t ∈ [−T, T] (T ≈ 40 periods of the
// 800 nm laser: the observer window of 3 periods is covered with a wide margin); the bad one's
// track spans 0.05 fs of 4 samples instead.
std::vector<TrackData> make_tracks(bool mend) {
  const double T = 1.0e-13, c = 299792458.0;
  std::vector<TrackData> tracks;
  for (int e = 0; e < kElectrons; ++e) {
    TrackData td;
    td.index = std::uint64_t(e);
    const double ux = 0.01 * (e + 1), uz = 0.02 * (e % 3), g = std::sqrt(1 + ux * ux + uz * uz);
    const bool bad = e == kBadElectron && !mend;
    const int n = bad ? 4 : 201;
    const double t0 = bad ? -2.5e-17 : -T, t1 = bad ? 2.5e-17 : T;
    for (int k = 0; k < n; ++k) {
      const double t = t0 + (t1 - t0) * k / (n - 1);
      td.t.push_back(t);
      td.x.push_back(1e-6 * (e - 2) + c * ux / g * t);
      td.y.push_back(0.5e-6 * e);
      td.z.push_back(c * uz / g * t);
      td.ux.push_back(ux);
      td.uy.push_back(0.0);
      td.uz.push_back(uz);
    }
    tracks.push_back(std::move(td));
  }
  return tracks;
}

// The campaign in `dir`, reading the tracks from dir/tracks.h5 (an absolute path, so the
// checkpoint's copy of the campaign finds it from anywhere).
fs::path write_campaign(const fs::path& dir) {
  const auto p = dir / "cell.toml";
  std::ofstream(p) << kCell << "[trajectory]\nmodel = \"tracks\"\nfile = \"" << (dir / "tracks.h5").string()
                   << "\"\nknots_per_period = 16\n";
  return p;
}

test::CommandResult run_edm(const std::string& args) {
  return test::run_command(test::edm_binary().string() + " " + args);
}

void expect_identical(const fs::path& a, const fs::path& b) {
  for (const char* name :
       {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z", "/E_far/x", "/E_far/z", "/B_far/y"}) {
    const auto x = read_field_component(a / "field.h5", name);
    const auto y = read_field_component(b / "field.h5", name);
    BOOST_REQUIRE_EQUAL(x.size(), y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0,
               name << " differs after resume");
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(failed_solve_under_overlap_is_a_clean_error_and_keeps_the_checkpoint) {
  const auto dir = test::temp_dir("overlap_fail");
  const auto campaign = write_campaign(dir);

  // The reference: the same cell with every track good, uninterrupted.
  write_tracks((dir / "tracks.h5").string(), make_tracks(true));
  auto full = run_edm("run " + campaign.string() + " --quiet --output " + (dir / "full").string());
  BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);

  write_tracks((dir / "tracks.h5").string(), make_tracks(false));
  const auto part = dir / "part";
  auto r =
      run_edm("run " + campaign.string() + " --quiet --output " + part.string() + " --checkpoint-every 2");
  BOOST_TEST_MESSAGE("edm run with a bad track: exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 6);  // the physics family
  BOOST_TEST(r.output.find("EDM-TRJ-023") != std::string::npos);
  BOOST_TEST(r.output.find("electron " + std::to_string(kBadElectron)) != std::string::npos);
  BOOST_TEST(!fs::exists(part / "field.h5"));
  BOOST_TEST(!fs::exists(part / "field.h5.partial"));
  BOOST_TEST(!fs::exists(part / "run.toml"));
  BOOST_REQUIRE(fs::exists(checkpoint_path(part)));
  const CheckpointState st = read_checkpoint_state(checkpoint_path(part));
  BOOST_TEST(st.next_electron == 2u);  // the checkpoint after batch 2, the last before the failure
  BOOST_TEST(st.batches_done == 2u);

  // The checkpoint is intact: with the track mended, the run resumes from it to the same bits.
  write_tracks((dir / "tracks.h5").string(), make_tracks(true));
  auto resumed = run_edm("resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  BOOST_TEST(!fs::exists(checkpoint_path(part)));
  expect_identical(dir / "full", part);
}

// The same failure in process: run_campaign throws the solver's PhysicsError itself (family and
// id intact), not a wrapped or generic error.
BOOST_AUTO_TEST_CASE(failed_solve_under_overlap_throws_the_physics_error) {
  const auto dir = test::temp_dir("overlap_fail_inproc");
  const auto campaign_file = write_campaign(dir);
  write_tracks((dir / "tracks.h5").string(), make_tracks(false));
  std::ifstream in(campaign_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto registry = PluginRegistry::discover();
  const Campaign c =
      parse_campaign(text, campaign_file.string(),
                     {{"run.output", "\"" + (dir / "out").string() + "\"", Origin::CommandLine}},
                     registry.get("thomson").keys(), false);
  struct Quiet : RunObserver {
  } quiet;
  try {
    run_campaign(c, registry, RunOptions{}, quiet);
    BOOST_FAIL("a track shorter than two knot spacings was accepted");
  } catch (const PhysicsError& e) {
    BOOST_TEST_MESSAGE("run_campaign: " << e.what());
    BOOST_TEST(e.id() == "EDM-TRJ-023");
    BOOST_TEST(e.exit_code() == 6);
  }
  BOOST_TEST(!fs::exists(dir / "out" / "field.h5"));
  BOOST_TEST(!fs::exists(dir / "out" / "field.h5.partial"));
}

// The watcher hands an error thrown on its thread (here the DeviceError a failed drain throws)
// back to the driving thread when it is waited for.
BOOST_AUTO_TEST_CASE(watcher_hands_its_error_back) {
  detail::DeviceWatcher w;
  BOOST_TEST(!w.wait().has_value());  // nothing started: nothing to wait for
  w.start([] {
    throw DeviceError("EDM-CL-001",
                      "waiting for the field kernels on device 0: clFinish returned CL_OUT_OF_RESOURCES (-5)",
                      -5);
  });
  try {
    w.wait();
    BOOST_FAIL("the watcher's error was lost");
  } catch (const DeviceError& e) {
    BOOST_TEST(e.id() == "EDM-CL-001");
    BOOST_TEST(e.cl_status() == -5);
  }
  w.start([] {});
  BOOST_TEST(w.wait().has_value());
}

// A watcher left running when the driving thread unwinds (the solve of the next batch threw) is
// joined by its destructor, and its own error, never collected, does not reach std::terminate.
BOOST_AUTO_TEST_CASE(watcher_is_joined_on_unwinding) {
  bool drained = false;
  try {
    detail::DeviceWatcher w;
    w.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      drained = true;
      throw DeviceError(
          "EDM-CL-001",
          "waiting for the field kernels on device 0: clFinish returned CL_OUT_OF_RESOURCES (-5)", -5);
    });
    throw PhysicsError("EDM-TRJ-023", "electron 3: track shorter than two knot spacings in proper time");
  } catch (const PhysicsError& e) {
    BOOST_TEST(e.id() == "EDM-TRJ-023");  // the driving thread's error is the one reported
  }
  BOOST_TEST(drained);  // the destructor waited for the watcher
}
