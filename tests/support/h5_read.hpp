// Whole-dataset reads of an HDF5 file for the tests that check field.h5, spectrum.h5 or a
// checkpoint by value or bit for bit. Header-only: a test that includes it links HDF5
// (tests/CMakeLists.txt lists those tests).
#pragma once
#include <hdf5.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace edm::test {

// The dataset's bytes as stored, in its own type (for bit-for-bit comparisons).
inline std::vector<unsigned char> h5_raw(const std::filesystem::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE_MESSAGE(f >= 0, "cannot open " << file.string());
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  BOOST_REQUIRE_MESSAGE(d >= 0, file.string() << " lacks " << name);
  const hid_t type = H5Dget_type(d), sp = H5Dget_space(d);
  std::vector<unsigned char> v(std::size_t(H5Sget_simple_extent_npoints(sp)) * H5Tget_size(type));
  BOOST_REQUIRE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Sclose(sp);
  H5Tclose(type);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

// The stored bytes of a dataset of doubles, or of a compound of doubles (a complex amplitude's r, i),
// as doubles, unconverted.
inline std::vector<double> h5_raw_doubles(const std::filesystem::path& file, const std::string& name) {
  const auto b = h5_raw(file, name);
  std::vector<double> v(b.size() / sizeof(double));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
  return v;
}

// The dataset's values as doubles (HDF5 converts from the stored numeric type).
inline std::vector<double> h5_doubles(const std::filesystem::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE_MESSAGE(f >= 0, "cannot open " << file.string());
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  BOOST_REQUIRE_MESSAGE(d >= 0, file.string() << " lacks " << name);
  const hid_t sp = H5Dget_space(d);
  std::vector<double> v(std::size_t(H5Sget_simple_extent_npoints(sp)));
  BOOST_REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

}  // namespace edm::test
