// ctest-label: e2e
// Damaged files edm reads, through the edm binary: a real run folder and a real checkpoint (made
// in-process from a tiny cell) are damaged one way each with the HDF5 C API — a value of the wrong
// type, a dataset of another shape, a size declared but never stored, vectors of unequal length,
// a state the campaign cannot have — and `edm resume`, `edm spectrum` and `edm info` must refuse
// each with exit 4, a stable id and the file and dataset named: never "internal error", a signal, a
// read past a buffer or a silently wrong result.
#define BOOST_TEST_MODULE damaged_files
#include <boost/test/unit_test.hpp>

#include <hdf5.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// 4 electrons, 4 × 3 pixels, 64 samples: the cases test refusals, not physics.
const std::string kCell = test::small_cell(
    {.electrons = 4, .screen = "half_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = 4\nny = 3\nsamples = 64\n"});

struct Quiet : RunObserver {};
// Stops the run when its second batch's solve begins, so that its checkpoint holds the first
// batch's cube (a checkpoint of no electron done holds none: share/docs/outputs.md, "Checkpoints").
struct StopAtSecondBatch : RunObserver {
  std::atomic<bool>* stop = nullptr;
  int solves = 0;
  void phase(const std::string& name, const std::string&) override {
    if (name == "trajectories" && ++solves == 2) stop->store(true);
  }
};

Campaign cell(const fs::path& out) {
  const auto registry = PluginRegistry::discover();
  return parse_campaign(kCell, "cell.toml", {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                        registry.get("inverse_thomson").keys(), false);
}

// The good inputs, made once: a finished run folder (field.h5 + run.toml) and a run folder holding
// the checkpoint of a run stopped after its first batch (a stop requested as the second one starts).
struct Inputs {
  fs::path root = test::temp_dir("damaged");
  fs::path run = root / "run", stopped = root / "stopped";
  Inputs() {
    Quiet q;
    const auto registry = PluginRegistry::discover();
    run_campaign(cell(run), registry, RunOptions{}, q);
    std::atomic<bool> stop{false};
    StopAtSecondBatch at_second;
    at_second.stop = &stop;
    RunOptions ro;
    ro.stop = &stop;
    BOOST_CHECK_THROW(run_campaign(cell(stopped), registry, ro, at_second), Interrupted);
    BOOST_REQUIRE(fs::exists(run / "field.h5"));
    BOOST_REQUIRE(fs::exists(stopped / "checkpoint.h5"));
  }
};
const Inputs& inputs() {
  static const Inputs in;
  return in;
}

// ---- damage with the HDF5 C API ----

struct File {
  hid_t id;
  explicit File(const fs::path& p) : id(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) { BOOST_REQUIRE(id >= 0); }
  ~File() { H5Fclose(id); }
};

void remove_attr(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) > 0) BOOST_REQUIRE(H5Adelete(obj, name) >= 0);
}
void set_attr_u64(const fs::path& p, const char* name, std::uint64_t v) {
  File f(p);
  remove_attr(f.id, name);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f.id, name, H5T_NATIVE_UINT64, sp, H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(H5Awrite(a, H5T_NATIVE_UINT64, &v) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}
// A string attribute of `n` elements (n = 1: scalar) in place of whatever was there.
void set_attr_string(const fs::path& p, const char* name, const std::string& v, hsize_t n = 1) {
  File f(p);
  remove_attr(f.id, name);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, v.size() + 1);
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  std::string buf;
  for (hsize_t i = 0; i < n; ++i) buf += v + '\0';
  hid_t a = H5Acreate2(f.id, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(H5Awrite(a, t, buf.data()) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

// Replaces dataset `path` by one of type `type` and shape `dims`; data (if any) is written.
// Unwritten datasets are chunked, so that a huge declared extent costs no space in the file.
void replace_dataset(const fs::path& p, const std::string& path, hid_t type, const std::vector<hsize_t>& dims,
                     const void* data, hid_t mem_type = H5T_NATIVE_DOUBLE) {
  File f(p);
  if (H5Lexists(f.id, path.c_str(), H5P_DEFAULT) > 0) BOOST_REQUIRE(H5Ldelete(f.id, path.c_str(), H5P_DEFAULT) >= 0);
  hid_t sp = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (!data) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    chunk.back() = std::min<hsize_t>(dims.back(), 64);
    H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
  }
  hid_t d = H5Dcreate2(f.id, path.c_str(), type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  if (data) BOOST_REQUIRE(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(sp);
}

// A text dataset as edm writes one (chars, no terminator).
std::string read_text(const fs::path& p, const std::string& path) {
  File f(p);
  hid_t d = H5Dopen2(f.id, path.c_str(), H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  hid_t sp = H5Dget_space(d);
  std::string text(std::size_t(H5Sget_simple_extent_npoints(sp)), '\0');
  if (!text.empty()) BOOST_REQUIRE(H5Dread(d, H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) >= 0);
  H5Sclose(sp);
  H5Dclose(d);
  return text;
}

std::vector<hsize_t> dims_of(const fs::path& p, const std::string& path) {
  File f(p);
  hid_t d = H5Dopen2(f.id, path.c_str(), H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  hid_t sp = H5Dget_space(d);
  std::vector<hsize_t> dims(std::size_t(H5Sget_simple_extent_ndims(sp)));
  H5Sget_simple_extent_dims(sp, dims.data(), nullptr);
  H5Sclose(sp);
  H5Dclose(d);
  return dims;
}

std::size_t product(const std::vector<hsize_t>& dims) {
  std::size_t n = 1;
  for (auto v : dims) n *= std::size_t(v);
  return n;
}

// ---- the cases ----

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Case {
  std::string label;
  std::function<void(const fs::path& folder)> damage;  // damages the copied folder
  std::string command;                                  // resume | spectrum | info
  std::string id;                                       // the error id expected
  std::vector<std::string> fragments;                   // also in the message (file, dataset)
};

void copy_folder(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

void run_case(const fs::path& good, const fs::path& dir, const Case& c) {
  copy_folder(good, dir);
  c.damage(dir);
  const auto r = test::run_command("timeout 300 " + test::edm_binary().string() + " " + c.command + " " +
                                   dir.string() + (c.command == "resume" || c.command == "spectrum" ? " --quiet" : ""));
  BOOST_TEST_MESSAGE(c.label << " → exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 4, c.label << ": exit " << r.exit_code << ", expected 4; output: " << r.output);
  BOOST_TEST(contains(r.output, "edm: error [" + c.id + "]"), c.label << ": no " << c.id << " in: " << r.output);
  for (const auto& f : c.fragments)
    BOOST_TEST(contains(r.output, f), c.label << ": message lacks '" << f << "': " << r.output);
}

void run_cases(const fs::path& good, const std::string& tag, const std::vector<Case>& cases) {
  const auto dir = test::temp_dir(tag);
  for (std::size_t i = 0; i < cases.size(); ++i) run_case(good, dir / ("case" + std::to_string(i)), cases[i]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(damaged_checkpoints_are_refused_by_resume) {
  const fs::path good = inputs().stopped;
  const auto ckpt = [](const fs::path& d) { return d / "checkpoint.h5"; };
  const std::vector<Case> cases = {
      {"next_electron past the campaign's 4 electrons",
       [&](const fs::path& d) { set_attr_u64(ckpt(d), "next_electron", 1000); }, "resume", "EDM-CKP-024",
       {"checkpoint.h5", "next_electron = 1000", "4 electrons"}},
      {"next_electron as a string (was read as 0)",
       [&](const fs::path& d) { set_attr_string(ckpt(d), "next_electron", "1"); }, "resume", "EDM-CKP-020",
       {"checkpoint.h5", "next_electron"}},
      {"not an edm checkpoint (format)",
       [&](const fs::path& d) { set_attr_string(ckpt(d), "format", "something-else"); }, "resume", "EDM-CKP-027",
       {"checkpoint.h5", "format"}},
      {"B cube never written (was silently zero)",
       [&](const fs::path& d) {
         replace_dataset(ckpt(d), "cube_d0_b1", H5T_IEEE_F64LE, dims_of(ckpt(d), "cube_d0_b1"), nullptr);
       },
       "resume", "EDM-CKP-025", {"checkpoint.h5", "cube_d0_b1"}},
      {"a NaN in the E cube",
       [&](const fs::path& d) {
         const auto dims = dims_of(ckpt(d), "cube_d0_b0");
         std::vector<double> v(product(dims), 0.0);
         v[v.size() / 2] = std::nan("");
         replace_dataset(ckpt(d), "cube_d0_b0", H5T_IEEE_F64LE, dims, v.data());
       },
       "resume", "EDM-CKP-026", {"checkpoint.h5", "cube_d0_b0"}},
      {"γ sums longer than the γ counts (was SIGSEGV in write_gamma_trace)",
       [&](const fs::path& d) {
         const std::vector<std::uint64_t> v(product(dims_of(ckpt(d), "gamma_count")) + 100, 1);
         replace_dataset(ckpt(d), "gamma_sum_lo", H5T_NATIVE_UINT64, {v.size()}, v.data(), H5T_NATIVE_UINT64);
         replace_dataset(ckpt(d), "gamma_sum_hi", H5T_NATIVE_UINT64, {v.size()}, v.data(), H5T_NATIVE_UINT64);
       },
       "resume", "EDM-CKP-023", {"checkpoint.h5", "gamma_sum_lo"}},
      {"gamma_min declaring 2^40 elements (was bad_alloc)",
       [&](const fs::path& d) { replace_dataset(ckpt(d), "gamma_min", H5T_IEEE_F64LE, {1ull << 40}, nullptr); },
       "resume", "EDM-CKP-022", {"checkpoint.h5", "gamma_min", "1099511627776"}},
      {"drain_electron and drain of different lengths (was truncated silently)",
       [&](const fs::path& d) {
         const std::vector<double> v(product(dims_of(ckpt(d), "drain_electron")) + 1, 0.5);
         replace_dataset(ckpt(d), "drain", H5T_IEEE_F64LE, {v.size()}, v.data());
       },
       "resume", "EDM-CKP-023", {"checkpoint.h5", "drain"}},
      {"coverage not in records of 4",
       [&](const fs::path& d) {
         const std::vector<double> v(5, 0.0);
         replace_dataset(ckpt(d), "coverage", H5T_IEEE_F64LE, {v.size()}, v.data());
       },
       "resume", "EDM-CKP-023", {"checkpoint.h5", "coverage"}},
      {"campaign text that is not TOML (was internal error)",
       [&](const fs::path& d) {
         const std::string text = "[run\nscenario = ";
         replace_dataset(ckpt(d), "campaign", H5T_NATIVE_CHAR, {text.size()}, text.data(), H5T_NATIVE_CHAR);
       },
       "resume", "EDM-CKP-028", {"checkpoint.h5", "campaign"}},
      {"the stored campaign's a0 edited (resumed the rest of the electrons with it: two campaigns in one field)",
       [&](const fs::path& d) {
         std::string text = read_text(ckpt(d), "campaign");
         const auto at = text.find("a0 = ");
         BOOST_REQUIRE(at != std::string::npos);
         text.replace(at, text.find('\n', at) - at, "a0 = 0.55");
         replace_dataset(ckpt(d), "campaign", H5T_NATIVE_CHAR, {text.size()}, text.data(), H5T_NATIVE_CHAR);
       },
       "resume", "EDM-CKP-084", {"checkpoint.h5", "campaign_digest", "edited or damaged"}},
      {"an empty run_id (resumed to a run without an id, which edm info and spectrum accepted)",
       [&](const fs::path& d) {
         const char none = 0;
         replace_dataset(ckpt(d), "run_id", H5T_NATIVE_CHAR, {0}, &none, H5T_NATIVE_CHAR);
       },
       "resume", "EDM-CKP-029", {"checkpoint.h5", "run_id", "is empty"}},
      {"a run_id of NUL bytes",
       [&](const fs::path& d) {
         const std::string id(8, '\0');
         replace_dataset(ckpt(d), "run_id", H5T_NATIVE_CHAR, {id.size()}, id.data(), H5T_NATIVE_CHAR);
       },
       "resume", "EDM-CKP-029", {"checkpoint.h5", "run_id"}},
      {"a timing that is not finite",
       [&](const fs::path& d) {
         File f(ckpt(d));
         const double inf = INFINITY;
         hid_t a = H5Aopen(f.id, "kernel", H5P_DEFAULT);
         BOOST_REQUIRE(H5Awrite(a, H5T_NATIVE_DOUBLE, &inf) >= 0);
         H5Aclose(a);
       },
       "resume", "EDM-CKP-023", {"checkpoint.h5", "kernel"}},
  };
  run_cases(good, "damaged_ckpt", cases);
}

BOOST_AUTO_TEST_CASE(damaged_field_files_are_refused_by_spectrum_and_info) {
  const fs::path good = inputs().run;
  const auto field = [](const fs::path& d) { return d / "field.h5"; };
  // A component with one pixel column fewer than /E/x, with data: spectrum indexed it with /E/x's
  // shape and read past its buffer (valgrind: invalid read in read_rows).
  const auto narrower = [&](const std::string& name) {
    return [&, name](const fs::path& d) {
      auto dims = dims_of(field(d), "/E/x");
      dims[1] -= 1;
      const std::vector<double> v(product(dims), 1.0);
      replace_dataset(field(d), name, H5T_IEEE_F64LE, dims, v.data());
    };
  };
  const auto fewer_rows = [&](const std::string& name) {
    return [&, name](const fs::path& d) {
      auto dims = dims_of(field(d), "/E/x");
      dims[0] -= 1;
      const std::vector<double> v(product(dims), 1.0);
      replace_dataset(field(d), name, H5T_IEEE_F64LE, dims, v.data());
    };
  };
  const auto huge = [&](const std::string& name, std::vector<hsize_t> dims) {
    return [&, name, dims](const fs::path& d) { replace_dataset(field(d), name, H5T_IEEE_F64LE, dims, nullptr); };
  };
  const std::vector<Case> cases = {
      {"spectrum: B/x narrower than E/x", narrower("/B/x"), "spectrum", "EDM-IO-071", {"field.h5", "/B/x"}},
      {"spectrum: E/y with fewer rows than E/x", fewer_rows("/E/y"), "spectrum", "EDM-IO-071", {"field.h5", "/E/y"}},
      {"info: B/z narrower than E/x (was shown as valid)", narrower("/B/z"), "info", "EDM-IO-071",
       {"field.h5", "/B/z"}},
      {"spectrum: /E/z declaring 2^60 elements (was bad_alloc)", huge("/E/z", {1u << 20, 1u << 20, 1u << 20}),
       "spectrum", "EDM-IO-073", {"field.h5", "/E/z"}},
      {"info: /axes/x declaring 2^40 elements (was bad_alloc)", huge("/axes/x", {1ull << 40}), "info", "EDM-IO-073",
       {"field.h5", "/axes/x"}},
      {"info: /axes/y longer than the field's rows",
       [&](const fs::path& d) {
         const std::vector<double> v(product(dims_of(field(d), "/axes/y")) + 1, 0.0);
         replace_dataset(field(d), "/axes/y", H5T_IEEE_F64LE, {v.size()}, v.data());
       },
       "info", "EDM-IO-071", {"field.h5", "/axes/y"}},
      {"info: electron_count as a string (was shown as 0)",
       [&](const fs::path& d) { set_attr_string(field(d), "electron_count", "four"); }, "info", "EDM-IO-072",
       {"field.h5", "electron_count"}},
      {"spectrum: mode as an array of 3 strings (was read into a 1-element buffer)",
       [&](const fs::path& d) { set_attr_string(field(d), "mode", "total", 3); }, "spectrum", "EDM-IO-072",
       {"field.h5", "mode"}},
      {"plot with spectrum.h5 already there: B/y narrower than E/x (the script trusted the shapes)",
       [&](const fs::path& d) {
         BOOST_REQUIRE(test::run_command(test::edm_binary().string() + " spectrum " + d.string() + " --quiet").exit_code == 0);
         narrower("/B/y")(d);
       },
       "plot", "EDM-IO-071", {"field.h5", "/B/y"}},
      {"spectrum: /E/x as integers", [&](const fs::path& d) {
         const auto dims = dims_of(field(d), "/E/x");
         const std::vector<std::int32_t> v(product(dims), 1);
         replace_dataset(field(d), "/E/x", H5T_STD_I32LE, dims, v.data(), H5T_NATIVE_INT32);
       },
       "spectrum", "EDM-IO-070", {"field.h5", "/E/x"}},
  };
  run_cases(good, "damaged_field", cases);
}

// The checks of a resume state against the campaign, as the run driver calls them.
BOOST_AUTO_TEST_CASE(resume_state_must_fit_the_campaign) {
  CheckpointState st;
  st.next_electron = 3;
  st.batches_done = 3;
  BOOST_CHECK_NO_THROW(check_resume_state(st, 3, "c.h5"));
  BOOST_CHECK_NO_THROW(check_resume_state(st, 4, "c.h5"));
  auto refused = [](const CheckpointState& s, std::uint64_t n) {
    try {
      check_resume_state(s, n, "c.h5");
    } catch (const IoError& e) {
      return e.id() == "EDM-CKP-024" && contains(e.what(), "c.h5");
    }
    return false;
  };
  BOOST_TEST(refused(st, 2));  // next_electron past N
  CheckpointState more_batches = st;
  more_batches.batches_done = 4;
  BOOST_TEST(refused(more_batches, 4));
  CheckpointState drain = st;
  drain.gamma.drain = {{3, 0.1}};  // electron 3 is not done yet
  BOOST_TEST(refused(drain, 4));
  CheckpointState counted = st;
  counted.gamma.count = {1, 4};
  BOOST_TEST(refused(counted, 4));
  CheckpointState covered = st;
  covered.coverage = {{5, 1.0, 1.0, 0}};
  BOOST_TEST(refused(covered, 8));
}

// A manifest replay whose file cannot be parsed is an I/O error naming the file and place (it was
// a toml::parse_error, reported as "internal error").
BOOST_AUTO_TEST_CASE(manifest_replay_reports_unreadable_manifests) {
  const auto dir = test::temp_dir("damaged_manifest");
  std::ofstream(dir / "run.toml") << "[provenance]\nrun_id = \"x\"\n[campaign\n";
  try {
    (void)campaign_text_from_manifest(dir / "run.toml");
    BOOST_FAIL("a manifest that is not TOML was accepted");
  } catch (const IoError& e) {
    BOOST_TEST(e.id() == "EDM-IO-075");
    BOOST_TEST(contains(e.what(), "run.toml:3:"));
  }
  std::ofstream(dir / "noscenario.toml") << "[provenance]\nrun_id = \"x\"\n[campaign.run]\noutput = \"r\"\n";
  BOOST_CHECK_EXCEPTION((void)campaign_text_from_manifest(dir / "noscenario.toml"), ConfigError,
                        [](const ConfigError& e) { return e.id() == "EDM-CFG-090"; });
}

// A run.toml that is no manifest (empty, or TOML without [provenance] run_id) is refused by edm
// info, edm plot and edm spectrum naming the file (EDM-INFO-003, exit 2): `: > RUN/run.toml` was
// shown by edm info as "run ? in RUN" and plotted by edm plot, with nothing for the run-id checks
// to compare. spectrum.h5 is computed first, so that edm plot would not need to compute it.
BOOST_AUTO_TEST_CASE(a_run_toml_that_is_no_manifest_is_refused) {
  const auto root = test::temp_dir("damaged_manifest_empty");
  const std::pair<std::string, std::string> manifests[] = {
      {"empty", ""}, {"no run id", "[provenance]\nedm_version = \"x\"\n"}, {"empty run id", "[provenance]\nrun_id = \"\"\n"}};
  int i = 0;
  for (const auto& [label, text] : manifests) {
    const fs::path dir = root / ("case" + std::to_string(i++));
    copy_folder(inputs().run, dir);
    BOOST_REQUIRE(test::run_command(test::edm_binary().string() + " spectrum " + dir.string() + " --quiet").exit_code == 0);
    std::ofstream(dir / "run.toml", std::ios::trunc) << text;
    for (const std::string command : {"info", "plot", "spectrum"}) {
      const auto r = test::run_command("timeout 300 " + test::edm_binary().string() + " " + command + " " + dir.string());
      BOOST_TEST(r.exit_code == 2, label << ", " << command << ": exit " << r.exit_code << ": " << r.output);
      BOOST_TEST(contains(r.output, "edm: error [EDM-INFO-003]"), label << ", " << command << ": " << r.output);
      BOOST_TEST(contains(r.output, (dir / "run.toml").string()), label << ", " << command << ": " << r.output);
    }
  }
}
