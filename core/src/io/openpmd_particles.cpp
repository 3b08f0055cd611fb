// openPMD particle series → tracks (edm/openpmd_particles.hpp): the series' iterations (file-based
// by the file-name pattern, group-based under /data/), one species' records per iteration converted
// to SI and to u = γβ, then one track per particle id across the iterations, checked for gaps and a
// uniform step. Written from the openPMD 1.1.0 standard's text (base standard: records, components,
// constant components, unitSI, unitDimension, timeOffset, macroWeighted/weightingPower).
#include "edm/openpmd_particles.hpp"

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/units.hpp"
#include "io/h5.hpp"

namespace edm {
namespace {

namespace fs = std::filesystem;
using h5::Handle;

// The openPMD dimension exponents (L, M, T, I, θ, N, J) each record must have.
constexpr std::array<double, 7> kLength{1, 0, 0, 0, 0, 0, 0};
constexpr std::array<double, 7> kMomentum{1, 1, -1, 0, 0, 0, 0};
constexpr std::array<double, 7> kNone{0, 0, 0, 0, 0, 0, 0};

// A double as text with its significant digits (std::to_string prints 1e-17 s as 0.000000).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

[[noreturn]] void malformed(const std::string& what) { throw IoError("EDM-IO-121", what); }
[[noreturn]] void missing(const std::string& what) { throw IoError("EDM-IO-119", what); }
[[noreturn]] void inconsistent(const std::string& what) { throw IoError("EDM-IO-122", what); }

struct IterationRef {
  std::uint64_t n = 0;
  fs::path file;
};

bool has_link(hid_t g, const std::string& name) { return H5Lexists(g, name.c_str(), H5P_DEFAULT) > 0; }

// A numeric attribute of any shape as doubles (empty when absent).
std::vector<double> attr_numbers(hid_t obj, const char* name, const std::string& where) {
  if (H5Aexists(obj, name) <= 0) return {};
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Handle space(a.valid() ? H5Aget_space(a.get()) : -1, H5Sclose);
  Handle type(a.valid() ? H5Aget_type(a.get()) : -1, H5Tclose);
  const auto cls = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  std::vector<double> v(n > 0 && n <= 64 ? std::size_t(n) : 0);
  if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || v.empty() ||
      H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0)
    malformed(where + ": attribute " + name + " is not a readable number or array of numbers");
  return v;
}

double attr_number(hid_t obj, const char* name, const std::string& where, std::optional<double> fallback) {
  const auto v = attr_numbers(obj, name, where);
  if (v.empty()) {
    if (fallback) return *fallback;
    missing(where + ": attribute " + name + " is missing");
  }
  if (v.size() != 1) malformed(where + ": attribute " + name + " is not one number");
  return v[0];
}

// A conversion factor to SI (unitSI, timeUnitSI): finite and > 0. A position unitSI of 0 put every
// electron at the origin, and the run went on with exit 0.
double unit_factor(hid_t obj, const char* name, const std::string& where) {
  const double u = attr_number(obj, name, where, std::nullopt);
  if (!(std::isfinite(u) && u > 0))
    throw IoError("EDM-IO-128", where + ": attribute " + name + " = " + num(u) +
                                    ": a factor to SI units must be finite and > 0");
  return u;
}

// Root attributes of an openPMD 1.x file with basePath /data/%T/.
void check_openpmd_root(hid_t file, const fs::path& path) {
  Handle root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  const auto version = h5::attr_string(root.get(), "openPMD");
  if (!version || version->rfind("1.", 0) != 0)
    throw IoError("EDM-IO-115", path.string() + ": not an openPMD 1.x file (root attribute openPMD is " +
                                    (version ? "\"" + *version + "\"" : std::string("missing")) + ")");
  const auto base = h5::attr_string(root.get(), "basePath");
  if (base != "/data/%T/")
    throw IoError("EDM-IO-115", path.string() + ": openPMD basePath must be \"/data/%T/\", is " +
                                    (base ? "\"" + *base + "\"" : std::string("missing")));
}

// The files of a file-based series: the pattern's %T (or %0NT) stands for the iteration's digits.
std::vector<IterationRef> files_of_pattern(const fs::path& pattern) {
  const std::string name = pattern.filename().string();
  const auto pct = name.find('%');
  std::size_t t = pct == std::string::npos ? pct : name.find('T', pct);
  if (t == std::string::npos ||
      !std::all_of(name.begin() + std::ptrdiff_t(pct) + 1, name.begin() + std::ptrdiff_t(t),
                   [](unsigned char c) { return c >= '0' && c <= '9'; }))
    throw IoError("EDM-IO-127", pattern.string() + ": a file-based openPMD series needs %T in its file name");
  const std::string prefix = name.substr(0, pct), suffix = name.substr(t + 1);
  const fs::path folder = pattern.has_parent_path() ? pattern.parent_path() : fs::path(".");
  std::map<std::uint64_t, fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string f = entry.path().filename().string();
    if (f.size() <= prefix.size() + suffix.size() || f.rfind(prefix, 0) != 0 ||
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
    if (digits.size() > 19 || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (!found.emplace(std::stoull(digits), entry.path()).second)
      inconsistent(pattern.string() + ": iteration " + digits + " is in two files (" + found[std::stoull(digits)].string() +
                   ", " + entry.path().string() + ")");
  }
  if (ec || found.empty())
    throw IoError("EDM-IO-114", pattern.string() + ": no file of this openPMD series in " + folder.string() +
                                    (ec ? " (" + ec.message() + ")" : ""));
  std::vector<IterationRef> out;
  for (auto& [n, p] : found) out.push_back({n, p});
  return out;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* op) {
  static_cast<std::vector<std::string>*>(op)->emplace_back(name);
  return 0;
}

std::vector<std::string> children(hid_t g) {
  std::vector<std::string> names;
  H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names);
  return names;
}

// Every iteration of the series that `path` names (a %T pattern or one file of the series).
std::vector<IterationRef> series_iterations(const std::string& path) {
  if (path.find('%') != std::string::npos) return files_of_pattern(path);
  Handle f = h5::open_file(path);
  check_openpmd_root(f.get(), path);
  Handle root(H5Gopen2(f.get(), "/", H5P_DEFAULT), H5Gclose);
  const std::string encoding = h5::attr_string(root.get(), "iterationEncoding").value_or("");
  if (encoding == "fileBased") {
    const auto format = h5::attr_string(root.get(), "iterationFormat");
    if (!format) missing(path + ": attribute iterationFormat is missing (a file-based series)");
    return files_of_pattern(fs::path(path).parent_path() / fs::path(*format).filename());
  }
  if (encoding != "groupBased")
    throw IoError("EDM-IO-115", path + ": iterationEncoding \"" + encoding + "\" is not fileBased or groupBased");
  std::vector<IterationRef> out;
  if (has_link(f.get(), "/data")) {
    Handle data(H5Gopen2(f.get(), "/data", H5P_DEFAULT), H5Gclose);
    for (const auto& name : children(data.get()))
      if (!name.empty() && name.size() < 20 &&
          std::all_of(name.begin(), name.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }))
        out.push_back({std::stoull(name), path});
  }
  if (out.empty()) throw IoError("EDM-IO-116", path + ": the openPMD series holds no iteration under /data/");
  std::sort(out.begin(), out.end(), [](const IterationRef& a, const IterationRef& b) { return a.n < b.n; });
  return out;
}

// One record component of the species' `count` particles (the length of its id dataset): a 1-D
// numeric dataset, or a constant component (a group with attributes value and shape).
std::vector<double> read_component(hid_t parent, const std::string& name, const std::string& where,
                                   std::size_t count, double* unit_si) {
  if (!has_link(parent, name)) missing(where + " is missing");
  Handle obj(H5Oopen(parent, name.c_str(), H5P_DEFAULT), H5Oclose);
  if (!obj.valid()) malformed(where + " cannot be opened");
  const H5I_type_t kind = H5Iget_type(obj.get());
  *unit_si = unit_factor(obj.get(), "unitSI", where);
  if (kind == H5I_GROUP) {
    const double value = attr_number(obj.get(), "value", where, std::nullopt);
    const auto shape = attr_numbers(obj.get(), "shape", where);
    if (shape.size() != 1 || !(shape[0] >= 0))
      malformed(where + ": a constant component needs a 1-D shape attribute");
    // The shape is a number in the file, nothing stored behind it: compared with the particles the
    // id dataset holds before anything is allocated (a shape of 1e11 ended in bad_alloc).
    if (shape[0] != double(count))
      throw IoError("EDM-IO-130", where + ": the constant component declares shape " + num(shape[0]) + ", the species has " +
                                      std::to_string(count) + " particles (its id dataset)");
    return std::vector<double>(count, value);
  }
  if (kind != H5I_DATASET) malformed(where + " is neither a dataset nor a constant component");
  Handle space(H5Dget_space(obj.get()), H5Sclose);
  Handle type(H5Dget_type(obj.get()), H5Tclose);
  const auto cls = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  hsize_t n = 0;
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1 || (cls != H5T_FLOAT && cls != H5T_INTEGER))
    malformed(where + " is not a 1-D numeric dataset");
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  h5::check_stored(obj.get(), n, "EDM-IO-121", where);
  std::vector<double> v(n);
  if (n > 0 && H5Dread(obj.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    malformed(where + " cannot be read");
  return v;
}

// The particle ids (integers: read as such, not through double).
std::vector<std::uint64_t> read_ids(hid_t species, const std::string& where) {
  if (!has_link(species, "id")) missing(where + "/id is missing (tracks are assembled by particle id)");
  Handle d(H5Dopen2(species, "id", H5P_DEFAULT), H5Dclose);
  Handle space(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
  Handle type(d.valid() ? H5Dget_type(d.get()) : -1, H5Tclose);
  hsize_t n = 0;
  if (!space.valid() || !type.valid() || H5Tget_class(type.get()) != H5T_INTEGER ||
      H5Sget_simple_extent_ndims(space.get()) != 1)
    malformed(where + "/id is not a 1-D integer dataset");
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  h5::check_stored(d.get(), n, "EDM-IO-121", where + "/id");
  std::vector<std::uint64_t> v(n);
  if (H5Tget_sign(type.get()) == H5T_SGN_2) {
    // Read as signed: HDF5 converts a negative id to an unsigned 0, and two of them were reported as
    // "particle id 0 appears twice", naming an id the file does not hold.
    std::vector<std::int64_t> signed_ids(n);
    if (n > 0 && H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, signed_ids.data()) < 0)
      malformed(where + "/id cannot be read");
    for (std::size_t i = 0; i < n; ++i) {
      if (signed_ids[i] < 0)
        throw IoError("EDM-IO-131", where + "/id: element " + std::to_string(i) + " is " +
                                        std::to_string(signed_ids[i]) + ": a particle id must be >= 0");
      v[i] = std::uint64_t(signed_ids[i]);
    }
    return v;
  }
  if (n > 0 && H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    malformed(where + "/id cannot be read");
  return v;
}

void check_dimension(hid_t record, const std::string& where, const std::array<double, 7>& expect, const char* what) {
  const auto dim = attr_numbers(record, "unitDimension", where);
  if (dim.empty()) missing(where + ": attribute unitDimension is missing");
  bool ok = dim.size() == 7;
  for (std::size_t i = 0; ok && i < 7; ++i) ok = std::fabs(dim[i] - expect[i]) < 1e-12;
  if (!ok) {
    std::string got;
    for (double d : dim) got += (got.empty() ? "" : ", ") + num(d);
    throw IoError("EDM-IO-120", where + ": unitDimension (" + got + ") is not that of " + what);
  }
}

// A record as SI values per particle (before the macro-weighting is taken out).
struct Record {
  std::array<std::vector<double>, 3> c;  // x, y, z (a scalar record: c[0])
  double time_offset = 0;
  double macro_weighted = 0, weighting_power = 0;
};

Record read_record(hid_t species, const std::string& name, int components, const std::array<double, 7>& dim,
                   const char* what, const std::string& where_species, std::size_t count) {
  const std::string where = where_species + "/" + name;
  if (!has_link(species, name)) missing(where + " is missing");
  Handle rec(H5Oopen(species, name.c_str(), H5P_DEFAULT), H5Oclose);
  check_dimension(rec.get(), where, dim, what);
  Record r;
  r.time_offset = attr_number(rec.get(), "timeOffset", where, 0.0);
  r.macro_weighted = attr_number(rec.get(), "macroWeighted", where, 0.0);
  r.weighting_power = attr_number(rec.get(), "weightingPower", where, 0.0);
  static const char* axes[3] = {"x", "y", "z"};
  for (int k = 0; k < components; ++k) {
    double unit = 1;
    r.c[std::size_t(k)] = components == 1 ? read_component(species, name, where, count, &unit)
                                          : read_component(rec.get(), axes[k], where + "/" + axes[k], count, &unit);
    for (double& v : r.c[std::size_t(k)]) v *= unit;
  }
  return r;
}

// One iteration of the species, in SI and u = γβ.
struct Snapshot {
  std::uint64_t n = 0;
  double t = 0;
  std::vector<std::uint64_t> id;
  std::array<std::vector<double>, 7> v;  // x, y, z, ux, uy, uz, weighting
};

std::string choose_species(hid_t particles, const std::string& wanted, const std::string& where) {
  const auto names = children(particles);
  if (names.empty()) throw IoError("EDM-IO-117", where + " holds no particle species");
  if (!wanted.empty()) {
    if (std::find(names.begin(), names.end(), wanted) == names.end()) {
      std::string list;
      for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
      throw ConfigError("EDM-CFG-645", "trajectory.species = \"" + wanted + "\": " + where + " has no such species (" + list + ")");
    }
    return wanted;
  }
  if (names.size() > 1) {
    std::string list;
    for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
    throw ConfigError("EDM-CFG-646", where + " holds several species (" + list + "): choose one with trajectory.species");
  }
  return names[0];
}

// The species' records of one iteration.
Snapshot read_snapshot(hid_t species, const std::string& where, double time_si, double time_unit) {
  Snapshot s;
  s.id = read_ids(species, where);  // first: the ids are stored, and they bound every record's length
  const std::size_t n = s.id.size();
  const Record pos = read_record(species, "position", 3, kLength, "a length", where, n);
  const Record off = read_record(species, "positionOffset", 3, kLength, "a length", where, n);
  const Record mom = read_record(species, "momentum", 3, kMomentum, "a momentum", where, n);
  std::vector<double> w(n, 1.0);
  if (has_link(species, "weighting")) w = read_record(species, "weighting", 1, kNone, "a number", where, n).c[0];
  for (const auto* r : {&pos, &off, &mom})
    for (const auto& c : r->c)
      if (c.size() != n)
        inconsistent(where + ": a record has " + std::to_string(c.size()) + " values, id has " + std::to_string(n));
  if (w.size() != n) inconsistent(where + "/weighting has " + std::to_string(w.size()) + " values, id has " + std::to_string(n));
  if (mom.time_offset != pos.time_offset)
    inconsistent(where + ": momentum and position are given at different times (timeOffset " +
                 num(mom.time_offset) + " vs " + num(pos.time_offset) + ")");
  s.t = time_si + pos.time_offset * time_unit;
  for (auto& v : s.v) v.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(std::isfinite(w[i]) && w[i] > 0))
      throw IoError("EDM-IO-126", where + "/weighting of particle id " + std::to_string(s.id[i]) + " is " +
                                      num(w[i]) + ": it must be finite and > 0");
    // A macro-weighted record holds the value of the macro-particle, w^weightingPower times one particle's.
    auto single = [&](const Record& r, double v) { return r.macro_weighted == 1 ? v / std::pow(w[i], r.weighting_power) : v; };
    for (int k = 0; k < 3; ++k) {
      s.v[k][i] = single(pos, pos.c[k][i]) + single(off, off.c[k][i]);
      s.v[3 + k][i] = single(mom, mom.c[k][i]) / (si::m_e * si::c);
    }
    s.v[6][i] = w[i];
    for (const auto& v : s.v)
      if (!std::isfinite(v[i]))
        throw IoError("EDM-IO-126", where + ": particle id " + std::to_string(s.id[i]) + " has a non-finite value");
    // The bounds every electron path obeys (edm/ensemble.hpp): a weighting of 1e300 gave a field of inf.
    const ElectronInit e{s.t, s.v[0][i], s.v[1][i], s.v[2][i], s.v[3][i], s.v[4][i], s.v[5][i], w[i]};
    if (const auto bad = electron_out_of_range(e); !bad.empty())
      throw IoError("EDM-IO-129", where + ": particle id " + std::to_string(s.id[i]) + ": " + bad);
  }
  return s;
}

// Iteration `ref` opened and read: /data/<n>/ and its particles.
Snapshot read_iteration(const IterationRef& ref, const std::string& wanted, std::string& species) {
  Handle f = h5::open_file(ref.file);
  check_openpmd_root(f.get(), ref.file);
  const std::string it = "/data/" + std::to_string(ref.n);
  const std::string where = ref.file.string() + ": " + it;
  if (!h5::exists(f.get(), it)) inconsistent(where + " is missing (the file's name or the series says it is there)");
  Handle g(H5Gopen2(f.get(), it.c_str(), H5P_DEFAULT), H5Gclose);
  Handle root(H5Gopen2(f.get(), "/", H5P_DEFAULT), H5Gclose);
  std::string ppath = h5::attr_string(root.get(), "particlesPath").value_or("particles/");
  while (!ppath.empty() && ppath.back() == '/') ppath.pop_back();
  if (ppath.empty() || !has_link(g.get(), ppath))
    throw IoError("EDM-IO-117", where + " holds no particles (no group " + ppath + "/)");
  Handle particles(H5Gopen2(g.get(), ppath.c_str(), H5P_DEFAULT), H5Gclose);
  const std::string chosen = choose_species(particles.get(), wanted.empty() ? species : wanted, where + "/" + ppath);
  if (!species.empty() && chosen != species) inconsistent(where + ": the species differs from the first iteration's");
  species = chosen;
  Handle sp(H5Gopen2(particles.get(), chosen.c_str(), H5P_DEFAULT), H5Gclose);
  const double unit = unit_factor(g.get(), "timeUnitSI", where);
  const double time = attr_number(g.get(), "time", where, std::nullopt);
  Snapshot s = read_snapshot(sp.get(), where + "/" + ppath + "/" + chosen, time * unit, unit);
  s.n = ref.n;
  return s;
}

}  // namespace

std::vector<std::filesystem::path> openpmd_series_files(const std::string& path) {
  std::vector<std::filesystem::path> files;
  for (const auto& ref : series_iterations(path))
    if (files.empty() || files.back() != ref.file) files.push_back(ref.file);
  return files;
}

namespace {

// One track per id from the snapshots (in iteration order); gaps and changing weights refused.
OpenPmdTracks assemble(const std::vector<Snapshot>& snaps, const std::string& path) {
  struct Building {
    TrackData td;
    std::size_t last = 0;
  };
  std::map<std::uint64_t, Building> by_id;
  for (std::size_t j = 0; j < snaps.size(); ++j) {
    const Snapshot& s = snaps[j];
    if (j > 0 && !(s.t > snaps[j - 1].t))
      inconsistent(path + ": iteration " + std::to_string(s.n) + " is not later than iteration " +
                   std::to_string(snaps[j - 1].n));
    for (std::size_t i = 0; i < s.id.size(); ++i) {
      const std::string who = path + ": particle id " + std::to_string(s.id[i]);
      auto [at, fresh] = by_id.try_emplace(s.id[i]);
      Building& b = at->second;
      if (!fresh && b.last == j) inconsistent(who + " appears twice in iteration " + std::to_string(s.n));
      if (!fresh && b.last + 1 != j)
        throw IoError("EDM-IO-123", who + " has a gap: it is in iteration " + std::to_string(snaps[b.last].n) +
                                        " and " + std::to_string(s.n) + " but not in between");
      if (fresh) b.td.w = s.v[6][i];
      if (b.td.w != s.v[6][i])
        inconsistent(who + ": its weighting changes from " + num(b.td.w) + " to " +
                     num(s.v[6][i]) + " at iteration " + std::to_string(s.n));
      b.td.t.push_back(s.t);
      std::vector<double>* cols[6] = {&b.td.x, &b.td.y, &b.td.z, &b.td.ux, &b.td.uy, &b.td.uz};
      for (int c = 0; c < 6; ++c) cols[c]->push_back(s.v[c][i]);
      b.last = j;
    }
  }
  OpenPmdTracks out;
  for (auto& [id, b] : by_id) {
    const std::string who = path + ": particle id " + std::to_string(id);
    const auto& t = b.td.t;
    if (t.size() < 4)
      throw IoError("EDM-IO-125", who + " is in " + std::to_string(t.size()) + " iterations; a track needs at least 4");
    const double step = t[1] - t[0];
    for (std::size_t k = 2; k < t.size(); ++k)
      if (std::fabs((t[k] - t[k - 1]) - step) > 1e-6 * step)
        throw IoError("EDM-IO-124", who + ": the time step varies (" + num(step) + " s, then " +
                                        num(t[k] - t[k - 1]) + " s before sample " + std::to_string(k) +
                                        "); edm takes tracks of one step");
    b.td.index = out.tracks.size();
    out.ids.push_back(id);
    out.tracks.push_back(std::move(b.td));
  }
  if (out.tracks.empty()) throw IoError("EDM-IO-117", path + ": the species holds no particles in any iteration");
  return out;
}

}  // namespace

OpenPmdTracks read_openpmd_tracks(const std::string& path, const std::string& species) {
  h5::start();
  h5::silence();
  const std::vector<IterationRef> refs = series_iterations(path);
  std::vector<Snapshot> snaps;
  std::string chosen;
  for (const auto& r : refs) snaps.push_back(read_iteration(r, species, chosen));
  OpenPmdTracks out = assemble(snaps, path);
  out.species = chosen;
  for (const auto& r : refs) out.iterations.push_back(r.n);
  return out;
}

}  // namespace edm
