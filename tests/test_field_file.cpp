// ctest-label: e2e
// field.h5 read through its one owner, FieldFile (edm/field_file.hpp): the geometry of a small real
// run against what its campaign asked (the sizes, the time step T/128 and the Nyquist frequency
// 64 ω_L, worked out here from the wavelength), and each kind of damage refused at open with its one
// id, naming the file and the dataset or attribute: a missing /axes/t, an /E/y shorter than /E/x, an
// attribute of the wrong type, a format version other than this edm's (0, 99, none), a text file
// under the name. The commands refuse the same way and change nothing the user had.
#define BOOST_TEST_MODULE field_file
#include <boost/test/unit_test.hpp>

#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// 4 electrons, 4 × 3 pixels, 64 samples at T/128 of a 1 µm laser.
constexpr double kWavelength = 1e-6, kHalfX = 6e-5, kHalfY = 4e-5, kC = 299792458.0;
constexpr int kNx = 4, kNy = 3, kSamples = 64, kPerPeriod = 128;

std::string cell_text() {
  return "[run]\nscenario = \"inverse_thomson\"\nmode = \"total\"\n"
         "[laser]\nprofile = \"gaussian\"\na0 = 0.3\nduration = 10.7e-15\nwaist = 10e-6\nwavelength = 1e-6\n"
         "[electrons]\ndistribution = \"sunflower\"\ncount = 4\nradius = 3e-6\ngamma = 3.0\n"
         "[screen]\ndistance = 0.02\nhalf_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = 4\nny = 3\nsamples = 64\n"
         "samples_per_period = 128\n"
         "[accumulator]\nelectron_batch = 1\ndevices = \"0\"\n";
}

struct Quiet : RunObserver {};

// One finished run folder, made once.
const fs::path& good_run() {
  static const fs::path run = [] {
    const fs::path out = test::temp_dir("field_file") / "run";
    const auto registry = PluginRegistry::discover();
    const Campaign c = parse_campaign(cell_text(), "cell.toml", {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                                      registry.get("inverse_thomson").keys(), false);
    Quiet q;
    run_campaign(c, registry, RunOptions{}, q);
    return out;
  }();
  BOOST_REQUIRE(fs::exists(run / "field.h5"));
  return run;
}

fs::path copy_of_run(const std::string& tag) {
  const fs::path dir = test::temp_dir("field_file_" + tag);
  fs::copy(good_run(), dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return dir;
}

// ---- damage with the HDF5 C API ----

struct File {
  hid_t id;
  explicit File(const fs::path& p) : id(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) { BOOST_REQUIRE(id >= 0); }
  ~File() { H5Fclose(id); }
};

void remove_link(const fs::path& p, const char* name) {
  File f(p);
  BOOST_REQUIRE(H5Ldelete(f.id, name, H5P_DEFAULT) >= 0);
}

void set_root_number(const fs::path& p, const char* name, double v) {
  File f(p);
  if (H5Aexists(f.id, name) > 0) BOOST_REQUIRE(H5Adelete(f.id, name) >= 0);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f.id, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}

void set_root_string(const fs::path& p, const char* name, const std::string& v) {
  File f(p);
  if (H5Aexists(f.id, name) > 0) BOOST_REQUIRE(H5Adelete(f.id, name) >= 0);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, v.size() + 1);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f.id, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(H5Awrite(a, t, v.c_str()) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

void remove_root_attribute(const fs::path& p, const char* name) {
  File f(p);
  BOOST_REQUIRE(H5Adelete(f.id, name) >= 0);
}

// /E/y replaced by one row fewer than /E/x, with data (the hard link /data/0/meshes/E/y goes too).
void shorten_ey(const fs::path& p) {
  File f(p);
  BOOST_REQUIRE(H5Ldelete(f.id, "/E/y", H5P_DEFAULT) >= 0);
  const hsize_t dims[3] = {kNy - 1, kNx, kSamples};
  const std::vector<double> v((kNy - 1) * kNx * kSamples, 1.0);
  hid_t sp = H5Screate_simple(3, dims, nullptr);
  hid_t d = H5Dcreate2(f.id, "/E/y", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  BOOST_REQUIRE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Dclose(d);
  H5Sclose(sp);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// FieldFile::open on the damaged file: IoError with `id`, naming the file and every fragment.
void expect_refused(const fs::path& field, const std::string& id, const std::vector<std::string>& fragments) {
  try {
    (void)FieldFile::open(field);
    BOOST_ERROR("opened a damaged " << field << "; expected " << id);
  } catch (const IoError& e) {
    BOOST_TEST_MESSAGE(id << ": " << e.what());
    BOOST_TEST(e.id() == id, "got " << e.id() << " (" << e.what() << "), expected " << id);
    BOOST_TEST(contains(e.what(), field.string()), "the file is not named: " << e.what());
    for (const auto& f : fragments) BOOST_TEST(contains(e.what(), f), "'" << f << "' not named: " << e.what());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(field_file)

BOOST_AUTO_TEST_CASE(geometry_is_what_the_campaign_asked) {
  const FieldFile f = FieldFile::open(good_run() / "field.h5");
  const FieldGeometry& g = f.geometry();
  BOOST_TEST(g.nx == std::size_t(kNx));
  BOOST_TEST(g.ny == std::size_t(kNy));
  BOOST_TEST(g.samples == std::size_t(kSamples));
  BOOST_TEST(!g.angular);
  BOOST_TEST(!g.split);
  BOOST_TEST(g.screen_z == 0.02, boost::test_tools::tolerance(1e-12));
  // The time step T/128 and Nyquist π/dt = 64 ω_L, from the wavelength alone.
  const double period = kWavelength / kC, omega = 2 * std::numbers::pi * kC / kWavelength;
  BOOST_TEST(g.dt == period / kPerPeriod, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(g.nyquist_omega == 0.5 * kPerPeriod * omega, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(g.t.size() == std::size_t(kSamples));
  for (std::size_t k = 1; k < g.t.size(); ++k)
    BOOST_TEST(g.t[k] - g.t[k - 1] == period / kPerPeriod, boost::test_tools::tolerance(1e-6));
  // Pixel centres spanning ±half width.
  BOOST_TEST(g.x.front() == -kHalfX, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(g.x.back() == kHalfX, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(g.y.back() == kHalfY, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(g.pixel_dx == 2 * kHalfX / (kNx - 1), boost::test_tools::tolerance(1e-12));
  const FieldFileSummary& s = f.summary();
  BOOST_TEST(s.electron_count == 4.0);
  BOOST_TEST(s.scenario == "inverse_thomson");
  BOOST_TEST(s.mode == "total");
  BOOST_TEST(!s.run_id.empty());
  BOOST_TEST((s.buckets == std::vector<std::string>{"E", "B"}));
  // Rows of a component are the rows of the whole component.
  const auto whole = f.component("/E/x");
  std::vector<double> rows;
  f.read_rows(kBucketE, 0, 1, 3, rows);
  BOOST_REQUIRE(whole.size() == std::size_t(kNy * kNx * kSamples));
  BOOST_TEST((rows == std::vector<double>(whole.begin() + kNx * kSamples, whole.end())));
}

// An angular screen at infinity: 3 × 3 directions within ±0.05 rad about ẑ. The grid's angles, unit
// directions whose centre is the axis itself, positive solid angles, and the far field's infinite radius.
BOOST_AUTO_TEST_CASE(angular_geometry_holds_the_directions) {
  const fs::path out = test::temp_dir("field_file_far") / "run";
  const auto registry = PluginRegistry::discover();
  const Campaign c = parse_campaign(test::small_far_cell({.electrons = 2}), "far.toml",
                                    {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                                    registry.get("inverse_thomson").keys(), false);
  Quiet q;
  run_campaign(c, registry, RunOptions{}, q);
  const FieldFile f = FieldFile::open(out / "field.h5");
  const FieldGeometry& g = f.geometry();
  BOOST_TEST(g.angular);
  BOOST_TEST(g.far_field);
  BOOST_TEST(std::isinf(g.screen_z));
  BOOST_TEST(g.nx == 3u);
  BOOST_TEST(g.ny == 3u);
  BOOST_TEST(g.samples == 256u);
  BOOST_TEST(g.x.front() == -0.05, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(g.y.back() == 0.05, boost::test_tools::tolerance(1e-12));
  BOOST_REQUIRE(g.direction.size() == 27u);
  BOOST_REQUIRE(g.solid_angle.size() == 9u);
  for (std::size_t p = 0; p < 9; ++p) {
    const double* n = &g.direction[3 * p];
    BOOST_TEST(std::hypot(n[0], n[1], n[2]) == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(g.solid_angle[p] > 0);
  }
  const double* centre = &g.direction[3 * 4];  // (iy, ix) = (1, 1)
  BOOST_TEST(std::abs(centre[0]) < 1e-15);
  BOOST_TEST(std::abs(centre[1]) < 1e-15);
  BOOST_TEST(centre[2] == 1.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(f.summary().screen_type == "angular");
}

BOOST_AUTO_TEST_CASE(each_damage_has_its_one_id) {
  struct Case {
    std::string tag;
    std::function<void(const fs::path&)> damage;
    std::string id;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"no_axes_t", [](const fs::path& p) { remove_link(p, "/axes/t"); }, "EDM-IO-011", {"/axes/t"}},
      {"short_ey", shorten_ey, "EDM-IO-071", {"/E/y", "/E/x"}},
      {"count_as_text", [](const fs::path& p) { set_root_string(p, "electron_count", "four"); }, "EDM-IO-072",
       {"electron_count"}},
      {"format_0", [](const fs::path& p) { set_root_number(p, "edm_format", 0); }, "EDM-IO-160",
       {"edm_format 0", "format 1"}},
      {"format_99", [](const fs::path& p) { set_root_number(p, "edm_format", 99); }, "EDM-IO-160",
       {"edm_format 99", "format 1"}},
      {"format_none", [](const fs::path& p) { remove_root_attribute(p, "edm_format"); }, "EDM-IO-160",
       {"no root attribute edm_format", "written by edm ", "format 1"}},
      {"foreign", [](const fs::path& p) {
         remove_root_attribute(p, "edm_format");
         remove_root_attribute(p, "edm_version");
       }, "EDM-IO-160", {"another tool"}},
      {"format_as_text", [](const fs::path& p) { set_root_string(p, "edm_format", "1"); }, "EDM-IO-072",
       {"edm_format"}},
      {"text_file", [](const fs::path& p) { std::ofstream(p, std::ios::trunc) << "E,B\n1,2\n"; }, "EDM-IO-010", {}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.tag) {
      const fs::path dir = copy_of_run(c.tag);
      c.damage(dir / "field.h5");
      expect_refused(dir / "field.h5", c.id, c.fragments);
    }
  }
}

// The commands meet the same damage with the same id (exit 4) and change nothing: field.h5 keeps its
// bytes and no spectrum.h5 appears.
BOOST_AUTO_TEST_CASE(commands_refuse_another_format_and_change_nothing) {
  const fs::path dir = copy_of_run("cli");
  set_root_number(dir / "field.h5", "edm_format", 99);
  const std::string before = test::slurp(dir / "field.h5");
  for (const std::string cmd : {"info", "spectrum"}) {
    const auto r = test::run_edm(cmd + " " + dir.string() + (cmd == "spectrum" ? " --quiet" : ""));
    BOOST_TEST_CONTEXT(cmd << ": " << r.output) {
      BOOST_TEST(r.exit_code == 4);
      BOOST_TEST(contains(r.output, "edm: error [EDM-IO-160]"));
      BOOST_TEST(contains(r.output, (dir / "field.h5").string()));
      BOOST_TEST(contains(r.output, "edm_format 99"));
    }
  }
  BOOST_TEST(!fs::exists(dir / "spectrum.h5"));
  BOOST_TEST(!fs::exists(dir / "spectrum.h5.partial"));
  BOOST_TEST((test::slurp(dir / "field.h5") == before));
}

BOOST_AUTO_TEST_SUITE_END()
