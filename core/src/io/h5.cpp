// Private HDF5 helpers for the analysis tools (see h5.hpp). Every failure becomes an IoError
// that names the file and the object, because HDF5's own error stack is silenced.
#include "io/h5.hpp"

#include "edm/error.hpp"

namespace edm::h5 {

void silence() {
  start();  // before any other HDF5 call
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

Handle open_file(const std::filesystem::path& file) {
  silence();
  if (!std::filesystem::exists(file))
    throw IoError("EDM-IO-010", "cannot open " + file.string() + ": no such file");
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw IoError("EDM-IO-010", "cannot open " + file.string() + " (not an HDF5 file?)");
  return f;
}

bool exists(hid_t file, const std::string& path) {
  // H5Lexists needs every intermediate link to exist, so walk the path one name at a time.
  std::string sofar;
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t next = path.find('/', pos + 1);
    sofar = path.substr(0, next);
    if (sofar != "/" && H5Lexists(file, sofar.c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == std::string::npos) break;
    pos = next;
  }
  return true;
}

static Handle open_dataset(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw IoError("EDM-IO-011", "no dataset " + name + " in " + where.string());
  return d;
}

std::vector<double> read_1d(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<double> v(n > 0 ? std::size_t(n) : 0);
  if (!v.empty() && H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read " + name + " from " + where.string());
  return v;
}

std::array<std::size_t, 3> shape_3d(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 3)
    throw IoError("EDM-IO-012", name + " in " + where.string() + " is not 3-D");
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return {std::size_t(dims[0]), std::size_t(dims[1]), std::size_t(dims[2])};
}

void read_rows(hid_t file, const std::string& name, std::size_t iy0, std::size_t iy1,
               std::vector<double>& out, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  Handle fspace(H5Dget_space(d.get()), H5Sclose);
  hsize_t dims[3] = {0, 0, 0};
  if (H5Sget_simple_extent_ndims(fspace.get()) != 3)
    throw IoError("EDM-IO-012", name + " in " + where.string() + " is not 3-D");
  H5Sget_simple_extent_dims(fspace.get(), dims, nullptr);
  if (iy0 >= iy1 || iy1 > dims[0])
    throw IoError("EDM-IO-014", "rows out of range reading " + name + " from " + where.string());
  hsize_t start[3] = {hsize_t(iy0), 0, 0};
  hsize_t count[3] = {hsize_t(iy1 - iy0), dims[1], dims[2]};
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  Handle mspace(H5Screate_simple(3, count, nullptr), H5Sclose);
  out.resize(count[0] * count[1] * count[2]);
  if (!out.empty() &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), H5P_DEFAULT, out.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read rows of " + name + " from " + where.string());
}

std::optional<std::string> attr_string(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
  if (H5Tis_variable_str(type.get()) > 0) {
    char* s = nullptr;
    Handle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
    if (H5Aread(a.get(), mem.get(), &s) < 0 || !s) return std::nullopt;
    std::string out(s);
    H5free_memory(s);
    return out;
  }
  std::string buf(H5Tget_size(type.get()), '\0');
  if (H5Aread(a.get(), type.get(), buf.data()) < 0) return std::nullopt;
  return std::string(buf.c_str());  // fixed-size strings are NUL-padded
}

std::optional<double> attr_double(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) return std::nullopt;
  Handle space(H5Aget_space(a.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
  double v = 0;  // HDF5 converts integer attributes to double on read
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0) return std::nullopt;
  return v;
}

void write_attr(hid_t obj, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.size() ? value.size() : 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), type.get(), value.c_str()) < 0)
    throw IoError("EDM-IO-030", std::string("cannot write attribute ") + name);
}

void write_attr(hid_t obj, const char* name, double value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw IoError("EDM-IO-030", std::string("cannot write attribute ") + name);
}

Handle create_group(hid_t parent, const char* name, const std::filesystem::path& where) {
  Handle g(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid())
    throw IoError("EDM-IO-031", std::string("cannot create group ") + name + " in " + where.string());
  return g;
}

void write_dataset(hid_t parent, const char* name, const std::vector<hsize_t>& dims, const double* data,
                   const char* unit, const std::filesystem::path& where) {
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose);
  if (!d.valid())
    throw IoError("EDM-IO-031", std::string("cannot create dataset ") + name + " in " + where.string());
  hsize_t n = 1;
  for (auto v : dims) n *= v;
  if (n && H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw IoError("EDM-IO-032",
                  std::string("cannot write ") + name + " to " + where.string() + " (disk full?)");
  if (unit) write_attr(d.get(), "unit", std::string(unit));
}

}  // namespace edm::h5
