// Accuracy of NVIDIA's FP64 approximation instructions (PTX rcp.approx.ftz.f64 → MUFU.RCP64H,
// rsqrt.approx.ftz.f64 → MUFU.RSQ64H), the seeds of lw_slot.cl's divisions and square roots with
// LW_NV_SEED. Sweeps 2^26 mantissas over two binades and many exponents; prints the worst relative
// error as log2. Build and run on an NVIDIA machine: nvcc -arch=sm_90 -O2 nv_seeds.cu -o s && ./s
#include <cmath>
#include <cstdio>
#include <cstring>
__device__ double rcp_seed(double x) { double r; asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x)); return r; }
__device__ double rsq_seed(double x) { double r; asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x)); return r; }
__device__ unsigned long long worst[2];
__global__ void sweep(int exp_shift) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;  // 2^26 per launch
  // x in [1, 4) (two binades: rsqrt depends on the exponent's parity), scaled by 2^exp_shift.
  const double x = ldexp(1.0 + 3.0 * (double)i / 67108864.0, exp_shift);
  const double r = rcp_seed(x), y = rsq_seed(x);
  const double er = fabs(fma(-x, r, 1.0));          // |1 − x r| = relative error of r
  const double ey = fabs(fma(-x, y * y, 1.0)) / 2;  // ≈ relative error of y
  atomicMax(&worst[0], __double_as_longlong(er));
  atomicMax(&worst[1], __double_as_longlong(ey));
}
int main() {
  unsigned long long zero[2] = {0, 0}, w[2];
  cudaMemcpyToSymbol(worst, zero, sizeof zero);
  for (int e = -40; e <= 40; e += 3) sweep<<<(1 << 26) / 256, 256>>>(e);
  cudaMemcpyFromSymbol(w, worst, sizeof w);
  double d[2];
  memcpy(d, w, sizeof d);
  printf("rcp.approx.ftz.f64   worst relative error %.3e = 2^%.2f\n", d[0], std::log2(d[0]));
  printf("rsqrt.approx.ftz.f64 worst relative error %.3e = 2^%.2f\n", d[1], std::log2(d[1]));
  return 0;
}
