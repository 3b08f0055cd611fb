// Private to core: the size check every HDF5 reader makes before allocating. A dataset's dimensions
// come from the file, so a corrupt or hostile file (chunked, declared 2^34 elements, nothing
// written: found by fuzz/fuzz_tracks) would otherwise make the reader allocate whatever it says.
#pragma once
#include <hdf5.h>

#include <string>

#include "edm/error.hpp"

namespace edm::detail {

// Throws IoError (with `id`, `where` naming file and dataset) unless `n` elements of `dset` are
// really stored: some storage exists and the declared size is within 4096× of it. deflate, the
// usual HDF5 filter, cannot compress more than ~1032:1, so real data always passes; what fails is a
// dataset that was never written or whose extent was corrupted, and no allocation exceeds 4096× the
// bytes actually in the file.
inline void check_stored(hid_t dset, hsize_t n, const char* id, const std::string& where) {
  if (n == 0) return;
  const hsize_t stored = H5Dget_storage_size(dset);
  constexpr hsize_t kMaxRatio = 4096;
  if (stored == 0 || n / kMaxRatio > stored / sizeof(double))
    throw IoError(id, where + " declares " + std::to_string(n) + " elements but stores only " +
                          std::to_string(stored) + " bytes (never written or corrupt)");
}

}  // namespace edm::detail
