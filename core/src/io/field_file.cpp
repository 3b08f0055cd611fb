// field.h5's reader (edm/field_file.hpp): opens the file once, checks its whole layout there and keeps
// the handle and the datasets open for the passes over the cube. Every kind of damage has one id,
// whichever command meets it (edm spectrum, info, plot): before this owner the same short /E/y had
// one id in edm info and another (since retired) in edm spectrum.
#include "edm/field_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numbers>

#include "edm/error.hpp"
#include "edm/spectrum_file.hpp"  // kRunFormat, until run_files.hpp
#include "io/h5.hpp"

namespace edm {
namespace {

using Dims = std::vector<hsize_t>;
const char* const kComp[3] = {"x", "y", "z"};
const char* const kBucket[4] = {"E", "B", "E_far", "B_far"};

std::string shape_text(const Dims& d) {
  std::string s = "(";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A dataset of field.h5 opened and checked: present (EDM-IO-011), of rank `rank` with a product of
// dimensions that does not wrap (EDM-IO-071), floating point (EDM-IO-070), its declared size really
// stored (EDM-IO-073) — in that order, so that nothing the file declares is allocated before it is
// known to be there.
struct Dataset {
  h5::Handle handle;
  Dims dims;
};

// Rows [iy0, iy1) of one (ny, nx, samples) dataset, the one hyperslab read of field.h5's records.
void read_dataset_rows(const Dataset& d, const std::string& name, const std::filesystem::path& path, std::size_t iy0,
                       std::size_t iy1, std::vector<double>& out) {
  if (iy0 >= iy1 || iy1 > d.dims[0])
    throw IoError("EDM-IO-014", "rows [" + std::to_string(iy0) + ", " + std::to_string(iy1) + ") out of range reading " +
                                    name + " from " + path.string());
  h5::Handle fspace(H5Dget_space(d.handle.get()), H5Sclose);
  const hsize_t start[3] = {hsize_t(iy0), 0, 0};
  const hsize_t count[3] = {hsize_t(iy1 - iy0), d.dims[1], d.dims[2]};
  if (!fspace.valid() || H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
    throw IoError("EDM-IO-013", "cannot select rows of " + name + " in " + path.string());
  h5::Handle mspace(H5Screate_simple(3, count, nullptr), H5Sclose);
  out.resize(std::size_t(count[0] * count[1] * count[2]));
  if (!out.empty() && H5Dread(d.handle.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), H5P_DEFAULT, out.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read rows of " + name + " from " + path.string());
}

Dataset open_checked(hid_t f, const std::string& name, int rank, const std::filesystem::path& file) {
  const std::string what = file.string() + " " + name;
  if (!h5::exists(f, name)) throw IoError("EDM-IO-011", what + ": no such dataset (the file is not a complete edm field.h5)");
  Dataset d{h5::Handle(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose), {}};
  if (!d.handle.valid()) throw IoError("EDM-IO-011", what + ": not a dataset");
  h5::Handle space(H5Dget_space(d.handle.get()), H5Sclose);
  const int ndims = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (ndims != rank)
    throw IoError("EDM-IO-071", what + ": rank " + std::to_string(ndims) + ", field.h5 has it " + std::to_string(rank) + "-D");
  d.dims.assign(std::size_t(rank), 0);
  if (H5Sget_simple_extent_dims(space.get(), d.dims.data(), nullptr) != rank)
    throw IoError("EDM-IO-013", "cannot read the extent of " + what);
  hsize_t n = 1;
  for (hsize_t v : d.dims) {
    if (v && n > (hsize_t(1) << 62) / v) throw IoError("EDM-IO-071", what + ": impossible shape " + shape_text(d.dims));
    n *= v;
  }
  h5::Handle type(H5Dget_type(d.handle.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_FLOAT)
    throw IoError("EDM-IO-070", what + ": not a floating-point dataset (edm writes float64)");
  h5::check_stored(d.handle.get(), n, "EDM-IO-073", what);
  return d;
}

std::vector<double> read_whole(const Dataset& d, const std::string& name, const std::filesystem::path& file) {
  std::size_t n = 1;
  for (hsize_t v : d.dims) n *= std::size_t(v);
  std::vector<double> out(n);
  if (n && H5Dread(d.handle.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read " + name + " from " + file.string());
  return out;
}

std::vector<double> read_1d(hid_t f, const std::string& name, const std::filesystem::path& file) {
  return read_whole(open_checked(f, name, 1, file), name, file);
}

[[noreturn]] void missing_attribute(const std::filesystem::path& file, const char* name) {
  throw IoError("EDM-IO-011", file.string() + ": no root attribute " + name + " (the file is not a complete edm field.h5)");
}

std::string required_string(hid_t f, const char* name, const std::filesystem::path& file) {
  auto v = h5::attr_string(f, name);  // a wrong type: EDM-IO-072 naming file and attribute
  if (!v) missing_attribute(file, name);
  return *v;
}

double required_number(hid_t f, const char* name, const std::filesystem::path& file) {
  auto v = h5::attr_double(f, name);
  if (!v) missing_attribute(file, name);
  return *v;
}

// The format version first: a file of an older edm or of another tool gets this message, naming both
// versions, rather than the first dataset it happens to lack.
void check_format(hid_t f, const std::filesystem::path& file) {
  const auto format = h5::attr_double(f, "edm_format");
  const auto version = h5::attr_string(f, "edm_version");
  const std::string want = "this edm (" + std::string(EDM_VERSION) + ") reads format " + std::to_string(kRunFormat);
  if (!format) {
    const std::string who = version ? "by edm " + *version + ", before field.h5 carried a format version"
                                    : "by another tool (no edm_format, no edm_version)";
    throw IoError("EDM-IO-160", file.string() + ": no root attribute edm_format: written " + who + "; " + want +
                                    ": run the campaign again with this edm");
  }
  if (*format != double(kRunFormat))
    throw IoError("EDM-IO-160", file.string() + ": edm_format " + format_number(*format) + " (written by edm " +
                                    version.value_or("?") + "); " + want + ": analyse it with the edm that wrote it");
}

}  // namespace

struct FieldFile::Impl {
  std::filesystem::path path;
  h5::Handle file;
  FieldGeometry geometry;
  FieldFileSummary summary;
  std::array<std::array<Dataset, 3>, 4> components;  // [bucket][comp]; buckets absent stay invalid
  std::array<Dataset, 4> potential;  // mode potential: /A/x, /A/y, /A/z, /A0 (the field buckets stay invalid)
  void open_components();
  void open_potential();
  void read_axes();
  void read_screen();
  void read_gamma();
};

// Every component of every bucket present, each the shape of /E/x: a component with another shape
// would be indexed with /E/x's and read past its end.
void FieldFile::Impl::open_components() {
  if (geometry.potential) return open_potential();
  const hid_t f = file.get();
  const bool split = geometry.split;
  for (int b = 0; b < 4; ++b) {
    if (b >= 2 && !split) {
      if (h5::exists(f, component_name(b, 0)))
        throw IoError("EDM-IO-071", path.string() + " " + component_name(b, 0) + ": present, but mode is total");
      continue;
    }
    summary.buckets.push_back(kBucket[b]);
    for (int c = 0; c < 3; ++c) {
      const std::string name = component_name(b, c);
      components[b][c] = open_checked(f, name, 3, path);
      const Dims& first = components[0][0].dims;
      if (components[b][c].dims != first)
        throw IoError("EDM-IO-071", path.string() + " " + name + ": shape " + shape_text(components[b][c].dims) +
                                        ", /E/x has " + shape_text(first) + " (every component has one shape)");
    }
  }
  const Dims& d = components[0][0].dims;
  geometry.ny = d[0], geometry.nx = d[1], geometry.samples = d[2];
}

// The four-potential's components (mode potential), each the shape of /A/x; no field bucket beside them.
void FieldFile::Impl::open_potential() {
  const hid_t f = file.get();
  if (h5::exists(f, "/E/x")) throw IoError("EDM-IO-071", path.string() + " /E/x: present, but mode is potential");
  summary.buckets.push_back("A");
  for (int c = 0; c < 4; ++c) {
    const std::string name = potential_name(c);
    potential[c] = open_checked(f, name, 3, path);
    if (potential[c].dims != potential[0].dims)
      throw IoError("EDM-IO-071", path.string() + " " + name + ": shape " + shape_text(potential[c].dims) +
                                      ", /A/x has " + shape_text(potential[0].dims) + " (every component has one shape)");
  }
  const Dims& d = potential[0].dims;
  geometry.ny = d[0], geometry.nx = d[1], geometry.samples = d[2];
}

// The axes against the cube, and the one time step and Nyquist frequency every analysis uses.
void FieldFile::Impl::read_axes() {
  const hid_t f = file.get();
  FieldGeometry& g = geometry;
  g.t = read_1d(f, "/axes/t", path);
  g.x = read_1d(f, "/axes/x", path);
  g.y = read_1d(f, "/axes/y", path);
  const auto refuse = [&](const char* name, std::size_t have, std::size_t want) {
    if (have != want)
      throw IoError("EDM-IO-071", path.string() + " " + name + ": " + std::to_string(have) + " values, the field has " +
                                      std::to_string(want) + " (shape " + shape_text({g.ny, g.nx, g.samples}) + ")");
  };
  refuse("/axes/t", g.t.size(), g.samples);
  refuse("/axes/x", g.x.size(), g.nx);
  refuse("/axes/y", g.y.size(), g.ny);
  if (g.samples >= 2) {
    g.dt = (g.t.back() - g.t.front()) / double(g.samples - 1);
    if (!(g.dt > 0) || !std::isfinite(g.dt))
      throw IoError("EDM-IO-071", path.string() + " /axes/t: not increasing (from " + format_number(g.t.front()) +
                                      " s to " + format_number(g.t.back()) + " s)");
    g.nyquist_omega = std::numbers::pi / g.dt;  // the one place it is computed
  }
  g.pixel_dx = g.nx > 1 ? (g.x.back() - g.x.front()) / double(g.nx - 1) : 0.0;
  g.pixel_dy = g.ny > 1 ? (g.y.back() - g.y.front()) / double(g.ny - 1) : 0.0;
}

// The screen's attributes; an angular screen's direction table and solid angles.
void FieldFile::Impl::read_screen() {
  const hid_t f = file.get();
  FieldGeometry& g = geometry;
  g.screen_z = required_number(f, "screen_z", path);
  if (g.screen_z == 0 || std::isnan(g.screen_z))
    throw IoError("EDM-IO-072", "attribute screen_z in " + path.string() + " is " + format_number(g.screen_z) +
                                    " (a screen's distance or radius is never 0)");
  const auto type = h5::attr_string(f, "screen_type");  // absent: the flat screen (its file has none)
  if (type && *type != "angular")
    throw IoError("EDM-IO-072", "attribute screen_type in " + path.string() + " is '" + *type + "', edm writes 'angular' or none");
  g.angular = type.has_value();
  if (!g.angular) return;
  g.far_field = std::isinf(g.screen_z);
  g.screen_angles = required_string(f, "screen_angles", path);
  g.screen_axis = required_string(f, "screen_axis", path);
  const Dataset dir = open_checked(f, "/axes/direction", 3, path);
  const Dataset omega = open_checked(f, "/axes/solid_angle", 2, path);
  if (dir.dims != Dims{g.ny, g.nx, 3})
    throw IoError("EDM-IO-071", path.string() + " /axes/direction: shape " + shape_text(dir.dims) + ", expected " +
                                    shape_text({g.ny, g.nx, 3}));
  if (omega.dims != Dims{g.ny, g.nx})
    throw IoError("EDM-IO-071", path.string() + " /axes/solid_angle: shape " + shape_text(omega.dims) + ", expected " +
                                    shape_text({g.ny, g.nx}));
  g.direction = read_whole(dir, "/axes/direction", path);
  g.solid_angle = read_whole(omega, "/axes/solid_angle", path);
}

// The γ trace's ends for edm info: grid points no electron reached are NaN; the first and last
// defined values are reported. A file without /gamma (written by FieldWriter without a trace) has none.
void FieldFile::Impl::read_gamma() {
  if (!h5::exists(file.get(), "/gamma/mean")) return;
  const auto g = read_1d(file.get(), "/gamma/mean", path);
  auto first = std::find_if(g.begin(), g.end(), [](double v) { return std::isfinite(v); });
  auto last = std::find_if(g.rbegin(), g.rend(), [](double v) { return std::isfinite(v); });
  if (first == g.end()) return;
  summary.has_gamma = true;
  summary.gamma_mean_first = *first;
  summary.gamma_mean_last = *last;
}

FieldFile FieldFile::open(const std::filesystem::path& file) {
  auto I = std::make_unique<Impl>();
  I->path = file;
  I->file = h5::open_file(file);  // EDM-IO-010 (missing, not HDF5), EDM-IO-142 (FIFO, socket, device)
  const hid_t f = I->file.get();
  check_format(f, file);
  FieldFileSummary& s = I->summary;
  s.run_id = required_string(f, "run_id", file);
  s.edm_version = required_string(f, "edm_version", file);
  s.scenario = required_string(f, "scenario", file);
  s.mode = required_string(f, "mode", file);
  if (s.mode != "total" && s.mode != "split" && s.mode != "potential")
    throw IoError("EDM-IO-072", "attribute mode in " + file.string() + " is '" + s.mode +
                                    "', edm writes total, split or potential");
  s.electron_count = required_number(f, "electron_count", file);
  s.window_clipped_electrons = h5::attr_double(f, "window_clipped_electrons").value_or(0);  // set by edm run only
  I->geometry.split = s.mode == "split";
  I->geometry.potential = s.mode == "potential";
  I->open_components();
  I->read_axes();
  I->read_screen();
  I->read_gamma();
  const FieldGeometry& g = I->geometry;
  s.screen_z = g.screen_z;
  s.screen_type = g.angular ? "angular" : "flat";
  s.nx = g.nx, s.ny = g.ny, s.samples = g.samples;
  if (!g.t.empty()) s.t_first = g.t.front(), s.t_last = g.t.back();
  if (!g.x.empty()) s.x_min = g.x.front(), s.x_max = g.x.back();
  if (!g.y.empty()) s.y_min = g.y.front(), s.y_max = g.y.back();
  return FieldFile(std::move(I));
}

FieldFile::FieldFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FieldFile::FieldFile(FieldFile&&) noexcept = default;
FieldFile& FieldFile::operator=(FieldFile&&) noexcept = default;
FieldFile::~FieldFile() = default;

const std::filesystem::path& FieldFile::path() const { return impl_->path; }
const FieldGeometry& FieldFile::geometry() const { return impl_->geometry; }
const FieldFileSummary& FieldFile::summary() const { return impl_->summary; }

std::string FieldFile::component_name(int bucket, int comp) {
  if (bucket < 0 || bucket > 3 || comp < 0 || comp > 2) return "/?/?";
  return std::string("/") + kBucket[bucket] + "/" + kComp[comp];
}

void FieldFile::read_rows(int bucket, int comp, std::size_t iy0, std::size_t iy1, std::vector<double>& out) const {
  const std::string name = component_name(bucket, comp);
  static const Dataset none;
  const bool known = bucket >= 0 && bucket < 4 && comp >= 0 && comp < 3;
  const Dataset& d = known ? impl_->components[std::size_t(bucket)][std::size_t(comp)] : none;
  if (!d.handle.valid()) throw IoError("EDM-IO-011", impl_->path.string() + " " + name + ": not in this file (mode " + impl_->summary.mode + ")");
  read_dataset_rows(d, name, impl_->path, iy0, iy1, out);
}

std::string FieldFile::potential_name(int comp) {
  static const char* const names[4] = {"/A/x", "/A/y", "/A/z", "/A0"};
  return comp >= 0 && comp < 4 ? names[comp] : "/A/?";
}

void FieldFile::read_potential_rows(int comp, std::size_t iy0, std::size_t iy1, std::vector<double>& out) const {
  const std::string name = potential_name(comp);
  if (comp < 0 || comp > 3 || !impl_->potential[std::size_t(comp)].handle.valid())
    throw IoError("EDM-IO-011", impl_->path.string() + " " + name + ": not in this file (mode " + impl_->summary.mode +
                                    "; the four-potential is written by run.mode = \"potential\")");
  const Dataset& d = impl_->potential[std::size_t(comp)];
  read_dataset_rows(d, name, impl_->path, iy0, iy1, out);
}

std::vector<double> FieldFile::component(const std::string& name) const {
  for (int c = 0; c < 4; ++c)
    if (name == potential_name(c)) {
      std::vector<double> out;
      if (impl_->geometry.ny) read_potential_rows(c, 0, impl_->geometry.ny, out);
      return out;
    }
  for (int b = 0; b < 4; ++b)
    for (int c = 0; c < 3; ++c)
      if (name == component_name(b, c)) {
        std::vector<double> out;
        if (impl_->geometry.ny) read_rows(b, c, 0, impl_->geometry.ny, out);
        return out;
      }
  throw IoError("EDM-IO-011", impl_->path.string() + " " + name + ": not a field component (/E/x … /B_far/z)");
}

std::vector<double> FieldFile::dataset_1d(const std::string& name) const {
  return read_1d(impl_->file.get(), name, impl_->path);
}

bool FieldFile::has(const std::string& name) const { return h5::exists(impl_->file.get(), name); }

std::vector<double> read_field_component(const std::filesystem::path& file, const std::string& name, std::size_t* ny,
                                         std::size_t* nx, std::size_t* ns) {
  const FieldFile f = FieldFile::open(file);
  const FieldGeometry& g = f.geometry();
  if (ny) *ny = g.ny;
  if (nx) *nx = g.nx;
  if (ns) *ns = g.samples;
  return f.component(name);
}

std::vector<double> read_dataset_1d(const std::filesystem::path& file, const std::string& name) {
  const h5::Handle f = h5::open_file(file);
  const std::string what = file.string() + " " + name;
  if (!h5::exists(f.get(), name)) throw IoError("EDM-IO-011", what + ": no such dataset");
  const h5::Handle d(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  const h5::Handle space(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
  if (!space.valid()) throw IoError("EDM-IO-011", what + ": not a dataset");
  // Every element in storage order, whatever the rank (spectrum.h5's /oam/ell is (nh, 2)).
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n > 0) h5::check_stored(d.get(), hsize_t(n), "EDM-IO-073", what);
  std::vector<double> v(n > 0 ? std::size_t(n) : 0);
  if (!v.empty() && H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read " + name + " from " + file.string());
  return v;
}

}  // namespace edm
