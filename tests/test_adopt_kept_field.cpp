// ctest-label: e2e
// `edm resume` of a folder whose final rename failed (EDM-IO-163; issue 30's leftover): the run keeps
// the finished field as field.h5.partial, now with its run.toml as run.toml.partial, and resume puts
// the pair in place without computing again and without a checkpoint (the runs here write none),
// the field equal to an uninterrupted run's bit for bit. A kept field without its completion
// attribute (edm_complete, the writer's last act before the rename), or one that is not the field its
// run.toml names, is refused (EDM-RUN-085, exit 4) and left as it is. The rename is made to fail
// through the LD_PRELOAD fixture of test_write_paths (fixtures/fail_rename.c).
#define BOOST_TEST_MODULE adopt_kept_field
#include <boost/test/unit_test.hpp>

#include <hdf5.h>

#include <cstring>

#include <toml++/toml.h>

#include "edm/field_file.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using edm::test::edm_bin;
using edm::test::run_edm;
using edm::test::write_file;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string cell() { return edm::test::small_cell({.electrons = 4, .electron_batch = "1"}); }

void expect_same_field(const fs::path& a, const fs::path& b) {
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z"}) {
    const auto x = edm::read_field_component(a, name);
    const auto y = edm::read_field_component(b, name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST((x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0),
               name << ": " << a << " and " << b << " differ");
  }
}

// A run into `folder` whose rename of field.h5.partial onto field.h5 fails (EXDEV), with no checkpoint.
edm::test::CommandResult run_failing_rename(const fs::path& campaign, const fs::path& folder) {
  return edm::test::run_command(std::string("LD_PRELOAD=") + EDM_FIXTURE_FAIL_RENAME +
                                " EDM_TEST_FAIL_RENAME=/field.h5 " + edm_bin() + " run " + campaign.string() +
                                " --quiet --checkpoint-every -1 --output " + folder.string());
}

void delete_root_attribute(const fs::path& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  BOOST_REQUIRE(H5Adelete(f, name) >= 0);
  H5Fclose(f);
}

}  // namespace

BOOST_AUTO_TEST_CASE(resume_adopts_a_field_kept_after_a_failed_rename) {
  const auto dir = edm::test::temp_dir("adopt_kept");
  const auto campaign = write_file(dir, "cell.toml", cell());
  const auto full = dir / "full";
  auto r = run_edm("run " + campaign.string() + " --quiet --output " + full.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  const auto part = dir / "part";
  r = run_failing_rename(campaign, part);
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-IO-163]"), r.output);
  BOOST_TEST(contains(r.output, "kept as " + (part / "run.toml.partial").string()), r.output);
  BOOST_TEST(!fs::exists(part / "field.h5"));
  BOOST_TEST(!fs::exists(part / "run.toml"));
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  BOOST_REQUIRE(fs::exists(part / "field.h5.partial"));
  BOOST_REQUIRE(fs::exists(part / "run.toml.partial"));

  // The cause fixed (no fixture): resume puts the pair in place; no checkpoint exists to recompute from.
  r = run_edm("resume " + part.string());
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(contains(r.output, "nothing computed again"), r.output);
  BOOST_TEST(!fs::exists(part / "field.h5.partial"));
  BOOST_TEST(!fs::exists(part / "run.toml.partial"));
  expect_same_field(full / "field.h5", part / "field.h5");
  // run.toml is the run's own: it names the field now in place (run id, size), and edm info reads
  // the pair as one run.
  const auto manifest = toml::parse_file((part / "run.toml").string());
  const auto field = edm::FieldFile::open(part / "field.h5");
  BOOST_TEST(manifest["field_file"]["run_id"].value_or(std::string()) == field.summary().run_id);
  BOOST_TEST(manifest["field_file"]["bytes"].value_or(std::int64_t(0)) == std::int64_t(fs::file_size(part / "field.h5")));
  BOOST_TEST(manifest["field_file"]["name"].value_or(std::string()) == "field.h5");
  r = run_edm("info " + part.string());
  BOOST_TEST(r.exit_code == 0, r.output);
  // An uninterrupted run's field carries the completion attribute too.
  const hid_t f = H5Fopen((full / "field.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  BOOST_TEST(H5Aexists(f, "edm_complete") > 0);
  H5Fclose(f);
}

BOOST_AUTO_TEST_CASE(a_kept_field_that_is_not_whole_or_not_the_manifests_is_refused) {
  const auto dir = edm::test::temp_dir("adopt_refused");
  const auto campaign = write_file(dir, "cell.toml", cell());

  // No completion attribute: as a field whose write was cut off.
  const auto cut = dir / "cut";
  auto r = run_failing_rename(campaign, cut);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 4, r.output);
  delete_root_attribute(cut / "field.h5.partial", "edm_complete");
  r = run_edm("resume " + cut.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-RUN-085]"), r.output);
  BOOST_TEST(contains(r.output, "edm_complete"), r.output);
  BOOST_TEST(fs::exists(cut / "field.h5.partial"), "a refused field is left as it is");
  BOOST_TEST(fs::exists(cut / "run.toml.partial"));
  BOOST_TEST(!fs::exists(cut / "field.h5"));

  // The run.toml of another run beside the field: not this field's (run id).
  const auto other = dir / "other";
  r = run_failing_rename(campaign, other);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 4, r.output);
  const auto mixed = dir / "mixed";
  fs::create_directories(mixed);
  fs::copy_file(other / "field.h5.partial", mixed / "field.h5.partial");
  fs::copy_file(cut / "run.toml.partial", mixed / "run.toml.partial");
  r = run_edm("resume " + mixed.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-RUN-085]"), r.output);
  BOOST_TEST(contains(r.output, "names the field of run"), r.output);
  BOOST_TEST(!fs::exists(mixed / "field.h5"));
  BOOST_TEST(!fs::exists(mixed / "run.toml"));

  // The same pair adopts once the manifest is its own.
  fs::copy_file(other / "run.toml.partial", mixed / "run.toml.partial", fs::copy_options::overwrite_existing);
  r = run_edm("resume " + mixed.string() + " --quiet");
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(fs::exists(mixed / "field.h5"));
  BOOST_TEST(fs::exists(mixed / "run.toml"));
}

// An --overwrite whose final rename fails: the previous run's field.h5 and run.toml stay as they were
// (the kept manifest would have replaced run.toml), and no run.toml.partial is kept for adoption.
BOOST_AUTO_TEST_CASE(an_overwrite_whose_rename_fails_keeps_the_previous_run_toml) {
  const auto dir = edm::test::temp_dir("adopt_overwrite");
  const auto campaign = write_file(dir, "cell.toml", cell());
  const auto run = dir / "run";
  auto r = run_edm("run " + campaign.string() + " --quiet --output " + run.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string old_manifest = edm::test::slurp(run / "run.toml");
  const std::string old_field = edm::test::slurp(run / "field.h5");
  r = edm::test::run_command(std::string("LD_PRELOAD=") + EDM_FIXTURE_FAIL_RENAME + " EDM_TEST_FAIL_RENAME=/field.h5 " +
                             edm_bin() + " run " + campaign.string() + " --quiet --overwrite --checkpoint-every -1 " +
                             "--output " + run.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-IO-163]"), r.output);
  BOOST_TEST(edm::test::slurp(run / "run.toml") == old_manifest, "the previous run's run.toml was replaced");
  BOOST_TEST(edm::test::slurp(run / "field.h5") == old_field);
  BOOST_TEST(!fs::exists(run / "run.toml.partial"));
  BOOST_TEST(fs::exists(run / "field.h5.partial"));
}
