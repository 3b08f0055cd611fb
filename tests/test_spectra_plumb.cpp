// ctest-label: e2e
// The direct spectra wherever the field goes (issue 15 items 1–2; share/docs/outputs.md "Devices,
// ranks and checkpoints"): SpectraAccumulator::snapshot/restore continue the sums bit for bit; a
// stopped run's checkpoint carries them and `edm resume` gives the uninterrupted run's spectrum.h5
// /direct bit for bit (one device and two); a checkpoint without them or of another shape is refused
// naming the dataset; two devices agree with one to tol::sharded and repeat bit for bit; progress
// counts the spectra and goes on after the field's last launch, and a stop then checkpoints
// everything; `edm info` shows /direct and refuses one from another run. Two PoCL devices: POCL_DEVICES="pthread pthread" (as test_sharded).
#define BOOST_TEST_MODULE spectra_plumb
#include <boost/test/unit_test.hpp>

#include <hdf5.h>
#include <stdlib.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "progress_recorder.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/sharded.hpp"
#include "edm/spectra.hpp"
#include "spawn.hpp"
#include "test_support.hpp"
#include "h5_read.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

struct TwoPoclDevices {
  TwoPoclDevices() { setenv("POCL_DEVICES", "pthread pthread", 0); }
};

// An angular screen at infinity (3 × 3 directions) over the small inverse-Thomson cell, its direct
// spectra on 6 frequencies around the backscatter line (γ = 3: about 36 ω_L), `batch` electrons a
// batch (more than one, so that two devices both take part of each batch).
std::string spectra_cell(int electrons, const std::string& devices, int count = 6, int batch = 3) {
  // The direct method: its launches are what the progress case sees running behind the field.
  return test::small_far_cell({.electrons = electrons, .electron_batch = std::to_string(batch), .devices = devices}) +
         test::small_far_spectra("direct", count);
}

Override set(const std::string& key, const std::string& value) { return {key, value, Origin::CommandLine}; }

Campaign campaign(const std::string& text, const fs::path& out, std::vector<Override> overrides = {}) {
  overrides.push_back(set("run.output", "\"" + out.string() + "\""));
  const auto registry = PluginRegistry::discover();
  return parse_campaign(text, "cell.toml", overrides, registry.get("inverse_thomson").keys(), false);
}

using Recorder = edm::test::ProgressRecorder;  // tests/support/progress_recorder.hpp

// Runs the campaign in-process and stops it (a checkpoint, Interrupted) once `stop_at` electrons
// are done; the checkpoint's next electron.
std::uint64_t run_and_stop(const Campaign& c, std::uint64_t stop_at) {
  const auto registry = PluginRegistry::discover();
  std::atomic<bool> stop{false};
  Recorder rec;
  rec.stop = &stop;
  rec.stop_at = stop_at;
  RunOptions ro;
  ro.stop = &stop;
  ro.checkpoint_every = -1;
  ro.progress_interval = 0.005;
  std::string id;
  try {
    run_campaign(c, registry, ro, rec);
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_REQUIRE_EQUAL(id, "EDM-RUN-010");
  return read_checkpoint_state(checkpoint_path(c.run.output)).next_electron;
}

// A dataset's bytes as stored (any type: the complex compound too) and its element count.
const std::vector<std::string> kDirect = {"/direct/coherent_amplitude",
                                          "/direct/coherent/d2W_domega_dOmega",
                                          "/direct/coherent/photons_per_0.1pct_bw",
                                          "/direct/incoherent/d2W_domega_dOmega",
                                          "/direct/incoherent/photons_per_omega"};

void expect_same_direct(const fs::path& a, const fs::path& b) {
  for (const auto& name : kDirect) {
    const auto x = test::h5_raw(a / "spectrum.h5", name), y = test::h5_raw(b / "spectrum.h5", name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST((x == y), name << " differs");
  }
}

double attr(const fs::path& file, const char* obj, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  double v = NAN;
  if (a >= 0) H5Aread(a, H5T_NATIVE_DOUBLE, &v), H5Aclose(a);
  H5Fclose(f);
  return v;
}

}  // namespace

BOOST_GLOBAL_FIXTURE(TwoPoclDevices);

BOOST_AUTO_TEST_CASE(snapshot_and_restore_continue_the_sums_bit_for_bit) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = campaign(spectra_cell(6, "0"), test::temp_dir("snapshot") / "run");
  PreparedCell cell(c, registry);
  const SplineBatch b = cell.solve(0, 6);
  SpectraGrid grid;
  for (int k = 0; k < 5; ++k) grid.omega.push_back(20.0 + 5.0 * k);
  grid.directions = {{0, 0, 1}, {0.6, 0, 0.8}, {0, -0.28, 0.96}};
  const auto dev = select_devices("0").front();
  SpectraAccumulator whole(open_device(dev), grid);
  whole.accumulate(b);
  const SpectraSums ref = whole.finish();

  SpectraAccumulator first(open_device(dev), grid);
  first.accumulate(slice_batch(b, 0, 4));
  const SpectraSums saved = first.snapshot();
  BOOST_TEST(saved.electrons == 4u);
  BOOST_TEST(first.electrons_completed() == 4u);  // the snapshot waited for them
  first.accumulate(slice_batch(b, 4, 2));          // it keeps accumulating after a snapshot
  const SpectraSums went_on = first.finish();

  SpectraAccumulator resumed(open_device(dev), grid);
  resumed.restore(saved);
  resumed.accumulate(slice_batch(b, 4, 2));
  const SpectraSums after = resumed.finish();
  for (const SpectraSums* s : {&went_on, &after}) {
    BOOST_TEST(s->electrons == 6u);
    BOOST_TEST(s->weight_sum == ref.weight_sum);
    BOOST_TEST((s->coherent == ref.coherent));
    BOOST_TEST((s->incoherent == ref.incoherent));
  }
  BOOST_TEST(ref.incoherent.front() > 0);
  // Another grid's sums, or a restore after accumulating, are the caller's defect.
  SpectraGrid other = grid;
  other.omega.pop_back();
  SpectraAccumulator wrong(open_device(dev), other);
  BOOST_CHECK_THROW(wrong.restore(saved), Error);
  BOOST_CHECK_THROW(first.snapshot(), Error);  // finished
}

BOOST_AUTO_TEST_CASE(a_stopped_spectra_run_resumes_to_the_same_direct_spectra) {
  for (const std::string devices : {"0", "all"}) {
    if (devices == "all" && select_devices("all").size() < 2) BOOST_FAIL("needs two FP64 devices");
    const fs::path dir = test::temp_dir("spectra_resume");
    const std::string text = spectra_cell(12, devices, 6, 2);
    const auto file = test::write_file(dir, "cell.toml", text);
    const auto full = test::run_edm("run " + file.string() + " --quiet --output " + (dir / "full").string());
    BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);

    const fs::path part = dir / "part";
    // Stopped once the first electron is done (field and spectra): the batches in flight finish.
    const std::uint64_t next = run_and_stop(campaign(text, part), 1);
    BOOST_TEST_MESSAGE(devices << ": stopped with " << next << " of 12 electrons summed");
    BOOST_REQUIRE(next >= 2u);
    BOOST_REQUIRE(next < 12u);
    const CheckpointState st = read_checkpoint_state(checkpoint_path(part));
    BOOST_REQUIRE(st.devices == (devices == "0" ? 1u : 2u));
    const auto sums = load_checkpoint_spectra(checkpoint_path(part), st.devices, 9, 6);
    std::uint64_t in_ckpt = 0;
    for (const auto& s : sums) in_ckpt += s.electrons;
    BOOST_TEST(in_ckpt == next);  // the spectra of exactly the electrons in the cube

    const auto resumed = test::run_edm("resume " + part.string() + " --quiet");
    BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
    expect_same_direct(dir / "full", part);
    BOOST_TEST(attr(part / "spectrum.h5", "/direct", "electrons") == 12.0);
    BOOST_TEST(attr(part / "spectrum.h5", "/direct", "weight_sum") == attr(dir / "full" / "spectrum.h5", "/direct", "weight_sum"));
    BOOST_TEST(!fs::exists(checkpoint_path(part)));
  }
}

BOOST_AUTO_TEST_CASE(a_checkpoint_without_its_spectra_or_of_another_shape_is_refused) {
  const fs::path part = test::temp_dir("spectra_damaged") / "part";
  const std::string text = spectra_cell(12, "0", 6, 2);
  BOOST_REQUIRE(run_and_stop(campaign(text, part), 1) < 12u);
  const fs::path ckpt = checkpoint_path(part), kept = part / "kept.h5";
  fs::copy_file(ckpt, kept);
  struct Case {
    const char* what;
    void (*damage)(hid_t f);
    const char* id;
    const char* names;
  };
  const Case cases[] = {
      {"no /spectra (an older edm)", [](hid_t f) { H5Ldelete(f, "spectra", H5P_DEFAULT); }, "EDM-CKP-060", "/spectra"},
      {"coherent_d0 of another length",
       [](hid_t f) {
         H5Ldelete(f, "spectra/coherent_d0", H5P_DEFAULT);
         hsize_t n = 5;
         const hid_t sp = H5Screate_simple(1, &n, nullptr);
         const double v[5] = {0, 0, 0, 0, 0};
         const hid_t d = H5Dcreate2(f, "spectra/coherent_d0", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
         H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
         H5Dclose(d);
         H5Sclose(sp);
       },
       "EDM-CKP-062", "/spectra/coherent_d0"},
      {"another frequency count",
       [](hid_t f) {
         const hid_t g = H5Gopen2(f, "spectra", H5P_DEFAULT);
         const std::uint64_t v = 7;
         const hid_t a = H5Aopen(g, "frequencies", H5P_DEFAULT);
         H5Awrite(a, H5T_NATIVE_UINT64, &v);
         H5Aclose(a);
         H5Gclose(g);
       },
       "EDM-CKP-061", "/spectra"},
  };
  const auto registry = PluginRegistry::discover();
  for (const Case& c : cases) {
    fs::copy_file(kept, ckpt, fs::copy_options::overwrite_existing);
    const hid_t f = H5Fopen(ckpt.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    BOOST_REQUIRE(f >= 0);
    c.damage(f);
    H5Fclose(f);
    Recorder quiet;
    RunOptions again;
    again.resume = true;
    std::string id, what;
    try {
      run_campaign(campaign(text, part), registry, again, quiet);
    } catch (const IoError& e) {
      id = e.id();
      what = e.what();
    }
    BOOST_TEST(id == c.id, c.what << ": " << what);
    BOOST_TEST(what.find(c.names) != std::string::npos, c.what << ": " << what);
    BOOST_TEST(what.find(ckpt.string()) != std::string::npos, c.what << ": " << what);
    BOOST_TEST(!fs::exists(part / "spectrum.h5"));
  }
  // The file itself resumes.
  fs::copy_file(kept, ckpt, fs::copy_options::overwrite_existing);
  const auto r = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_TEST(r.exit_code == 0, r.output);
}

BOOST_AUTO_TEST_CASE(two_devices_agree_with_one_and_repeat_bit_for_bit) {
  BOOST_REQUIRE_MESSAGE(select_devices("all").size() >= 2, "needs two FP64 devices (POCL_DEVICES=\"pthread pthread\")");
  const fs::path dir = test::temp_dir("spectra_devices");
  for (const auto& [name, devices] : {std::pair{"one", "0"}, std::pair{"two", "all"}, std::pair{"again", "all"}}) {
    const auto file = test::write_file(dir, std::string(name) + ".toml", spectra_cell(7, devices));
    const auto r = test::run_edm("run " + file.string() + " --quiet --output " + (dir / name).string());
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  for (const char* name : {"/direct/coherent/d2W_domega_dOmega", "/direct/incoherent/d2W_domega_dOmega"}) {
    const auto one = test::h5_raw_doubles(dir / "one" / "spectrum.h5", name), two = test::h5_raw_doubles(dir / "two" / "spectrum.h5", name);
    const double rel = test::relative_l2(two, one);
    BOOST_TEST_MESSAGE("two devices vs one, " << name << ": relative L2 " << rel);
    BOOST_TEST(rel < test::tol::sharded);
  }
  // Complex amplitude as doubles (re, im pairs).
  const double rel = test::relative_l2(test::h5_raw_doubles(dir / "two" / "spectrum.h5", "/direct/coherent_amplitude"),
                                       test::h5_raw_doubles(dir / "one" / "spectrum.h5", "/direct/coherent_amplitude"));
  BOOST_TEST(rel < test::tol::sharded);
  BOOST_TEST(attr(dir / "two" / "spectrum.h5", "/direct", "electrons") == 7.0);
  expect_same_direct(dir / "two", dir / "again");  // a fixed order of the fold: the same bits every time
}

BOOST_AUTO_TEST_CASE(progress_counts_the_spectra_and_goes_on_after_the_field) {
  // Many frequencies on a light field: the spectra kernels run well past the field's.
  const auto registry = PluginRegistry::discover();
  const Campaign c = campaign(spectra_cell(3, "0", 150), test::temp_dir("spectra_progress") / "run");
  Recorder rec;
  RunOptions ro;
  ro.progress_interval = 0.005;
  run_campaign(c, registry, ro, rec);
  const auto& r = rec.reports;
  BOOST_REQUIRE(!r.empty());
  std::size_t behind = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    BOOST_TEST(r[i].done <= r[i].total);
    BOOST_TEST(r[i].done + r[i].spectra_behind <= r[i].total);
    if (i) BOOST_TEST(r[i].done >= r[i - 1].done);
    if (r[i].done < r[i].total) BOOST_TEST((std::isnan(r[i].eta) || r[i].eta > 0));
    behind += r[i].spectra_behind > 0;
  }
  BOOST_TEST(behind > 0u, "no report saw the spectra behind the field (" << r.size() << " reports)");
  BOOST_TEST(r.back().done == 3u);
  BOOST_TEST(r.back().spectra_behind == 0u);
  BOOST_TEST(r.back().eta == 0.0);
}

BOOST_AUTO_TEST_CASE(a_stop_while_only_the_spectra_run_checkpoints_and_resumes) {
  // Stopped once every field launch is done and the spectra are behind: everything is summed, so
  // the checkpoint holds all electrons and `edm resume` only finishes, to the same /direct.
  const auto registry = PluginRegistry::discover();
  const fs::path dir = test::temp_dir("spectra_tail_stop");
  const std::string text = spectra_cell(3, "0", 150);
  {
    Recorder quiet;
    run_campaign(campaign(text, dir / "full"), registry, RunOptions{}, quiet);
  }
  struct TailStop : RunObserver {
    std::atomic<bool> stop{false};
    void progress(const RunProgress& p) override {
      if (p.spectra_behind > 0 && p.done + p.spectra_behind == p.total) stop.store(true);
    }
  } rec;
  RunOptions ro;
  ro.stop = &rec.stop;
  ro.checkpoint_every = -1;
  ro.progress_interval = 0.005;
  std::string id;
  try {
    run_campaign(campaign(text, dir / "part"), registry, ro, rec);
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_REQUIRE_EQUAL(id, "EDM-RUN-010");
  BOOST_TEST(read_checkpoint_state(checkpoint_path(dir / "part")).next_electron == 3u);
  const auto r = test::run_edm("resume " + (dir / "part").string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  expect_same_direct(dir / "full", dir / "part");
}

BOOST_AUTO_TEST_CASE(edm_info_shows_the_direct_spectra_and_refuses_another_runs) {
  const fs::path dir = test::temp_dir("spectra_info");
  const auto file = test::write_file(dir, "cell.toml", spectra_cell(3, "0"));
  const fs::path run = dir / "run";
  auto r = test::run_edm("run " + file.string() + " --quiet --output " + run.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = test::run_edm("info " + run.string());
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(r.output.find("spectrum.h5 /direct: 3 x 3 directions x 6 ω (linear, 20 … 45 ω_L") != std::string::npos,
             r.output);
  BOOST_TEST(r.output.find("sum both") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("coherent on axis (n = 0, 0, 1)") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("incoherent on axis") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("3 electrons") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("MISMATCH") == std::string::npos, r.output);

  // /direct of another run (a spectrum.h5 copied in): reported, and the command fails.
  const hid_t f = H5Fopen((run / "spectrum.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const hid_t g = H5Gopen2(f, "/direct", H5P_DEFAULT);
  BOOST_REQUIRE(H5Adelete(g, "run_id") >= 0);
  const hid_t t = H5Tcopy(H5T_C_S1);
  const std::string other = "20000101T000000Z-abcdef";
  H5Tset_size(t, other.size());
  const hid_t sp = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(g, "run_id", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, other.c_str());
  H5Aclose(a), H5Sclose(sp), H5Tclose(t), H5Gclose(g), H5Fclose(f);
  r = test::run_edm("info " + run.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(r.output.find("EDM-INFO-020") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("MISMATCH") != std::string::npos, r.output);
  BOOST_TEST(r.output.find(other) != std::string::npos, r.output);
}
