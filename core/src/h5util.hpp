// Private HDF5 helpers for the analysis readers/writers (spectrum.cpp, run_folder.cpp): an owning
// handle, row-slab reads of (ny, nx, ns) datasets, 1-D datasets and scalar/string attributes. Not
// installed; the public API speaks std::vector and std::filesystem only.
#pragma once
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace edm::h5 {

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

// Read side. All throw IoError naming the file and the object.
Handle open_file(const std::filesystem::path& file);
bool exists(hid_t file, const std::string& path);
std::vector<double> read_1d(hid_t file, const std::string& name, const std::filesystem::path& where);
// Shape of a 3-D dataset (ny, nx, ns); throws if it is not 3-D.
std::array<std::size_t, 3> shape_3d(hid_t file, const std::string& name, const std::filesystem::path& where);
// Rows [iy0, iy1) of a (ny, nx, ns) dataset into out (resized to (iy1 − iy0)·nx·ns).
void read_rows(hid_t file, const std::string& name, std::size_t iy0, std::size_t iy1,
               std::vector<double>& out, const std::filesystem::path& where);
std::optional<std::string> attr_string(hid_t obj, const char* name);
std::optional<double> attr_double(hid_t obj, const char* name);  // any numeric scalar attribute

// Write side (files built under .partial by the caller).
void write_attr(hid_t obj, const char* name, const std::string& value);
void write_attr(hid_t obj, const char* name, double value);
Handle create_group(hid_t parent, const char* name, const std::filesystem::path& where);
// A float64 dataset of the given shape (1–3 dims) with a `unit` attribute.
void write_dataset(hid_t parent, const char* name, const std::vector<hsize_t>& dims, const double* data,
                   const char* unit, const std::filesystem::path& where);

}  // namespace edm::h5
