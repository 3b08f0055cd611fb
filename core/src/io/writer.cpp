// field.h5's writer (HDF5 C API; its reader is FieldFile, field_file.cpp). The file is built under
// "<name>.partial" and renamed into place only by commit(), so nothing under the final name is ever
// half-written.
#include "edm/writer.hpp"

#include <hdf5.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "edm/error.hpp"
#include "edm/spectrum_file.hpp"  // kRunFormat, until run_files.hpp
#include "io/h5.hpp"
#include "io/run_lock.hpp"

using namespace edm::h5;

namespace edm {
namespace {

Handle create_group(hid_t parent, const char* name, const std::filesystem::path& path) {
  Handle g(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) io_fail(std::string("cannot create group ") + name, path);
  return g;
}

// openPMD strings are fixed-length plain ASCII; the size includes the terminating NUL so that
// the NULLTERM padding is honest and every reader (C, h5py, openPMD-api) sees the same text.
void attr_string(hid_t obj, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.size() + 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), type.get(), value.c_str());
}

// A 1-D array of fixed-length strings (openPMD axisLabels), each padded to the longest + NUL.
void attr_strings(hid_t obj, const char* name, const std::vector<std::string>& values) {
  std::size_t width = 1;
  for (const auto& v : values) width = std::max(width, v.size() + 1);
  std::vector<char> buf(width * values.size(), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) values[i].copy(buf.data() + i * width, values[i].size());
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), width);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle a(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), type.get(), buf.data());
}

// One value is written as a scalar attribute, several as a 1-D array.
void attr_doubles(hid_t obj, const char* name, const std::vector<double>& v) {
  hsize_t n = v.size();
  Handle space(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_DOUBLE, v.data());
}

void attr_u64(hid_t obj, const char* name, std::uint64_t v) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_UINT64, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_UINT64, &v);
}

void attr_u32(hid_t obj, const char* name, std::uint32_t v) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_STD_U32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_UINT32, &v);
}

void write_1d(hid_t parent, const char* name, const std::vector<double>& v, const char* unit,
              const std::filesystem::path& path) {
  hsize_t n = v.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose);
  if (!d.valid()) io_fail(std::string("cannot create dataset ") + name, path);
  if (n) check(H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
               std::string("cannot write ") + name, path);
  if (unit) attr_string(d.get(), "unit", unit);
}

// openPMD unitDimension: powers of (L, M, T, I, θ, N, J).
const std::array<double, 7> kDimE = {1, 1, -3, -1, 0, 0, 0};  // V/m = kg·m·s⁻³·A⁻¹
const std::array<double, 7> kDimB = {0, 1, -2, -1, 0, 0, 0};  // T = kg·s⁻²·A⁻¹
// The far field (angular screen at infinity) stores R·E and R·B.
const std::array<double, 7> kDimRE = {2, 1, -3, -1, 0, 0, 0};  // V = kg·m²·s⁻³·A⁻¹
const std::array<double, 7> kDimRB = {1, 1, -2, -1, 0, 0, 0};  // T·m = kg·m·s⁻²·A⁻¹

// A 2-D (ny, nx) or 3-D (ny, nx, 3) dataset of the angular screen's direction table.
void write_direction_table(hid_t parent, const char* name, const std::vector<double>& v, int ny, int nx, int last,
                           const char* unit, const std::filesystem::path& path) {
  hsize_t dims[3] = {hsize_t(ny), hsize_t(nx), hsize_t(last)};
  Handle space(H5Screate_simple(last > 1 ? 3 : 2, dims, nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("cannot create dataset ") + name, path);
  check(H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
        std::string("cannot write ") + name, path);
  attr_string(d.get(), "unit", unit);
}

// The angular axes' names (first, second), as field.h5 and the mesh attributes write them.
std::array<const char*, 2> angle_names(const Screen& s) {
  if (s.grid.angles == AngleGrid::Polar) return {"theta", "phi"};
  return {"theta_x", "theta_y"};
}

// The one iteration of a run (share/docs/outputs.md, "openPMD"): every field sits under
// /data/0/meshes/, and /E, /B, … are second hard links to the same groups.
constexpr const char* kIterationPath = "/data/0/";
constexpr const char* kMeshesPath = "meshes/";

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// openPMD's recommended `author` ("author and contact"): EDM_AUTHOR when set, else the account
// that ran edm, as login@host.
std::string default_author() {
  if (const char* a = std::getenv("EDM_AUTHOR"); a && *a) return a;
  std::string login;
  if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name) login = pw->pw_name;
  if (login.empty())
    if (const char* u = std::getenv("USER")) login = u;
  return (login.empty() ? "unknown" : login) + "@" + host_name();
}

// openPMD's `date` format "YYYY-MM-DD HH:mm:ss tz", in UTC.
std::string utc_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S +0000", &tm);
  return buf;
}

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return "hdf5@" + std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
}

// edm's own root attributes, then the openPMD 1.1.0 root attributes (required: openPMD,
// openPMDextension, basePath, meshesPath, iterationEncoding, iterationFormat; recommended:
// author, software, softwareVersion, date; optional: machine, softwareDependencies).
void write_root_attributes(hid_t f, const Screen& screen, const Normalization& units, const FieldFileInfo& info) {
  attr_u32(f, "edm_format", std::uint32_t(kRunFormat));  // FieldFile refuses any other
  attr_string(f, "edm_version", info.edm_version);
  attr_string(f, "run_id", info.run_id);
  attr_string(f, "scenario", info.scenario);
  attr_string(f, "mode", name(info.mode));
  attr_string(f, "units", info.mode == Mode::Potential ? "SI: A^mu = (A0, A) with A0 = phi/c, in V s/m, lengths in m, times in s"
                                                       : "SI: E in V/m, B in T, lengths in m, times in s");
  attr_u64(f, "electron_count", info.electrons);
  attr_doubles(f, "screen_z", {screen.z * units.length()});
  if (screen.angular()) {  // the flat screen's file is unchanged (no screen_type: flat)
    attr_string(f, "screen_type", "angular");
    attr_string(f, "screen_angles", name(screen.grid.angles));
    attr_string(f, "screen_axis", name(screen.grid.axis));
    attr_string(f, "far_field", screen.far_field() ? "true: E, B hold R·E (V), R·B (T·m)" : "false: the sphere's E, B");
  }
  attr_string(f, "edm_layout", "openPMD 1.1.0 (meshes under /data/0/meshes/; /E, /B, /axes, /gamma are edm's paths)");

  attr_string(f, "openPMD", "1.1.0");
  attr_u32(f, "openPMDextension", 0);  // the base standard only
  attr_string(f, "basePath", "/data/%T/");
  attr_string(f, "meshesPath", kMeshesPath);
  attr_string(f, "iterationEncoding", "groupBased");
  attr_string(f, "iterationFormat", "/data/%T/");
  attr_string(f, "author", info.author.empty() ? default_author() : info.author);
  attr_string(f, "software", "edm");
  attr_string(f, "softwareVersion", info.edm_version);
  attr_string(f, "date", info.date.empty() ? utc_date() : info.date);
  attr_string(f, "machine", info.machine.empty() ? host_name() : info.machine);
  attr_string(f, "softwareDependencies", hdf5_version());
}

void write_axes(hid_t f, const Screen& screen, const Normalization& units, const std::filesystem::path& path) {
  const double L = units.length(), T = units.time();
  Handle axes = create_group(f, "axes", path);
  std::vector<double> xs(screen.nx), ys(screen.ny), ts(screen.samples);
  for (int i = 0; i < screen.nx; ++i) xs[i] = screen.pixel_x(i) * L;
  for (int j = 0; j < screen.ny; ++j) ys[j] = screen.pixel_y(j) * L;
  // Absolute lab-frame observer time on the laser's clock: t = t_rel + |Z| (normalised).
  for (int k = 0; k < screen.samples; ++k) ts[k] = (screen.t_rel(k) + screen.time_offset()) * T;
  write_1d(axes.get(), "t", ts, "s", path);
  if (!screen.angular()) {
    write_1d(axes.get(), "x", xs, "m", path);
    write_1d(axes.get(), "y", ys, "m", path);
    return;
  }
  // Angular: the two angles (rad) under their names and, so that readers of x and y find the grid,
  // also as /axes/x, /axes/y (unit rad); the directions n̂ (ny, nx, 3) and the cells' solid angles.
  for (int i = 0; i < screen.nx; ++i) xs[i] = screen.grid.angle1(i);
  for (int j = 0; j < screen.ny; ++j) ys[j] = screen.grid.angle2(j);
  const auto names = angle_names(screen);
  write_1d(axes.get(), names[0], xs, "rad", path);
  write_1d(axes.get(), names[1], ys, "rad", path);
  write_1d(axes.get(), "x", xs, "rad", path);
  write_1d(axes.get(), "y", ys, "rad", path);
  std::vector<double> n, omega;
  for (const auto& c : screen.directions) {
    n.insert(n.end(), c.n.begin(), c.n.end());
    omega.push_back(c.solid_angle);
  }
  write_direction_table(axes.get(), "direction", n, screen.ny, screen.nx, 3, "", path);
  write_direction_table(axes.get(), "solid_angle", omega, screen.ny, screen.nx, 1, "sr", path);
}

// /data/0/ with openPMD's iteration attributes. The run is one iteration; its `time` is the origin
// of the laser's clock, so that the mesh axis t (absolute observer time) needs no offset, and
// `dt` is the observer sample step. The observer time is a mesh axis, not the iteration time.
Handle create_iteration(hid_t f, const Screen& screen, const Normalization& units, const std::filesystem::path& path) {
  Handle data = create_group(f, "data", path);
  Handle it = create_group(data.get(), "0", path);
  attr_doubles(it.get(), "time", {0.0});
  attr_doubles(it.get(), "dt", {screen.dt * units.time()});
  attr_doubles(it.get(), "timeUnitSI", {1.0});
  attr_string(it.get(), "comment",
              "edm writes one iteration per run: time = 0 is the origin of the laser's clock (the envelope "
              "centre crosses z = 0 at t = 0); the observer time of the screen is the mesh axis t, and dt is "
              "its sample step");
  return create_group(it.get(), "meshes", path);
}

// The openPMD mesh-record attributes of one field group (E, B, E_far, B_far): a (y, x, t) grid,
// C order, every axis already in SI (m, m, s), hence gridUnitSI = 1.
void write_angular_mesh_attributes(hid_t g, const char* name, bool electric, const Screen& screen,
                                   const Normalization& units);

void write_mesh_attributes(hid_t g, const char* name, bool electric, const Screen& screen, const Normalization& units) {
  if (screen.angular()) return write_angular_mesh_attributes(g, name, electric, screen, units);
  const double L = units.length(), T = units.time();
  const double dx = screen.nx > 1 ? 2 * screen.half_x / (screen.nx - 1) * L : 0;
  const double dy = screen.ny > 1 ? 2 * screen.half_y / (screen.ny - 1) * L : 0;
  const auto& dim = electric ? kDimE : kDimB;
  attr_string(g, "geometry", "cartesian");
  attr_string(g, "dataOrder", "C");
  attr_strings(g, "axisLabels", {"y", "x", "t"});
  attr_doubles(g, "gridSpacing", {dy, dx, screen.dt * T});
  attr_doubles(g, "gridGlobalOffset",
               {screen.pixel_y(0) * L, screen.pixel_x(0) * L, (screen.t_rel(0) + std::abs(screen.z)) * T});
  attr_doubles(g, "gridUnitSI", {1.0});
  // Not in openPMD 1.1.0: the per-axis dimensions (L, L, T) under the name and layout (7 powers
  // per axis) that the openPMD 2.0 draft gives them, so that a reader can tell that t is time.
  std::vector<double> grid_dim(21, 0.0);
  grid_dim[0] = grid_dim[7] = 1.0;  // y, x: length
  grid_dim[14 + 2] = 1.0;           // t: time
  attr_doubles(g, "gridUnitDimension", grid_dim);
  attr_doubles(g, "unitDimension", std::vector<double>(dim.begin(), dim.end()));
  attr_doubles(g, "timeOffset", {0.0});
  attr_string(g, "comment",
              std::string(name) + (electric ? " (V/m)" : " (T)") +
                  " on the screen plane: axes y, x are pixel centres (m), axis t is the absolute lab-frame "
                  "observer time on the laser's clock (s), not a spatial axis");
}

// The angular screen's mesh attributes: a (second angle, first angle, t) grid in rad, rad, s
// (gridUnitSI = 1, the angles dimensionless), geometry "other" (openPMD 1.1.0 has no angular
// grid); the far field's records are R·E (V) and R·B (T·m).
void write_angular_mesh_attributes(hid_t g, const char* name, bool electric, const Screen& screen,
                                   const Normalization& units) {
  const double T = units.time();
  const bool far = screen.far_field();
  const auto& dim = far ? (electric ? kDimRE : kDimRB) : (electric ? kDimE : kDimB);
  const auto names = angle_names(screen);
  attr_string(g, "geometry", "other");
  attr_string(g, "dataOrder", "C");
  attr_strings(g, "axisLabels", {names[1], names[0], "t"});
  attr_doubles(g, "gridSpacing",
               {screen.ny > 1 ? screen.grid.spacing2() : 0.0, screen.nx > 1 ? screen.grid.spacing1() : 0.0, screen.dt * T});
  attr_doubles(g, "gridGlobalOffset",
               {screen.grid.angle2(0), screen.grid.angle1(0), (screen.t_rel(0) + screen.time_offset()) * T});
  attr_doubles(g, "gridUnitSI", {1.0});
  std::vector<double> grid_dim(21, 0.0);
  grid_dim[14 + 2] = 1.0;  // t: time; the angles are dimensionless
  attr_doubles(g, "gridUnitDimension", grid_dim);
  attr_doubles(g, "unitDimension", std::vector<double>(dim.begin(), dim.end()));
  attr_doubles(g, "timeOffset", {0.0});
  const std::string unit = far ? (electric ? "R·E (V)" : "R·B (T·m)") : (electric ? "(V/m)" : "(T)");
  attr_string(g, "comment",
              std::string(name) + " " + unit + " on the angular screen: axes " + names[1] + ", " + names[0] +
                  " are the directions' angles (rad; n̂ in /axes/direction), axis t is the observer time (s): " +
                  (far ? "t − n̂·r/c at infinity" : "t − R/c on the sphere of radius R"));
}

// The four-potential's record (run.mode = "potential"): V·s/m = kg·m·s⁻²·A⁻¹.
const std::array<double, 7> kDimA = {1, 1, -2, -1, 0, 0, 0};

// A mesh attribute written again (write_mesh_attributes wrote the fields' value).
void replace_attr_string(hid_t g, const char* name, const std::string& value) {
  H5Adelete(g, name);
  attr_string(g, name, value);
}

}  // namespace

struct FieldWriter::Impl {
  std::filesystem::path final_path, partial_path;
  Screen screen;
  Normalization units;
  Handle file;
  std::vector<std::array<Handle, 3>> datasets;  // [bucket][comp]
  std::vector<double> scratch;
  Mode mode = Mode::Total;
  bool committed = false;
  bool potential = false;  // run.mode = "potential": bucket 0 is A, bucket 1's first component A⁰
  void create_potential(hid_t meshes);
  bool joined = false;  // rows of a file another process created (FieldWriter::Join)
  bool keep = false;    // left in place uncommitted: a later pass's checkpoint continues it (keep_partial)
};

// The potential's two records (openPMD allows a Cartesian vector only x, y, z): the vector /A (a
// hard link to /data/0/meshes/A: components x, y, z, the accumulator's bucket 0) and the scalar
// /A0 = φ/c (/data/0/meshes/A0: bucket 1's first component), both in V·s/m (cl/lw_slot.cl,
// LW_POTENTIAL); bucket 1's other two components hold nothing and are not written.
void FieldWriter::Impl::create_potential(hid_t meshes) {
  potential = true;
  const hid_t f = file.get();
  hsize_t dims[3] = {hsize_t(screen.ny), hsize_t(screen.nx), hsize_t(screen.samples)};
  Handle space(H5Screate_simple(3, dims, nullptr), H5Sclose);
  // The record's attributes (the fields' mesh attributes, the potential's unit and comment) on the
  // group of A or on the dataset of the scalar A0.
  const auto record = [&](hid_t r, const char* name, const std::string& comment) {
    write_mesh_attributes(r, name, true, screen, units);
    H5Adelete(r, "unitDimension");
    attr_doubles(r, "unitDimension", std::vector<double>(kDimA.begin(), kDimA.end()));
    replace_attr_string(r, "comment", comment + " on the screen's grid (axis t is the absolute lab-frame observer time, s)");
    check(H5Lcreate_hard(meshes, name, f, name, H5P_DEFAULT, H5P_DEFAULT), std::string("cannot link /") + name,
          partial_path);
  };
  const auto component = [&](hid_t parent, const char* name, const std::string& comment) {
    Handle d(H5Dcreate2(parent, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (!d.valid()) io_fail(std::string("cannot create dataset ") + name, partial_path);
    attr_doubles(d.get(), "unitSI", {1.0});
    attr_string(d.get(), "unit", "V s/m");
    attr_doubles(d.get(), "position", {0.0, 0.0, 0.0});
    attr_string(d.get(), "comment", comment);
    return d;
  };
  datasets.resize(2);
  Handle g = create_group(meshes, "A", partial_path);
  const char* cname[3] = {"x", "y", "z"};
  for (int c = 0; c < 3; ++c) datasets[0][c] = component(g.get(), cname[c], std::string("A_") + cname[c] + " in V s/m");
  record(g.get(), "A", "the vector potential A of the Lienard-Wiechert four-potential (A0, A) in V s/m");
  datasets[1][0] = component(meshes, "A0", "A^0 = phi/c in V s/m");
  record(datasets[1][0].get(), "A0", "A^0 = phi/c of the Lienard-Wiechert four-potential in V s/m");
}


namespace {

// The field datasets of a file created by FieldWriter, opened again (a process that joins it, or the
// owner taking it back): each must have the screen's shape, else the file is not this run's.
void open_datasets(FieldWriter::Impl& I) {
  const char* cname[3] = {"x", "y", "z"};
  const hsize_t want[3] = {hsize_t(I.screen.ny), hsize_t(I.screen.nx), hsize_t(I.screen.samples)};
  I.datasets.clear();
  I.datasets.resize(std::size_t(bucket_count(I.mode)));
  for (std::size_t b = 0; b < I.datasets.size(); ++b)
    for (int c = 0; c < 3; ++c) {
      const std::string path = std::string("/") + bucket_name(int(b)) + "/" + cname[c];
      Handle d(H5Dopen2(I.file.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
      if (!d.valid()) io_fail("the field file has no dataset " + path + " to write rows into", I.partial_path);
      Handle space(H5Dget_space(d.get()), H5Sclose);
      hsize_t dims[3] = {0, 0, 0};
      if (H5Sget_simple_extent_ndims(space.get()) != 3 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 3 ||
          !std::equal(dims, dims + 3, want))
        io_fail("dataset " + path + " is not shaped (ny, nx, samples) of this run's screen", I.partial_path);
      I.datasets[b][std::size_t(c)] = std::move(d);
    }
}

void open_partial_rw(FieldWriter::Impl& I) {
  I.file = Handle(H5Fopen(I.partial_path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!I.file.valid())
    io_fail("cannot open the field file for writing this process's rows (is the run folder on a file system "
            "every rank shares?)",
            I.partial_path);
  open_datasets(I);
}

// Flushes and closes the file, checking both (a full disk shows here), without renaming it.
void close_durably(FieldWriter::Impl& I, const char* what) {
  check(H5Fflush(I.file.get(), H5F_SCOPE_GLOBAL), std::string("cannot flush ") + what + " (disk full?)",
        I.partial_path);
  I.datasets.clear();
  if (H5Fclose(I.file.release()) < 0) io_fail(std::string("cannot close ") + what + " (disk full?)", I.partial_path);
}

// What both constructors (the owner's and a joining rank's) start from: the final name and its
// staging name field.h5.partial, the screen, the units and the mode.
void set_up(FieldWriter::Impl& I, std::filesystem::path final_path, const Screen& screen, const Normalization& units,
            Mode mode) {
  h5::silence();
  I.final_path = std::move(final_path);
  I.partial_path = I.final_path;
  I.partial_path += ".partial";
  I.screen = screen;
  I.units = units;
  I.mode = mode;
}

}  // namespace

FieldWriter::FieldWriter(std::filesystem::path final_path, const Screen& screen,
                         const Normalization& units, const FieldFileInfo& info)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  set_up(I, std::move(final_path), screen, units, info.mode);
  // A partial file already there is not this writer's (it may be a complete field whose manifest
  // could not be written, which edm told the user to keep): moved aside, never truncated.
  move_aside(I.partial_path);
  I.file = Handle(H5Fcreate(I.partial_path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!I.file.valid()) io_fail("cannot create the field file", I.partial_path);
  hid_t f = I.file.get();
  write_root_attributes(f, screen, units, info);
  write_axes(f, screen, units, I.partial_path);
  Handle meshes = create_iteration(f, screen, units, I.partial_path);

  if (info.mode == Mode::Potential) {
    I.create_potential(meshes.get());
    return;
  }
  const int buckets = bucket_count(info.mode);
  hsize_t dims[3] = {hsize_t(screen.ny), hsize_t(screen.nx), hsize_t(screen.samples)};
  Handle space(H5Screate_simple(3, dims, nullptr), H5Sclose);
  const char* cname[3] = {"x", "y", "z"};
  I.datasets.resize(buckets);
  for (int b = 0; b < buckets; ++b) {
    const bool electric = (b % 2) == 0;
    Handle g = create_group(meshes.get(), bucket_name(b), I.partial_path);
    // The historical path /E (…) names the same group: a hard link, so both names are equal
    // (neither can dangle) and /E/x is the very dataset /data/0/meshes/E/x.
    check(H5Lcreate_hard(meshes.get(), bucket_name(b), f, bucket_name(b), H5P_DEFAULT, H5P_DEFAULT),
          std::string("cannot link /") + bucket_name(b), I.partial_path);
    write_mesh_attributes(g.get(), bucket_name(b), electric, screen, units);
    for (int c = 0; c < 3; ++c) {
      Handle d(H5Dcreate2(g.get(), cname[c], H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT),
               H5Dclose);
      if (!d.valid()) io_fail(std::string("cannot create dataset /") + bucket_name(b) + "/" + cname[c], I.partial_path);
      attr_doubles(d.get(), "unitSI", {1.0});
      const bool far = screen.far_field();
      attr_string(d.get(), "unit", far ? (electric ? "V" : "T m") : (electric ? "V/m" : "T"));
      attr_doubles(d.get(), "position", {0.0, 0.0, 0.0});
      attr_string(d.get(), "comment",
                  std::string(bucket_name(b)) + "_" + cname[c] + " in " +
                      (far ? (electric ? "V (R·E)" : "T m (R·B)") : (electric ? "V/m" : "T")));
      I.datasets[b][c] = std::move(d);
    }
  }
}

FieldWriter::FieldWriter(Join, std::filesystem::path final_path, const Screen& screen, const Normalization& units,
                         Mode mode)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  set_up(I, std::move(final_path), screen, units, mode);
  I.joined = true;
  open_partial_rw(I);
}

FieldWriter::FieldWriter(Resume, std::filesystem::path final_path, const Screen& screen, const Normalization& units,
                         Mode mode, const std::string& run_id)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  set_up(I, std::move(final_path), screen, units, mode);
  I.keep = true;  // not this process's file until it is known to be the run's
  if (!std::filesystem::is_regular_file(I.partial_path))
    throw IoError("EDM-CKP-088", I.partial_path.string() + " is missing: the checkpoint is of a later pass of a "
                                 "screen in passes, whose earlier passes' rows it holds; start again with edm run --overwrite");
  open_partial_rw(I);
  if (h5::attr_string(I.file.get(), "run_id").value_or("") != run_id)
    throw IoError("EDM-CKP-089", I.partial_path.string() + " was written by another run than the checkpoint's (" +
                                     run_id + "): its rows are not the passes before the checkpoint's; start again "
                                     "with edm run --overwrite");
  if (mode == Mode::Potential) I.potential = true;
  I.keep = false;
}

void FieldWriter::keep_partial() { impl_->keep = true; }

void FieldWriter::close_for_others() {
  if (impl_->file.valid()) close_durably(*impl_, "the field file before the other ranks write their rows");
}

void FieldWriter::reopen() {
  if (!impl_->file.valid()) open_partial_rw(*impl_);
}

void FieldWriter::release() {
  if (impl_->file.valid()) close_durably(*impl_, "the field file after this rank's rows");
}

FieldWriter::~FieldWriter() {
  if (!impl_ || impl_->committed) return;
  impl_->datasets.clear();
  impl_->file.reset();
  if (impl_->joined) return;  // the owner's file: the owner removes it if the run fails
  if (impl_->keep) return;    // a later pass's checkpoint continues it
  std::error_code ec;
  std::filesystem::remove(impl_->partial_path, ec);
}

void FieldWriter::write_slab(int bucket, int comp, int iy0, int iy1, const double* data) {
  auto& I = *impl_;
  if (!I.file.valid()) throw IoError("EDM-MPI-010", "a slab was written while the field file is handed to another rank: " +
                                                     I.partial_path.string());
  if (bucket < 0 || bucket >= int(I.datasets.size()) || comp < 0 || comp > 2 || iy0 < 0 ||
      iy1 > I.screen.ny || iy0 >= iy1)
    throw IoError("EDM-IO-002", "slab out of range for " + I.partial_path.string());
  if (!I.datasets[bucket][comp].valid()) return;  // potential: bucket 1's y and z hold nothing
  const std::size_t n = std::size_t(iy1 - iy0) * I.screen.nx * I.screen.samples;
  // Normalised → SI at the edge: E in units of q k²/(4πε0), B likewise over c.
  // The far field holds R·E, R·B: one length more (normalised R → m).
  // The potential A^μ in units of q k/(4πε0 c) = (q k²/(4πε0 c))·(1/k): the B unit times a length.
  const double far = I.screen.far_field() || I.potential ? I.units.length() : 1.0;
  const double scale = ((bucket % 2 == 0 && !I.potential) ? I.units.lw_efield() : I.units.lw_bfield()) * far;
  I.scratch.resize(n);
  for (std::size_t i = 0; i < n; ++i) I.scratch[i] = data[i] * scale;
  hid_t d = I.datasets[bucket][comp].get();
  Handle fspace(H5Dget_space(d), H5Sclose);
  hsize_t start[3] = {hsize_t(iy0), 0, 0};
  hsize_t count[3] = {hsize_t(iy1 - iy0), hsize_t(I.screen.nx), hsize_t(I.screen.samples)};
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  Handle mspace(H5Screate_simple(3, count, nullptr), H5Sclose);
  check(H5Dwrite(d, H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), H5P_DEFAULT, I.scratch.data()),
        "cannot write field slab (disk full?)", I.partial_path);
  bytes_ += n * sizeof(double);
}

void FieldWriter::write_gamma_trace(const GammaTrace& trace, const Normalization& units) {
  auto& I = *impl_;
  Handle g = create_group(I.file.get(), "gamma", I.partial_path);
  const std::size_t n = trace.sum.size();
  std::vector<double> tau(n), mean(n), count(n);
  for (std::size_t j = 0; j < n; ++j) {
    tau[j] = j * trace.dtau * units.time();
    count[j] = double(trace.count[j]);
    mean[j] = trace.count[j] ? trace.mean(j) : NAN;
  }
  write_1d(g.get(), "tau", tau, "s", I.partial_path);
  write_1d(g.get(), "mean", mean, "", I.partial_path);
  write_1d(g.get(), "min", trace.min, "", I.partial_path);
  write_1d(g.get(), "max", trace.max, "", I.partial_path);
  write_1d(g.get(), "count", count, "", I.partial_path);
  std::vector<double> idx, drain;
  for (auto& [e, d] : trace.drain) {
    idx.push_back(double(e));
    drain.push_back(d);
  }
  write_1d(g.get(), "drain_electron", idx, "", I.partial_path);
  write_1d(g.get(), "drain", drain, "", I.partial_path);
  attr_string(g.get(), "meaning",
              "gamma(tau) over the ensemble on a proper-time grid from each electron's start; "
              "drain = gamma_first - gamma_last per electron");
}

void FieldWriter::set_attribute(const std::string& name, double value) {
  attr_doubles(impl_->file.get(), name.c_str(), {value});
}

void FieldWriter::commit() {
  auto& I = *impl_;
  if (I.joined) throw IoError("EDM-MPI-010", "a rank that joined the field file tried to commit it; only rank 0, which created "
                                 "it, renames " + I.partial_path.string());
  reopen();
  // Written last, once every row and the γ trace are in: a field.h5.partial that carries it is a
  // whole field (`edm resume` adopts one kept by a failed rename); one without it was cut off.
  attr_u32(I.file.get(), "edm_complete", 1);
  check(H5Fflush(I.file.get(), H5F_SCOPE_GLOBAL), "cannot flush the field file (disk full?)", I.partial_path);
  I.datasets.clear();
  if (H5Fclose(I.file.release()) < 0) io_fail("cannot close the field file (disk full?)", I.partial_path);
  std::error_code ec;
  std::filesystem::rename(I.partial_path, I.final_path, ec);
  // The file is complete: a failed rename (a folder made read-only, EXDEV) must not lose the
  // computed cube, so the destructor keeps it under its staging name (issue 30).
  I.committed = true;
  if (ec)
    throw IoError("EDM-IO-163", "cannot rename the finished field " + I.partial_path.string() + " to " +
                                    I.final_path.string() + ": " + ec.message() + "; the complete field is kept as " +
                                    I.partial_path.string() + " (share/docs/outputs.md, \"A field kept as field.h5.partial\")");
}

}  // namespace edm
