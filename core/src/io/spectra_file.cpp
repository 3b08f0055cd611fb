// spectrum.h5's /direct group (edm/spectra_file.hpp; layout in share/docs/outputs.md "Direct
// spectra"). The file is built as `<file>.partial` — a copy of the spectrum.h5 already there (its
// other groups stay), or a new file — and renamed over `<file>` only when complete, so a failed
// write never leaves a half-written spectrum.h5 nor touches the one there.
#include "edm/spectra_file.hpp"

#include <cmath>
#include <functional>
#include <numeric>

#include "edm/photon_units.hpp"
#include "io/h5.hpp"

namespace edm {
namespace {

using Path = std::filesystem::path;

// Complex datasets as HDF5 compounds {r, i} of float64 (h5py: complex128), like /harmonic_field.
void write_complex(hid_t parent, const char* name, const std::vector<hsize_t>& dims,
                   const std::vector<std::complex<double>>& data, const Path& where) {
  h5::Handle type(H5Tcreate(H5T_COMPOUND, 2 * sizeof(double)), H5Tclose);
  h5::check(H5Tinsert(type.get(), "r", 0, H5T_NATIVE_DOUBLE), "complex type", where);
  h5::check(H5Tinsert(type.get(), "i", sizeof(double), H5T_NATIVE_DOUBLE), "complex type", where);
  h5::Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  h5::Handle d(H5Dcreate2(parent, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw IoError("EDM-IO-100", std::string("cannot create dataset ") + name + " in " + where.string());
  if (H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0)
    throw IoError("EDM-IO-101", std::string("cannot write ") + name + " to " + where.string() + " (disk full?)");
  h5::write_attr(d.get(), "unit", std::string("V*s"));
}

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

// Opens `partial` for writing: a copy of `path` when it exists (without its old /direct), else new.
h5::Handle open_partial(const Path& path, const Path& partial) {
  std::error_code ec;
  std::filesystem::remove(partial, ec);
  if (std::filesystem::exists(path, ec)) {
    std::filesystem::copy_file(path, partial, ec);
    if (ec) throw IoError("EDM-IO-102", "cannot copy " + path.string() + " to " + partial.string() + ": " + ec.message());
    h5::Handle f(H5Fopen(partial.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) throw IoError("EDM-IO-103", path.string() + " is not an HDF5 file that edm can add /direct to");
    if (h5::exists(f.get(), "/direct")) h5::check(H5Ldelete(f.get(), "/direct", H5P_DEFAULT), "removing /direct", partial);
    return f;
  }
  h5::Handle f(H5Fcreate(partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw IoError("EDM-IO-104", "cannot create " + partial.string());
  h5::write_attr(f.get(), "edm_layout", std::string("edm spectrum 1 (not openPMD): /direct written by edm run"));
  return f;
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

void write_spectra_file(const Path& path, const SpectraFileInfo& info, const SpectraSums& sums) {
  h5::start();
  h5::silence();
  const std::size_t ndir = std::accumulate(info.direction_shape.begin(), info.direction_shape.end(), std::size_t(1),
                                           std::multiplies<>());
  if (ndir != sums.directions || info.directions.size() != sums.directions || info.omega.size() != sums.frequencies ||
      (!info.solid_angle.empty() && info.solid_angle.size() != sums.directions))
    throw Error("EDM-IO-105", "spectra: the file's axes do not match the sums (" + std::to_string(sums.directions) +
                                  " directions, " + std::to_string(sums.frequencies) + " frequencies)");
  Path partial = path;
  partial += ".partial";
  try {
    h5::Handle f = open_partial(path, partial);
    h5::Handle direct = h5::create_group(f.get(), "direct", partial);
    std::vector<hsize_t> dims(info.direction_shape.begin(), info.direction_shape.end());
    dims.push_back(hsize_t(info.omega.size()));
    const SpectraProducts p = spectra_products(sums);
    write_axes(direct.get(), info, partial);
    write_attributes(direct.get(), info, sums);
    if (info.section.sum != SpectraSum::Incoherent) {
      auto cdims = dims;
      cdims.push_back(3);
      write_complex(direct.get(), "coherent_amplitude", cdims, p.coherent_amplitude, partial);
      write_density(direct.get(), "coherent", p.coherent, info.omega, dims, partial);
    }
    if (info.section.sum != SpectraSum::Coherent) write_density(direct.get(), "incoherent", p.incoherent, info.omega, dims, partial);
    direct.reset();
    if (H5Fflush(f.get(), H5F_SCOPE_GLOBAL) < 0 || H5Fclose(f.release()) < 0)
      throw IoError("EDM-IO-101", "cannot write " + partial.string() + " (disk full?)");
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::error_code ignore;
    std::filesystem::remove(partial, ignore);
    throw IoError("EDM-IO-106", "cannot rename " + partial.string() + " to " + path.string() + ": " + ec.message());
  }
}

namespace {

// The centre direction's spectrum of one sum, its peak and the photon yield there.
DirectSpectraSummary::Peak on_axis_peak(hid_t f, const std::string& sum, const DirectSpectraSummary& s,
                                        const std::vector<double>& omega, const Path& path) {
  const std::array<std::size_t, 3> shape = {s.ny, s.nx, s.frequencies};
  const std::string base = "/direct/" + sum + "/";
  for (const char* name : {"d2W_domega_dOmega", "photons_per_0.1pct_bw"})
    if (h5::shape_3d(f, base + name, path) != shape)
      throw IoError("EDM-IO-135", path.string() + ": " + base + name + " does not have the shape (" +
                                      std::to_string(s.ny) + ", " + std::to_string(s.nx) + ", " +
                                      std::to_string(s.frequencies) + ") of /direct/axes");
  std::vector<double> d2W, bw;
  h5::read_rows(f, base + "d2W_domega_dOmega", shape, s.ny / 2, s.ny / 2 + 1, d2W, path);
  h5::read_rows(f, base + "photons_per_0.1pct_bw", shape, s.ny / 2, s.ny / 2 + 1, bw, path);
  const std::size_t row = (s.nx / 2) * s.frequencies;
  std::size_t k = 0;
  for (std::size_t j = 1; j < s.frequencies; ++j)
    if (d2W[row + j] > d2W[row + k]) k = j;
  return {sum, omega[k], d2W[row + k], bw[row + k]};
}

// n̂ of the centre direction from /direct/axes/direction (ny·nx, 3), checked before it is read.
std::array<double, 3> centre_direction(hid_t f, const DirectSpectraSummary& s, const Path& path) {
  const std::string what = path.string() + ": /direct/axes/direction";
  h5::Handle d(H5Dopen2(f, "/direct/axes/direction", H5P_DEFAULT), H5Dclose);
  h5::Handle sp(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (!sp.valid() || H5Sget_simple_extent_ndims(sp.get()) != 2 || H5Sget_simple_extent_dims(sp.get(), dims, nullptr) != 2 ||
      dims[0] != hsize_t(s.ny) * s.nx || dims[1] != 3)
    throw IoError("EDM-IO-135", what + " is missing or not (ny·nx, 3) for direction_shape (" + std::to_string(s.ny) +
                                    ", " + std::to_string(s.nx) + ")");
  h5::check_stored(d.get(), dims[0] * 3, "EDM-IO-136", what);
  const std::size_t c = (s.ny / 2) * s.nx + s.nx / 2;
  hsize_t start[2] = {hsize_t(c), 0}, count[2] = {1, 3};
  h5::Handle mem(H5Screate_simple(2, count, nullptr), H5Sclose);
  std::array<double, 3> n{};
  if (H5Sselect_hyperslab(sp.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, mem.get(), sp.get(), H5P_DEFAULT, n.data()) < 0)
    throw IoError("EDM-IO-135", what + " cannot be read");
  return n;
}

}  // namespace

std::optional<DirectSpectraSummary> read_direct_spectra_summary(const Path& path) {
  h5::start();
  h5::silence();
  h5::Handle fh = h5::open_file(path);
  const hid_t f = fh.get();
  if (!h5::exists(f, "/direct")) return std::nullopt;
  h5::Handle g(H5Gopen2(f, "/direct", H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw IoError("EDM-IO-135", path.string() + ": /direct is not a group");
  auto need_string = [&](const char* name) {
    const auto v = h5::attr_string(g.get(), name);
    if (!v) throw IoError("EDM-IO-135", path.string() + ": /direct lacks the attribute " + std::string(name));
    return *v;
  };
  DirectSpectraSummary s;
  s.method = need_string("method");
  s.sum = need_string("sum");
  s.scale = need_string("scale");
  s.run_id = need_string("run_id");
  s.edm_version = h5::attr_string(g.get(), "edm_version").value_or("?");
  s.nodes = h5::attr_double(g.get(), "nodes").value_or(std::nan(""));
  s.phase = h5::attr_double(g.get(), "phase").value_or(std::nan(""));
  s.electrons = h5::attr_double(g.get(), "electrons").value_or(std::nan(""));
  s.weight_sum = h5::attr_double(g.get(), "weight_sum").value_or(std::nan(""));
  s.laser_omega = h5::attr_double(g.get(), "laser_omega").value_or(std::nan(""));
  const auto omega = h5::read_1d(f, "/direct/axes/omega", path);
  const auto shape = h5::read_1d(f, "/direct/axes/direction_shape", path);
  if (omega.empty() || shape.size() != 2 || !(shape[0] >= 1 && shape[1] >= 1 && shape[0] < 1e9 && shape[1] < 1e9))
    throw IoError("EDM-IO-135", path.string() + ": /direct/axes/omega is empty or direction_shape is not (ny, nx)");
  s.ny = std::size_t(shape[0]);
  s.nx = std::size_t(shape[1]);
  s.frequencies = omega.size();
  s.omega_min = omega.front();
  s.omega_max = omega.back();
  s.axis_direction = centre_direction(f, s, path);
  for (const char* sum : {"coherent", "incoherent"})
    if (h5::exists(f, std::string("/direct/") + sum)) s.peaks.push_back(on_axis_peak(f, sum, s, omega, path));
  return s;
}

}  // namespace edm
