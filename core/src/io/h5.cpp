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

void refuse_special_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto st = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st) ||
      std::filesystem::is_directory(st))
    return;
  throw IoError("EDM-IO-142", file.string() + ": is not a regular file (a FIFO, socket or device); edm never reads "
                                              "one, it would wait for ever");
}

Handle open_file(const std::filesystem::path& file) {
  silence();
  if (!std::filesystem::exists(file))
    throw IoError("EDM-IO-010", "cannot open " + file.string() + ": no such file");
  refuse_special_file(file);
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

std::string file_name(hid_t obj) {
  const ssize_t n = H5Fget_name(obj, nullptr, 0);
  if (n <= 0) return "?";
  std::string s(std::size_t(n) + 1, '\0');
  if (H5Fget_name(obj, s.data(), s.size()) < 0) return "?";
  s.resize(std::size_t(n));
  return s;
}

void check_stored(hid_t dset, hsize_t n, const char* id, const std::string& where) {
  if (n == 0) return;
  const hsize_t stored = H5Dget_storage_size(dset);
  Handle dcpl(H5Dget_create_plist(dset), H5Pclose);
  Handle type(H5Dget_type(dset), H5Tclose);
  const bool chunked = dcpl.valid() && H5Pget_layout(dcpl.get()) == H5D_CHUNKED;
  const std::size_t elem = type.valid() ? H5Tget_size(type.get()) : 0;
  constexpr hsize_t kMaxRatio = 4096;
  const bool ok = chunked ? stored > 0 && n / kMaxRatio <= stored / sizeof(double)
                          : elem > 0 && n <= stored / elem;
  if (!ok)
    throw IoError(id, where + " declares " + std::to_string(n) + " elements but stores only " +
                          std::to_string(stored) + " bytes (never written or corrupt)");
}

namespace {

Handle open_dataset(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw IoError("EDM-IO-011", "no dataset " + name + " in " + where.string());
  return d;
}

// The dataset's extent after the checks every reader needs: the expected rank, a product of
// dimensions that does not wrap, a floating-point element type and the declared size really stored.
std::vector<hsize_t> checked_extent(hid_t d, int rank, const std::string& name, const std::filesystem::path& where) {
  const std::string what = name + " in " + where.string();
  Handle space(H5Dget_space(d), H5Sclose);
  const int ndims = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (ndims != rank)
    throw IoError(rank == 3 ? "EDM-IO-012" : "EDM-IO-074",
                  what + " is not " + std::to_string(rank) + "-D (rank " + std::to_string(ndims) + ")");
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) != rank)
    throw IoError("EDM-IO-013", "cannot read the extent of " + what);
  hsize_t n = 1;
  for (hsize_t v : dims) {
    if (v && n > (hsize_t(1) << 62) / v) throw IoError("EDM-IO-014", what + " has an impossible shape");
    n *= v;
  }
  Handle type(H5Dget_type(d), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_FLOAT)
    throw IoError("EDM-IO-070", what + " is not a floating-point dataset");
  check_stored(d, n, "EDM-IO-073", what);
  return dims;
}

// Opens attribute `name` of obj when it exists and is a one-element attribute of class `cls`
// (an invalid handle when absent); anything else present under that name is damage.
Handle open_scalar_attr(hid_t obj, const char* name, H5T_class_t cls, const char* expected) {
  const htri_t has = H5Aexists(obj, name);
  if (has == 0) return {};
  const std::string what = std::string("attribute ") + name + " in " + file_name(obj);
  if (has < 0) throw IoError("EDM-IO-072", "cannot look up " + what);
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Handle type(a.valid() ? H5Aget_type(a.get()) : -1, H5Tclose);
  Handle space(a.valid() ? H5Aget_space(a.get()) : -1, H5Sclose);
  if (!type.valid() || !space.valid()) throw IoError("EDM-IO-072", "cannot open " + what);
  const H5T_class_t c = H5Tget_class(type.get());
  const bool numeric = c == H5T_FLOAT || c == H5T_INTEGER;
  if (!(c == cls || (cls == H5T_FLOAT && numeric)))
    throw IoError("EDM-IO-072", what + " is not " + expected);
  // One element only: H5Aread writes every element, and the buffers below hold one.
  if (const hssize_t n = H5Sget_simple_extent_npoints(space.get()); n != 1)
    throw IoError("EDM-IO-072", what + " holds " + std::to_string(n) + " values, not one");
  return a;
}

}  // namespace

std::vector<double> read_1d(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  const auto dims = checked_extent(d.get(), 1, name, where);
  std::vector<double> v(static_cast<std::size_t>(dims[0]));
  if (!v.empty() && H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read " + name + " from " + where.string());
  return v;
}

std::array<std::size_t, 3> shape_3d(hid_t file, const std::string& name, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  const auto dims = checked_extent(d.get(), 3, name, where);
  return {std::size_t(dims[0]), std::size_t(dims[1]), std::size_t(dims[2])};
}

void read_rows(hid_t file, const std::string& name, const std::array<std::size_t, 3>& shape, std::size_t iy0,
               std::size_t iy1, std::vector<double>& out, const std::filesystem::path& where) {
  Handle d = open_dataset(file, name, where);
  const auto dims = checked_extent(d.get(), 3, name, where);
  if (dims[0] != shape[0] || dims[1] != shape[1] || dims[2] != shape[2])
    throw IoError("EDM-IO-071", name + " in " + where.string() + " has shape (" + std::to_string(dims[0]) + ", " +
                                    std::to_string(dims[1]) + ", " + std::to_string(dims[2]) + "), expected (" +
                                    std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
                                    std::to_string(shape[2]) + ") like the other field components");
  if (iy0 >= iy1 || iy1 > dims[0])
    throw IoError("EDM-IO-014", "rows out of range reading " + name + " from " + where.string());
  Handle fspace(H5Dget_space(d.get()), H5Sclose);
  hsize_t start[3] = {hsize_t(iy0), 0, 0};
  hsize_t count[3] = {hsize_t(iy1 - iy0), dims[1], dims[2]};
  if (!fspace.valid() || H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
    throw IoError("EDM-IO-013", "cannot select rows of " + name + " in " + where.string());
  Handle mspace(H5Screate_simple(3, count, nullptr), H5Sclose);
  out.resize(count[0] * count[1] * count[2]);
  if (!out.empty() &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), H5P_DEFAULT, out.data()) < 0)
    throw IoError("EDM-IO-013", "cannot read rows of " + name + " from " + where.string());
}

std::optional<std::string> attr_string(hid_t obj, const char* name) {
  Handle a = open_scalar_attr(obj, name, H5T_STRING, "a string");
  if (!a.valid()) return std::nullopt;
  const std::string what = std::string("attribute ") + name + " in " + file_name(obj);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tis_variable_str(type.get()) > 0) {
    char* s = nullptr;
    Handle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
    if (!mem.valid() || H5Aread(a.get(), mem.get(), &s) < 0 || !s) throw IoError("EDM-IO-072", "cannot read " + what);
    std::string out(s);
    H5free_memory(s);
    return out;
  }
  // A fixed-size string: its declared size must be what the attribute really stores.
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || H5Aget_storage_size(a.get()) < size) throw IoError("EDM-IO-072", what + " is damaged");
  std::string buf(size, '\0');
  if (H5Aread(a.get(), type.get(), buf.data()) < 0) throw IoError("EDM-IO-072", "cannot read " + what);
  return std::string(buf.c_str());  // fixed-size strings are NUL-padded
}

std::optional<double> attr_double(hid_t obj, const char* name) {
  Handle a = open_scalar_attr(obj, name, H5T_FLOAT, "a number");
  if (!a.valid()) return std::nullopt;
  double v = 0;  // HDF5 converts integer attributes to double on read
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0)
    throw IoError("EDM-IO-072", std::string("cannot read attribute ") + name + " in " + file_name(obj));
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

Handle complex_type(const std::filesystem::path& where) {
  // std::complex<double> is two doubles (real, imaginary) in that order by the standard.
  Handle type(H5Tcreate(H5T_COMPOUND, 2 * sizeof(double)), H5Tclose);
  check(H5Tinsert(type.get(), "r", 0, H5T_NATIVE_DOUBLE), "complex type", where);
  check(H5Tinsert(type.get(), "i", sizeof(double), H5T_NATIVE_DOUBLE), "complex type", where);
  return type;
}

void write_complex(hid_t parent, const char* name, const std::vector<hsize_t>& dims,
                   const std::vector<std::complex<double>>& data, const char* unit,
                   const std::filesystem::path& where) {
  const Handle type = complex_type(where);
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid())
    throw IoError("EDM-IO-031", std::string("cannot create dataset ") + name + " in " + where.string());
  if (!data.empty() && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0)
    throw IoError("EDM-IO-032",
                  std::string("cannot write ") + name + " to " + where.string() + " (disk full?)");
  write_attr(d.get(), "unit", std::string(unit));
}

}  // namespace edm::h5
