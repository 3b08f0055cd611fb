// GSL's mixed-radix real FFT of one length (any N: 1666 = 2·7²·17), wavetable and workspace owned
// and freed on scope exit; the transform is in place and leaves GSL's half-complex layout
// (observables.cpp reads it). Private to analysis/.
#pragma once
#include <gsl/gsl_fft_real.h>

#include <memory>
#include <string>

#include "edm/error.hpp"

namespace edm::analysis {

class RealFft {
 public:
  explicit RealFft(std::size_t n)
      : wt_(gsl_fft_real_wavetable_alloc(n), gsl_fft_real_wavetable_free),
        ws_(gsl_fft_real_workspace_alloc(n), gsl_fft_real_workspace_free),
        n_(n) {
    if (!wt_ || !ws_) throw Error("EDM-OAM-030", "cannot allocate an FFT of length " + std::to_string(n));
  }
  // data[0] = Re X_0, data[2k−1] = Re X_k, data[2k] = Im X_k, data[N−1] = Re X_{N/2} for even N,
  // with X_k = Σ_j x_j e^{−2πijk/N}.
  void transform(double* data) {
    if (gsl_fft_real_transform(data, 1, n_, wt_.get(), ws_.get()) != 0)
      throw Error("EDM-OAM-031", "GSL real FFT failed (length " + std::to_string(n_) + ")");
  }

 private:
  std::unique_ptr<gsl_fft_real_wavetable, void (*)(gsl_fft_real_wavetable*)> wt_;
  std::unique_ptr<gsl_fft_real_workspace, void (*)(gsl_fft_real_workspace*)> ws_;
  std::size_t n_;
};

}  // namespace edm::analysis
