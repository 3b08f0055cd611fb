// ctest-label: e2e
// Paths and text (issue 13, item 6), end to end through the edm binary: file-system trouble (a
// name too long, a FIFO, a device, a directory, a parent that is a file) is an error naming the
// path with its documented exit code — never "internal error" (exit 1), never a hang — and an
// empty campaign (or one of comments only) is refused instead of running the defaults.
#define BOOST_TEST_MODULE paths
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "edm/manifest.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace test = edm::test;

namespace {

const std::string kTiny =
    " --quiet --set screen.nx=4 --set screen.ny=4 --set screen.samples=32 --set electrons.count=2";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A hang (a FIFO opened for reading blocks until a writer comes) becomes exit 124.
test::CommandResult run_edm(const std::string& args) {
  return test::run_command("timeout 20 " + test::edm_binary().string() + " " + args);
}

fs::path good_campaign(const fs::path& dir) {
  const fs::path p = dir / "cell.toml";
  std::ofstream(p) << "[run]\nscenario = \"inverse_thomson\"\n[screen]\nhalf_width = 1.5e-4\n";
  return p;
}

struct Case {
  std::string label;
  std::string args;
  int exit_code;
  std::string id;
  std::vector<std::string> fragments;
};

void check(const Case& c) {
  const auto r = run_edm(c.args);
  BOOST_TEST_MESSAGE(c.label << " → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == c.exit_code, c.label << ": exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "[" + c.id + "]"), c.label << ": not " << c.id << ": " << r.output);
  BOOST_TEST(!contains(r.output, "internal error"), c.label << ": " << r.output);
  for (const auto& f : c.fragments)
    BOOST_TEST(contains(r.output, f), c.label << ": message lacks '" << f << "': " << r.output);
}

}  // namespace

BOOST_AUTO_TEST_CASE(campaign_files_that_are_not_campaigns_are_refused) {
  const auto dir = test::temp_dir("paths_campaign");
  const fs::path fifo = dir / "fifo.toml";
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const fs::path folder = dir / "folder.toml";
  fs::create_directories(folder);
  const fs::path empty = dir / "empty.toml";
  std::ofstream(empty).close();
  const fs::path blank = dir / "blank.toml";
  std::ofstream(blank) << "\n   \n\t\n";
  const fs::path comments = dir / "comments.toml";
  std::ofstream(comments) << "# a campaign still to be written\n";
  const std::string long_name = (dir / (std::string(300, 'c') + ".toml")).string();
  const std::string below_file = (good_campaign(dir) / "x.toml").string();
  const std::string out = " --output " + (dir / "run").string();
  const std::vector<Case> cases = {
      {"a FIFO", "run " + fifo.string() + out + kTiny, 4, "EDM-IO-091", {fifo.string(), "not a regular file"}},
      {"a device", "run /dev/null" + out + kTiny, 4, "EDM-IO-091", {"/dev/null", "not a regular file"}},
      {"a directory", "run " + folder.string() + out + kTiny, 2, "EDM-CFG-050", {folder.string(), "directory"}},
      {"an empty file", "run " + empty.string() + out + kTiny, 2, "EDM-CFG-051", {empty.string(), "empty"}},
      {"blanks only", "run " + blank.string() + out + kTiny, 2, "EDM-CFG-051", {blank.string(), "empty"}},
      {"comments only", "run " + comments.string() + out + kTiny, 2, "EDM-CFG-051", {comments.string(), "no keys"}},
      {"a 300-character name", "run " + long_name + out + kTiny, 4, "EDM-IO-090", {long_name, "too long"}},
      {"a parent that is a file", "run " + below_file + out + kTiny, 4, "EDM-IO-090", {below_file}},
  };
  for (const auto& c : cases) check(c);
  BOOST_TEST(!fs::exists(dir / "run" / "field.h5"));
}

BOOST_AUTO_TEST_CASE(run_folders_the_system_cannot_use_are_io_errors) {
  const auto dir = test::temp_dir("paths_output");
  const auto campaign = good_campaign(dir);
  const std::string long_out = (dir / std::string(300, 'o')).string();
  const std::string deep_long = (dir / "a" / (std::string(300, 'd')) / "run").string();
  // The run folder's lock is taken first (it creates the folder), so a folder the system cannot
  // make is refused there, naming the path.
  const std::vector<Case> cases = {
      {"a 300-character output", "run " + campaign.string() + " --output " + long_out + kTiny, 4, "EDM-RUN-041",
       {long_out, "too long"}},
      {"a 300-character folder above the output", "run " + campaign.string() + " --output " + deep_long + kTiny,
       4, "EDM-RUN-041", {"too long"}},
      {"info on a 300-character path", "info " + long_out, 4, "EDM-IO-094", {"too long"}},
  };
  for (const auto& c : cases) check(c);
}

// Manifest keys are quoted as TOML needs on write: a key it's (toml++ alone writes it bare, and the
// manifest would not read back), a quote, a dot and a space, in a table, a subtable and an array of
// tables, all read back with their values.
BOOST_AUTO_TEST_CASE(manifest_keys_are_quoted_for_toml) {
  const auto dir = test::temp_dir("paths_manifest");
  toml::table sub{{"x y", "v"}, {"a.b", 2}};
  toml::array cells;
  cells.push_back(toml::table{{"it's", 3}});
  toml::table m{{"it's", 1}, {"q\"uote", "it's \"quoted\""}, {"section", sub}, {"cell", cells},
                {"list", toml::array{1.5, "b'c"}}};
  edm::write_manifest(dir / "run.toml", m);
  toml::table back;
  BOOST_REQUIRE_NO_THROW(back = toml::parse_file((dir / "run.toml").string()));
  BOOST_TEST(back["it's"].value_or(0) == 1);
  BOOST_TEST(back["q\"uote"].value_or(std::string()) == "it's \"quoted\"");
  BOOST_TEST(back["section"]["x y"].value_or(std::string()) == "v");
  BOOST_TEST(back["section"]["a.b"].value_or(0) == 2);
  BOOST_TEST(back["cell"][0]["it's"].value_or(0) == 3);
  BOOST_TEST(back["list"][1].value_or(std::string()) == "b'c");
}
