// The real FFT of one length for the analysis passes (spectrum.cpp, twisted_light.cpp), by FFTW:
// O(N log N) at every length, primes included (GSL's mixed-radix transform, used before, fell back
// to an O(N²) pass on a large prime factor: edm spectrum took 29.5 s at 1063 samples against 2.4 s
// at 1536; BENCHMARKS.md "FFT library in edm spectrum"). The transform is in place and leaves GSL's
// half-complex layout (observables.cpp reads it). A failure is reported, not thrown: each pass
// throws it with its own error id (spectrum.cpp EDM-SPEC-030/031, twisted_light.cpp
// EDM-OAM-030/031). Private to analysis/; the implementation and FFTW stay in real_fft.cpp.
#pragma once
#include <cstddef>
#include <memory>

namespace edm::analysis {

class RealFft {
 public:
  // The plan of length n (made once per length and process, shared by every RealFft of that
  // length and thread) and this object's own aligned buffers.
  explicit RealFft(std::size_t n);
  ~RealFft();
  RealFft(RealFft&&) noexcept;
  RealFft& operator=(RealFft&&) noexcept;
  // False for n = 0 or when FFTW could not allocate or plan.
  bool allocated() const;
  // data[0] = Re X_0, data[2k−1] = Re X_k, data[2k] = Im X_k, data[N−1] = Re X_{N/2} for even N,
  // with X_k = Σ_j x_j e^{−2πijk/N} (no normalisation). False when not allocated().
  [[nodiscard]] bool transform(double* data);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edm::analysis
