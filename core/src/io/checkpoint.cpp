// checkpoint.h5: writer and readers (HDF5 C API), see edm/checkpoint.hpp.
#include "edm/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fcntl.h>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include <toml++/toml.h>

#include "edm/error.hpp"
#include "field/fnv1a.hpp"
#include "io/h5.hpp"
#include "io/run_lock.hpp"

using namespace edm::h5;

namespace edm {
namespace {

const char* kFormat = "edm-checkpoint-1";

void put_attr_u64(hid_t obj, const char* name, std::uint64_t v) {
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_UINT64, sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_UINT64, &v);
}
void put_attr_i64(hid_t obj, const char* name, std::int64_t v) {
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_INT64, sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_INT64, &v);
}
void put_attr_f64(hid_t obj, const char* name, double v) {
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &v);
}
// The checked readers of the checkpoint's own layout: a value of another type (a string
// next_electron), another shape, or a failing read is refused with the file and the name, never
// read as 0.
Handle open_attr(hid_t obj, const char* name, H5T_class_t cls, const std::filesystem::path& f) {
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) io_fail(std::string("checkpoint lacks attribute ") + name, f);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  Handle space(H5Aget_space(a.get()), H5Sclose);
  if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != cls ||
      H5Sget_simple_extent_npoints(space.get()) != 1)
    throw IoError("EDM-CKP-020", f.string() + ": attribute " + name + " is not a single " +
                                     (cls == H5T_INTEGER ? "integer" : "floating-point number"));
  return a;
}
std::uint64_t get_attr_u64(hid_t obj, const char* name, const std::filesystem::path& f) {
  Handle a = open_attr(obj, name, H5T_INTEGER, f);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_sign(type.get()) == H5T_SGN_2) {  // a signed integer must not be negative
    std::int64_t v = 0;
    if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0 || v < 0)
      throw IoError("EDM-CKP-020", f.string() + ": attribute " + name + " is unreadable or negative");
    return std::uint64_t(v);
  }
  std::uint64_t v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_UINT64, &v) < 0)
    throw IoError("EDM-CKP-020", f.string() + ": cannot read attribute " + name);
  return v;
}
// A signed integer attribute (checkpoint_every: −1 means never).
std::int64_t get_attr_i64(hid_t obj, const char* name, const std::filesystem::path& f) {
  Handle a = open_attr(obj, name, H5T_INTEGER, f);
  std::int64_t v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0)
    throw IoError("EDM-CKP-020", f.string() + ": cannot read attribute " + name);
  return v;
}
// Timings and the γ grid step: finite and not negative.
double get_attr_f64(hid_t obj, const char* name, const std::filesystem::path& f) {
  Handle a = open_attr(obj, name, H5T_FLOAT, f);
  double v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0)
    throw IoError("EDM-CKP-020", f.string() + ": cannot read attribute " + name);
  if (!std::isfinite(v) || v < 0)
    throw IoError("EDM-CKP-023", f.string() + ": attribute " + name + " = " + std::to_string(v) +
                                     " is not a finite non-negative number");
  return v;
}
std::string get_format(hid_t obj, const std::filesystem::path& f) {
  const htri_t has = H5Aexists(obj, "format");
  std::string v;
  if (has > 0) {
    Handle a(H5Aopen(obj, "format", H5P_DEFAULT), H5Aclose);
    Handle type(a.valid() ? H5Aget_type(a.get()) : -1, H5Tclose);
    Handle space(a.valid() ? H5Aget_space(a.get()) : -1, H5Sclose);
    if (type.valid() && space.valid() && H5Tget_class(type.get()) == H5T_STRING &&
        H5Tis_variable_str(type.get()) == 0 && H5Sget_simple_extent_npoints(space.get()) == 1 &&
        H5Tget_size(type.get()) < 256) {
      std::string buf(H5Tget_size(type.get()), '\0');
      if (H5Aread(a.get(), type.get(), buf.data()) >= 0) v = buf.c_str();
    }
  }
  if (v != kFormat)
    throw IoError("EDM-CKP-027", f.string() + " is not an edm checkpoint (attribute format is not \"" +
                                     std::string(kFormat) + "\")");
  return v;
}

// A 1-D dataset of the checkpoint: its element class, and its declared length really stored
// before anything is allocated (a corrupt extent of 2⁴⁰ elements is refused, not allocated).
Handle open_vec(hid_t parent, const char* name, H5T_class_t cls, const std::filesystem::path& f, hsize_t* n) {
  Handle d(H5Dopen2(parent, name, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("checkpoint lacks ") + name, f);
  Handle sp(H5Dget_space(d.get()), H5Sclose);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  if (!sp.valid() || !type.valid() || H5Sget_simple_extent_ndims(sp.get()) != 1 || H5Tget_class(type.get()) != cls)
    throw IoError("EDM-CKP-021", f.string() + ": dataset " + name + " is not a 1-D " +
                                     (cls == H5T_FLOAT ? "floating-point" : "integer") + " dataset");
  H5Sget_simple_extent_dims(sp.get(), n, nullptr);
  h5::check_stored(d.get(), *n, "EDM-CKP-022", f.string() + ": dataset " + name);
  return d;
}

void put_string(hid_t parent, const char* name, const std::string& text, const std::filesystem::path& f) {
  hsize_t n = text.size();
  Handle sp(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle d(H5Dcreate2(parent, name, H5T_NATIVE_CHAR, sp.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail(std::string("cannot create ") + name, f);
  if (n) check(H5Dwrite(d.get(), H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), "cannot write", f);
}
std::string get_string(hid_t parent, const char* name, const std::filesystem::path& f) {
  hsize_t n = 0;
  Handle d = open_vec(parent, name, H5T_INTEGER, f, &n);
  std::string s(static_cast<std::size_t>(n), '\0');
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
  hsize_t n = 0;
  Handle d = open_vec(parent, name, H5Tget_class(type), f, &n);
  std::vector<T> v(static_cast<std::size_t>(n));
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

// The layout keys as text, one "key=value" a line.
std::string layout_text(const RawCubes::LayoutKeys& keys) {
  std::string t;
  for (const auto& [k, v] : keys) t += k + "=" + v + "\n";
  return t;
}

std::string cube_name(std::size_t device, int bucket) {
  return "cube_d" + std::to_string(device) + "_b" + std::to_string(bucket);
}

}  // namespace

namespace {

// The stored campaign's own check: a resume runs the electrons after the stop with the campaign the
// checkpoint holds, so an edit of it (a0, say) made the run's two halves of two campaigns, and the
// electrons' input digest (initial states only) did not see it (hostile review). FNV-1a of the
// campaign text and its provenance; against damage and edits by hand, not against a forger.
std::uint64_t campaign_digest(const std::string& text, const std::string& provenance) {
  const std::uint64_t h = detail::fnv1a(provenance, detail::fnv1a(text));
  return h == 0 ? 1 : h;
}

// write_checkpoint's steps, in file order.

// The format, the run, the campaign and the scalars: what `edm resume` reads first.
void write_header(hid_t root, const CheckpointState& st, const RawCubes& acc, const std::filesystem::path& partial) {
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
  if (!st.campaign_provenance.empty()) put_string(root, "campaign_provenance", st.campaign_provenance, partial);
  put_attr_u64(root, "campaign_digest", campaign_digest(st.campaign_text, st.campaign_provenance));
  put_attr_u64(root, "next_electron", st.next_electron);
  put_attr_u64(root, "batches_done", st.batches_done);
  put_attr_u64(root, "cube_saved", st.cube ? 1 : 0);
  put_attr_u64(root, "ranks", st.ranks);
  put_attr_u64(root, "generation", st.generation);
  put_attr_i64(root, "checkpoint_every", st.checkpoint_every);
  if (st.input_digest) put_attr_u64(root, "input_digest", st.input_digest);
  if (st.passes > 1) {  // a screen in passes: which pass's cube, on which rows
    put_attr_u64(root, "pass", st.pass);
    put_attr_u64(root, "passes", st.passes);
    put_attr_u64(root, "pass_row0", std::uint64_t(st.pass_row0));
    put_attr_u64(root, "pass_row1", std::uint64_t(st.pass_row1));
  }
  if (std::isfinite(st.window_t0) && std::isfinite(st.window_dt)) {
    put_attr_f64(root, "window_t0", st.window_t0);
    put_attr_f64(root, "window_dt", st.window_dt);
  }
  if (!st.tuning.empty()) {
    std::string text;
    for (const TuningSpan& t : st.tuning) text += std::to_string(t.first_electron) + "\t" + t.clblast + "\n";
    put_string(root, "clblast_tuning", text, partial);
  }
  put_attr_u64(root, "devices", acc.devices());
  // The raw cube is in the device layout, which depends on the pixel order (and is the same on
  // every device of a run): its fingerprint, checked on resume, and the keys it comes from, so that
  // a mismatch names the key.
  put_attr_u64(root, "layout_hash", acc.layout_hash());
  put_string(root, "layout_keys", layout_text(acc.layout_keys()), partial);
  put_attr_u64(root, "knots_total", st.knots_total);
  put_attr_u64(root, "spline_bytes_per_electron", st.spline_bytes_per_electron);
  put_attr_f64(root, "trajectories", st.trajectories);
  put_attr_f64(root, "trajectories_overlapped", st.trajectories_overlapped);
  put_attr_f64(root, "kernel", st.kernel);
}

// The γ trace: the fixed-point sums as two 64-bit halves, the extrema, the counts and the drains.
void write_gamma(hid_t root, const GammaTrace& gamma, const std::filesystem::path& partial) {
  put_attr_f64(root, "gamma_dtau", gamma.dtau);
  std::vector<std::uint64_t> lo, hi;
  for (auto v : gamma.sum) {
    lo.push_back(GammaTrace::low_half(v));
    hi.push_back(GammaTrace::high_half(v));
  }
  put_vec(root, "gamma_sum_lo", lo, H5T_NATIVE_UINT64, partial);
  put_vec(root, "gamma_sum_hi", hi, H5T_NATIVE_UINT64, partial);
  put_vec(root, "gamma_min", gamma.min, H5T_NATIVE_DOUBLE, partial);
  put_vec(root, "gamma_max", gamma.max, H5T_NATIVE_DOUBLE, partial);
  put_vec(root, "gamma_count", gamma.count, H5T_NATIVE_UINT64, partial);
  std::vector<std::uint64_t> de;
  std::vector<double> dv;
  for (auto& [e, d] : gamma.drain) {
    de.push_back(e);
    dv.push_back(d);
  }
  put_vec(root, "drain_electron", de, H5T_NATIVE_UINT64, partial);
  put_vec(root, "drain", dv, H5T_NATIVE_DOUBLE, partial);
}

// The coverage records: 4 values each in "coverage" (the layout since the first checkpoints), the
// burst's part in "coverage_burst" (first, last, missed, cut), which older checkpoints lack.
void write_coverage(hid_t root, const std::vector<CoverageRecord>& records, const std::filesystem::path& partial) {
  std::vector<double> cov, burst;
  for (const auto& r : records) {
    cov.insert(cov.end(), {double(r.electron), r.margin_start, r.margin_end, double(r.dropped_slots)});
    // The cut value carries two flags: 1 the burst cut, 2 the emission span cut (coverage.hpp).
    burst.insert(burst.end(), {r.burst_first, r.burst_last, double(r.burst_missed),
                               double(r.burst_cut) + 2.0 * double(r.emission_cut)});
  }
  put_vec(root, "coverage", cov, H5T_NATIVE_DOUBLE, partial);
  put_vec(root, "coverage_burst", burst, H5T_NATIVE_DOUBLE, partial);
}

// The partial cubes, chunk by chunk straight from the devices (no whole-cube host copy).
void write_cubes(hid_t root, RawCubes& acc, const std::filesystem::path& partial) {
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
}

// FNV-1a of a vector's bytes as they are written and read back (native types both ways).
template <class T>
std::uint64_t bytes_digest(const std::vector<T>& v) {
  return detail::fnv1a(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

// A /spectra dataset with its digest (attribute fnv1a): the sums are checked on resume like the
// campaign is, so that an edited electron count or weight sum is refused rather than summed on.
template <class T>
void put_spectra_vec(hid_t g, const std::string& name, const std::vector<T>& v, hid_t type,
                     const std::filesystem::path& partial) {
  put_vec(g, name.c_str(), v, type, partial);
  Handle d(H5Dopen2(g, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) io_fail("cannot reopen the dataset /spectra/" + name, partial);
  put_attr_u64(d.get(), "fnv1a", bytes_digest(v));
}

// [spectra]: each device's direct-spectra sums in the group /spectra (share/docs/outputs.md
// "Checkpoints"): the grid as attributes, the sums of device d in coherent_d<d> (6 doubles a bin:
// x, y, z as re, im) and incoherent_d<d>, and per-device counters indexed by device. Nothing for a
// run without them, so their checkpoints are as before.
void write_spectra_sums(hid_t root, const std::vector<SpectraSums>& spectra, const std::filesystem::path& partial) {
  if (spectra.empty()) return;
  Handle g(H5Gcreate2(root, "spectra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) io_fail("cannot create the group spectra", partial);
  put_attr_u64(g.get(), "devices", spectra.size());
  put_attr_u64(g.get(), "directions", spectra.front().directions);
  put_attr_u64(g.get(), "frequencies", spectra.front().frequencies);
  // The method that summed each device's sums, "auto" resolved: a resume continues with it
  // (read_checkpoint_spectra_methods), never with what auto resolves to on its own devices.
  std::string methods;
  for (const SpectraSums& s : spectra) methods += (methods.empty() ? "" : ",") + std::string(name(s.method));
  h5::write_attr(g.get(), "methods", methods);
  std::vector<std::uint64_t> electrons, launches;
  std::vector<double> weight_sum, kernel_seconds;
  for (std::size_t d = 0; d < spectra.size(); ++d) {
    const SpectraSums& s = spectra[d];
    put_spectra_vec(g.get(), "coherent_d" + std::to_string(d), s.coherent, H5T_NATIVE_DOUBLE, partial);
    put_spectra_vec(g.get(), "incoherent_d" + std::to_string(d), s.incoherent, H5T_NATIVE_DOUBLE, partial);
    electrons.push_back(s.electrons);
    launches.push_back(s.launches);
    weight_sum.push_back(s.weight_sum);
    kernel_seconds.push_back(s.kernel_seconds);
  }
  put_spectra_vec(g.get(), "electrons", electrons, H5T_NATIVE_UINT64, partial);
  put_spectra_vec(g.get(), "launches", launches, H5T_NATIVE_UINT64, partial);
  put_spectra_vec(g.get(), "weight_sum", weight_sum, H5T_NATIVE_DOUBLE, partial);
  put_spectra_vec(g.get(), "kernel_seconds", kernel_seconds, H5T_NATIVE_DOUBLE, partial);
}

// Durable before it replaces the previous checkpoint (power loss keeps one of the two), then the
// rename that commits it.
void commit_checkpoint(const std::filesystem::path& partial, const std::filesystem::path& file) {
  const int fd = ::open(partial.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // never a planted link or FIFO
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code ec;
  std::filesystem::rename(partial, file, ec);
  if (ec) io_fail("cannot rename the checkpoint: " + ec.message(), partial);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const CheckpointState& st, RawCubes& acc) {
  h5::silence();
  const auto partial = RunFolder::staging(file);
  move_aside(partial);  // not this writer's: an earlier write cut short is kept, never truncated
  try {
    Handle f(H5Fcreate(partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) io_fail("cannot create the checkpoint", partial);
    write_header(f.get(), st, acc, partial);
    write_gamma(f.get(), st.gamma, partial);
    write_coverage(f.get(), st.coverage, partial);
    // No electron done: the cube is all zeros (and so are the spectra sums), which a resume
    // starts from without reading them, so they are not written (a stop in the first solve of a
    // large cube would otherwise fill the disk with zeros).
    if (st.cube) {
      write_cubes(f.get(), acc, partial);
      write_spectra_sums(f.get(), st.spectra, partial);
    }
    check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), "cannot flush the checkpoint (disk full?)", partial);
    if (H5Fclose(f.release()) < 0) io_fail("cannot close the checkpoint (disk full?)", partial);
    commit_checkpoint(partial, file);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw;
  }
}

namespace {

// The γ trace and the coverage records: vectors of one length each (the writer of the field file
// indexes them together), record fields that convert to electron indices without UB.
void read_gamma_and_coverage(hid_t root, CheckpointState& st, const std::filesystem::path& file) {
  auto fail = [&](const std::string& what) { throw IoError("EDM-CKP-023", file.string() + ": " + what); };
  st.gamma.dtau = get_attr_f64(root, "gamma_dtau", file);
  const auto lo = get_vec<std::uint64_t>(root, "gamma_sum_lo", H5T_NATIVE_UINT64, file);
  const auto hi = get_vec<std::uint64_t>(root, "gamma_sum_hi", H5T_NATIVE_UINT64, file);
  st.gamma.min = get_vec<double>(root, "gamma_min", H5T_NATIVE_DOUBLE, file);
  st.gamma.max = get_vec<double>(root, "gamma_max", H5T_NATIVE_DOUBLE, file);
  st.gamma.count = get_vec<std::uint64_t>(root, "gamma_count", H5T_NATIVE_UINT64, file);
  const std::size_t n = st.gamma.count.size();
  if (lo.size() != n || hi.size() != n || st.gamma.min.size() != n || st.gamma.max.size() != n)
    fail("the γ trace datasets (gamma_sum_lo/hi, gamma_min, gamma_max, gamma_count) differ in length");
  if (n > 0 && !(st.gamma.dtau > 0)) fail("attribute gamma_dtau is not positive");
  st.gamma.sum.clear();
  for (std::size_t i = 0; i < n; ++i) st.gamma.sum.push_back(GammaTrace::from_halves(hi[i], lo[i]));
  const auto de = get_vec<std::uint64_t>(root, "drain_electron", H5T_NATIVE_UINT64, file);
  const auto dv = get_vec<double>(root, "drain", H5T_NATIVE_DOUBLE, file);
  if (de.size() != dv.size()) fail("datasets drain_electron and drain differ in length");
  for (std::size_t i = 0; i < de.size(); ++i) st.gamma.drain.push_back({de[i], dv[i]});
  const auto cov = get_vec<double>(root, "coverage", H5T_NATIVE_DOUBLE, file);
  if (cov.size() % 4 != 0) fail("dataset coverage does not hold whole records of 4 values");
  for (std::size_t i = 0; i < cov.size(); i += 4) {
    // Electron index and dropped slots are stored as doubles: whole, non-negative, exact (< 2⁵³).
    for (std::size_t k : {i, i + 3})
      if (!(cov[k] >= 0 && cov[k] < 9007199254740992.0 && cov[k] == std::floor(cov[k])))
        fail("dataset coverage holds a record whose electron or slot count is not a whole number");
    st.coverage.push_back({std::uint64_t(cov[i]), cov[i + 1], cov[i + 2], std::uint64_t(cov[i + 3])});
  }
  // The burst's part of each record (checkpoints before it: unknown, NaN).
  if (H5Lexists(root, "coverage_burst", H5P_DEFAULT) <= 0) return;
  const auto burst = get_vec<double>(root, "coverage_burst", H5T_NATIVE_DOUBLE, file);
  if (burst.size() != cov.size()) fail("datasets coverage and coverage_burst differ in length");
  for (std::size_t i = 0; i < st.coverage.size(); ++i) {
    auto& r = st.coverage[i];
    r.burst_first = burst[4 * i];
    r.burst_last = burst[4 * i + 1];
    r.burst_missed = burst[4 * i + 2] != 0;
    r.burst_cut = int(burst[4 * i + 3]) & 1;
    r.emission_cut = int(burst[4 * i + 3]) & 2;
  }
}

// The dataset clblast_tuning: one span a line, "first_electron<TAB>record", first electrons rising.
std::vector<TuningSpan> read_tuning(hid_t root, const std::filesystem::path& file) {
  std::vector<TuningSpan> out;
  std::istringstream lines(get_string(root, "clblast_tuning", file));
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    const std::string first = tab == std::string::npos ? "" : line.substr(0, tab);
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos || first.size() > 19 ||
        tab + 1 >= line.size() || (!out.empty() && std::stoull(first) <= out.back().first_electron))
      throw IoError("EDM-CKP-082", file.string() + ": dataset clblast_tuning holds \"" + line +
                                       "\", not \"FIRST_ELECTRON<TAB>RECORD\" with first electrons rising; the "
                                       "checkpoint is damaged: run the campaign again");
    out.push_back({std::stoull(first), line.substr(tab + 1)});
  }
  return out;
}

// The first layout key whose saved value differs from this run's, as "key = saved in the
// checkpoint, now in this run"; empty when none does or the checkpoint predates the keys.
std::string differing_layout_key(hid_t root, const RawCubes& acc, const std::filesystem::path& file) {
  if (H5Lexists(root, "layout_keys", H5P_DEFAULT) <= 0) return "";
  std::map<std::string, std::string> saved;
  std::istringstream lines(get_string(root, "layout_keys", file));
  for (std::string line; std::getline(lines, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) saved[line.substr(0, eq)] = line.substr(eq + 1);
  for (const auto& [key, value] : acc.layout_keys())
    if (const auto it = saved.find(key); it != saved.end() && it->second != value)
      return key + " = " + it->second + " in the checkpoint, " + value + " in this run";
  return "";
}

// The pass of a screen in passes (CheckpointState::pass): absent, the first of one; all four or none.
void read_pass(hid_t root, CheckpointState& st, const std::filesystem::path& file) {
  if (H5Aexists(root, "passes") <= 0) return;
  const std::uint64_t pass = get_attr_u64(root, "pass", file), passes = get_attr_u64(root, "passes", file);
  const std::uint64_t y0 = get_attr_u64(root, "pass_row0", file), y1 = get_attr_u64(root, "pass_row1", file);
  if (passes < 2 || passes > (1u << 24) || pass >= passes || y0 >= y1 || y1 > (1u << 30))
    throw IoError("EDM-CKP-023", file.string() + ": attributes pass = " + std::to_string(pass) + " of passes = " +
                                     std::to_string(passes) + ", rows " + std::to_string(y0) + " to " +
                                     std::to_string(y1) + " are impossible");
  st.pass = std::uint32_t(pass);
  st.passes = std::uint32_t(passes);
  st.pass_row0 = std::int32_t(y0);
  st.pass_row1 = std::int32_t(y1);
}

// Whether the checkpoint holds its cubes: the attribute cube_saved (0 or 1); absent in checkpoints
// written before it, which always hold them.
bool read_cube_saved(hid_t root, const std::filesystem::path& file) {
  if (H5Aexists(root, "cube_saved") <= 0) return true;
  const std::uint64_t v = get_attr_u64(root, "cube_saved", file);
  if (v > 1) throw IoError("EDM-CKP-070", file.string() + ": attribute cube_saved = " + std::to_string(v) + " is neither 0 nor 1");
  return v == 1;
}

// A checkpoint without a cube is one of no electron done: anything that says otherwise, or a cube
// or spectra dataset it should not have, means it is damaged or was altered.
void check_no_cube_state(hid_t root, const CheckpointState& st, const std::filesystem::path& file) {
  auto fail = [&](const std::string& what) {
    throw IoError("EDM-CKP-070", file.string() + " holds no cube (cube_saved = 0: no electron done), but " + what +
                                     "; the checkpoint is damaged");
  };
  if (st.batches_done != 0) fail("batches_done = " + std::to_string(st.batches_done));
  // A later pass's γ trace, coverage and knots are the first pass's, of every electron.
  if (st.pass == 0) {
    if (st.knots_total != 0) fail("knots_total = " + std::to_string(st.knots_total));
    for (const auto c : st.gamma.count)
      if (c != 0) fail("gamma_count counts electrons");
    if (!st.gamma.drain.empty()) fail("it records drains");
    if (!st.coverage.empty()) fail("it records coverage of electron " + std::to_string(st.coverage.front().electron));
  }
  if (H5Lexists(root, cube_name(0, 0).c_str(), H5P_DEFAULT) > 0) fail("it holds the dataset " + cube_name(0, 0));
  if (H5Lexists(root, "spectra", H5P_DEFAULT) > 0) fail("it holds the group /spectra");
}

}  // namespace

bool is_rank_checkpoint_name(const std::string& name) {
  // checkpoint.g<digits>.r<digits>.h5
  const std::string head = "checkpoint.g", tail = ".h5";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
  const auto dot = mid.find(".r");
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  };
  return dot != std::string::npos && digits(mid.substr(0, dot)) && digits(mid.substr(dot + 2));
}

CheckpointCommit read_checkpoint_commit(const std::filesystem::path& file) {
  h5::silence();
  h5::refuse_special_file(file);  // a FIFO would block the open for ever
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  CheckpointCommit c;
  if (H5Aexists(f.get(), "ranks") > 0) c.ranks = std::uint32_t(get_attr_u64(f.get(), "ranks", file));
  if (H5Aexists(f.get(), "generation") > 0) c.generation = get_attr_u64(f.get(), "generation", file);
  return c;
}

CheckpointState read_checkpoint_state(const std::filesystem::path& file) {
  h5::silence();
  if (!std::filesystem::exists(file)) throw IoError("EDM-CKP-001", "no checkpoint at " + file.string());
  h5::refuse_special_file(file);
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  hid_t root = f.get();
  get_format(root, file);
  CheckpointState st;
  st.run_id = get_string(root, "run_id", file);
  // The run id is what keeps runs apart (field.h5, spectrum.h5 and run.toml must agree on it), and a
  // resume hands it on to all three: an empty one would make a run that every run-id check accepts.
  // edm writes "yyyymmddThhmmssZ-hex" (make_run_id), so anything empty or beyond printable ASCII
  // without spaces is damage.
  const bool printable = std::all_of(st.run_id.begin(), st.run_id.end(),
                                     [](char c) { return c > ' ' && c < 0x7f; });
  if (st.run_id.empty() || !printable)
    throw IoError("EDM-CKP-029", file.string() + ": dataset run_id " +
                                     (st.run_id.empty() ? std::string("is empty")
                                                        : "holds characters that are no run id (" +
                                                              std::to_string(st.run_id.size()) + " bytes)") +
                                     "; a resume would write a run without its id");
  st.campaign_text = get_string(root, "campaign", file);
  try {
    (void)toml::parse(st.campaign_text, file.string() + " [campaign]");
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw IoError("EDM-CKP-028", file.string() + ": dataset campaign is not TOML (line " + std::to_string(b.line) +
                                     ", column " + std::to_string(b.column) + ": " + std::string(e.description()) + ")");
  }
  if (H5Lexists(root, "campaign_provenance", H5P_DEFAULT) > 0) {
    st.campaign_provenance = get_string(root, "campaign_provenance", file);
    Campaign probe;  // checked here, so that a damaged one is refused before anything runs
    restore_provenance(probe, st.campaign_provenance, file.string() + ": dataset campaign_provenance");
  }
  // Checkpoints of an edm before the digest have none: read as they are.
  if (H5Aexists(root, "campaign_digest") > 0 &&
      get_attr_u64(root, "campaign_digest", file) != campaign_digest(st.campaign_text, st.campaign_provenance))
    throw IoError("EDM-CKP-084", file.string() + ": dataset campaign (or campaign_provenance) is not the one edm "
                                     "wrote there (its digest, attribute campaign_digest, differs): edited or "
                                     "damaged, a resume would sum the electrons after the stop with another campaign "
                                     "than those before it; put it back, or start again with edm run --overwrite");
  st.next_electron = get_attr_u64(root, "next_electron", file);
  st.batches_done = get_attr_u64(root, "batches_done", file);
  const std::uint64_t devices = get_attr_u64(root, "devices", file);
  if (devices < 1 || devices > 65536)
    throw IoError("EDM-CKP-023", file.string() + ": attribute devices = " + std::to_string(devices) + " is impossible");
  st.devices = std::uint32_t(devices);
  st.knots_total = get_attr_u64(root, "knots_total", file);
  st.spline_bytes_per_electron = get_attr_u64(root, "spline_bytes_per_electron", file);
  st.trajectories = get_attr_f64(root, "trajectories", file);
  st.trajectories_overlapped = get_attr_f64(root, "trajectories_overlapped", file);
  st.kernel = get_attr_f64(root, "kernel", file);
  if (H5Aexists(root, "checkpoint_every") > 0) st.checkpoint_every = get_attr_i64(root, "checkpoint_every", file);
  if (H5Aexists(root, "input_digest") > 0) st.input_digest = get_attr_u64(root, "input_digest", file);
  // The window (a signed first sample, a spacing): read as they are; a damaged one (NaN, or another
  // value) is refused where the resume compares it with the campaign's window (EDM-CKP-085).
  if (H5Aexists(root, "window_t0") > 0 && H5Aexists(root, "window_dt") > 0) {
    st.window_t0 = h5::attr_double(root, "window_t0").value_or(NAN);
    st.window_dt = h5::attr_double(root, "window_dt").value_or(NAN);
  }
  if (H5Lexists(root, "clblast_tuning", H5P_DEFAULT) > 0) st.tuning = read_tuning(root, file);
  read_pass(root, st, file);
  read_gamma_and_coverage(root, st, file);
  st.cube = read_cube_saved(root, file);
  if (!st.cube) check_no_cube_state(root, st, file);
  return st;
}

void check_resume_state(const CheckpointState& st, std::uint64_t electrons, const std::filesystem::path& file) {
  auto fail = [&](const std::string& what) {
    throw IoError("EDM-CKP-024", file.string() + ": " + what + " (the campaign has " + std::to_string(electrons) +
                                     " electrons); the checkpoint is damaged or from another run");
  };
  if (st.next_electron > electrons)
    fail("next_electron = " + std::to_string(st.next_electron) + " is past the last electron");
  if (st.batches_done > st.next_electron)
    fail("batches_done = " + std::to_string(st.batches_done) + " exceeds the " + std::to_string(st.next_electron) +
         " electrons done");
  // A later pass's γ trace and coverage are of every electron (the first pass's).
  const std::uint64_t done = st.pass > 0 ? electrons : st.next_electron;
  for (const auto c : st.gamma.count)
    if (c > done) fail("gamma_count counts more electrons than the " + std::to_string(done) + " done");
  for (const auto& [e, d] : st.gamma.drain)
    if (e >= done) fail("drain_electron names electron " + std::to_string(e) + ", not yet done");
  for (const auto& r : st.coverage)
    if (r.electron >= done) fail("coverage names electron " + std::to_string(r.electron) + ", not yet done");
}

bool load_checkpoint_cube(const std::filesystem::path& file, RawCubes& acc) {
  h5::silence();
  h5::refuse_special_file(file);  // a FIFO would block the open for ever
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  get_format(f.get(), file);
  const std::uint64_t devices = get_attr_u64(f.get(), "devices", file);
  if (devices != acc.devices())
    throw IoError("EDM-CKP-002", file.string() + " was written with " + std::to_string(devices) +
                                     " device(s); resume with the same device count (--device)");
  // Checkpoints from before the pixel orders (no fingerprint) were in tile order on GPUs and row
  // order on CPUs; rather than guess, they are refused.
  if (const std::string key = differing_layout_key(f.get(), acc, file); !key.empty())
    throw IoError("EDM-CKP-004", file.string() + " was written with another layout of the cube (" + key +
                                     "); resume with the settings it was written with");
  if (H5Aexists(f.get(), "layout_hash") <= 0 || get_attr_u64(f.get(), "layout_hash", file) != acc.layout_hash())
    throw IoError("EDM-CKP-004", file.string() + " was written with another device layout of the cube "
                                 "(accumulator.pixel_order / tile_width / work_group differ); resume with the "
                                 "settings it was written with");
  if (!read_cube_saved(f.get(), file)) return false;  // no electron done: the fresh zero cube stands
  for (std::size_t d = 0; d < acc.devices(); ++d) {
    std::vector<Handle> sets;
    for (int b = 0; b < acc.buckets(); ++b) {
      const std::string name = cube_name(d, b);
      Handle set(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
      if (!set.valid()) io_fail("checkpoint lacks " + name, file);
      Handle sp(H5Dget_space(set.get()), H5Sclose);
      Handle type(H5Dget_type(set.get()), H5Tclose);
      if (H5Sget_simple_extent_ndims(sp.get()) != 1 ||
          std::uint64_t(H5Sget_simple_extent_npoints(sp.get())) != acc.doubles_per_bucket())
        throw IoError("EDM-CKP-003", file.string() + ": the saved cube does not match this screen and mode");
      if (H5Tget_class(type.get()) != H5T_FLOAT)
        throw IoError("EDM-CKP-021", file.string() + ": cube dataset " + name + " is not floating-point");
      // A cube dataset that was never written reads as zeros: a silent loss of every electron so far.
      h5::check_stored(set.get(), acc.doubles_per_bucket(), "EDM-CKP-025", file.string() + ": cube dataset " + name);
      sets.push_back(std::move(set));
    }
    acc.upload(d, [&](int b, std::uint64_t off, double* data, std::size_t cnt) {
      const RawChunk c(sets[std::size_t(b)].get(), off, cnt);
      check(H5Dread(sets[std::size_t(b)].get(), H5T_NATIVE_DOUBLE, c.mem_space.get(), c.file_space.get(),
                    H5P_DEFAULT, data),
            "cannot read the checkpoint cube", file);
      for (std::size_t i = 0; i < cnt; ++i)
        if (!std::isfinite(data[i]))
          throw IoError("EDM-CKP-026", file.string() + ": cube dataset " + cube_name(d, b) + " holds a non-finite value at " +
                                           std::to_string(off + i));
    });
  }
  return true;
}

// ---- the direct spectra of a checkpoint (load_checkpoint_spectra) --------------------------------

namespace {

// A 1-D dataset /spectra/<name> of `n` elements of class `cls`, really stored; its values.
template <class T>
std::vector<T> read_spectra_vec(hid_t g, const std::string& name, H5T_class_t cls, hid_t mem, std::size_t n,
                                const std::filesystem::path& file) {
  const std::string where = file.string() + ": dataset /spectra/" + name;
  if (H5Lexists(g, name.c_str(), H5P_DEFAULT) <= 0)
    throw IoError("EDM-CKP-062", where + " is missing; the checkpoint is damaged");
  Handle d(H5Dopen2(g, name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle sp(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
  Handle type(d.valid() ? H5Dget_type(d.get()) : -1, H5Tclose);
  if (!sp.valid() || !type.valid() || H5Sget_simple_extent_ndims(sp.get()) != 1 || H5Tget_class(type.get()) != cls ||
      std::uint64_t(H5Sget_simple_extent_npoints(sp.get())) != n)
    throw IoError("EDM-CKP-062", where + " is not a 1-D " + (cls == H5T_FLOAT ? "floating-point" : "integer") +
                                     " dataset of " + std::to_string(n) + " elements (this run's spectra grid)");
  h5::check_stored(d.get(), n, "EDM-CKP-063", where);
  std::vector<T> v(n);
  if (n > 0 && H5Dread(d.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw IoError("EDM-CKP-062", where + " cannot be read");
  if constexpr (std::is_floating_point_v<T>)
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(v[i]))
        throw IoError("EDM-CKP-064", where + " holds a value that is not finite at " + std::to_string(i));
  // Checkpoints of an edm before the digest have none: read as they are.
  if (H5Aexists(d.get(), "fnv1a") > 0 && get_attr_u64(d.get(), "fnv1a", file) != bytes_digest(v))
    throw IoError("EDM-CKP-086", where + " is not what edm wrote there (its digest, attribute fnv1a, differs): "
                                 "edited or damaged, a resume would add the electrons after the stop to wrong "
                                 "sums; run the campaign again");
  return v;
}

}  // namespace

std::vector<SpectraSums> load_checkpoint_spectra(const std::filesystem::path& file, std::size_t devices,
                                                 std::size_t directions, std::size_t frequencies) {
  h5::silence();
  h5::refuse_special_file(file);  // a FIFO would block the open for ever
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  get_format(f.get(), file);
  if (H5Lexists(f.get(), "spectra", H5P_DEFAULT) <= 0)
    throw IoError("EDM-CKP-060", file.string() + " lacks the group /spectra: the run has [spectra] enabled, but the "
                                 "checkpoint holds no direct-spectra sums (written by an older edm, or damaged)");
  Handle g(H5Gopen2(f.get(), "spectra", H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw IoError("EDM-CKP-060", file.string() + ": /spectra is not a group");
  const std::uint64_t nd = get_attr_u64(g.get(), "devices", file), ndir = get_attr_u64(g.get(), "directions", file),
                      nw = get_attr_u64(g.get(), "frequencies", file);
  if (nd != devices || ndir != directions || nw != frequencies)
    throw IoError("EDM-CKP-061", file.string() + ": group /spectra holds " + std::to_string(nd) + " device(s) × " +
                                     std::to_string(ndir) + " directions × " + std::to_string(nw) +
                                     " frequencies, this run " + std::to_string(devices) + " × " +
                                     std::to_string(directions) + " × " + std::to_string(frequencies) +
                                     "; resume with the settings it was written with");
  const std::size_t bins = directions * frequencies;
  const auto electrons = read_spectra_vec<std::uint64_t>(g.get(), "electrons", H5T_INTEGER, H5T_NATIVE_UINT64, devices, file);
  const auto launches = read_spectra_vec<std::uint64_t>(g.get(), "launches", H5T_INTEGER, H5T_NATIVE_UINT64, devices, file);
  const auto weight_sum = read_spectra_vec<double>(g.get(), "weight_sum", H5T_FLOAT, H5T_NATIVE_DOUBLE, devices, file);
  const auto kernel = read_spectra_vec<double>(g.get(), "kernel_seconds", H5T_FLOAT, H5T_NATIVE_DOUBLE, devices, file);
  std::vector<SpectraSums> out(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    SpectraSums& s = out[d];
    s.directions = directions;
    s.frequencies = frequencies;
    s.coherent = read_spectra_vec<double>(g.get(), "coherent_d" + std::to_string(d), H5T_FLOAT, H5T_NATIVE_DOUBLE,
                                          6 * bins, file);
    s.incoherent = read_spectra_vec<double>(g.get(), "incoherent_d" + std::to_string(d), H5T_FLOAT,
                                            H5T_NATIVE_DOUBLE, bins, file);
    s.electrons = electrons[d];
    s.launches = launches[d];
    s.weight_sum = weight_sum[d];
    s.kernel_seconds = kernel[d];
  }
  return out;
}

std::vector<SpectraMethod> read_checkpoint_spectra_methods(const std::filesystem::path& file, std::size_t devices) {
  h5::silence();
  h5::refuse_special_file(file);  // a FIFO would block the open for ever
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) io_fail("cannot open the checkpoint", file);
  if (H5Lexists(f.get(), "spectra", H5P_DEFAULT) <= 0) return {};
  Handle g(H5Gopen2(f.get(), "spectra", H5P_DEFAULT), H5Gclose);
  if (!g.valid()) return {};
  // Absent: an edm before the record. Not a readable string: EDM-IO-072 (h5::attr_string).
  const std::optional<std::string> record = h5::attr_string(g.get(), "methods");
  if (!record) return {};
  const std::string& text = *record;
  const auto refuse = [&](const std::string& what) -> std::vector<SpectraMethod> {
    throw IoError("EDM-CKP-080", file.string() + ": attribute /spectra/methods " + what +
                                     "; the checkpoint is damaged: run the campaign again");
  };
  std::vector<SpectraMethod> out;
  std::istringstream words(text);
  for (std::string w; std::getline(words, w, ',');) {
    SpectraMethod m = SpectraMethod::Auto;
    for (const SpectraMethod c : {SpectraMethod::Direct, SpectraMethod::Fft, SpectraMethod::Dft})
      if (w == name(c)) m = c;
    if (m == SpectraMethod::Auto) return refuse("= \"" + text + "\" names no method (direct, fft, dft) in \"" + w + "\"");
    out.push_back(m);
  }
  if (out.size() != devices)
    return refuse("= \"" + text + "\" names " + std::to_string(out.size()) + " method(s) for " +
                  std::to_string(devices) + " device(s)");
  return out;
}

std::string provenance_text(const Campaign& campaign) {
  toml::table origin;
  for (const auto& [key, o] : campaign.origins) origin.insert(key, origin_name(o));
  toml::table t{{"file", campaign.file.string()}, {"origin", std::move(origin)}};
  std::ostringstream os;
  os << t;
  return os.str();
}

void restore_provenance(Campaign& campaign, const std::string& text, const std::string& where) {
  const auto fail = [&](const std::string& why) {
    throw IoError("EDM-CKP-083", where + ": " + why + "; the checkpoint is damaged: run the campaign again");
  };
  toml::table t;
  try {
    t = toml::parse(text);
  } catch (const toml::parse_error& e) {
    fail("not TOML (" + std::string(e.description()) + ")");
  }
  const auto file = t["file"].value<std::string>();
  const toml::table* origin = t["origin"].as_table();
  if (!file || !origin) fail("no file or no origin table");
  std::map<std::string, Origin> restored;
  for (const auto& [key, v] : *origin) {
    const auto name = v.value<std::string>();
    std::optional<Origin> o;
    for (Origin c : {Origin::Default, Origin::File, Origin::Environment, Origin::CommandLine})
      if (name && *name == origin_name(c)) o = c;
    if (!o) fail("origin of " + std::string(key.str()) + " is not default, file, environment or command line");
    restored[std::string(key.str())] = *o;
  }
  for (const auto& [key, o] : restored)
    if (key != "run.output") campaign.origins[key] = o;
  campaign.file = *file;
}

}  // namespace edm
