// h5same A.h5 B.h5: are two HDF5 files' datasets bit-identical? For machines without h5py (the GPU
// machine): every dataset of A is read in slabs along its first dimension and compared byte for
// byte with B's (memcmp); datasets only in B are reported too. Exit 0 when all are identical.
//   build (after scripts/bootstrap): g++ -std=c++20 -O2 -I/usr/include/hdf5/serial scripts/h5same/h5same.cpp \
//     -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -o build/h5same
#include <hdf5.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

std::set<std::string> datasets(hid_t file) {
  std::set<std::string> names;
  H5Ovisit(file, H5_INDEX_NAME, H5_ITER_NATIVE,
           [](hid_t, const char* name, const H5O_info_t* info, void* out) -> herr_t {
             if (info->type == H5O_TYPE_DATASET) static_cast<std::set<std::string>*>(out)->insert(name);
             return 0;
           },
           &names);
  return names;
}

// 0 identical, 1 different, 2 shapes or types differ.
int compare(hid_t fa, hid_t fb, const std::string& name) {
  const hid_t a = H5Dopen2(fa, name.c_str(), H5P_DEFAULT), b = H5Dopen2(fb, name.c_str(), H5P_DEFAULT);
  const hid_t sa = H5Dget_space(a), sb = H5Dget_space(b);
  const hid_t ta = H5Dget_type(a), tb = H5Dget_type(b);
  const int rank = H5Sget_simple_extent_ndims(sa);
  std::vector<hsize_t> da(std::max(rank, 1), 1), db(std::max(rank, 1), 1);
  H5Sget_simple_extent_dims(sa, da.data(), nullptr);
  H5Sget_simple_extent_dims(sb, db.data(), nullptr);
  int result = 0;
  if (rank != H5Sget_simple_extent_ndims(sb) || da != db || H5Tequal(ta, tb) <= 0) {
    result = 2;
  } else {
    const hid_t mem = H5Tget_native_type(ta, H5T_DIR_ASCEND);
    const std::size_t elem = H5Tget_size(mem);
    hsize_t row = 1;
    for (int i = 1; i < rank; ++i) row *= da[i];
    const hsize_t rows_per_slab = rank == 0 ? 1 : std::max<hsize_t>(1, (hsize_t(64) << 20) / (row * elem));
    std::vector<char> ba, bb;
    for (hsize_t r0 = 0; r0 < (rank == 0 ? 1 : da[0]) && result == 0; r0 += rows_per_slab) {
      const hsize_t n = rank == 0 ? 1 : std::min(rows_per_slab, da[0] - r0);
      ba.resize(n * row * elem);
      bb.resize(n * row * elem);
      hid_t ms = H5S_ALL, fsa = H5S_ALL, fsb = H5S_ALL;
      std::vector<hsize_t> start(rank, 0), count(da);
      if (rank > 0) {
        start[0] = r0;
        count[0] = n;
        ms = H5Screate_simple(rank, count.data(), nullptr);
        fsa = H5Scopy(sa);
        fsb = H5Scopy(sb);
        H5Sselect_hyperslab(fsa, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
        H5Sselect_hyperslab(fsb, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
      }
      if (H5Dread(a, mem, ms, fsa, H5P_DEFAULT, ba.data()) < 0 || H5Dread(b, mem, ms, fsb, H5P_DEFAULT, bb.data()) < 0)
        result = 2;
      else if (std::memcmp(ba.data(), bb.data(), ba.size()) != 0)
        result = 1;
      if (rank > 0) {
        H5Sclose(ms);
        H5Sclose(fsa);
        H5Sclose(fsb);
      }
    }
    H5Tclose(mem);
  }
  H5Tclose(ta);
  H5Tclose(tb);
  H5Sclose(sa);
  H5Sclose(sb);
  H5Dclose(a);
  H5Dclose(b);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: h5same A.h5 B.h5\n");
    return 2;
  }
  const hid_t fa = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fa < 0 || fb < 0) return 2;
  const auto na = datasets(fa), nb = datasets(fb);
  int same = 0, differ = 0;
  for (const auto& n : na) {
    if (!nb.count(n)) {
      std::printf("only in A: %s\n", n.c_str());
      ++differ;
      continue;
    }
    const int r = compare(fa, fb, n);
    std::printf("%-40s %s\n", n.c_str(), r == 0 ? "identical" : r == 1 ? "DIFFERENT" : "shape/type differ");
    (r == 0 ? same : differ) += 1;
  }
  for (const auto& n : nb)
    if (!na.count(n)) std::printf("only in B: %s\n", n.c_str()), ++differ;
  std::printf("%d datasets identical, %d differ\n", same, differ);
  H5Fclose(fa);
  H5Fclose(fb);
  return differ == 0 ? 0 : 1;
}
