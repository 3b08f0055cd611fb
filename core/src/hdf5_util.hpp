// Internal HDF5 helpers shared by the field writer and the checkpoint file: an owning handle that
// closes each id with the right function, error translation, and silencing HDF5's own printing
// (core never prints).
#pragma once
#include <hdf5.h>

#include <filesystem>
#include <string>

#include "edm/error.hpp"

namespace edm::hdf5 {

// HDF5 prints its own error stack by default; core never prints, so switch it off once.
inline void silence_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

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
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  hid_t release() {  // hands the id over without closing it
    hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

[[noreturn]] inline void io_fail(const std::string& what, const std::filesystem::path& path) {
  throw IoError("EDM-IO-001", what + " (" + path.string() + ")");
}

inline void check(herr_t status, const std::string& what, const std::filesystem::path& path) {
  if (status < 0) io_fail(what, path);
}

}  // namespace edm::hdf5
