// ctest-label: physics
// The accumulator API (core/include/edm/accumulator.hpp) on analytic splines: a live accumulator handed from batch to
// batch equals one pass bit for bit; finish() without a further batch (or with none at all) is
// allowed; a reduce between different screens or modes is an error; the ShardedFieldAccumulator over
// two PoCL devices agrees with one device to tol::sharded.
#define BOOST_TEST_MODULE sharded
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>

#include "analytic_splines.hpp"
#include "edm/accumulator.hpp"
#include "edm/error.hpp"
#include "edm/sharded.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

struct TwoPoclDevices {
  TwoPoclDevices() { setenv("POCL_DEVICES", "pthread pthread", 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(TwoPoclDevices);

Screen small_screen() {
  Screen s;
  s.nx = 6, s.ny = 5, s.samples = 64;
  s.half_x = 300, s.half_y = 200, s.z = 2000;
  s.dt = 2 * std::numbers::pi / 16;
  return s;
}

// Six figure-8 / circular plane-wave orbits with different phases and offsets.
SplineBatch electrons(std::uint64_t first, std::uint64_t count, Screen& s) {
  SplineBatch b;
  std::vector<std::array<double, 8>> starts;
  for (std::uint64_t i = first; i < first + count; ++i) {
    const auto w = test::plane_wave_orbit(i % 2 ? 0.35 : 0.5, i % 2 ? 0.35 : 0.0, 1.0, +1, 0.4 * double(i),
                                          {10.0 * double(i), -5.0 * double(i), 0.0});
    test::append_electron(b, w, 0.0, 2 * std::numbers::pi / 32, 32 * 90, i);
    starts.push_back(test::state_at(w, 0.0));
  }
  if (first == 0) choose_window(s, starts);
  return b;
}

std::vector<double> collect(FieldAccumulator& acc, const Screen& s, Mode mode) {
  std::vector<double> out(std::size_t(bucket_count(mode)) * 3 * s.pixels() * s.samples);
  acc.finish([&](int b, int c, int y0, int y1, const double* d) {
    const std::size_t row = std::size_t(s.nx) * s.samples;
    std::copy(d, d + row * (y1 - y0), out.begin() + ((std::size_t(b) * 3 + c) * s.ny + y0) * row);
  });
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(live_accumulator_across_batches_equals_one_pass) {
  Screen s = small_screen();
  const SplineBatch all = electrons(0, 6, s);
  const SplineBatch first = electrons(0, 2, s), second = electrons(2, 3, s), third = electrons(5, 1, s);
  const auto dev = select_devices("0").front();
  FieldAccumulator one(open_device(dev), s, Mode::Split, KernelOptions{});
  one.accumulate(all);
  const auto a = collect(one, s, Mode::Split);
  FieldAccumulator live(open_device(dev), s, Mode::Split, KernelOptions{});
  live.accumulate(first);
  live.accumulate(second);
  live.accumulate(third);
  const auto b = collect(live, s, Mode::Split);
  BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  double norm = 0;
  for (double v : a) norm += v * v;
  BOOST_TEST(norm > 0);
}

BOOST_AUTO_TEST_CASE(finish_without_a_further_batch) {
  Screen s = small_screen();
  electrons(0, 1, s);
  FieldAccumulator empty(open_device(select_devices("0").front()), s, Mode::Total, KernelOptions{});
  const auto z = collect(empty, s, Mode::Total);
  BOOST_TEST(std::all_of(z.begin(), z.end(), [](double v) { return v == 0.0; }));
  BOOST_CHECK_THROW(empty.accumulate(electrons(1, 1, s)), Error);  // finished is finished
}

BOOST_AUTO_TEST_CASE(reducing_mismatched_accumulators_is_an_error) {
  Screen s = small_screen();
  electrons(0, 1, s);
  Screen t = s;
  t.nx += 1;
  const auto dev = select_devices("0").front();
  FieldAccumulator a(open_device(dev), s, Mode::Total, KernelOptions{});
  FieldAccumulator b(open_device(dev), t, Mode::Total, KernelOptions{});
  FieldAccumulator c(open_device(dev), s, Mode::Split, KernelOptions{});
  BOOST_CHECK_THROW(a.reduce_into(b), Error);
  BOOST_CHECK_THROW(a.reduce_into(c), Error);
}

BOOST_AUTO_TEST_CASE(sharded_over_two_devices_agrees_with_one) {
  const auto devices = select_devices("all");
  BOOST_REQUIRE_MESSAGE(devices.size() >= 2, "needs two FP64 devices (POCL_DEVICES=\"pthread pthread\")");
  Screen s = small_screen();
  const SplineBatch b1 = electrons(0, 4, s), b2 = electrons(4, 2, s);
  ShardedFieldAccumulator one({devices[0]}, s, Mode::Split, KernelOptions{});
  ShardedFieldAccumulator two({devices[0], devices[1]}, s, Mode::Split, KernelOptions{});
  for (auto* acc : {&one, &two}) {
    acc->accumulate(b1);
    acc->accumulate(b2);
  }
  auto grab = [&](ShardedFieldAccumulator& acc) {
    std::vector<double> out(4 * 3 * s.pixels() * s.samples);
    acc.finish([&](int b, int c, int y0, int y1, const double* d) {
      const std::size_t row = std::size_t(s.nx) * s.samples;
      std::copy(d, d + row * (y1 - y0), out.begin() + ((std::size_t(b) * 3 + c) * s.ny + y0) * row);
    });
    return out;
  };
  const auto a = grab(one), b = grab(two);
  const double rel = test::relative_l2(b, a);
  BOOST_TEST_MESSAGE("two devices vs one (CLBlast reduce): relative L2 " << rel);
  BOOST_TEST(rel < test::tol::sharded);
  BOOST_TEST(two.reduce_seconds() >= 0.0);
}
