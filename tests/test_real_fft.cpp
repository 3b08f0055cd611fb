// ctest-label: unit
// The analysis passes' real FFT (core/src/analysis/real_fft.hpp, FFTW behind it) against a naive
// O(N²) DFT written here in long double, on prime and composite lengths, in GSL's half-complex
// layout and with its sign convention (X_k = Σ x_j e^{−2πijk/N}, no normalisation); closed forms
// of single cosines and sines; plans shared by threads give the single thread's bits.
#define BOOST_TEST_MODULE real_fft
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <thread>
#include <vector>

#include "../core/src/analysis/real_fft.hpp"

using edm::analysis::RealFft;

namespace {

// FFT vs the naive DFT: relative L2 over the stored half-complex values, and the largest error
// relative to the largest value. Measured with FFTW 3.3.10 (FFTW_ESTIMATE): ≤ 5.6e-16 at every
// length here. GSL's mixed-radix transform, used before, measured 3.9e-12 at N = 1063 and 1.2e-10
// at 4099 (its pass over a large prime factor), so this bound also keeps that accuracy.
constexpr double kFftVsNaiveDft = 1e-14;

// Lengths: trivial, small prime, odd composite, the prime (1063) and its composites, a
// 2·7²·17, a power of two and a larger prime.
constexpr std::size_t kLengths[] = {1, 2, 7, 15, 1063, 1536, 1666, 2048, 4099};

std::vector<double> random_signal(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

// The naive DFT of x in long double, stored in the half-complex layout real_fft.hpp documents. The
// phase index j·k is reduced mod N in integers, so each twiddle is one of N exactly reduced angles.
std::vector<long double> naive_half_complex(const std::vector<double>& x) {
  const std::size_t n = x.size();
  const long double two_pi = 2.0L * std::numbers::pi_v<long double>;
  std::vector<long double> c(n), s(n);
  for (std::size_t m = 0; m < n; ++m) {
    c[m] = std::cos(two_pi * (long double)m / (long double)n);
    s[m] = std::sin(two_pi * (long double)m / (long double)n);
  }
  std::vector<long double> hc(n);
  for (std::size_t k = 0; k <= n / 2; ++k) {
    long double re = 0, im = 0;
    for (std::size_t j = 0, m = 0; j < n; ++j, m = (m + k) % n) {
      re += x[j] * c[m];
      im -= x[j] * s[m];
    }
    if (k == 0)
      hc[0] = re;
    else if (2 * k == n)
      hc[n - 1] = re;
    else {
      hc[2 * k - 1] = re;
      hc[2 * k] = im;
    }
  }
  return hc;
}

struct Errors {
  double rel_l2, rel_max;
};
Errors compare(const std::vector<double>& got, const std::vector<long double>& ref) {
  long double num = 0, den = 0, emax = 0, rmax = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const long double e = (long double)got[i] - ref[i];
    num += e * e;
    den += ref[i] * ref[i];
    emax = std::max(emax, std::fabs(e));
    rmax = std::max(rmax, std::fabs(ref[i]));
  }
  return {double(std::sqrt(num / den)), double(emax / rmax)};
}

std::vector<double> transformed(std::vector<double> x) {
  RealFft fft(x.size());
  BOOST_REQUIRE(fft.allocated());
  BOOST_REQUIRE(fft.transform(x.data()));
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matches_the_naive_dft_on_prime_and_composite_lengths) {
  for (std::size_t n : kLengths) {
    const auto x = random_signal(n, unsigned(n));
    const Errors e = compare(transformed(x), naive_half_complex(x));
    BOOST_TEST_MESSAGE("N = " << n << ": relative L2 " << e.rel_l2 << ", largest error / largest value "
                              << e.rel_max);
    BOOST_TEST(e.rel_l2 < kFftVsNaiveDft, "N = " << n << ": relative L2 " << e.rel_l2);
    BOOST_TEST(e.rel_max < kFftVsNaiveDft, "N = " << n << ": largest error " << e.rel_max);
  }
}

// x_j = cos(2πmj/N) has X_m = N/2 (real), x_j = sin(2πmj/N) has X_m = −iN/2 (the e^{−iωt} sign);
// every other stored value is zero. At m = N/2 (even N) the cosine gives X = N in data[N−1].
BOOST_AUTO_TEST_CASE(single_tones_sign_and_normalisation) {
  for (std::size_t n : {7u, 1063u, 1536u}) {
    for (std::size_t m : {std::size_t(1), std::size_t(3), (n - 1) / 2}) {
      std::vector<double> c(n), s(n);
      for (std::size_t j = 0; j < n; ++j) {
        const double a = 2 * std::numbers::pi * double((j * m) % n) / double(n);
        c[j] = std::cos(a);
        s[j] = std::sin(a);
      }
      const auto C = transformed(c), S = transformed(s);
      for (std::size_t i = 0; i < n; ++i) {
        const double want_c = i == 2 * m - 1 ? n / 2.0 : 0.0, want_s = i == 2 * m ? -(n / 2.0) : 0.0;
        BOOST_TEST(std::fabs(C[i] - want_c) < kFftVsNaiveDft * n, "cos N=" << n << " m=" << m << " i=" << i);
        BOOST_TEST(std::fabs(S[i] - want_s) < kFftVsNaiveDft * n, "sin N=" << n << " m=" << m << " i=" << i);
      }
    }
  }
  std::vector<double> alt(1536);
  for (std::size_t j = 0; j < alt.size(); ++j) alt[j] = j % 2 ? -1.0 : 1.0;
  const auto A = transformed(alt);
  BOOST_TEST(A[1535] == 1536.0);
  BOOST_TEST(std::fabs(A[0]) < kFftVsNaiveDft * 1536);
}

// Plans are made once per length under a lock and shared: threads that make and run transforms of
// the same lengths at once give, bit for bit, what one thread gives (spectrum's --threads promise).
BOOST_AUTO_TEST_CASE(threads_share_plans_and_bits) {
  constexpr std::size_t lengths[] = {1063, 1536, 2047, 3001, 97};
  std::vector<std::vector<double>> inputs, single;
  for (std::size_t n : lengths) {
    inputs.push_back(random_signal(n, unsigned(7 * n)));
    single.push_back(transformed(inputs.back()));
  }
  constexpr int kThreads = 4;
  std::vector<std::vector<std::vector<double>>> got(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (std::size_t i = 0; i < std::size(lengths); ++i) {
          // Each thread starts on a different length, so plans of new lengths are made concurrently.
          const std::size_t q = (i + std::size_t(t)) % std::size(lengths);
          std::vector<double> x = inputs[q];
          RealFft fft(x.size());
          if (fft.allocated() && fft.transform(x.data()) && rep == 2) got[t].push_back(std::move(x));
        }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    BOOST_REQUIRE_EQUAL(got[t].size(), std::size(lengths));
    for (std::size_t i = 0; i < std::size(lengths); ++i) {
      const std::size_t q = (i + std::size_t(t)) % std::size(lengths);
      BOOST_TEST(std::memcmp(got[t][i].data(), single[q].data(), single[q].size() * sizeof(double)) == 0,
                 "thread " << t << ", N = " << lengths[q]);
    }
  }
}

BOOST_AUTO_TEST_CASE(zero_length_is_not_allocated) {
  RealFft fft(0);
  BOOST_TEST(!fft.allocated());
  double d = 1.0;
  BOOST_TEST(!fft.transform(&d));
  RealFft moved = RealFft(8);
  BOOST_TEST(moved.allocated());
}
