// Private to core: what every HDF5 use in core needs first. start_hdf5() keeps libhdf5 from
// closing files again at exit; check_stored() is the size check a reader makes before allocating
// (a dataset's dimensions come from the file: a corrupt or hostile one, chunked, declared 2^34
// elements, nothing written, found by fuzz/fuzz_tracks, made the reader allocate whatever it said).
#pragma once
#include <hdf5.h>

#include <string>

#include "edm/error.hpp"

namespace edm::detail {

// libhdf5 1.10.8 registers an atexit handler that closes every file still open. After a write
// failed for lack of space (ENOSPC during H5Fflush/H5Fclose) the file is left half-closed and that
// handler segfaults (H5F__close_cb), turning a clean "disk full" error (exit 4) into a crash at
// exit (found by tests/test_bad_inputs full_disk_fails_cleanly). Core closes every file it opens
// through RAII handles, so the handler has nothing useful to do: switch it off. It must precede
// every other HDF5 call (later it is refused, harmlessly), so each entry point into HDF5 calls this.
inline void start_hdf5() {
  static const bool done = [] {
    H5dont_atexit();
    return true;
  }();
  (void)done;
}

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
