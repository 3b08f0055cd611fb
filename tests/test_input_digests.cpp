// ctest-label: e2e
// Inputs checked by content (issue 30 item 2): run.toml [inputs] records each data file's path,
// size and FNV-1a digest (checked here against a digest computed in the test); `edm run
// RUN/run.toml` after one byte of the electron CSV changed is refused with EDM-RUN-072 naming the
// file and both digests, writing nothing, and runs with --allow-changed-inputs, its run.toml
// [warnings] saying so; another file named by --set is not compared. A checkpoint whose /spectra electron count is one short, or whose weight sum
// is doubled, is refused on resume with EDM-CKP-086 naming the dataset; the untouched one resumes.
#define BOOST_TEST_MODULE input_digests
#include <boost/test/unit_test.hpp>

#include <hdf5.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "progress_recorder.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// FNV-1a (64 bit), written here from its definition: the reference the record is checked against.
std::string fnv1a_hex(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

const char* kCell = R"(
[run]
scenario = "thomson"
mode = "total"
[laser]
profile = "plane_wave"
a0 = 0.5
duration = 8e-15
polarization = "circular_plus"
[electrons]
distribution = "list"
file = "electrons.csv"
[screen]
distance = 0.005
half_width = 3e-5
nx = 4
ny = 3
samples = 128
samples_per_period = 32
)";
const std::string kCsv = "t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,0\n0,1e-6,0,0,0,0,0\n";

test::CommandResult edm_run(const std::string& args) {
  return test::run_command(test::edm_binary().string() + " run " + args);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_replay_whose_electron_list_changed_is_refused_or_warned) {
  const fs::path dir = test::temp_dir("input_digests");
  const fs::path cell = test::write_file(dir, "cell.toml", kCell), csv = test::write_file(dir, "electrons.csv", kCsv);
  auto r = edm_run(cell.string() + " --quiet --output " + (dir / "first").string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  // [inputs]: the file the run read, by path, size and content.
  const toml::table m = toml::parse_file((dir / "first" / "run.toml").string());
  const toml::array* files = m["inputs"]["files"].as_array();
  BOOST_REQUIRE(files && files->size() == 1);
  const toml::table& e = *files->get(0)->as_table();
  BOOST_TEST(e["key"].value_or(std::string()) == "electrons.file");
  BOOST_TEST(fs::path(e["path"].value_or(std::string())).filename() == "electrons.csv");
  BOOST_TEST(e["bytes"].value_or(std::int64_t(-1)) == std::int64_t(kCsv.size()));
  const std::string was = "fnv1a " + fnv1a_hex(kCsv);
  BOOST_TEST(e["digest"].value_or(std::string()) == was);

  // An untouched input replays.
  const std::string replay = (dir / "first" / "run.toml").string() + " --quiet --output ";
  r = edm_run(replay + (dir / "same").string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  // One byte of the CSV edited (1e-6 → 2e-6): refused, both digests named, nothing written.
  std::string edited = kCsv;
  edited[edited.find("1e-6")] = '2';
  test::write_file(dir, "electrons.csv", edited);
  r = edm_run(replay + (dir / "refused").string());
  BOOST_TEST(r.exit_code == 2, r.output);
  BOOST_TEST(r.output.find("EDM-RUN-072") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("electrons.csv") != std::string::npos, r.output);
  BOOST_TEST(r.output.find(was) != std::string::npos, r.output);
  BOOST_TEST(r.output.find("fnv1a " + fnv1a_hex(edited)) != std::string::npos, r.output);
  BOOST_TEST(!fs::exists(dir / "refused" / "field.h5"));
  BOOST_TEST(!fs::exists(dir / "refused" / "run.toml"));

  // Another file named on purpose (an override of the path) is not the recorded input: it runs.
  const fs::path copy = test::write_file(dir, "other.csv", edited);
  r = edm_run(replay + (dir / "other").string() + " --set electrons.file=\"" + copy.string() + "\"");
  BOOST_TEST(r.exit_code == 0, r.output);

  // Allowed on purpose: it runs, and its run.toml says which input changed.
  r = edm_run(replay + (dir / "allowed").string() + " --allow-changed-inputs");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const toml::table a = toml::parse_file((dir / "allowed" / "run.toml").string());
  bool warned = false;
  if (const toml::array* w = a["warnings"]["messages"].as_array())
    for (auto&& msg : *w) {
      const std::string s = msg.value_or(std::string());
      warned = warned || (s.find("--allow-changed-inputs") != std::string::npos &&
                          s.find("electrons.file") != std::string::npos && s.find(was) != std::string::npos);
    }
  BOOST_TEST(warned, "no [warnings] message names the changed input");
  // The new run records the file it read: a replay of it (the CSV unchanged since) runs.
  const toml::table& now = *a["inputs"]["files"].as_array()->get(0)->as_table();
  BOOST_TEST(now["digest"].value_or(std::string()) == "fnv1a " + fnv1a_hex(edited));
}

namespace {

Campaign far_campaign(const std::string& text, const fs::path& out) {
  const auto registry = PluginRegistry::discover();
  return parse_campaign(text, "cell.toml", {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                        registry.get("inverse_thomson").keys(), false);
}

// Runs the campaign in-process and stops it once `stop_at` electrons are done: a checkpoint.
void run_and_stop(const Campaign& c, std::uint64_t stop_at) {
  const auto registry = PluginRegistry::discover();
  std::atomic<bool> stop{false};
  test::ProgressRecorder rec;
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
}

// Reads the 1-D dataset `name`, lets `edit` change it, and writes it back in place.
template <class T>
void edit_dataset(const fs::path& file, const char* name, hid_t type, void (*edit)(std::vector<T>&)) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  const hid_t sp = H5Dget_space(d);
  std::vector<T> v(std::size_t(H5Sget_simple_extent_npoints(sp)));
  BOOST_REQUIRE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  edit(v);
  BOOST_REQUIRE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Sclose(sp), H5Dclose(d), H5Fclose(f);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_checkpoint_whose_spectra_sums_were_edited_is_refused) {
  const fs::path part = test::temp_dir("spectra_sums_edited") / "part";
  const std::string text = test::small_far_cell({.electrons = 8, .electron_batch = "2", .devices = "0"}) +
                           test::small_far_spectra("direct", 6);
  run_and_stop(far_campaign(text, part), 1);
  const fs::path ckpt = checkpoint_path(part), kept = part / "kept.h5";
  const CheckpointState st = read_checkpoint_state(ckpt);
  BOOST_REQUIRE(st.next_electron > 0 && st.next_electron < 8);
  fs::copy_file(ckpt, kept);
  struct Case {
    const char* what;
    void (*damage)(const fs::path&);
    const char* names;
  };
  const Case cases[] = {
      {"one electron short",
       [](const fs::path& f) {
         edit_dataset<std::uint64_t>(f, "spectra/electrons", H5T_NATIVE_UINT64, [](std::vector<std::uint64_t>& v) { v[0] -= 1; });
       },
       "/spectra/electrons"},
      {"the weight sum doubled",
       [](const fs::path& f) {
         edit_dataset<double>(f, "spectra/weight_sum", H5T_NATIVE_DOUBLE, [](std::vector<double>& v) { v[0] *= 2; });
       },
       "/spectra/weight_sum"},
  };
  const auto registry = PluginRegistry::discover();
  for (const Case& c : cases) {
    fs::copy_file(kept, ckpt, fs::copy_options::overwrite_existing);
    c.damage(ckpt);
    test::ProgressRecorder quiet;
    RunOptions again;
    again.resume = true;
    std::string id, what;
    try {
      run_campaign(far_campaign(text, part), registry, again, quiet);
    } catch (const IoError& e) {
      id = e.id();
      what = e.what();
    }
    BOOST_TEST(id == "EDM-CKP-086", c.what << ": " << what);
    BOOST_TEST(what.find(c.names) != std::string::npos, c.what << ": " << what);
    BOOST_TEST(what.find(ckpt.string()) != std::string::npos, c.what << ": " << what);
    BOOST_TEST(!fs::exists(part / "spectrum.h5"));
    BOOST_TEST(!fs::exists(part / "field.h5"));
  }
  // The untouched checkpoint resumes.
  fs::copy_file(kept, ckpt, fs::copy_options::overwrite_existing);
  const auto r = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_TEST(r.exit_code == 0, r.output);
}
