// The one HDF5 helper of core (private, not installed): start-up, an owning handle, error
// translation for writers, the stored-size check readers make before allocating, row-slab reads of
// (ny, nx, ns) datasets, 1-D datasets and scalar/string attributes. Users: io/ (field.h5,
// checkpoint.h5, tracks) and analysis/ (spectrum, run folders). The public API speaks std::vector
// and std::filesystem only.
#pragma once
#include <hdf5.h>

#include <array>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "edm/error.hpp"

namespace edm::h5 {

// libhdf5 1.10.8 registers an atexit handler that closes every file still open. After a write
// failed for lack of space (ENOSPC during H5Fflush/H5Fclose) the file is left half-closed and that
// handler segfaults (H5F__close_cb), turning a clean "disk full" error (exit 4) into a crash at
// exit (found by tests/test_bad_inputs full_disk_fails_cleanly). Core closes every file it opens
// through RAII handles, so the handler has nothing useful to do: switch it off. It must precede
// every other HDF5 call (later it is refused, harmlessly), so each entry point into HDF5 calls this.
inline void start() {
  static const bool done = [] {
    H5dont_atexit();
    return true;
  }();
  (void)done;
}

// HDF5 prints its own error stack by default; core never prints, so switch it off once.
void silence();

// Owns one hid_t and closes it with the right function.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }
  // Gives up ownership (the caller closes, e.g. to check H5Fclose's status on a file it wrote).
  hid_t release() {
    hid_t id = id_;
    id_ = -1;
    return id;
  }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// Read side. All throw IoError naming the file and the object; nothing a file declares (a rank, a
// size, a type) is taken on trust before it is checked against what the file really holds.
Handle open_file(const std::filesystem::path& file);
// Before a file that edm reads (field.h5, spectrum.h5, run.toml, a campaign table) is opened: a
// FIFO, socket or device under that name would block the open, or the read, for ever (found by
// tests/test_hostile: edm info, spectrum and plot hung). IoError EDM-IO-142 naming it; a missing
// file or a folder is left to the caller's own error.
void refuse_special_file(const std::filesystem::path& file);
bool exists(hid_t file, const std::string& path);
// A 1-D floating-point dataset (any float width; read as double).
std::vector<double> read_1d(hid_t file, const std::string& name, const std::filesystem::path& where);
// Shape of a 3-D floating-point dataset (ny, nx, ns) whose declared size is really stored.
std::array<std::size_t, 3> shape_3d(hid_t file, const std::string& name, const std::filesystem::path& where);
// Rows [iy0, iy1) of a (ny, nx, ns) dataset into out (resized to (iy1 − iy0)·nx·ns). The dataset must
// have exactly `shape` (the caller indexes every component with one shape: a B or E/y shorter than
// E/x is refused here instead of being read past).
void read_rows(hid_t file, const std::string& name, const std::array<std::size_t, 3>& shape, std::size_t iy0,
               std::size_t iy1, std::vector<double>& out, const std::filesystem::path& where);
// Scalar attributes: nullopt when absent; IoError (EDM-IO-072, naming the file and the attribute)
// when present but of another type or shape, or unreadable: a wrong type is damage, not a default.
std::optional<std::string> attr_string(hid_t obj, const char* name);
std::optional<double> attr_double(hid_t obj, const char* name);  // any numeric scalar attribute
// The file that holds obj, for messages ("?" if HDF5 cannot say).
std::string file_name(hid_t obj);

// Write side (files built under .partial by the caller).
void write_attr(hid_t obj, const char* name, const std::string& value);
void write_attr(hid_t obj, const char* name, double value);
Handle create_group(hid_t parent, const char* name, const std::filesystem::path& where);
// A float64 dataset of the given shape (1–3 dims) with a `unit` attribute.
void write_dataset(hid_t parent, const char* name, const std::vector<hsize_t>& dims, const double* data,
                   const char* unit, const std::filesystem::path& where);
// edm's complex number on disk: the compound {r, i} of two float64 (h5py reads it as complex128),
// one type for every complex dataset edm writes or reads (spectrum.h5's /direct and /harmonic_field).
Handle complex_type(const std::filesystem::path& where);
// A complex dataset of that type with a `unit` attribute.
void write_complex(hid_t parent, const char* name, const std::vector<hsize_t>& dims,
                   const std::vector<std::complex<double>>& data, const char* unit,
                   const std::filesystem::path& where);

// Writer-side error translation: every failed HDF5 call of a writer becomes EDM-IO-001 naming the path.
[[noreturn]] inline void io_fail(const std::string& what, const std::filesystem::path& path) {
  throw IoError("EDM-IO-001", what + " (" + path.string() + ")");
}
inline void check(herr_t status, const std::string& what, const std::filesystem::path& path) {
  if (status < 0) io_fail(what, path);
}

// Throws IoError (with `id`, `where` naming file and dataset) unless `n` elements of `dset` are
// really stored. A contiguous or compact dataset stores every element (n × element size bytes); a
// chunked one some storage within 4096× of the declared size: deflate, the usual HDF5 filter,
// cannot compress more than ~1032:1, so real data always passes. What fails is a dataset that was
// never written or whose extent was corrupted, and no allocation exceeds 4096× the bytes actually
// in the file.
void check_stored(hid_t dset, hsize_t n, const char* id, const std::string& where);

}  // namespace edm::h5
