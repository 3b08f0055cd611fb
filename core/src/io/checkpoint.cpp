// checkpoint.h5: writer and readers (HDF5 C API), see edm/checkpoint.hpp.
#include "edm/checkpoint.hpp"

#include <unistd.h>

#include <cmath>
#include <fcntl.h>

#include "edm/error.hpp"
#include "io/h5.hpp"

using namespace edm::h5;

namespace edm {
namespace {

const char* kFormat = "edm-checkpoint-1";

void put_attr_u64(hid_t obj, const char* name, std::uint64_t v) {
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_UINT64, sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_UINT64, &v);
}
void put_attr_f64(hid_t obj, const char* name, double v) {
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &v);
}
std::uint64_t get_attr_u64(hid_t obj, const char* name, const std::filesystem::path& f) {
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) io_fail(std::string("checkpoint lacks attribute ") + name, f);
  std::uint64_t v = 0;
  H5Aread(a.get(), H5T_NATIVE_UINT64, &v);
  return v;
}
double get_attr_f64(hid_t obj, const char* name, const std::filesystem::path& f) {
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) io_fail(std::string("checkpoint lacks attribute ") + name, f);
  double v = 0;
  H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v);
  return v;
}

void put_string(hid_t parent, const char* name, const std::string& text, const std::filesystem::path& f) {
  hsize_t n = text.size();
  Handle sp(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, H5T_NATIVE_CHAR, sp.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("cannot create ") + name, f);
  if (n) check(H5Dwrite(d.get(), H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), "cannot write", f);
}
std::string get_string(hid_t parent, const char* name, const std::filesystem::path& f) {
  Handle d(H5Dopen2(parent, name, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("checkpoint lacks ") + name, f);
  Handle sp(H5Dget_space(d.get()), H5Sclose);
  std::string s(std::size_t(H5Sget_simple_extent_npoints(sp.get())), '\0');
  if (!s.empty()) check(H5Dread(d.get(), H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), "cannot read", f);
  return s;
}

template <class T>
void put_vec(hid_t parent, const char* name, const std::vector<T>& v, hid_t type, const std::filesystem::path& f) {
  hsize_t n = v.size();
  Handle sp(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, type, sp.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("cannot create ") + name, f);
  if (n) check(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "cannot write", f);
}
template <class T>
std::vector<T> get_vec(hid_t parent, const char* name, hid_t type, const std::filesystem::path& f) {
  Handle d(H5Dopen2(parent, name, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("checkpoint lacks ") + name, f);
  Handle sp(H5Dget_space(d.get()), H5Sclose);
  std::vector<T> v(std::size_t(H5Sget_simple_extent_npoints(sp.get())));
  if (!v.empty()) check(H5Dread(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "cannot read", f);
  return v;
}

// The doubles [off, off + cnt) of a 1-D cube dataset: the file selection and the matching memory
// space, for one raw chunk of the device download or upload.
struct RawChunk {
  Handle file_space, mem_space;
  RawChunk(hid_t dataset, std::uint64_t off, std::size_t cnt)
      : file_space(H5Dget_space(dataset), H5Sclose) {
    hsize_t start = off, count = cnt;
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    mem_space = Handle(H5Screate_simple(1, &count, nullptr), H5Sclose);
  }
};

std::string cube_name(std::size_t device, int bucket) {
  return "cube_d" + std::to_string(device) + "_b" + std::to_string(bucket);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const CheckpointState& st, RawCubes& acc) {
  h5::silence();
  auto partial = file;
  partial += ".partial";
  std::error_code ec;
  std::filesystem::remove(partial, ec);
  try {
    Handle f(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) io_fail("cannot create the checkpoint", partial);
    hid_t root = f.get();
    {
      Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
      Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(t.get(), std::string(kFormat).size());
      Handle a(H5Acreate2(root, "format", t.get(), sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
      H5Awrite(a.get(), t.get(), kFormat);
    }
    h5::write_attr(root, "edm_layout", "edm checkpoint.h5, edm's own layout, not openPMD (share/docs/outputs.md)");
    put_string(root, "run_id", st.run_id, partial);
    put_string(root, "campaign", st.campaign_text, partial);
    put_attr_u64(root, "next_electron", st.next_electron);
    put_attr_u64(root, "batches_done", st.batches_done);
    put_attr_u64(root, "devices", acc.devices());
    // The raw cube is in the device layout, which depends on the pixel order (and is the same on
    // every device of a run): its fingerprint, checked on resume.
    put_attr_u64(root, "layout_hash", acc.layout_hash());
    put_attr_u64(root, "knots_total", st.knots_total);
    put_attr_u64(root, "spline_bytes_per_electron", st.spline_bytes_per_electron);
    put_attr_f64(root, "trajectories", st.trajectories);
    put_attr_f64(root, "trajectories_overlapped", st.trajectories_overlapped);
    put_attr_f64(root, "kernel", st.kernel);
    put_attr_f64(root, "gamma_dtau", st.gamma.dtau);
    {  // the fixed-point sums as two 64-bit halves
      std::vector<std::uint64_t> lo, hi;
      for (auto v : st.gamma.sum) {
        lo.push_back(GammaTrace::low_half(v));
        hi.push_back(GammaTrace::high_half(v));
      }
      put_vec(root, "gamma_sum_lo", lo, H5T_NATIVE_UINT64, partial);
      put_vec(root, "gamma_sum_hi", hi, H5T_NATIVE_UINT64, partial);
    }
    put_vec(root, "gamma_min", st.gamma.min, H5T_NATIVE_DOUBLE, partial);
    put_vec(root, "gamma_max", st.gamma.max, H5T_NATIVE_DOUBLE, partial);
    put_vec(root, "gamma_count", st.gamma.count, H5T_NATIVE_UINT64, partial);
    std::vector<std::uint64_t> de;
    std::vector<double> dv;
    for (auto& [e, d] : st.gamma.drain) {
      de.push_back(e);
      dv.push_back(d);
    }
    put_vec(root, "drain_electron", de, H5T_NATIVE_UINT64, partial);
    put_vec(root, "drain", dv, H5T_NATIVE_DOUBLE, partial);
    std::vector<double> cov;
    for (const auto& r : st.coverage)
      cov.insert(cov.end(), {double(r.electron), r.margin_start, r.margin_end, double(r.dropped_slots)});
    put_vec(root, "coverage", cov, H5T_NATIVE_DOUBLE, partial);

    // The partial cubes, chunk by chunk straight from the devices (no whole-cube host copy).
    for (std::size_t d = 0; d < acc.devices(); ++d) {
      hsize_t n = acc.doubles_per_bucket();
      Handle sp(H5Screate_simple(1, &n, nullptr), H5Sclose);
      std::vector<Handle> sets;
      for (int b = 0; b < acc.buckets(); ++b) {
        sets.emplace_back(H5Dcreate2(root, cube_name(d, b).c_str(), H5T_IEEE_F64LE, sp.get(), H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT),
                          H5Dclose);
        if (!sets.back().valid()) io_fail("cannot create " + cube_name(d, b), partial);
      }
      acc.download(d, [&](int b, std::uint64_t off, const double* data, std::size_t cnt) {
        const RawChunk c(sets[std::size_t(b)].get(), off, cnt);
        check(H5Dwrite(sets[std::size_t(b)].get(), H5T_NATIVE_DOUBLE, c.mem_space.get(), c.file_space.get(),
                       H5P_DEFAULT, data),
              "cannot write the checkpoint cube (disk full?)", partial);
      });
    }
    check(H5Fflush(root, H5F_SCOPE_GLOBAL), "cannot flush the checkpoint (disk full?)", partial);
    if (H5Fclose(f.release()) < 0) io_fail("cannot close the checkpoint (disk full?)", partial);
    // Durable before it replaces the previous checkpoint (power loss keeps one of the two).
    const int fd = ::open(partial.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
    std::filesystem::rename(partial, file, ec);
    if (ec) io_fail("cannot rename the checkpoint: " + ec.message(), partial);
  } catch (...) {
    std::filesystem::remove(partial, ec);
    throw;
  }
}

CheckpointState read_checkpoint_state(const std::filesystem::path& file) {
  h5::silence();
  if (!std::filesystem::exists(file)) throw IoError("EDM-CKP-001", "no checkpoint at " + file.string());
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  hid_t root = f.get();
  CheckpointState st;
  st.run_id = get_string(root, "run_id", file);
  st.campaign_text = get_string(root, "campaign", file);
  st.next_electron = get_attr_u64(root, "next_electron", file);
  st.batches_done = get_attr_u64(root, "batches_done", file);
  st.devices = std::uint32_t(get_attr_u64(root, "devices", file));
  st.knots_total = get_attr_u64(root, "knots_total", file);
  st.spline_bytes_per_electron = get_attr_u64(root, "spline_bytes_per_electron", file);
  st.trajectories = get_attr_f64(root, "trajectories", file);
  st.trajectories_overlapped = get_attr_f64(root, "trajectories_overlapped", file);
  st.kernel = get_attr_f64(root, "kernel", file);
  st.gamma.dtau = get_attr_f64(root, "gamma_dtau", file);
  {
    const auto lo = get_vec<std::uint64_t>(root, "gamma_sum_lo", H5T_NATIVE_UINT64, file);
    const auto hi = get_vec<std::uint64_t>(root, "gamma_sum_hi", H5T_NATIVE_UINT64, file);
    if (lo.size() != hi.size()) io_fail("checkpoint γ sums are inconsistent", file);
    st.gamma.sum.clear();
    for (std::size_t i = 0; i < lo.size(); ++i) st.gamma.sum.push_back(GammaTrace::from_halves(hi[i], lo[i]));
  }
  st.gamma.min = get_vec<double>(root, "gamma_min", H5T_NATIVE_DOUBLE, file);
  st.gamma.max = get_vec<double>(root, "gamma_max", H5T_NATIVE_DOUBLE, file);
  st.gamma.count = get_vec<std::uint64_t>(root, "gamma_count", H5T_NATIVE_UINT64, file);
  const auto de = get_vec<std::uint64_t>(root, "drain_electron", H5T_NATIVE_UINT64, file);
  const auto dv = get_vec<double>(root, "drain", H5T_NATIVE_DOUBLE, file);
  for (std::size_t i = 0; i < de.size() && i < dv.size(); ++i) st.gamma.drain.push_back({de[i], dv[i]});
  const auto cov = get_vec<double>(root, "coverage", H5T_NATIVE_DOUBLE, file);
  for (std::size_t i = 0; i + 3 < cov.size(); i += 4)
    st.coverage.push_back({std::uint64_t(cov[i]), cov[i + 1], cov[i + 2], std::uint64_t(cov[i + 3])});
  return st;
}

void load_checkpoint_cube(const std::filesystem::path& file, RawCubes& acc) {
  h5::silence();
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  if (get_attr_u64(f.get(), "devices", file) != acc.devices())
    throw IoError("EDM-CKP-002", file.string() + " was written with " +
                                     std::to_string(get_attr_u64(f.get(), "devices", file)) +
                                     " device(s); resume with the same device count (--device)");
  {
    // Checkpoints from before the pixel orders (no fingerprint) were in tile order on GPUs and row
    // order on CPUs; rather than guess, they are refused.
    Handle a(H5Aopen(f.get(), "layout_hash", H5P_DEFAULT), H5Aclose);
    const std::uint64_t want = acc.layout_hash();
    if (!a.valid() || get_attr_u64(f.get(), "layout_hash", file) != want)
      throw IoError("EDM-CKP-004", file.string() + " was written with another device layout of the cube "
                                   "(accumulator.pixel_order / tile_width / work_group differ); resume with the "
                                   "settings it was written with");
  }
  for (std::size_t d = 0; d < acc.devices(); ++d) {
    std::vector<Handle> sets;
    for (int b = 0; b < acc.buckets(); ++b) {
      sets.emplace_back(H5Dopen2(f.get(), cube_name(d, b).c_str(), H5P_DEFAULT), H5Dclose);
      if (!sets.back().valid()) io_fail("checkpoint lacks " + cube_name(d, b), file);
      Handle sp(H5Dget_space(sets.back().get()), H5Sclose);
      if (std::uint64_t(H5Sget_simple_extent_npoints(sp.get())) != acc.doubles_per_bucket())
        throw IoError("EDM-CKP-003", file.string() + ": the saved cube does not match this screen and mode");
    }
    acc.upload(d, [&](int b, std::uint64_t off, double* data, std::size_t cnt) {
      const RawChunk c(sets[std::size_t(b)].get(), off, cnt);
      check(H5Dread(sets[std::size_t(b)].get(), H5T_NATIVE_DOUBLE, c.mem_space.get(), c.file_space.get(),
                    H5P_DEFAULT, data),
            "cannot read the checkpoint cube", file);
    });
  }
}

}  // namespace edm
