// ctest-label: e2e
// spectrum.h5's one owner (edm/spectrum_file.hpp, issue 29 item 1): the staged writer keeps the part
// it does not write bit for bit and renames once; an unfinished writer leaves the old file as it
// was; a link, FIFO or folder at its names is refused by what it is; the reader gives each kind of
// damage its one id, naming the file and the object; another edm_format is refused naming both.
#define BOOST_TEST_MODULE spectrum_file
#include <hdf5.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "edm/error.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_files.hpp"
#include "edm/spectrum.hpp"
#include "edm/spectrum_file.hpp"
#include "h5_read.hpp"
#include "spawn.hpp"
#include "synthetic_run.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

constexpr double kC = 299792458.0;
constexpr double kPi = std::numbers::pi;
constexpr int kN = 5;  // pixels and directions a side

// A 5² flat run with a Gaussian pulse at ω_L travelling along −z (test_headline's field, smaller).
fs::path synthetic_run(const std::string& tag) {
  test::SyntheticRun s;
  s.nx = s.ny = kN;
  s.samples = 512;
  s.samples_per_period = 32;
  s.z = -0.05;
  const double w = 2 * kPi * kC / s.wavelength, T = 2 * kPi / w, dt = T / s.samples_per_period;
  const double tc = std::abs(s.z) / kC + 0.5 * (s.samples - 1) * dt;
  const fs::path dir = test::make_synthetic_run(tag, s, [&](double, double, double t, double E[3], double B[3]) {
    const double u = (t - tc) / (2 * T);
    E[0] = 1e6 * std::exp(-u * u) * std::cos(w * (t - tc));
    E[1] = E[2] = 0;
    B[0] = B[2] = 0;
    B[1] = -E[0] / kC;
  });
  std::ofstream(dir / "run.toml", std::ios::app)
      << "[kinematics]\nelectrons = 1\nlaser_direction = 1\nlight_front_h = 1.0\n"
         "gamma_mean = 1.0\nu_perp2_mean = 0.0\n";
  return dir;
}

// /direct of kN² directions × 4 ω with sums that depend on `seed` (what is written is the writer's
// business, not physics: test_spectra checks the units).
void write_direct(const fs::path& file, double seed) {
  SpectraFileInfo info;
  const std::size_t nd = kN * kN, nw = 4;
  for (std::size_t k = 0; k < nw; ++k) info.omega.push_back((1 + k) * 2.35e15);
  for (std::size_t d = 0; d < nd; ++d) {
    const double tx = 1e-3 * (double(d % kN) - 2), ty = 1e-3 * (double(d / kN) - 2);
    const double n = std::sqrt(1 + tx * tx + ty * ty);
    info.directions.push_back({tx / n, ty / n, 1 / n});
  }
  info.direction_shape = {kN, kN};
  info.laser_omega = 2.35e15;
  info.run_id = "direct-run";
  info.edm_version = "test";
  SpectraSums sums;
  sums.directions = nd;
  sums.frequencies = nw;
  sums.electrons = 3;
  sums.weight_sum = 3;
  for (std::size_t i = 0; i < 6 * nd * nw; ++i) sums.coherent.push_back(std::sin(seed + 0.37 * double(i)));
  for (std::size_t i = 0; i < nd * nw; ++i) sums.incoherent.push_back(1 + std::cos(seed + 0.11 * double(i)));
  SpectrumWriter out = SpectrumWriter::open(file, SpectrumPart::Direct);
  write_direct_spectra(out, info, sums);
  out.commit();
}

// edm spectrum's part, computed in process from the synthetic run.
void write_analysis(const fs::path& dir) {
  SpectrumOptions o;
  o.harmonics = {1};
  const SpectrumResult r = compute_spectrum(edm::RunFolder(dir), o);
  SpectrumWriter out = SpectrumWriter::open(dir / "spectrum.h5", SpectrumPart::Analysis);
  write_spectrum(out, r);
  out.commit();
}

const char* const kDirectSets[] = {"/direct/axes/omega", "/direct/axes/direction", "/direct/coherent_amplitude",
                                   "/direct/coherent/d2W_domega_dOmega", "/direct/incoherent/photons_per_omega"};
const char* const kAnalysisSets[] = {"/axes/omega", "/on_axis/d2I_domega_dOmega", "/pixel/fluence",
                                     "/harmonics/maps", "/integrated/dI_domega"};

std::vector<std::vector<unsigned char>> raw(const fs::path& file, const char* const (&sets)[5]) {
  std::vector<std::vector<unsigned char>> v;
  for (const char* s : sets) v.push_back(test::h5_raw(file, s));
  return v;
}

// Runs `f` and returns the id and message of the edm::Error it throws ("none" if it throws none).
template <class F>
std::pair<std::string, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.id(), e.what()};
  }
  return {"none", ""};
}

// HDF5 edits of a copy, for the damage cases.
struct Edit {
  hid_t f;
  explicit Edit(const fs::path& p) : f(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) { BOOST_REQUIRE(f >= 0); }
  ~Edit() { H5Fclose(f); }
  void set_double(const char* obj, const char* name, double v) {
    const hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
    if (H5Aexists(o, name) > 0) H5Adelete(o, name);
    const hid_t sp = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(o, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    BOOST_REQUIRE(H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0);
    H5Aclose(a), H5Sclose(sp), H5Oclose(o);
  }
  void drop_attr(const char* obj, const char* name) { BOOST_REQUIRE(H5Adelete_by_name(f, obj, name, H5P_DEFAULT) >= 0); }
  void drop(const char* name) { BOOST_REQUIRE(H5Ldelete(f, name, H5P_DEFAULT) >= 0); }
  void replace_2d(const char* name, hsize_t a, hsize_t b) {
    drop(name);
    const hsize_t dims[2] = {a, b};
    std::vector<double> zero(a * b, 0.0);
    const hid_t sp = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    BOOST_REQUIRE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zero.data()) >= 0);
    H5Dclose(d), H5Sclose(sp);
  }
};

// Every reader of the file, as edm info and edm plot call them.
void read_all(const fs::path& file) {
  const SpectrumFile s = SpectrumFile::open(file);
  (void)s.summary();
  (void)s.direct_summary();
  (void)read_direct_on_axis(s, {0, 0, -1}, 2.35e15);
}

bool strace_works() {
  return test::run_command("command -v strace >/dev/null && strace -f -o /dev/null true").exit_code == 0;
}

}  // namespace

// edm spectrum keeps the run's /direct bit for bit and renames spectrum.h5 once (twice before:
// spectrum.h5.staging.partial → .staging → spectrum.h5); the run's direct spectra written again keep
// edm spectrum's groups and root attributes bit for bit.
BOOST_AUTO_TEST_CASE(each_part_is_kept_by_the_other_and_spectrum_renames_once) {
  const fs::path dir = synthetic_run("spectrum_file_parts");
  const fs::path file = dir / "spectrum.h5";
  write_direct(file, 0.5);
  const auto direct = raw(file, kDirectSets);
  const fs::path trace = dir / "renames.strace";
  const bool traced = strace_works();
  const std::string cmd = " spectrum " + dir.string() + " --harmonics 1 --quiet";
  const auto r = traced ? test::run_command("strace -f -e trace=rename,renameat,renameat2 -o " + trace.string() + " " +
                                            test::edm_bin() + cmd + " 2>&1")
                        : test::run_edm(cmd);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  BOOST_TEST((raw(file, kDirectSets) == direct), "edm spectrum changed /direct");
  if (traced) {
    const std::string log = test::slurp(trace);
    std::size_t renames = 0;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
      if (line.find("rename") != std::string::npos && line.find("spectrum.h5") != std::string::npos) ++renames;
    BOOST_TEST(renames == 1u, log);
  } else {
    BOOST_TEST_MESSAGE("strace cannot trace here: the count of renames is not checked");
  }
  const auto analysis = raw(file, kAnalysisSets);
  const auto oam = test::h5_raw(file, "/oam/ell");
  const SpectrumSummary before = *SpectrumFile::open(file).summary();
  write_direct(file, 1.5);  // the run's direct spectra again, other values
  BOOST_TEST((raw(file, kAnalysisSets) == analysis), "writing /direct changed edm spectrum's groups");
  BOOST_TEST((test::h5_raw(file, "/oam/ell") == oam));
  const SpectrumFile back = SpectrumFile::open(file);
  const SpectrumSummary after = *back.summary();
  BOOST_TEST(after.total_energy == before.total_energy);  // the root attributes came along
  BOOST_TEST(after.run_id == before.run_id);
  BOOST_TEST(after.line_omega == before.line_omega);
  BOOST_TEST((raw(file, kDirectSets) != direct), "the new /direct was not written");
  BOOST_TEST(!fs::exists(dir / "spectrum.h5.partial"));
}

// The analysis part is written whole: groups of an earlier edm spectrum that this one does not
// write (the twisted-light groups under --no-oam) are not carried over beside the new spectrum.
BOOST_AUTO_TEST_CASE(the_analysis_part_replaces_its_own_groups) {
  const fs::path dir = synthetic_run("spectrum_file_no_oam");
  write_direct(dir / "spectrum.h5", 0.5);
  const std::string cmd = " spectrum " + dir.string() + " --harmonics 1 --quiet";
  auto r = test::run_edm(cmd);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  BOOST_TEST(test::h5_raw(dir / "spectrum.h5", "/oam/ell").size() > 0u);
  r = test::run_edm(cmd + " --no-oam");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const hid_t f = H5Fopen((dir / "spectrum.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  BOOST_TEST(H5Lexists(f, "oam", H5P_DEFAULT) == 0);
  BOOST_TEST(H5Lexists(f, "harmonic_field", H5P_DEFAULT) == 0);
  BOOST_TEST(H5Lexists(f, "direct", H5P_DEFAULT) > 0);
  H5Fclose(f);
}

// A writer that ends without commit (the producer threw mid-write) removes its partial and leaves
// the spectrum.h5 that was there byte for byte.
BOOST_AUTO_TEST_CASE(an_unfinished_writer_leaves_the_old_file_as_it_was) {
  const fs::path dir = synthetic_run("spectrum_file_unfinished");
  const fs::path file = dir / "spectrum.h5";
  write_direct(file, 0.5);
  write_analysis(dir);
  const std::string bytes = test::slurp(file);
  BOOST_REQUIRE(!bytes.empty());
  for (SpectrumPart part : {SpectrumPart::Analysis, SpectrumPart::Direct}) {
    const auto e = error_of([&] {
      SpectrumWriter out = SpectrumWriter::open(file, part);
      BOOST_TEST(fs::exists(dir / "spectrum.h5.partial"));
      const hid_t g = H5Gcreate2(out.file(), part == SpectrumPart::Direct ? "direct" : "axes", H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT);
      H5Gclose(g);
      throw IoError("EDM-IO-032", "the producer failed mid-write");
    });
    BOOST_TEST(e.first == "EDM-IO-032");
    BOOST_TEST(!fs::exists(dir / "spectrum.h5.partial"));
    BOOST_TEST((test::slurp(file) == bytes), "the old spectrum.h5 changed");
  }
}

// A regular spectrum.h5.partial is a dead writer's leftover and is replaced; a link, FIFO or folder
// at either name is refused naming what it is, before anything is written.
BOOST_AUTO_TEST_CASE(odd_files_at_the_names_are_refused_by_what_they_are) {
  const fs::path dir = test::temp_dir("spectrum_file_kinds");
  const fs::path file = dir / "spectrum.h5", partial = dir / "spectrum.h5.partial";
  test::write_file(dir, "spectrum.h5.partial", "a writer that died");
  write_direct(file, 0.5);
  BOOST_TEST(!fs::exists(partial));
  BOOST_TEST(SpectrumFile::open(file).has_direct());

  const fs::path elsewhere = test::write_file(dir, "elsewhere.txt", "the user's");
  struct Case {
    const char* what;
    fs::path at;
    std::function<void()> make;
  };
  const std::vector<Case> cases = {
      {"a symbolic link", partial, [&] { fs::create_symlink(elsewhere, partial); }},
      {"a FIFO", partial, [&] { BOOST_REQUIRE(::mkfifo(partial.c_str(), 0600) == 0); }},
      {"a folder", partial, [&] { fs::create_directory(partial); }},
  };
  const std::string bytes = test::slurp(file);
  for (const Case& c : cases) {
    c.make();
    const auto e = error_of([&] { write_direct(file, 2.5); });
    BOOST_TEST(e.first == "EDM-IO-161", c.what << ": " << e.second);
    BOOST_TEST(e.second.find(c.at.string() + " is " + c.what) != std::string::npos, e.second);
    BOOST_TEST((test::slurp(file) == bytes), c.what);
    BOOST_TEST(test::slurp(elsewhere) == "the user's");
    fs::remove(c.at);
  }
  // At spectrum.h5 itself: a link to a spectrum.h5 is not written through.
  fs::rename(file, dir / "real.h5");
  fs::create_symlink(dir / "real.h5", file);
  const auto e = error_of([&] { write_direct(file, 2.5); });
  BOOST_TEST(e.first == "EDM-IO-161", e.second);
  BOOST_TEST(fs::is_symlink(file));
  BOOST_TEST((test::slurp(dir / "real.h5") == bytes));
}

// Each kind of damage has one id, and the message names the file and the object; the writer
// refuses to build on a damaged or foreign file and leaves it as it was.
BOOST_AUTO_TEST_CASE(each_damage_has_its_one_id_naming_file_and_object) {
  const fs::path dir = synthetic_run("spectrum_file_damage");
  const fs::path good = dir / "spectrum.h5";
  write_direct(good, 0.5);
  write_analysis(dir);
  BOOST_REQUIRE(error_of([&] { read_all(good); }).first == "none");
  struct Case {
    const char* what;
    std::function<void(Edit&)> damage;
    const char* id;
    const char* names;  // the object the message must name
  };
  const std::vector<Case> cases = {
      {"edm_format 0", [](Edit& e) { e.set_double("/", "edm_format", 0); }, "EDM-IO-160", "edm_format 0"},
      {"edm_format 99", [](Edit& e) { e.set_double("/", "edm_format", 99); }, "EDM-IO-160", "edm_format 99"},
      {"no edm_format (before format 1)", [](Edit& e) { e.drop_attr("/", "edm_format"); }, "EDM-IO-160",
       "no edm_format"},
      {"no /on_axis (the compatibility of older files is gone)", [](Edit& e) { e.drop("/on_axis"); }, "EDM-IO-011",
       "/on_axis"},
      {"no /on_axis ix", [](Edit& e) { e.drop_attr("/on_axis", "ix"); }, "EDM-IO-011", "/on_axis lacks the attribute ix"},
      {"/on_axis ix outside /axes/x", [](Edit& e) { e.set_double("/on_axis", "ix", 1e6); }, "EDM-IO-135", "/on_axis ix"},
      {"no root run_id", [](Edit& e) { e.drop_attr("/", "run_id"); }, "EDM-IO-011", "the root lacks the attribute run_id"},
      {"no /axes/x", [](Edit& e) { e.drop("/axes/x"); }, "EDM-IO-011", "/axes/x"},
      {"no /direct method", [](Edit& e) { e.drop_attr("/direct", "method"); }, "EDM-IO-011", "/direct lacks the attribute method"},
      {"no /direct/axes/direction", [](Edit& e) { e.drop("/direct/axes/direction"); }, "EDM-IO-011",
       "/direct/axes/direction"},
      {"/direct/axes/direction of another shape", [](Edit& e) { e.replace_2d("/direct/axes/direction", 7, 3); },
       "EDM-IO-135", "/direct/axes/direction"},
      {"a sum of another shape", [](Edit& e) { e.replace_2d("/direct/incoherent/d2W_domega_dOmega", kN, kN); },
       "EDM-IO-135", "/direct/incoherent/d2W_domega_dOmega"},
  };
  for (const Case& c : cases) {
    const fs::path copy = dir / "damaged.h5";
    fs::copy_file(good, copy, fs::copy_options::overwrite_existing);
    {
      Edit e(copy);
      c.damage(e);
    }
    const auto got = error_of([&] { read_all(copy); });
    BOOST_TEST(got.first == c.id, c.what << ": " << got.first << " " << got.second);
    BOOST_TEST(got.second.find(copy.string()) != std::string::npos, c.what << ": " << got.second);
    BOOST_TEST(got.second.find(c.names) != std::string::npos, c.what << ": " << got.second);
  }
  // The format refusal names this edm's format too, and a writer refuses to build on the file.
  const fs::path copy = dir / "damaged.h5";
  fs::copy_file(good, copy, fs::copy_options::overwrite_existing);
  Edit(copy).set_double("/", "edm_format", 99);
  const std::string bytes = test::slurp(copy);
  const auto w = error_of([&] { SpectrumWriter::open(copy, SpectrumPart::Direct); });
  BOOST_TEST(w.first == "EDM-IO-160", w.second);
  BOOST_TEST(w.second.find("reads format " + std::to_string(kRunFormat)) != std::string::npos, w.second);
  BOOST_TEST((test::slurp(copy) == bytes));
  BOOST_TEST(!fs::exists(dir / "damaged.h5.partial"));
  // Not HDF5 at all.
  test::write_file(dir, "text.h5", "not an HDF5 file\n");
  BOOST_TEST(error_of([&] { read_all(dir / "text.h5"); }).first == "EDM-IO-010");
  // edm info says the same with the exit code of its family, and changes nothing.
  fs::copy_file(copy, good, fs::copy_options::overwrite_existing);
  const auto info = test::run_edm("info " + dir.string());
  BOOST_TEST(info.exit_code == 4, info.output);
  BOOST_TEST(info.output.find("EDM-IO-160") != std::string::npos, info.output);
  BOOST_TEST(info.output.find(good.string()) != std::string::npos, info.output);
  BOOST_TEST((test::slurp(good) == bytes));
}
