// The fft method of the far-field spectra (core/src/field/spectra_fft.cpp, share/docs/outputs.md
// "Direct spectra"): each electron's far-field series R·E_far(t_k), t_k = t0 + k dt (k < nb), from
// the field kernel (the angular screen at infinity), turned into the amplitudes on the requested
// linear grid ω_j = ω0 + j δω (j < nw) by a chirp-z transform (Bluestein): with α = δω dt and
// jk = (j² + k² − (j − k)²)/2,
//   A(ω_j) = dt Σ_k E_k e^{iω_j t_k} = post_j · Σ_k y_k h(j − k),
//   y_k = E_k e^{i(ω0 k dt + α k²/2)} (`chirp`),  h(n) = e^{−iα n²/2},  post_j = dt e^{iω_j t0} e^{iα j²/2},
// the convolution done by clFFT over L ≥ nb + nw − 1 points (forward, times H = DFT of the wrapped h,
// backward). So every requested ω is evaluated exactly as the sum over the samples (no bin
// alignment, no interpolation); only the sampling of E (dt) and the window bound the accuracy.
//
// Layout of the work buffer Y (complex, interleaved): Y[(g·Q + q)·L + k], the series q = c·np + pos
// (component c, device position pos of the field cube) of electron slot g of the group, point k < L:
// every transform is contiguous (stride 1, distance L), the layout clFFT's batched transforms read
// fastest. The field cube E is [c][k][pos] (cl/lienard_wiechert.cl), position fastest, so the
// premultiply transposes through a tile in local memory (both its reads and its writes coalesced).

// CZT_TILE, the premultiply's work-group edge, comes from the host (core/src/field/spectra_fft.cpp
// builds the program with it and launches CZT_TILE × CZT_TILE work-groups).
#ifndef CZT_TILE
#error "CZT_TILE: the host defines it"
#endif

// Electron slot g: y from the cube (k < nb) or zero padding (nb ≤ k < L); the cube is zeroed as it
// is read, ready for the next electron (its samples outside an electron's coverage are never
// written by the field kernel, so they must start at zero). Work-groups of CZT_TILE × CZT_TILE:
// dimension 0 over positions (reads) / points (writes), 1 over points / positions, 2 the component.
__kernel void czt_premultiply(__global double* restrict E, const int np, const int nb, const int L, const int g,
                              __global const double2* restrict chirp, __global double2* restrict Y) {
  __local double tile[CZT_TILE][CZT_TILE + 1];
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1), c = (int)get_global_id(2);
  const int pos0 = (int)get_group_id(0) * CZT_TILE, k0 = (int)get_group_id(1) * CZT_TILE;
  {
    const int pos = pos0 + lx, k = k0 + ly;
    double e = 0.0;
    if (pos < np && k < nb) {
      const ulong i = ((ulong)c * (ulong)nb + (ulong)k) * (ulong)np + (ulong)pos;
      e = E[i];
      E[i] = 0.0;
    }
    tile[ly][lx] = e;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int k = k0 + lx, pos = pos0 + ly;
  if (pos < np && k < L) {
    const double2 y = k < nb ? tile[lx][ly] * chirp[k] : (double2)(0.0, 0.0);
    Y[((ulong)g * (ulong)(3 * np) + (ulong)(c * np + pos)) * (ulong)L + (ulong)k] = y;
  }
}

// Y ← Y · H (the DFT of the wrapped chirp h, from the host), per point k of every series.
__kernel void czt_multiply(__global double2* restrict Y, const int L, const int GQ, __global const double2* restrict H) {
  const int k = (int)get_global_id(0), b = (int)get_global_id(1);
  if (k >= L || b >= GQ) return;
  const ulong i = (ulong)b * (ulong)L + (ulong)k;
  const double2 a = Y[i], h = H[k];
  Y[i] = (double2)(a.x * h.x - a.y * h.y, a.x * h.y + a.y * h.x);
}

// The sums: one work-item per (frequency j, direction d) owns its bins and adds the group's
// `count` electrons in electron order (slot 0 first), each amplitude complete before it is added —
// the direct method's rule (cl/spectra.cl), so the sums do not depend on the batching.
// Layouts: coh[((d·nw + j)·3 + c)·2 + {re, im}], inc[d·nw + j] (core/include/edm/spectra.hpp).
__kernel void czt_reduce(__global const double2* restrict Y, const int np, const int nd, const int nw, const int L,
                         const int count, __global const int* restrict position_of,
                         __global const double2* restrict post, __global const double* restrict weights,
                         __global double* restrict coh, __global double* restrict inc) {
  const int j = (int)get_global_id(0), d = (int)get_global_id(1);
  if (j >= nw || d >= nd) return;
  const int Q = 3 * np, pos = position_of[d];
  const double2 p = post[j];
  const ulong bin = (ulong)d * (ulong)nw + (ulong)j;
  double cr[3], ci[3];
  for (int c = 0; c < 3; ++c) {
    cr[c] = coh[(bin * 3 + c) * 2];
    ci[c] = coh[(bin * 3 + c) * 2 + 1];
  }
  double s = inc[bin];
  for (int g = 0; g < count; ++g) {
    const double w = weights[g];
    double mag2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      const double2 z = Y[((ulong)g * (ulong)Q + (ulong)(c * np + pos)) * (ulong)L + (ulong)j];
      const double re = z.x * p.x - z.y * p.y, im = z.x * p.y + z.y * p.x;
      cr[c] += w * re;
      ci[c] += w * im;
      mag2 += re * re + im * im;
    }
    s += w * mag2;
  }
  for (int c = 0; c < 3; ++c) {
    coh[(bin * 3 + c) * 2] = cr[c];
    coh[(bin * 3 + c) * 2 + 1] = ci[c];
  }
  inc[bin] = s;
}
