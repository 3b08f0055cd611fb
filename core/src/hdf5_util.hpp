// Internal HDF5 helpers for the writers (field.h5, checkpoint.h5): error translation on top of
// h5util.hpp's owning handle (core never prints).
#pragma once
#include <hdf5.h>

#include <filesystem>
#include <string>

#include "edm/error.hpp"
#include "h5util.hpp"

namespace edm::hdf5 {

// One owning handle and one silencing switch for all of core (h5util.hpp); this header adds the
// writer-side error translation.
using h5::Handle;
inline void silence_hdf5() { h5::silence(); }

[[noreturn]] inline void io_fail(const std::string& what, const std::filesystem::path& path) {
  throw IoError("EDM-IO-001", what + " (" + path.string() + ")");
}

inline void check(herr_t status, const std::string& what, const std::filesystem::path& path) {
  if (status < 0) io_fail(what, path);
}

}  // namespace edm::hdf5
