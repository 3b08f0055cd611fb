// RealFft (real_fft.hpp) on FFTW's real-to-complex transform. FFTW's execute functions are its
// only thread-safe routines: the planner, fftw_malloc and fftw_free run under one mutex (FFTW is
// edm's alone in the process). Plans are made once per length and process with FFTW_ESTIMATE,
// which picks the algorithm from the length alone; FFTW_MEASURE would time candidates, so the bits
// of a spectrum would depend on the machine's load. A plan runs on each RealFft's own buffers
// through the new-array execute; they come from fftw_malloc, aligned as the arrays the plan was
// made on, which the new-array interface requires.
#include "analysis/real_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

namespace edm::analysis {
namespace {

struct Fftw {
  std::mutex mutex;
  std::map<std::size_t, fftw_plan> plans;  // null where FFTW failed to plan that length
  ~Fftw() {
    for (auto& [n, plan] : plans)
      if (plan) fftw_destroy_plan(plan);
  }
};

Fftw& fftw() {
  static Fftw state;
  return state;
}

// The shared out-of-place r2c plan of length n, or null; the caller holds the mutex.
fftw_plan plan_for(Fftw& f, std::size_t n) {
  if (auto it = f.plans.find(n); it != f.plans.end()) return it->second;
  double* in = fftw_alloc_real(n);
  fftw_complex* out = fftw_alloc_complex(n / 2 + 1);
  // FFTW_ESTIMATE does not touch the arrays while planning.
  fftw_plan plan = in && out ? fftw_plan_dft_r2c_1d(int(n), in, out, FFTW_ESTIMATE) : nullptr;
  fftw_free(in);
  fftw_free(out);
  f.plans.emplace(n, plan);
  return plan;
}

}  // namespace

struct RealFft::Impl {
  std::size_t n = 0;
  fftw_plan plan = nullptr;
  double* in = nullptr;
  fftw_complex* out = nullptr;
  ~Impl() {
    std::lock_guard<std::mutex> lock(fftw().mutex);
    fftw_free(in);
    fftw_free(out);
  }
};

RealFft::RealFft(std::size_t n) : impl_(std::make_unique<Impl>()) {
  impl_->n = n;
  // FFTW takes an int length; 0 and longer lengths stay unallocated (the callers' EDM-SPEC-030 /
  // EDM-OAM-030).
  if (n == 0 || n > std::size_t(INT_MAX)) return;
  Fftw& f = fftw();
  std::lock_guard<std::mutex> lock(f.mutex);
  impl_->plan = plan_for(f, n);
  impl_->in = fftw_alloc_real(n);
  impl_->out = fftw_alloc_complex(n / 2 + 1);
}

RealFft::~RealFft() = default;
RealFft::RealFft(RealFft&&) noexcept = default;
RealFft& RealFft::operator=(RealFft&&) noexcept = default;

bool RealFft::allocated() const { return impl_ && impl_->plan && impl_->in && impl_->out; }

bool RealFft::transform(double* data) {
  if (!allocated()) return false;
  Impl& m = *impl_;
  const std::size_t n = m.n;
  std::copy(data, data + n, m.in);
  fftw_execute_dft_r2c(m.plan, m.in, m.out);
  // FFTW's X_0 … X_{⌊N/2⌋} into GSL's half-complex layout: the imaginary parts of X_0 and of
  // X_{N/2} (even N) are zero and not stored.
  data[0] = m.out[0][0];
  for (std::size_t k = 1; k < (n + 1) / 2; ++k) {
    data[2 * k - 1] = m.out[k][0];
    data[2 * k] = m.out[k][1];
  }
  if (n % 2 == 0 && n > 1) data[n - 1] = m.out[n / 2][0];
  return true;
}

}  // namespace edm::analysis
