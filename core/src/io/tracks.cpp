// Reader (and writer) of the "tracks" HDF5 layout (tracks.hpp) with the HDF5 C API. HDF5's own error stack
// printing is switched off while reading (core never prints); every failure becomes an IoError
// naming the file and the dataset.
#include "edm/tracks.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "io/h5.hpp"

namespace edm {
namespace {

// Closes an HDF5 id on scope exit.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

// Silences HDF5's automatic error printing for the lifetime of the object, restoring it after.
struct QuietHdf5 {
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  QuietHdf5() {
    h5::start();  // before any other HDF5 call (io/h5.hpp)
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func, data); }
};

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* op) {
  static_cast<std::vector<std::string>*>(op)->emplace_back(name);
  return 0;
}

std::vector<double> read_1d(hid_t group, const std::string& file, const std::string& dset) {
  const std::string where = file + ": dataset " + dset;
  Handle d{H5Dopen2(group, dset.substr(dset.rfind('/') + 1).c_str(), H5P_DEFAULT), H5Dclose};
  if (d.id < 0) throw IoError("EDM-IO-041", where + " is missing");
  Handle space{H5Dget_space(d.id), H5Sclose};
  if (space.id < 0 || H5Sget_simple_extent_ndims(space.id) != 1)
    throw IoError("EDM-IO-042", where + " is not one-dimensional");
  Handle type{H5Dget_type(d.id), H5Tclose};
  if (type.id < 0 || H5Tget_class(type.id) != H5T_FLOAT)
    throw IoError("EDM-IO-043", where + " is not a floating-point dataset");
  hsize_t n = 0;
  if (H5Sget_simple_extent_dims(space.id, &n, nullptr) != 1) throw IoError("EDM-IO-042", where + ": unreadable extent");
  h5::check_stored(d.id, n, "EDM-IO-054", where);  // n comes from the file: not taken on trust
  std::vector<double> v(n);
  if (n > 0 && H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw IoError("EDM-IO-044", where + ": read failed");
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      throw IoError("EDM-IO-045", where + ": element " + std::to_string(k) + " is not finite");
  return v;
}

// The optional weight dataset `w` of a track group: a scalar or one element, float, finite, >= 0.
double read_weight(hid_t group, const std::string& file, const std::string& gpath) {
  const std::string where = file + ": dataset " + gpath + "/w";
  if (H5Lexists(group, "w", H5P_DEFAULT) <= 0) return 1.0;
  Handle d{H5Dopen2(group, "w", H5P_DEFAULT), H5Dclose};
  Handle space{d.id < 0 ? -1 : H5Dget_space(d.id), H5Sclose};
  Handle type{d.id < 0 ? -1 : H5Dget_type(d.id), H5Tclose};
  if (space.id < 0 || type.id < 0 || H5Tget_class(type.id) != H5T_FLOAT ||
      H5Sget_simple_extent_npoints(space.id) != 1 || H5Sget_simple_extent_ndims(space.id) > 1)
    throw IoError("EDM-IO-110", where + ": the weight must be one floating-point number (a scalar dataset)");
  double w = 0;
  if (H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &w) < 0)
    throw IoError("EDM-IO-112", where + ": read failed");
  if (!(std::isfinite(w) && w >= 0))
    throw IoError("EDM-IO-111", where + " = " + std::to_string(w) +
                                    ": a macro-particle weight must be finite and >= 0");
  return w;
}

// Every sample within the bounds that every electron path obeys (edm/ensemble.hpp): a weight of
// 1e300 or a position of 1e300 m was read as given and ended in a field of inf with exit 0.
void check_track_range(const TrackData& td, const std::string& path, const std::string& gpath) {
  for (std::size_t k = 0; k < td.t.size(); ++k) {
    const ElectronInit e{td.t[k], td.x[k], td.y[k], td.z[k], td.ux[k], td.uy[k], td.uz[k], td.w};
    if (const auto bad = electron_out_of_range(e); !bad.empty())
      throw IoError("EDM-IO-055", path + ": " + gpath + " sample " + std::to_string(k) + ": " + bad);
  }
}

}  // namespace

std::vector<TrackData> read_tracks(const std::string& path) {
  QuietHdf5 quiet;
  Handle file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) throw IoError("EDM-IO-040", path + ": cannot open as an HDF5 tracks file");
  Handle root{H5Gopen2(file.id, "/tracks", H5P_DEFAULT), H5Gclose};
  if (root.id < 0) throw IoError("EDM-IO-046", path + ": no group /tracks");
  std::vector<std::string> names;
  if (H5Literate(root.id, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names) < 0)
    throw IoError("EDM-IO-047", path + ": cannot list /tracks");
  std::sort(names.begin(), names.end());  // 6-digit names: lexical order = index order
  std::vector<TrackData> out;
  out.reserve(names.size());
  for (const auto& name : names) {
    const std::string gpath = "/tracks/" + name;
    // unsigned char: a group name is bytes from the file, and ::isdigit of a negative char is UB.
    if (name.size() != 6 ||
        !std::all_of(name.begin(), name.end(), [](unsigned char ch) { return ch >= '0' && ch <= '9'; }))
      throw IoError("EDM-IO-048", path + ": group " + gpath + " is not a 6-digit electron index");
    Handle g{H5Gopen2(root.id, name.c_str(), H5P_DEFAULT), H5Gclose};
    if (g.id < 0) throw IoError("EDM-IO-049", path + ": " + gpath + " is not a group");
    TrackData td;
    td.index = std::stoull(name);
    std::vector<double>* cols[7] = {&td.t, &td.x, &td.y, &td.z, &td.ux, &td.uy, &td.uz};
    static const char* cnames[7] = {"t", "x", "y", "z", "ux", "uy", "uz"};
    for (int c = 0; c < 7; ++c) *cols[c] = read_1d(g.id, path, gpath + "/" + cnames[c]);
    td.w = read_weight(g.id, path, gpath);
    for (int c = 1; c < 7; ++c)
      if (cols[c]->size() != td.t.size())
        throw IoError("EDM-IO-050", path + ": dataset " + gpath + "/" + cnames[c] + " has " +
                                        std::to_string(cols[c]->size()) + " elements, t has " +
                                        std::to_string(td.t.size()));
    if (td.t.size() < 4)
      throw IoError("EDM-IO-051", path + ": dataset " + gpath + "/t needs at least 4 samples");
    for (std::size_t k = 1; k < td.t.size(); ++k)
      if (!(td.t[k] > td.t[k - 1]))
        throw IoError("EDM-IO-052",
                      path + ": dataset " + gpath + "/t is not strictly increasing at " + std::to_string(k));
    check_track_range(td, path, gpath);
    out.push_back(std::move(td));
  }
  if (out.empty()) throw IoError("EDM-IO-053", path + ": /tracks holds no electrons");
  return out;
}

void write_tracks(const std::string& path, const std::vector<TrackData>& tracks) {
  QuietHdf5 quiet;
  Handle file{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) throw IoError("EDM-IO-060", path + ": cannot create the tracks file");
  Handle root{H5Gcreate2(file.id, "/tracks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
  if (root.id < 0) throw IoError("EDM-IO-061", path + ": cannot create /tracks");
  static const char* cnames[7] = {"t", "x", "y", "z", "ux", "uy", "uz"};
  for (const auto& td : tracks) {
    char name[32];
    std::snprintf(name, sizeof name, "%06llu", static_cast<unsigned long long>(td.index));
    Handle g{H5Gcreate2(root.id, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
    if (g.id < 0) throw IoError("EDM-IO-062", path + ": cannot create /tracks/" + name);
    const std::vector<double>* cols[7] = {&td.t, &td.x, &td.y, &td.z, &td.ux, &td.uy, &td.uz};
    for (int c = 0; c < 7; ++c) {
      const hsize_t n = cols[c]->size();
      Handle space{H5Screate_simple(1, &n, nullptr), H5Sclose};
      Handle d{H5Dcreate2(g.id, cnames[c], H5T_IEEE_F64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose};
      if (d.id < 0 ||
          (n > 0 && H5Dwrite(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, cols[c]->data()) < 0))
        throw IoError("EDM-IO-063", path + ": cannot write dataset /tracks/" + name + "/" + cnames[c]);
    }
    if (td.w != 1.0) {  // files of unit weights stay as they were before weights existed
      Handle space{H5Screate(H5S_SCALAR), H5Sclose};
      Handle d{H5Dcreate2(g.id, "w", H5T_IEEE_F64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
      if (d.id < 0 || H5Dwrite(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &td.w) < 0)
        throw IoError("EDM-IO-113", path + ": cannot write dataset /tracks/" + name + "/w");
    }
  }
}

}  // namespace edm
