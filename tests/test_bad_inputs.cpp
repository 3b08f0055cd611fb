// ctest-label: e2e
// Hardened input, end to end through the edm binary: a table of bad campaigns, bad data files and
// bad output places, each with the exit code and message fragments the user must see, and a full
// disk (tiny tmpfs mounts). Every case must fail cleanly: the stated exit code (never a crash or a
// hang), a stable error id, and no field.h5 / field.h5.partial / run.toml left in the run folder
// (a disk full only at the manifest or at the direct spectra keeps the complete field, as
// field.h5.partial).
#define BOOST_TEST_MODULE bad_inputs
#include <boost/test/unit_test.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "spawn.hpp"
#include "test_support.hpp"
#include "tiny_disk.hpp"

namespace fs = std::filesystem;
namespace test = edm::test;

namespace {

// Keeps every run tiny (2 electrons, 4 × 4 pixels, 32 samples): the cases test refusals, not physics.
const std::string kTiny =
    " --set screen.nx=4 --set screen.ny=4 --set screen.samples=32 --set electrons.count=2";

// The base campaign (quickstart's physics) as section → lines; a case adds its own lines, so no key
// is written twice (a duplicate key would be a TOML syntax error, not the check the case is about).
using Sections = std::map<std::string, std::vector<std::string>>;
Sections base_campaign() {
  return {{"run", {"scenario = \"inverse_thomson\""}},
          {"laser", {"profile = \"gaussian\"", "wavelength = 800e-9", "duration = 26.7e-15", "waist = 20e-6"}},
          {"electrons", {"radius = 5e-6", "gamma = 5.0"}},
          {"screen", {"half_width = 1.5e-4"}},
          {"trajectory", {}},
          {"accumulator", {}}};
}

fs::path write_campaign(const fs::path& dir, const std::string& name, const Sections& extra) {
  Sections s = base_campaign();
  for (const auto& [section, lines] : extra) s[section].insert(s[section].end(), lines.begin(), lines.end());
  std::ostringstream os;
  for (const auto& [section, lines] : s) {
    os << "[" << section << "]\n";
    for (const auto& l : lines) os << l << "\n";
  }
  const fs::path p = dir / name;
  std::ofstream(p) << os.str();
  return p;
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// `timeout` turns a hang into exit 124, which no case expects; a crash shows as 128 + signal.
test::CommandResult run_edm(const std::string& args) {
  return test::run_command("timeout 300 " + test::edm_binary().string() + " " + args);
}

// Nothing that looks like a result may be left behind by a failed run.
void check_no_results(const fs::path& out, const std::string& label) {
  for (const char* f : {"field.h5", "field.h5.partial", "run.toml"}) {
    std::error_code ec;
    BOOST_TEST(!fs::exists(out / f, ec), label << ": " << (out / f).string() << " was left behind");
  }
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Case {
  std::string label;
  Sections toml;          // lines added to the base campaign
  std::string args;       // extra command-line arguments
  int exit_code;          // 2 campaign/CLI input, 3 device, 4 I/O, 5 plugin, 6 physics
  std::vector<std::string> fragments;  // each must appear in the output
  std::string output;     // run folder ("" = <case dir>/run)
};

void run_case(const fs::path& dir, const Case& c) {
  const fs::path campaign = write_campaign(dir, "cell.toml", c.toml);
  const std::string out = c.output.empty() ? (dir / "run").string() : c.output;
  const auto r = run_edm("run " + campaign.string() + " --quiet --output " + out + kTiny + " " + c.args);
  BOOST_TEST_MESSAGE(c.label << " → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == c.exit_code, c.label << ": exit " << r.exit_code << ", expected " << c.exit_code
                                                 << "; output: " << r.output);
  // A stable id people can search for (share/docs/errors.md), from the app's error path (not "internal error").
  BOOST_TEST(contains(r.output, "edm: error [EDM-"), c.label << ": no error id in: " << r.output);
  for (const auto& f : c.fragments)
    BOOST_TEST(contains(r.output, f), c.label << ": message lacks '" << f << "': " << r.output);
  check_no_results(out, c.label);
}

}  // namespace

BOOST_AUTO_TEST_CASE(bad_campaign_values_are_refused_with_the_key_and_place) {
  const auto dir = test::temp_dir("badcfg");
  const std::vector<Case> cases = {
      // The file's own location (cell.toml:line:col) is part of the message.
      {"NaN in the file", {{"screen", {"distance = nan"}}}, "", 2, {"cell.toml:", "distance", "finite"}},
      {"Inf in the file", {{"laser", {"a0 = inf"}}}, "", 2, {"cell.toml:", "a0", "finite"}},
      {"-Inf in the file", {{"screen", {"distance = -inf"}}}, "", 2, {"cell.toml:", "distance", "finite"}},
      {"NaN on the command line", {}, "--set laser.wavelength=nan", 2, {"laser.wavelength=nan", "finite"}},
      {"1e400 overflows to Inf", {}, "--set screen.distance=1e400", 2, {"screen.distance=1e400", "finite"}},
      {"negative size", {}, "--set screen.ny=-4", 2, {"ny", "-4"}},
      {"zero samples", {}, "--set screen.samples=0", 2, {"samples"}},
      {"size beyond int", {}, "--set screen.nx=10000000000", 2, {"nx", "out of range"}},
      {"non-numeric on the command line", {}, "--set screen.samples=many", 2, {"samples", "expected an integer"}},
      {"non-numeric in the file", {{"electrons", {"count = \"16\""}}}, "", 2,
       {"cell.toml:", "count", "expected an integer"}},
      {"float for an integer key", {{"screen", {"samples_per_period = 512.5"}}}, "", 2,
       {"cell.toml:", "samples_per_period", "expected an integer"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto d = dir / ("case" + std::to_string(i));
    fs::create_directories(d);
    run_case(d, cases[i]);
  }
}

// Absurd screens must be refused with a message naming the screen before any trajectory is solved
// or any buffer allocated, not discovered as an out-of-memory kill: nx = 10⁹ (with ny = 4 more pixels
// than an int counts), nx = 10⁹ × ny = 1 (a 768 GB field buffer: the device memory guard), and a
// cube of 6 × 10²⁰ bytes whose byte count wraps past 2⁶⁴ (the guard once saw it as "1 MiB").
BOOST_AUTO_TEST_CASE(absurd_screens_are_refused_before_any_work) {
  const auto dir = test::temp_dir("absurd");
  const auto campaign = write_campaign(dir, "cell.toml", {});
  struct Absurd {
    std::string args;
    int exit_code;
    std::string fragment;
  } cases[] = {
      {"--set screen.nx=1000000000", 2, "screen.nx"},
      {"--set screen.nx=1000000000 --set screen.ny=1", 3, "nx = 1000000000"},
      {"--set screen.nx=32768 --set screen.ny=10923 --set screen.samples=2147418114", 3, "samples = 2147418114"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto out = dir / ("run" + std::to_string(i++));
    // Not --quiet: the phases show whether trajectories were started before the refusal.
    const auto r = run_edm("run " + campaign.string() + " --output " + out.string() + kTiny + " " + c.args);
    BOOST_TEST_MESSAGE(c.args << " → exit " << r.exit_code << ": " << r.output);
    BOOST_TEST(r.exit_code == c.exit_code, c.args << ": exit " << r.exit_code << ": " << r.output);
    BOOST_TEST(contains(r.output, "edm: error [EDM-"), r.output);
    BOOST_TEST(contains(r.output, c.fragment), c.args << ": message lacks '" << c.fragment << "': " << r.output);
    BOOST_TEST(!contains(r.output, "[trajectories]"), c.args << ": trajectories were solved first: " << r.output);
    check_no_results(out, c.args);
  }
}

BOOST_AUTO_TEST_CASE(bad_data_files_are_refused_with_file_and_line) {
  const auto dir = test::temp_dir("baddata");
  const auto csv = [&](const std::string& name, const std::string& body) {
    write_text(dir / name, "# t0,x,y,z,ux,uy,uz\n" + body);
    return Sections{{"electrons", {"distribution = \"list\"", "file = \"" + name + "\""}}};
  };
  // A deterministic "corrupt HDF5 file": 4 KiB of random bytes (mt19937 is the same everywhere).
  {
    std::mt19937 rng(12345);
    std::string bytes(4096, '\0');
    for (auto& b : bytes) b = char(rng() & 0xff);
    write_text(dir / "corrupt.h5", bytes);
  }
  const Sections tracks = {{"trajectory", {"model = \"tracks\"", "file = \"corrupt.h5\""}}};
  const std::vector<Case> cases = {
      // The line number counts the comment line written above: the bad row is line 3.
      {"CSV non-numeric field", csv("nonnum.csv", "0,0,0,0,0,0,4.9\n0,0,zero,0,0,0,4.9\n"), "", 2,
       {"nonnum.csv:3", "column y", "zero"}},
      {"CSV wrong column count", csv("columns.csv", "0,0,0,0,0,0,4.9\n0,0,0,0,0,4.9\n"), "", 2,
       {"columns.csv:3", "expected 7 columns", "found 6"}},
      {"CSV NaN", csv("nan.csv", "0,0,0,0,0,0,4.9\n0,0,0,0,0,0,nan\n"), "", 2, {"nan.csv:3", "uz", "not finite"}},
      // γ = √(1 + u²) overflows to Inf at |u| = 1e300: refused as out of range, never integrated.
      {"CSV |u| making gamma overflow", csv("huge_u.csv", "0,0,0,0,0,0,4.9\n0,0,0,0,1e300,0,0\n"), "", 2,
       {"huge_u.csv:3", "out of range"}},
      {"CSV value overflowing a double", csv("overflow.csv", "0,0,0,0,0,0,1e400\n"), "", 2, {"overflow.csv:2", "uz"}},
      {"missing CSV", {{"electrons", {"distribution = \"list\"", "file = \"missing.csv\""}}}, "", 2,
       {"missing.csv", "not found"}},
      {"missing tracks file", {{"trajectory", {"model = \"tracks\"", "file = \"missing.h5\""}}}, "", 2,
       {"missing.h5", "not found"}},
      // Read inside the scenario plugin: the reader's I/O error must survive the plugin boundary.
      {"corrupt tracks file", tracks, "", 4, {"corrupt.h5", "EDM-IO-040"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    // The data files sit beside the campaign (paths in a campaign are relative to its folder).
    Case c = cases[i];
    c.output = (dir / ("run" + std::to_string(i))).string();
    run_case(dir, c);
  }
}

BOOST_AUTO_TEST_CASE(unwritable_output_is_an_io_error_naming_the_path) {
  // As root, permissions do not stop a write: use places no one can create a folder in.
  const auto dir = test::temp_dir("unwritable");
  write_text(dir / "afile", "a regular file, not a folder\n");
  const std::vector<Case> cases = {
      {"output below a regular file", {}, "", 4, {(dir / "afile" / "run").string()}, (dir / "afile" / "run").string()},
      {"output below /proc", {}, "", 4, {"/proc/edm-no-such-dir/run"}, "/proc/edm-no-such-dir/run"},
  };
  for (const auto& c : cases) run_case(dir, c);
  // The user's file is untouched.
  std::ifstream in(dir / "afile");
  std::string line;
  std::getline(in, line);
  BOOST_TEST(line == "a regular file, not a folder");
}

namespace {
using edm::test::TinyDisk;  // tests/support/tiny_disk.hpp

// A run whose field was complete when the disk filled: nothing under the final names (a field.h5
// without run.toml looks finished), the field kept as field.h5.partial and the message saying so.
void expect_field_kept_as_partial(const fs::path& out, const std::string& output) {
  BOOST_TEST(!fs::exists(out / "field.h5"));
  BOOST_TEST(!fs::exists(out / "run.toml"));
  BOOST_TEST(fs::exists(out / "field.h5.partial"), "the complete field should be kept as field.h5.partial");
  BOOST_TEST(contains(output, "field.h5.partial"), "the message must say where the field is: " << output);
}
}  // namespace

// A full disk while field.h5 is written: exit 4 with the path, nothing under the final name, the
// partial file removed and the user's files already in the folder untouched. (libhdf5 used to
// segfault at exit after such a failure: exit 139 instead of 4.)
BOOST_AUTO_TEST_CASE(full_disk_fails_cleanly) {
  const auto dir = test::temp_dir("fulldisk");
  TinyDisk disk(dir / "disk", 64 * 1024);
  if (!disk.mounted) {
    BOOST_TEST_MESSAGE("SKIPPED full_disk_fails_cleanly: cannot mount a tmpfs here (" << disk.why << "; needs root)");
    return;
  }

  const fs::path out = disk.dir / "run";
  fs::create_directories(out);
  write_text(out / "notes.txt", "the user's notes\n");
  // 6 components × 4 × 4 pixels × 512 samples × 8 bytes = 384 KiB: cannot fit in 64 KiB.
  const auto campaign = write_campaign(dir, "cell.toml", {});
  const auto r = run_edm("run " + campaign.string() + " --quiet --output " + out.string() + kTiny +
                         " --set screen.samples=512");
  BOOST_TEST_MESSAGE("full disk → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 4, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "edm: error [EDM-IO-"), r.output);
  BOOST_TEST(contains(r.output, out.string()), "the message must name the path: " << r.output);
  check_no_results(out, "full disk");
  std::ifstream in(out / "notes.txt");
  std::string line;
  std::getline(in, line);
  BOOST_TEST(line == "the user's notes");
}

// A disk with room for field.h5 but not for run.toml: a field without its manifest would look like a
// finished run, so nothing may stay under the final names; the complete field is kept as
// field.h5.partial (a full disk should not throw hours of work away). The tmpfs is sized from a
// successful run of the same campaign: the field's pages plus one, less than the manifest needs.
BOOST_AUTO_TEST_CASE(full_disk_at_the_manifest_leaves_no_field_under_its_final_name) {
  const auto dir = test::temp_dir("fullmanifest");
  const auto campaign = write_campaign(dir, "cell.toml", {});
  const std::string args = " --quiet" + kTiny + " --set screen.samples=16";
  const auto ok = run_edm("run " + campaign.string() + " --output " + (dir / "ok").string() + args);
  BOOST_REQUIRE_MESSAGE(ok.exit_code == 0, ok.output);
  const std::uint64_t page = 4096, field = fs::file_size(dir / "ok" / "field.h5");
  const std::uint64_t manifest = fs::file_size(dir / "ok" / "run.toml");
  BOOST_REQUIRE_MESSAGE(manifest > page, "the manifest (" << manifest << " B) must need more than one page");
  TinyDisk disk(dir / "disk", (field + page - 1) / page * page + page);
  if (!disk.mounted) {
    BOOST_TEST_MESSAGE("SKIPPED full_disk_at_the_manifest…: cannot mount a tmpfs here (" << disk.why
                                                                                        << "; needs root)");
    return;
  }
  const fs::path out = disk.dir / "run";
  const auto r = run_edm("run " + campaign.string() + " --output " + out.string() + args);
  BOOST_TEST_MESSAGE("full disk at the manifest → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 4, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "edm: error [EDM-IO-"), r.output);
  BOOST_TEST(contains(r.output, (out / "run.toml").string()), "the message must name the manifest: " << r.output);
  BOOST_TEST(!fs::exists(out / "run.toml.partial"));
  expect_field_kept_as_partial(out, r.output);
}

// A disk with room for field.h5 but not for the direct spectra's spectrum.h5: field.h5 was committed
// before the spectra were written, so the run failed leaving field.h5 without run.toml (found by a
// hostile tester), which looks like a finished run to the next `edm run` and to nothing else. Now
// as at the manifest: nothing under the final names, the complete field kept as field.h5.partial.
BOOST_AUTO_TEST_CASE(full_disk_at_the_spectra_leaves_no_field_under_its_final_name) {
  const auto dir = test::temp_dir("fullspectra");
  const std::string text = test::small_far_cell({.electrons = 2}) + test::small_far_spectra("", 400);
  const auto campaign = dir / "far.toml";
  write_text(campaign, text);
  const auto ok = run_edm("run " + campaign.string() + " --quiet --output " + (dir / "ok").string());
  BOOST_REQUIRE_MESSAGE(ok.exit_code == 0, ok.output);
  const std::uint64_t page = 4096, field = fs::file_size(dir / "ok" / "field.h5");
  const std::uint64_t spectrum = fs::file_size(dir / "ok" / "spectrum.h5");
  BOOST_REQUIRE_MESSAGE(spectrum > 2 * page, "spectrum.h5 (" << spectrum << " B) must need more than two pages");
  TinyDisk disk(dir / "disk", (field + page - 1) / page * page + page);
  if (!disk.mounted) {
    BOOST_TEST_MESSAGE("SKIPPED full_disk_at_the_spectra…: cannot mount a tmpfs here (" << disk.why << "; needs root)");
    return;
  }
  const fs::path out = disk.dir / "run";
  const auto r = run_edm("run " + campaign.string() + " --quiet --output " + out.string());
  BOOST_TEST_MESSAGE("full disk at the spectra → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 4, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "spectrum.h5"), "the message must name the spectra file: " << r.output);
  BOOST_TEST(!fs::exists(out / "spectrum.h5"));
  BOOST_TEST(!fs::exists(out / "spectrum.h5.partial"));
  expect_field_kept_as_partial(out, r.output);
}

// Fewer than 2 samples per Doppler-shifted laser period put the emitted line above the Nyquist
// frequency: the field and its spectra held the alias without a word (a γ = 12 run's on-axis peak at
// 452 ω for the 572 ω line; found by a hostile tester). A warning naming the samples_per_period that
// would do; with screen.strict an error (EDM-WIN-021, exit 6) before any device time.
BOOST_AUTO_TEST_CASE(an_aliased_fundamental_is_named) {
  const auto dir = test::temp_dir("aliased");
  // The small cell's γ = 3 backscatter line lies at about 36 ω_L: 64 samples per laser period give
  // P ≈ 1.8 samples per its period.
  write_text(dir / "cell.toml", test::small_cell({.electrons = 2, .screen = "half_width = 5e-5\nnx = 4\nny = 4\nsamples = 64\n"}));
  const std::string base = "run " + (dir / "cell.toml").string() + " --quiet --set screen.samples_per_period=64";
  const auto warned = run_edm(base + " --output " + (dir / "warned").string());
  BOOST_TEST(warned.exit_code == 0, warned.output);
  BOOST_TEST(contains(warned.output, "above the Nyquist frequency"), warned.output);
  BOOST_TEST(contains(warned.output, "screen.samples_per_period >="), warned.output);
  const auto strict = run_edm(base + " --set screen.strict=true --output " + (dir / "strict").string());
  BOOST_TEST(strict.exit_code == 6, strict.output);
  BOOST_TEST(contains(strict.output, "EDM-WIN-021"), strict.output);
  BOOST_TEST(!fs::exists(dir / "strict" / "field.h5"));
  const auto fine = run_edm("run " + (dir / "cell.toml").string() + " --quiet --output " + (dir / "fine").string());
  BOOST_TEST(fine.exit_code == 0, fine.output);
  BOOST_TEST(!contains(fine.output, "Nyquist"), fine.output);
}
