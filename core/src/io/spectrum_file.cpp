// spectrum.h5 (edm/spectrum_file.hpp; layout in share/docs/outputs.md): the staged writer, the
// /direct group's writer, and the reader that checks the file once. Every open of spectrum.h5 in
// edm goes through here.
#include "edm/spectrum_file.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <numeric>
#include <type_traits>

#include "edm/photon_units.hpp"
#include "io/h5.hpp"

namespace edm {

static_assert(std::is_same_v<H5Id, hid_t>, "H5Id must be HDF5's hid_t");

namespace {

using Path = std::filesystem::path;

// What a non-regular file at one of the writer's names is, for the refusal; nullptr: a regular
// file or nothing there. lstat, not stat: a link is refused as a link, whatever it points to (a
// rename over it would replace the link, and a write through it would land elsewhere).
const char* odd_kind(const Path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return nullptr;
  return S_ISDIR(st.st_mode) ? "a folder" : S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
                                        : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
}

void refuse_odd_kind(const Path& p) {
  if (const char* kind = odd_kind(p))
    throw IoError("EDM-IO-161", p.string() + " is " + kind +
                                    ": edm writes spectrum.h5 only as a regular file of its own; move it away "
                                    "(nothing was written)");
}

// A spectrum.h5 root link belongs to the part that writes it (SpectrumPart).
bool of_part(const std::string& name, SpectrumPart part) { return (name == "direct") == (part == SpectrumPart::Direct); }

// The names of an object's attributes or of a group's links.
herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
std::vector<std::string> attribute_names(hid_t obj, const Path& where) {
  std::vector<std::string> names;
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attr, &names) < 0)
    throw IoError("EDM-IO-013", "cannot list the root attributes of " + where.string());
  return names;
}
std::vector<std::string> link_names(hid_t group, const Path& where) {
  std::vector<std::string> names;
  if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &names) < 0)
    throw IoError("EDM-IO-013", "cannot list the groups of " + where.string());
  return names;
}

// One attribute copied as stored (its own type and shape; variable-length strings as such).
void copy_attribute(hid_t from, hid_t to, const std::string& name, const Path& where) {
  const std::string what = "the root attribute " + name + " of " + where.string();
  h5::Handle a(H5Aopen(from, name.c_str(), H5P_DEFAULT), H5Aclose);
  h5::Handle type(a.valid() ? H5Aget_type(a.get()) : -1, H5Tclose);
  h5::Handle space(a.valid() ? H5Aget_space(a.get()) : -1, H5Sclose);
  if (!type.valid() || !space.valid()) throw IoError("EDM-IO-072", "cannot read " + what);
  h5::Handle b(H5Acreate2(to, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!b.valid()) throw IoError("EDM-IO-030", "cannot copy " + what);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n <= 0) return;
  herr_t read = -1, wrote = -1;
  if (H5Tis_variable_str(type.get()) > 0) {
    std::vector<char*> v(std::size_t(n), nullptr);
    read = H5Aread(a.get(), type.get(), v.data());
    if (read >= 0) wrote = H5Awrite(b.get(), type.get(), v.data());
    if (read >= 0) H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, v.data());
  } else {
    std::vector<unsigned char> buf(std::size_t(n) * H5Tget_size(type.get()));
    read = H5Aread(a.get(), type.get(), buf.data());
    if (read >= 0) wrote = H5Awrite(b.get(), type.get(), buf.data());
  }
  if (read < 0) throw IoError("EDM-IO-072", "cannot read " + what);
  if (wrote < 0) throw IoError("EDM-IO-030", "cannot copy " + what);
}

// The root attributes every spectrum.h5 carries, whoever wrote it.
void write_format(hid_t f, const Path& where) {
  const int format = kRunFormat;
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  h5::Handle a(H5Acreate2(f, "edm_format", H5T_STD_I32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_INT, &format) < 0)
    throw IoError("EDM-IO-030", "cannot write the attribute edm_format of " + where.string());
  h5::write_attr(f, "edm_layout", std::string("edm spectrum.h5, edm's own layout, not openPMD (share/docs/outputs.md)"));
}

// The other part of the old file into the partial: its groups, and for the Direct part its root
// attributes (edm spectrum's); the format attributes are the writer's own.
void copy_other_part(hid_t old, const Path& old_path, hid_t f, SpectrumPart part, const Path& partial) {
  for (const std::string& name : link_names(old, old_path)) {
    if (of_part(name, part) || H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0) continue;
    if (H5Ocopy(old, name.c_str(), f, name.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
      throw IoError("EDM-IO-162", "cannot copy /" + name + " of " + old_path.string() + " into " + partial.string() +
                                      " (disk full?); " + old_path.string() + " is left as it was");
  }
  if (part != SpectrumPart::Direct) return;
  for (const std::string& name : attribute_names(old, old_path))
    if (name != "edm_format" && name != "edm_layout" && H5Aexists(f, name.c_str()) <= 0)
      copy_attribute(old, f, name, old_path);
}

}  // namespace

struct SpectrumFile::State {
  Path path;
  h5::Handle file;
};

struct SpectrumWriter::State {
  Path target, partial;
  SpectrumPart part = SpectrumPart::Analysis;
  std::optional<SpectrumFile> old;  // the spectrum.h5 already there, checked
  h5::Handle file;                  // the partial
  bool created = false, committed = false;
  ~State() {
    file.reset();
    old.reset();
    std::error_code ec;
    if (created && !committed) std::filesystem::remove(partial, ec);
  }
};

SpectrumWriter::SpectrumWriter(std::unique_ptr<State> s) : s_(std::move(s)) {}
SpectrumWriter::SpectrumWriter(SpectrumWriter&&) noexcept = default;
SpectrumWriter& SpectrumWriter::operator=(SpectrumWriter&&) noexcept = default;
SpectrumWriter::~SpectrumWriter() = default;
H5Id SpectrumWriter::file() const { return s_->file.get(); }
const Path& SpectrumWriter::partial() const { return s_->partial; }
const Path& SpectrumWriter::target() const { return s_->target; }
SpectrumPart SpectrumWriter::part() const { return s_->part; }

SpectrumWriter SpectrumWriter::open(const Path& file, SpectrumPart part) {
  h5::start();
  h5::silence();
  auto s = std::make_unique<State>();
  s->target = file;
  s->partial = Path(file) += ".partial";
  s->part = part;
  refuse_odd_kind(s->target);
  refuse_odd_kind(s->partial);
  std::error_code ec;
  // The other part is copied from the file there, so a file that cannot be read (not HDF5, another
  // format) is refused, not written over: the user moves it away to compute a new one.
  if (std::filesystem::exists(std::filesystem::symlink_status(file, ec))) try {
      s->old = SpectrumFile::open(file);
    } catch (const IoError& e) {
      throw IoError(e.id(), std::string(e.what()) + " (edm writes no spectrum.h5 over it: move it away, then run "
                                                    "the command again)");
    }
  // A regular partial is the leftover of a writer that died: the caller holds the folder's lock, so
  // no live process writes it. It is replaced; the create is exclusive all the same.
  std::filesystem::remove(s->partial, ec);
  s->file = h5::Handle(H5Fcreate(s->partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!s->file.valid()) {
    // HDF5 may leave the file it could not start (a full disk): it is this writer's own, removed.
    s->created = std::filesystem::exists(std::filesystem::symlink_status(s->partial, ec));
    throw IoError("EDM-IO-033", "cannot create " + s->partial.string() + " (check the folder's permissions and disk)");
  }
  s->created = true;
  return SpectrumWriter(std::move(s));
}

void SpectrumWriter::commit() {
  State& s = *s_;
  if (s.committed) return;
  if (!s.file.valid()) throw IoError("EDM-IO-032", "cannot write " + s.partial.string() + ": an earlier write failed");
  const hid_t f = s.file.get();
  if (s.old) copy_other_part(s.old->s_->file.get(), s.target, f, s.part, s.partial);
  write_format(f, s.partial);
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw IoError("EDM-IO-032", "cannot flush " + s.partial.string() + " (disk full?)");
  if (H5Fclose(s.file.release()) < 0)  // closed here so that a failing close (disk full) is seen
    throw IoError("EDM-IO-032", "cannot close " + s.partial.string() + " (disk full?)");
  s.old.reset();
  std::error_code ec;
  std::filesystem::rename(s.partial, s.target, ec);
  if (ec) throw IoError("EDM-IO-034", "cannot rename " + s.partial.string() + " to " + s.target.string() + ": " + ec.message());
  s.committed = true;
}

namespace {

// One sum's group: d²W/dωdΩ and its two photon units, shaped (directions…, nω).
void write_density(hid_t parent, const char* name, const std::vector<double>& d2W, const std::vector<double>& omega,
                   const std::vector<hsize_t>& dims, const Path& where) {
  h5::Handle g = h5::create_group(parent, name, where);
  const std::size_t nw = omega.size();
  std::vector<double> per_bw(d2W.size()), per_omega(d2W.size());
  for (std::size_t i = 0; i < d2W.size(); ++i) {
    per_bw[i] = photons_per_bandwidth(d2W[i]);
    per_omega[i] = photons_per_unit_omega(d2W[i], omega[i % nw]);
  }
  h5::write_dataset(g.get(), "d2W_domega_dOmega", dims, d2W.data(), "J*s/rad/sr", where);
  h5::write_dataset(g.get(), "photons_per_0.1pct_bw", dims, per_bw.data(), "photons/sr per 0.1% bandwidth", where);
  h5::write_dataset(g.get(), "photons_per_omega", dims, per_omega.data(), "photons*s/rad/sr", where);
}

void write_axes(hid_t direct, const SpectraFileInfo& info, const Path& where) {
  h5::Handle axes = h5::create_group(direct, "axes", where);
  std::vector<double> ev(info.omega.size()), n(3 * info.directions.size()), shape(info.direction_shape.size());
  for (std::size_t k = 0; k < ev.size(); ++k) ev[k] = omega_to_ev(info.omega[k]);
  for (std::size_t d = 0; d < info.directions.size(); ++d)
    for (int c = 0; c < 3; ++c) n[3 * d + c] = info.directions[d][c];
  for (std::size_t i = 0; i < shape.size(); ++i) shape[i] = double(info.direction_shape[i]);
  h5::write_dataset(axes.get(), "omega", {hsize_t(ev.size())}, info.omega.data(), "rad/s", where);
  h5::write_dataset(axes.get(), "photon_energy", {hsize_t(ev.size())}, ev.data(), "eV", where);
  h5::write_dataset(axes.get(), "direction", {hsize_t(info.directions.size()), 3}, n.data(), "1", where);
  h5::write_dataset(axes.get(), "direction_shape", {hsize_t(shape.size())}, shape.data(), "1", where);
  if (!info.solid_angle.empty())
    h5::write_dataset(axes.get(), "solid_angle", {hsize_t(info.solid_angle.size())}, info.solid_angle.data(), "sr",
                      where);
}

void write_attributes(hid_t direct, const SpectraFileInfo& info, const SpectraSums& sums) {
  h5::write_attr(direct, "convention",
                 std::string("A = R*E_far~(omega), E~ = (2 pi)^-1/2 int E exp(i omega t) dt, observer time t - n.r/c; "
                             "d2W/domega dOmega = 2 eps0 c |A|^2, one-sided (omega > 0), Jackson (14.67) in SI; "
                             "coherent = |sum w A|^2, incoherent = sum w |A|^2; per shot"));
  h5::write_attr(direct, "method",
                 std::string(sums.method == SpectraMethod::Fft
                                 ? "fft: chirp-z transform (clFFT) of each electron's far-field series on the screen's samples"
                             : sums.method == SpectraMethod::Dft
                                 ? "dft: discrete Fourier sum (CLBlast DGEMM) of each electron's far-field series over "
                                   "the screen's samples its light covers"
                                 : "direct quadrature over the quintic spline pieces (Gauss-Legendre)"));
  h5::write_attr(direct, "sum", std::string(name(info.section.sum)));
  h5::write_attr(direct, "scale", std::string(name(info.section.scale)));
  h5::write_attr(direct, "nodes", double(info.section.nodes));
  h5::write_attr(direct, "phase", info.section.phase);
  h5::write_attr(direct, "laser_omega", info.laser_omega);
  h5::write_attr(direct, "electrons", double(sums.electrons));
  h5::write_attr(direct, "weight_sum", sums.weight_sum);
  h5::write_attr(direct, "relative_bandwidth", kRelativeBandwidth);
  h5::write_attr(direct, "hbar", si::hbar);
  h5::write_attr(direct, "run_id", info.run_id);
  h5::write_attr(direct, "edm_version", info.edm_version);
}

}  // namespace

SpectraProducts spectra_products(const SpectraSums& sums) {
  SpectraProducts p;
  const double a = spectra_amplitude_si(), rho = spectra_density_si();
  const std::size_t bins = sums.directions * sums.frequencies;
  p.coherent_amplitude.resize(3 * bins);
  p.coherent.assign(bins, 0.0);
  p.incoherent.resize(bins);
  for (std::size_t i = 0; i < 3 * bins; ++i) {
    p.coherent_amplitude[i] = {a * sums.coherent[2 * i], a * sums.coherent[2 * i + 1]};
    p.coherent[i / 3] += rho * (sums.coherent[2 * i] * sums.coherent[2 * i] + sums.coherent[2 * i + 1] * sums.coherent[2 * i + 1]);
  }
  for (std::size_t i = 0; i < bins; ++i) p.incoherent[i] = rho * sums.incoherent[i];
  return p;
}

void write_direct_spectra(SpectrumWriter& out, const SpectraFileInfo& info, const SpectraSums& sums) {
  const std::size_t ndir = std::accumulate(info.direction_shape.begin(), info.direction_shape.end(), std::size_t(1),
                                           std::multiplies<>());
  if (out.part() != SpectrumPart::Direct || ndir != sums.directions || info.directions.size() != sums.directions ||
      info.omega.size() != sums.frequencies || (!info.solid_angle.empty() && info.solid_angle.size() != sums.directions))
    throw Error("EDM-IO-105", "spectra: the file's axes do not match the sums (" + std::to_string(sums.directions) +
                                  " directions, " + std::to_string(sums.frequencies) + " frequencies)");
  const Path& partial = out.partial();
  h5::Handle direct = h5::create_group(out.file(), "direct", partial);
  std::vector<hsize_t> dims(info.direction_shape.begin(), info.direction_shape.end());
  dims.push_back(hsize_t(info.omega.size()));
  const SpectraProducts p = spectra_products(sums);
  write_axes(direct.get(), info, partial);
  write_attributes(direct.get(), info, sums);
  if (info.section.sum != SpectraSum::Incoherent) {
    auto cdims = dims;
    cdims.push_back(3);
    h5::write_complex(direct.get(), "coherent_amplitude", cdims, p.coherent_amplitude, "V*s", partial);
    write_density(direct.get(), "coherent", p.coherent, info.omega, dims, partial);
  }
  if (info.section.sum != SpectraSum::Coherent) write_density(direct.get(), "incoherent", p.incoherent, info.omega, dims, partial);
}

// --- reading ---

namespace {

// The dimensions of dataset `name`, checked to be really stored: EDM-IO-011 when it is missing or
// no dataset, EDM-IO-135 when its rank is not `rank`, EDM-IO-073 when it declares more than it stores.
std::vector<hsize_t> dataset_dims(hid_t f, const std::string& name, int rank, const Path& path) {
  const std::string what = path.string() + ": " + name;
  if (!h5::exists(f, name)) throw IoError("EDM-IO-011", what + " is missing");
  H5O_info_t oi{};
  if (H5Oget_info_by_name(f, name.c_str(), &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET)
    throw IoError("EDM-IO-011", what + " is not a dataset");
  h5::Handle d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  h5::Handle sp(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
  if (!sp.valid()) throw IoError("EDM-IO-013", "cannot read the extent of " + what);
  const int n = H5Sget_simple_extent_ndims(sp.get());
  if (n != rank)
    throw IoError("EDM-IO-135", what + " has " + std::to_string(n) + " dimensions, not " + std::to_string(rank));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(sp.get(), dims.data(), nullptr);
  hsize_t count = 1;
  for (hsize_t v : dims) {
    if (v && count > (hsize_t(1) << 62) / v) throw IoError("EDM-IO-135", what + " declares an impossible shape");
    count *= v;
  }
  h5::check_stored(d.get(), count, "EDM-IO-073", what);
  return dims;
}

void need_group(hid_t f, const std::string& name, const Path& path) {
  H5O_info_t oi{};
  if (!h5::exists(f, name) || H5Oget_info_by_name(f, name.c_str(), &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
    throw IoError("EDM-IO-011", path.string() + ": the group " + name + " is missing");
}

std::string need_string(hid_t obj, const char* group, const char* name, const Path& path) {
  const auto v = h5::attr_string(obj, name);
  if (!v) throw IoError("EDM-IO-011", path.string() + ": " + group + " lacks the attribute " + name);
  return *v;
}
double need_double(hid_t obj, const char* group, const char* name, const Path& path) {
  const auto v = h5::attr_double(obj, name);
  if (!v) throw IoError("EDM-IO-011", path.string() + ": " + group + " lacks the attribute " + name);
  return *v;
}

// A 1-D dataset of the layout, its shape checked first.
std::vector<double> read_vector(hid_t f, const std::string& name, const Path& path) {
  dataset_dims(f, name, 1, path);
  return h5::read_1d(f, name, path);
}

// The format check every reader makes once (kRunFormat; share/docs/outputs.md "Format").
void check_format(hid_t f, const Path& path) {
  const auto v = h5::attr_double(f, "edm_format");
  if (!v)
    throw IoError("EDM-IO-160", path.string() + " carries no edm_format: it was written by an edm before format " +
                                    std::to_string(kRunFormat) + " or by another program, and this edm (" +
                                    EDM_VERSION + ") reads format " + std::to_string(kRunFormat) +
                                    " only; run edm spectrum RUN (or the campaign) again");
  if (*v != double(kRunFormat)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", *v);
    throw IoError("EDM-IO-160", path.string() + " is of edm_format " + buf + ", this edm (" + EDM_VERSION +
                                    ") reads format " + std::to_string(kRunFormat) +
                                    " only; use the edm that wrote it, or compute it again");
  }
}

}  // namespace

SpectrumFile::SpectrumFile(std::unique_ptr<State> s) : s_(std::move(s)) {}
SpectrumFile::SpectrumFile(SpectrumFile&&) noexcept = default;
SpectrumFile& SpectrumFile::operator=(SpectrumFile&&) noexcept = default;
SpectrumFile::~SpectrumFile() = default;
const Path& SpectrumFile::path() const { return s_->path; }

SpectrumFile SpectrumFile::open(const Path& file) {
  h5::start();
  auto s = std::make_unique<State>();
  s->path = file;
  s->file = h5::open_file(file);
  check_format(s->file.get(), file);
  return SpectrumFile(std::move(s));
}

bool SpectrumFile::has_analysis() const { return H5Aexists(s_->file.get(), "total_energy") > 0; }
bool SpectrumFile::has_direct() const { return h5::exists(s_->file.get(), "/direct"); }

std::optional<SpectrumSummary> SpectrumFile::summary() const {
  if (!has_analysis()) return std::nullopt;
  const hid_t f = s_->file.get();
  const Path& path = s_->path;
  SpectrumSummary s;
  s.total_energy = need_double(f, "the root", "total_energy", path);
  s.peak_omega_on_axis = need_double(f, "the root", "peak_omega_on_axis", path);
  s.laser_omega = need_double(f, "the root", "laser_omega", path);
  s.window = need_string(f, "the root", "window", path);
  s.field = need_string(f, "the root", "field", path);
  s.run_id = need_string(f, "the root", "run_id", path);
  s.line_omega = need_double(f, "the root", "line_omega", path);
  s.line_photons_per_bw = need_double(f, "the root", "line_photons_per_bw", path);
  need_group(f, "/on_axis", path);
  h5::Handle g(H5Gopen2(f, "/on_axis", H5P_DEFAULT), H5Gclose);
  s.axis_angle = need_double(g.get(), "/on_axis", "angle", path);
  const double ix = need_double(g.get(), "/on_axis", "ix", path), iy = need_double(g.get(), "/on_axis", "iy", path);
  s.on_axis = need_double(g.get(), "/on_axis", "on_axis", path) != 0;
  const auto x = read_vector(f, "/axes/x", path), y = read_vector(f, "/axes/y", path);
  // Indices inside the axes only: a damaged attribute is no sample.
  if (!(ix >= 0 && iy >= 0 && ix < double(x.size()) && iy < double(y.size()) && ix == std::floor(ix) &&
        iy == std::floor(iy)))
    throw IoError("EDM-IO-135", path.string() + ": /on_axis ix, iy (" + std::to_string(ix) + ", " + std::to_string(iy) +
                                    ") are not a sample of /axes/x, /axes/y (" + std::to_string(x.size()) + ", " +
                                    std::to_string(y.size()) + ")");
  s.axis_ix = ix, s.axis_iy = iy;
  s.axis_x = x[std::size_t(ix)];
  s.axis_y = y[std::size_t(iy)];
  return s;
}

std::optional<DirectGrid> SpectrumFile::direct_grid() const {
  if (!has_direct()) return std::nullopt;
  const hid_t f = s_->file.get();
  const Path& path = s_->path;
  need_group(f, "/direct", path);
  DirectGrid g;
  g.omega = read_vector(f, "/direct/axes/omega", path);
  const auto shape = read_vector(f, "/direct/axes/direction_shape", path);
  if (g.omega.empty() || shape.size() != 2 || !(shape[0] >= 1 && shape[1] >= 1 && shape[0] < 1e9 && shape[1] < 1e9))
    throw IoError("EDM-IO-135", path.string() + ": /direct/axes/omega is empty or /direct/axes/direction_shape is "
                                                "not (ny, nx)");
  g.ny = std::size_t(shape[0]);
  g.nx = std::size_t(shape[1]);
  const auto dims = dataset_dims(f, "/direct/axes/direction", 2, path);
  if (dims[0] != hsize_t(g.ny) * g.nx || dims[1] != 3)
    throw IoError("EDM-IO-135", path.string() + ": /direct/axes/direction is (" + std::to_string(dims[0]) + ", " +
                                    std::to_string(dims[1]) + "), not (ny·nx, 3) for direction_shape (" +
                                    std::to_string(g.ny) + ", " + std::to_string(g.nx) + ")");
  g.directions.resize(dims[0] * 3);
  h5::Handle d(H5Dopen2(f, "/direct/axes/direction", H5P_DEFAULT), H5Dclose);
  if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, g.directions.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read /direct/axes/direction from " + path.string());
  for (const char* sum : {"coherent", "incoherent"}) {
    const std::string base = std::string("/direct/") + sum;
    if (!h5::exists(f, base)) continue;
    for (const char* name : {"/d2W_domega_dOmega", "/photons_per_0.1pct_bw"}) {
      const auto sd = dataset_dims(f, base + name, 3, path);
      if (sd[0] != g.ny || sd[1] != g.nx || sd[2] != g.omega.size())
        throw IoError("EDM-IO-135", path.string() + ": " + base + name + " does not have the shape (" +
                                        std::to_string(g.ny) + ", " + std::to_string(g.nx) + ", " +
                                        std::to_string(g.omega.size()) + ") of /direct/axes");
    }
    g.sums.push_back(sum);
  }
  return g;
}

std::vector<double> SpectrumFile::direct_row(const DirectGrid& g, const std::string& sum, std::size_t iy) const {
  std::vector<double> row;
  h5::read_rows(s_->file.get(), "/direct/" + sum + "/d2W_domega_dOmega", {g.ny, g.nx, g.omega.size()}, iy, iy + 1,
                row, s_->path);
  return row;
}

namespace {
// One dataset read whole as doubles (a float or integer one) or as {r, i} pairs (edm's complex).
std::optional<SpectrumFile::Dataset> read_numeric(hid_t file, const std::string& name, const Path& path) {
  h5::Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  h5::Handle type(H5Dget_type(d.get()), H5Tclose);
  h5::Handle space(H5Dget_space(d.get()), H5Sclose);
  if (!d.valid() || !type.valid() || !space.valid()) throw IoError("EDM-IO-011", path.string() + ": cannot read /" + name);
  const H5T_class_t cls = H5Tget_class(type.get());
  const bool complex = cls == H5T_COMPOUND && H5Tget_nmembers(type.get()) == 2 &&
                       H5Tget_size(type.get()) == 2 * sizeof(double);
  if (!complex && cls != H5T_FLOAT && cls != H5T_INTEGER) return std::nullopt;
  SpectrumFile::Dataset out;
  out.name = name;
  out.complex = complex;
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  hsize_t n = 1;
  for (hsize_t v : dims) n *= v, out.shape.push_back(std::size_t(v));
  h5::check_stored(d.get(), n, "EDM-IO-073", path.string() + ": /" + name);
  if (complex) {
    const h5::Handle mem = h5::complex_type(path);
    std::vector<double> pairs(2 * n);
    if (n && H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pairs.data()) < 0)
      throw IoError("EDM-IO-011", path.string() + ": cannot read /" + name);
    out.real.resize(n);
    out.imag.resize(n);
    for (hsize_t k = 0; k < n; ++k) out.real[k] = pairs[2 * k], out.imag[k] = pairs[2 * k + 1];
  } else {
    out.real.resize(n);
    if (n && H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.real.data()) < 0)
      throw IoError("EDM-IO-011", path.string() + ": cannot read /" + name);
  }
  out.unit = h5::attr_string(d.get(), "unit").value_or("");
  return out;
}

herr_t collect_dataset(hid_t, const char* name, const H5O_info_t* info, void* names) {
  if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}
}  // namespace

std::vector<SpectrumFile::Dataset> SpectrumFile::datasets(SpectrumPart part) const {
  std::vector<std::string> names;
  if (H5Ovisit2(s_->file.get(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &names, H5O_INFO_BASIC) < 0)
    throw IoError("EDM-IO-011", s_->path.string() + ": cannot list its datasets");
  std::vector<Dataset> out;
  for (const std::string& name : names) {
    const bool direct = name.rfind("direct/", 0) == 0;
    if (direct != (part == SpectrumPart::Direct)) continue;
    if (auto d = read_numeric(s_->file.get(), name, s_->path)) out.push_back(std::move(*d));
  }
  return out;
}

std::optional<DirectSpectraSummary> SpectrumFile::direct_summary() const {
  const auto grid = direct_grid();
  if (!grid) return std::nullopt;
  const Path& path = s_->path;
  h5::Handle g(H5Gopen2(s_->file.get(), "/direct", H5P_DEFAULT), H5Gclose);
  DirectSpectraSummary s;
  s.method = need_string(g.get(), "/direct", "method", path);
  s.sum = need_string(g.get(), "/direct", "sum", path);
  s.scale = need_string(g.get(), "/direct", "scale", path);
  s.run_id = need_string(g.get(), "/direct", "run_id", path);
  s.edm_version = need_string(g.get(), "/direct", "edm_version", path);
  s.nodes = need_double(g.get(), "/direct", "nodes", path);
  s.phase = need_double(g.get(), "/direct", "phase", path);
  s.electrons = need_double(g.get(), "/direct", "electrons", path);
  s.weight_sum = need_double(g.get(), "/direct", "weight_sum", path);
  s.laser_omega = need_double(g.get(), "/direct", "laser_omega", path);
  s.ny = grid->ny, s.nx = grid->nx, s.frequencies = grid->omega.size();
  s.omega_min = grid->omega.front();
  s.omega_max = grid->omega.back();
  const std::size_t c = (s.ny / 2) * s.nx + s.nx / 2, nw = s.frequencies;
  s.axis_direction = {grid->directions[3 * c], grid->directions[3 * c + 1], grid->directions[3 * c + 2]};
  for (const std::string& sum : grid->sums) {
    const std::vector<double> row = direct_row(*grid, sum, s.ny / 2);
    const double* d2W = row.data() + (s.nx / 2) * nw;
    std::size_t k = 0;
    for (std::size_t j = 1; j < nw; ++j)
      if (d2W[j] > d2W[k]) k = j;
    s.peaks.push_back({sum, grid->omega[k], d2W[k], photons_per_bandwidth(d2W[k])});
  }
  return s;
}

}  // namespace edm
