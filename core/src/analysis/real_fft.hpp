// GSL's mixed-radix real FFT of one length (any N: 1666 = 2·7²·17), wavetable and workspace owned
// and freed on scope exit; the transform is in place and leaves GSL's half-complex layout
// (observables.cpp reads it). A failure is reported, not thrown: each pass throws it with its own
// error id (spectrum.cpp EDM-SPEC-030/031, twisted_light.cpp EDM-OAM-030/031). Private to analysis/.
#pragma once
#include <gsl/gsl_fft_real.h>

#include <cstddef>
#include <memory>

namespace edm::analysis {

class RealFft {
 public:
  explicit RealFft(std::size_t n)
      : wt_(gsl_fft_real_wavetable_alloc(n), gsl_fft_real_wavetable_free),
        ws_(gsl_fft_real_workspace_alloc(n), gsl_fft_real_workspace_free),
        n_(n) {}
  bool allocated() const { return wt_ && ws_; }
  // data[0] = Re X_0, data[2k−1] = Re X_k, data[2k] = Im X_k, data[N−1] = Re X_{N/2} for even N,
  // with X_k = Σ_j x_j e^{−2πijk/N}. False when GSL fails.
  [[nodiscard]] bool transform(double* data) {
    return gsl_fft_real_transform(data, 1, n_, wt_.get(), ws_.get()) == 0;
  }

 private:
  std::unique_ptr<gsl_fft_real_wavetable, void (*)(gsl_fft_real_wavetable*)> wt_;
  std::unique_ptr<gsl_fft_real_workspace, void (*)(gsl_fft_real_workspace*)> ws_;
  std::size_t n_;
};

}  // namespace edm::analysis
