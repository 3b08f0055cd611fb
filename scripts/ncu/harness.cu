// CUDA build of edm's OpenCL field kernel (cl/*.cl unchanged, through a shim) for Nsight Compute,
// which does not profile OpenCL. Reads cell.bin (dump.cpp), launches G-electron groups, times them.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define restrict __restrict__
#define inline __device__ inline
typedef unsigned long ulong;
typedef unsigned int uint;
#define get_local_size(d) blockDim.x
#define get_group_id(d) blockIdx.x
#define get_local_id(d) threadIdx.x
#define get_global_id(d) (blockIdx.x * blockDim.x + threadIdx.x)
#define OPENCL_STRIP 1
inline float half_recip(float x) { return 1.0f / x; }
inline float half_rsqrt(float x) { return rsqrtf(x); }
inline ulong as_ulong(double x) { return (ulong)__double_as_longlong(x); }
#include "kernel_src.cu"
#undef inline
int main(int argc, char** argv) {
  FILE* f = std::fopen("cell.bin", "rb");
  double hdr[10];
  if (std::fread(hdr, 8, 10, f) != 10) return 1;
  const int nx = int(hdr[0]), ny = int(hdr[1]), samples = int(hdr[2]), n = int(hdr[8]);
  const size_t ncoef = size_t(hdr[9]);
  std::vector<double> table(6 * n), coef(ncoef);
  std::vector<int> perm(size_t(nx) * ny);
  if (std::fread(table.data(), 8, table.size(), f) != table.size()) return 1;
  if (std::fread(coef.data(), 8, coef.size(), f) != coef.size()) return 1;
  if (std::fread(perm.data(), 4, perm.size(), f) != perm.size()) return 1;
  const size_t npix = size_t(nx) * ny, plane = npix * samples;
  double *dcoef, *E, *B;
  int* dperm;
  cudaMalloc(&dcoef, ncoef * 8);
  cudaMalloc(&E, plane * 3 * 8);
  cudaMalloc(&B, plane * 3 * 8);
  cudaMalloc(&dperm, npix * 4);
  cudaMemcpy(dcoef, coef.data(), ncoef * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(dperm, perm.data(), npix * 4, cudaMemcpyHostToDevice);
  // The light front over the t-quintics, once, as FieldAccumulator::accumulate does per batch.
  const unsigned long intervals = ncoef / 24;
  lw_light_front<<<unsigned((intervals + 127) / 128), 128>>>(dcoef, intervals);
  cudaMemset(E, 0, plane * 24);
  cudaMemset(B, 0, plane * 24);
  const int wg = LW_WG, per_chunk = int((npix + wg - 1) / wg);
  const int grid = per_chunk * SAMPLE_CHUNKS;
  cudaFuncSetAttribute(lw_accumulate, cudaFuncAttributePreferredSharedMemoryCarveout, 50);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float total = 0;
  for (int first = 0; first < n; first += ELECTRON_GROUP) {
    lw_group g{};
    const int count = std::min(ELECTRON_GROUP, n - first);
    for (int i = 0; i < 6 * count; ++i) g.v[i] = table[6 * first + i];
    cudaEventRecord(a);
    lw_accumulate<<<grid, wg>>>(dcoef, g, count, nx, ny, samples, hdr[3], hdr[4], hdr[5], hdr[6], hdr[7], E, B, E, B, dperm, (const double*)nullptr, dperm, 0, 0);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (first > 0) total += ms;  // first launch: warm-up
    std::printf("launch %d: %.3f ms (%s)\n", first / ELECTRON_GROUP, ms, cudaGetErrorString(cudaGetLastError()));
  }
  std::printf("ms per electron (after warm-up): %.3f\n", total / (n - ELECTRON_GROUP));
  std::vector<double> h(1000);
  cudaMemcpy(h.data(), E + plane / 2, 8000, cudaMemcpyDeviceToHost);
  double s = 0;
  for (double v : h) s += std::fabs(v);
  std::printf("checksum %.17g\n", s);
}
