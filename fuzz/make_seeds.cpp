// Writes the HDF5 seeds of fuzz/corpus/checkpoint/ and fuzz/corpus/field/ with edm's own writers
// (write_checkpoint, FieldWriter), so that the seeds are the files edm really writes, plus damaged
// copies made with the HDF5 C API (a string where a number belongs, a declared size never stored,
// a component of another shape, a NaN in a cube). Built with the tests (so it keeps compiling) but
// not run by them: run it by hand when the layouts change, then commit the seeds:
//   build/fuzz/fuzz_make_seeds fuzz/corpus
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/checkpoint.hpp"
#include "edm/units.hpp"
#include "edm/writer.hpp"
#include "fuzz_host_cubes.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "make_seeds: %s failed\n", what.c_str());
    std::exit(1);
  }
}

// ---- damage (HDF5 C API) ----

struct File {
  hid_t id;
  explicit File(const fs::path& p) : id(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) { check(id >= 0, "open " + p.string()); }
  ~File() { H5Fclose(id); }
};

void set_attr_string(const fs::path& p, const char* name, const std::string& v, hsize_t n = 1) {
  File f(p);
  if (H5Aexists(f.id, name) > 0) H5Adelete(f.id, name);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, v.size() + 1);
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  std::string buf;
  for (hsize_t i = 0; i < n; ++i) buf += v + '\0';
  hid_t a = H5Acreate2(f.id, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  check(H5Awrite(a, t, buf.data()) >= 0, std::string("attribute ") + name);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

// Replaces `path` by a float64 dataset of shape dims: written with `data`, or (no data) chunked
// and never written, so that a huge declared extent costs nothing in the file.
void replace_dataset(const fs::path& p, const std::string& path, const std::vector<hsize_t>& dims,
                     const double* data) {
  File f(p);
  if (H5Lexists(f.id, path.c_str(), H5P_DEFAULT) > 0) H5Ldelete(f.id, path.c_str(), H5P_DEFAULT);
  hid_t sp = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (!data) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    chunk.back() = std::min<hsize_t>(dims.back(), 64);
    H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
  }
  hid_t d = H5Dcreate2(f.id, path.c_str(), H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(d >= 0, "create " + path);
  if (data) check(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "write " + path);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(sp);
}

fs::path copy_as(const fs::path& from, const std::string& name) {
  const fs::path to = from.parent_path() / name;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  return to;
}

// ---- checkpoints ----

void write_checkpoints(const fs::path& dir) {
  fs::create_directories(dir);
  CheckpointState st;
  st.run_id = "20260101T000000Z-5eed00";
  st.campaign_text = "[run]\nscenario = 'inverse_thomson'\n\n[electrons]\ncount = 4\n";
  st.next_electron = 2;
  st.batches_done = 2;
  st.trajectories = 0.25;
  st.kernel = 0.5;
  st.knots_total = 200;
  st.spline_bytes_per_electron = 19200;
  st.gamma.dtau = 0.5;
  for (int j = 0; j < 6; ++j) {
    st.gamma.sum.push_back(GammaTrace::to_fixed(5.0 + 0.1 * j) + GammaTrace::to_fixed(5.0));
    st.gamma.min.push_back(5.0);
    st.gamma.max.push_back(5.0 + 0.1 * j);
    st.gamma.count.push_back(2);
  }
  st.gamma.drain = {{0, 0.01}, {1, 0.02}};
  st.coverage = {{0, 1.5, 2.5, 0}, {1, 1.25, 2.0, 3}};
  fuzz::HostCubes cubes;
  for (std::size_t i = 0; i < cubes.cube().size(); ++i) cubes.cube()[i] = std::sin(0.1 * double(i));
  const fs::path good = dir / "valid_state.h5";
  write_checkpoint(good, st, cubes);

  set_attr_string(copy_as(good, "invalid_string_next_electron.h5"), "next_electron", "1");
  replace_dataset(copy_as(good, "invalid_huge_gamma_min.h5"), "gamma_min", {1ull << 40}, nullptr);
  replace_dataset(copy_as(good, "invalid_unwritten_cube.h5"), "cube_d0_b1", {fuzz::kSeedCubeDoubles}, nullptr);
  std::vector<double> bad(fuzz::kSeedCubeDoubles, 1.0);
  bad[7] = std::nan("");
  replace_dataset(copy_as(good, "invalid_nan_cube.h5"), "cube_d0_b0", {bad.size()}, bad.data());
  const std::vector<double> longer(9, 5.0);
  replace_dataset(copy_as(good, "invalid_gamma_lengths.h5"), "gamma_max", {longer.size()}, longer.data());
}

// ---- field files ----

// A 3 × 2 screen of 32 samples (16 per laser period: the fundamental is well below Nyquist), 800 nm.
fs::path write_field(const fs::path& dir, Mode mode, const std::string& name) {
  const Normalization units = Normalization::from_wavelength(800e-9);
  Screen s;
  s.nx = 3;
  s.ny = 2;
  s.samples = 32;
  s.half_x = 1e-4 / units.length();
  s.half_y = 1e-4 / units.length();
  s.z = 0.05 / units.length();
  s.dt = 2 * M_PI / 16;
  FieldFileInfo info;
  info.run_id = "20260101T000000Z-5eed01";
  info.edm_version = "seed";
  info.scenario = "inverse_thomson";
  info.electrons = 4;
  info.mode = mode;
  info.author = "edm fuzz seeds";
  info.date = "2026-01-01 00:00:00 +0000";
  info.machine = "seed";
  const fs::path path = dir / name;
  FieldWriter w(path, s, units, info);
  const std::size_t n = std::size_t(s.nx) * s.ny * s.samples;
  std::vector<double> v(n);
  for (int b = 0; b < bucket_count(mode); ++b)
    for (int c = 0; c < 3; ++c) {
      for (std::size_t i = 0; i < n; ++i) v[i] = 1e-3 * (b + 1) * std::sin(s.dt * double(i % s.samples) + c);
      w.write_slab(b, c, 0, s.ny, v.data());
    }
  GammaTrace g;
  g.dtau = 0.5;
  g.sum = {GammaTrace::to_fixed(5.0), GammaTrace::to_fixed(5.1)};
  g.min = {5.0, 5.1};
  g.max = {5.0, 5.1};
  g.count = {1, 1};
  g.drain = {{0, 0.01}};
  w.write_gamma_trace(g, units);
  w.commit();
  return path;
}

void write_fields(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path good = write_field(dir, Mode::Total, "valid_total.h5");
  write_field(dir, Mode::Split, "valid_split.h5");
  const std::vector<double> narrow(2 * 2 * 32, 1.0);
  replace_dataset(copy_as(good, "invalid_narrow_b.h5"), "/B/x", {2, 2, 32}, narrow.data());
  replace_dataset(copy_as(good, "invalid_huge_ez.h5"), "/E/z", {1u << 20, 1u << 20, 1u << 20}, nullptr);
  set_attr_string(copy_as(good, "invalid_mode_array.h5"), "mode", "total", 3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT (fuzz/corpus)\n", argv[0]);
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  write_checkpoints(fs::path(argv[1]) / "checkpoint");
  write_fields(fs::path(argv[1]) / "field");
  std::printf("seeds written under %s/checkpoint and %s/field\n", argv[1], argv[1]);
  return 0;
}
