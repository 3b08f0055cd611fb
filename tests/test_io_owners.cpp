// ctest-label: e2e
// The io owners of a run folder (edm/run_files.hpp, edm/run_manifest.hpp; share/docs/developing.md
// "The io owners"): RunFolder's names, refusals, completeness and listing; RunManifest's format
// check, named missing keys and typed values, the latter against run.toml read here with toml++ on
// its own and against the small e2e cell's physics. Needs a working `edm run` (PoCL is enough).
#define BOOST_TEST_MODULE io_owners
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <numbers>

#include <toml++/toml.h>

#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/launch.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum.hpp"
#include "edm/units.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using edm::test::run_edm;
using edm::test::slurp;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One run of the small e2e cell, shared by the cases (they copy it before they damage anything).
const fs::path& small_run() {
  static const fs::path run = [] {
    const fs::path dir = edm::test::temp_dir("io_owners");
    const auto campaign = edm::test::write_file(dir, "cell.toml", edm::test::small_cell());
    const auto r = run_edm("run " + campaign.string() + " --quiet --output " + (dir / "run").string());
    if (r.exit_code != 0) throw std::runtime_error("edm run of the small cell failed:\n" + r.output);
    return dir / "run";
  }();
  return run;
}

// A copy of the small run's folder whose run.toml `edit` rewrites.
fs::path damaged_copy(const std::string& tag, const std::function<void(std::string&)>& edit) {
  const fs::path dir = edm::test::temp_dir(tag) / "run";
  fs::create_directories(dir);
  for (const char* f : {"run.toml", "field.h5"}) fs::copy_file(small_run() / f, dir / f);
  std::string text = slurp(dir / "run.toml");
  edit(text);
  std::ofstream(dir / "run.toml", std::ios::trunc) << text;
  return dir;
}

// The line "key = …" of [section] (run.toml's tables are written in name order, so the same key
// of another table, [campaign.screen] type, may come first in the file).
std::size_t key_line(const std::string& text, const std::string& section, const std::string& key) {
  const auto head = text.find("\n[" + section + "]\n");
  BOOST_REQUIRE_MESSAGE(head != std::string::npos, "no [" << section << "]");
  const auto at = text.find("\n" + key + " = ", head + 1);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos && at < text.find("\n[", head + 1), "no " << section << "." << key);
  return at + 1;
}

void erase_key(std::string& text, const std::string& section, const std::string& key) {
  const auto at = key_line(text, section, key);
  text.erase(at, text.find('\n', at) + 1 - at);
}

void set_key(std::string& text, const std::string& section, const std::string& key, const std::string& value) {
  const auto at = key_line(text, section, key);
  text.replace(at, text.find('\n', at) - at, key + " = " + value);
}

template <class F>
std::string error_of(const F& f, const std::string& id) {
  try {
    f();
  } catch (const edm::Error& e) {
    BOOST_TEST(std::string(e.id()) == id, e.what());
    return e.what();
  }
  BOOST_FAIL("no error; expected " << id);
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_folder)

BOOST_AUTO_TEST_CASE(names_and_staging_names) {
  const edm::RunFolder f("/data/r1");
  BOOST_TEST(f.field() == fs::path("/data/r1/field.h5"));
  BOOST_TEST(f.manifest() == fs::path("/data/r1/run.toml"));
  BOOST_TEST(f.spectrum() == fs::path("/data/r1/spectrum.h5"));
  BOOST_TEST(f.checkpoint() == fs::path("/data/r1/checkpoint.h5"));
  BOOST_TEST(f.plots() == fs::path("/data/r1/plots"));
  BOOST_TEST(edm::RunFolder::staging(f.field()) == fs::path("/data/r1/field.h5.partial"));
  BOOST_TEST(edm::RunFolder::staging(f.manifest()) == fs::path("/data/r1/run.toml.partial"));
}

// A FIFO, folder or link at the names the run renames its files over is refused before any work
// (EDM-RUN-071, naming the path and what it is); where a file is read, a FIFO or folder is
// refused (EDM-IO-142) without blocking on the FIFO. Nothing there is changed.
BOOST_AUTO_TEST_CASE(refuses_what_is_not_a_regular_file_at_each_path) {
  const fs::path dir = edm::test::temp_dir("io_owners_special");
  const edm::RunFolder f(dir);
  const fs::path target = edm::test::write_file(dir, "elsewhere.txt", "mine");
  for (const fs::path& p : {f.field(), f.manifest(), f.checkpoint()}) {
    struct Case {
      const char* kind;
      std::function<void()> make;
    } cases[] = {{"a FIFO", [&] { BOOST_REQUIRE(::mkfifo(p.c_str(), 0600) == 0); }},
                 {"a folder", [&] { fs::create_directory(p); }},
                 {"a symbolic link", [&] { fs::create_symlink(target, p); }}};
    for (const auto& c : cases) {
      c.make();
      const std::string what = error_of([&] { f.refuse_non_regular_targets(); }, "EDM-RUN-071");
      BOOST_TEST(contains(what, p.string() + " is " + c.kind), what);
      if (std::string(c.kind) != "a symbolic link") {
        const std::string read = error_of([&] { edm::RunFolder::refuse_special(p); }, "EDM-IO-142");
        BOOST_TEST(contains(read, p.string()), read);
      }
      fs::remove(p);
    }
  }
  BOOST_TEST(slurp(target) == "mine");
  // The manifest reader refuses a FIFO at run.toml (it would wait for ever on it).
  BOOST_REQUIRE(::mkfifo(f.manifest().c_str(), 0600) == 0);
  error_of([&] { (void)edm::RunManifest::read(f); }, "EDM-IO-142");
  fs::remove(f.manifest());
  // A spectrum.h5 that is a folder is refused by refuse_special_files.
  fs::create_directory(f.spectrum());
  error_of([&] { f.refuse_special_files(); }, "EDM-IO-142");
}

BOOST_AUTO_TEST_CASE(completeness_and_listing) {
  const fs::path dir = edm::test::temp_dir("io_owners_listing");
  const edm::RunFolder f(dir);
  BOOST_TEST(!f.complete());
  edm::test::write_file(dir, "run.toml", "x");
  BOOST_TEST(f.has_manifest());
  BOOST_TEST(!f.complete());
  edm::test::write_file(dir, "field.h5.partial", "12345");  // a staging name is no product
  BOOST_TEST(!f.has_field());
  edm::test::write_file(dir, "field.h5", "123");
  BOOST_TEST(f.complete());
  BOOST_TEST(!f.has_spectrum());
  BOOST_TEST(!f.has_checkpoint());
  fs::create_directory(f.plots());
  edm::test::write_file(f.plots(), "a.png", "pn");
  const auto list = f.listing();
  BOOST_REQUIRE(list.size() == 4u);
  BOOST_TEST(list[0].name == "field.h5");
  BOOST_TEST(list[0].bytes == 3u);
  BOOST_TEST(list[1].name == "field.h5.partial");
  BOOST_TEST(list[2].name == (fs::path("plots") / "a.png").string());
  BOOST_TEST(list[2].bytes == 2u);
  BOOST_TEST(list[3].name == "run.toml");
  for (const auto& e : list) BOOST_TEST(!e.vanished);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(run_manifest)

// The values read back from a real run, against run.toml parsed here on its own and against the
// small cell's physics (inverse Thomson: a beam of γ = 3 along +z into a laser along −z, the screen
// 2 cm downstream).
BOOST_AUTO_TEST_CASE(typed_values_of_a_real_run) {
  const edm::RunFolder f(small_run());
  const edm::RunManifest m = edm::RunManifest::read(f);
  const toml::table t = toml::parse_file(f.manifest().string());
  BOOST_TEST(m.format() == edm::kRunFormat);
  BOOST_TEST(t["provenance"]["format"].value_or(0) == 1);
  BOOST_TEST(!m.run_id().empty());
  BOOST_TEST(m.run_id() == t["provenance"]["run_id"].value_or(std::string()));
  BOOST_TEST(m.edm_version() == t["provenance"]["edm_version"].value_or(std::string()));
  BOOST_TEST(m.scenario() == "inverse_thomson");
  const double lambda = t["laser"]["wavelength"].value_or(0.0);
  BOOST_TEST(m.laser_omega() == 2 * std::numbers::pi * edm::si::c / lambda, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(m.a0() > 0.0);
  BOOST_TEST(m.a0() <= 0.3 + 1e-12);
  const auto k = m.kinematics();
  BOOST_REQUIRE(k.has_value());
  BOOST_TEST(k->electrons == 16u);
  BOOST_TEST(k->laser_direction == -1);
  BOOST_TEST(k->gamma_mean == 3.0, boost::test_tools::tolerance(1e-9));
  // h = γ − s u_z = γ + u_z for a beam along +z: γ + √(γ² − 1).
  BOOST_TEST(k->light_front_h == 3.0 + std::sqrt(8.0), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m.screen_type() == "flat");
  BOOST_TEST(m.screen_side() == 1);
  BOOST_TEST((m.screen_axis() == std::array<double, 3>{0, 0, 1}));
  BOOST_TEST(m.knots_per_period() == t["config"]["knots_per_period"].value_or(-1));
  BOOST_TEST(m.knots_per_period() > 0);
  BOOST_TEST(m.window().covered);
  BOOST_TEST(m.warnings().size() == std::size_t(t["warnings"]["count"].value_or(-1)));
  BOOST_TEST(m.timing_total().value_or(-1) >= 0.0);
  BOOST_TEST(m.field_run_id().value_or("") == m.run_id());
  BOOST_TEST(m.field_bytes().value_or(0) == std::int64_t(fs::file_size(f.field())));
  const toml::table campaign = toml::parse(m.campaign_text());
  BOOST_TEST(campaign["run"]["scenario"].value_or(std::string()) == "inverse_thomson");
  BOOST_TEST(edm::scenario_of(m.campaign_text(), {}) == "inverse_thomson");
  // read_run_physics takes the manifest: the line of this run is the backscatter line of γ = 3.
  const edm::RunPhysics p = edm::read_run_physics(m);
  BOOST_TEST(p.laser_omega == m.laser_omega());
  BOOST_TEST(p.screen_side == 1);
  BOOST_TEST(edm::line_known(p));
}

// A run.toml of another format, or of none (an edm before formats), is refused naming the file,
// the edm that wrote it and both formats; edm info says how to replay it and changes nothing; the
// replay itself (`edm run RUN/run.toml`) still reads its [campaign].
BOOST_AUTO_TEST_CASE(another_format_is_refused_naming_both_versions) {
  for (const std::string& format : {std::string("0"), std::string("2"), std::string()}) {
    const fs::path dir = damaged_copy("io_owners_format" + format, [&](std::string& text) {
      if (format.empty())
        erase_key(text, "provenance", "format");
      else
        set_key(text, "provenance", "format", format);
    });
    const std::string before = slurp(dir / "run.toml");
    const std::string what = error_of([&] { (void)edm::RunManifest::read(edm::RunFolder(dir)); }, "EDM-IO-160");
    BOOST_TEST(contains(what, (dir / "run.toml").string()), what);
    BOOST_TEST(contains(what, format.empty() ? "no format" : "format " + format), what);
    BOOST_TEST(contains(what, "this edm reads format 1"), what);
    BOOST_TEST(contains(what, "written by edm " + edm::RunManifest::read(edm::RunFolder(small_run())).edm_version()),
               what);
    const auto info = run_edm("info " + dir.string());
    BOOST_TEST(info.exit_code == 4, info.output);
    BOOST_TEST(contains(info.output, "EDM-IO-160"), info.output);
    BOOST_TEST(contains(info.output, "edm run " + (dir / "run.toml").string()), info.output);
    const auto spectrum = run_edm("spectrum " + dir.string());
    BOOST_TEST(spectrum.exit_code == 4, spectrum.output);
    BOOST_TEST(contains(spectrum.output, "EDM-IO-160"), spectrum.output);
    BOOST_TEST(!fs::exists(dir / "spectrum.h5"));
    BOOST_TEST(slurp(dir / "run.toml") == before);
    // Its [campaign] is the public campaign format: the replay reads it whatever the format.
    const auto replay = run_edm("run " + (dir / "run.toml").string() + " --dry-run --output " +
                                (dir.parent_path() / "replay").string());
    BOOST_TEST(replay.exit_code == 0, replay.output);
  }
}

// A key the readers need that is missing is named with its file (EDM-INFO-003); one of the wrong
// type or out of range too (EDM-INFO-005). No reader falls back to another key (ω from the
// wavelength, γ from [campaign.electrons] were such fallbacks).
BOOST_AUTO_TEST_CASE(a_missing_or_wrong_key_is_named) {
  const fs::path no_omega = damaged_copy("io_owners_no_omega", [](std::string& t) { erase_key(t, "laser", "omega"); });
  const edm::RunManifest m = edm::RunManifest::read(edm::RunFolder(no_omega));
  const std::string what = error_of([&] { (void)m.laser_omega(); }, "EDM-INFO-003");
  BOOST_TEST(contains(what, "[laser] omega"), what);
  BOOST_TEST(contains(what, (no_omega / "run.toml").string()), what);
  const auto r = run_edm("spectrum " + no_omega.string());
  BOOST_TEST(r.exit_code == 2, r.output);
  BOOST_TEST(contains(r.output, "EDM-INFO-003"), r.output);
  BOOST_TEST(contains(r.output, "[laser] omega"), r.output);

  const fs::path no_screen = damaged_copy("io_owners_no_type", [](std::string& t) { erase_key(t, "screen", "type"); });
  const std::string screen =
      error_of([&] { (void)edm::RunManifest::read(edm::RunFolder(no_screen)).screen_side(); }, "EDM-INFO-003");
  BOOST_TEST(contains(screen, "[screen] type"), screen);

  const fs::path typed =
      damaged_copy("io_owners_typed", [](std::string& t) { set_key(t, "laser", "omega", "\"fast\""); });
  const std::string wrong =
      error_of([&] { (void)edm::RunManifest::read(edm::RunFolder(typed)).laser_omega(); }, "EDM-INFO-005");
  BOOST_TEST(contains(wrong, "laser.omega"), wrong);

  const fs::path no_id = damaged_copy("io_owners_no_id", [](std::string& t) { erase_key(t, "provenance", "run_id"); });
  const std::string id = error_of([&] { (void)edm::RunManifest::read(edm::RunFolder(no_id)); }, "EDM-INFO-003");
  BOOST_TEST(contains(id, "[provenance] run_id"), id);
}

BOOST_AUTO_TEST_SUITE_END()
