// ctest-label: unit
// CLBlast's tuning table (core/src/field/tuning.cpp; share/docs/developing.md, "CLBlast's
// parameters"): a row applies to the devices whose vendor and name contain its strings and no
// other; a row's parameter set is checked against the rules of CLBlast's Xgemm kernel and the
// device's limits, and one that breaks them is refused with EDM-DEV-020 naming the device; and a
// set applied through the override path (a row made here to match this machine's device) changes
// the parameters CLBlast runs with while the dft's kind of product (row-major, A with a column
// offset, B with a row offset, as in core/src/field/spectra_dft.cpp) still agrees with CLBlast's
// own parameters and with a plain host sum.
#define BOOST_TEST_MODULE clblast_tuning
#include <boost/test/unit_test.hpp>

#include <clblast.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/src/field/opencl_internal.hpp"
#include "../core/src/field/tuning.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"

using namespace edm;

namespace {

DeviceInfo like(const std::string& vendor, const std::string& name) {
  DeviceInfo d;
  d.vendor = vendor;
  d.name = name;
  d.type = "GPU";
  d.max_work_group = 1024;
  d.local_memory = 48 * 1024;
  return d;
}

// The H200 row's set (a valid set for any device with 48 KiB of local memory and 128 work-items).
const char* const kValid =
    "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=64 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 STRM=1 STRN=1 VWM=2 VWN=2";

// Sums of k products of values in [-1, 1] in another order (CLBlast's tiles, the host loop) differ by
// rounding only: ≲ k·ε·max|C| with k = 37 is ~1e-14 of max|C|; a wrong kernel is off by O(1).
constexpr double kRelTol = 1e-12;

bool refused_with(const std::function<void()>& f, const std::string& id, const std::string& in_message) {
  try {
    f();
  } catch (const Error& e) {
    BOOST_TEST_MESSAGE(e.what());
    return e.id() == id && std::string(e.what()).find(in_message) != std::string::npos;
  }
  return false;
}

// The dft's product shape in miniature: C (m × n) = A[:, k_lo : k_lo + k] · B[k_lo : k_lo + k, :],
// row-major, A of nb columns, B of nb rows and n columns.
struct Product {
  std::size_t m = 40, n = 72, k = 37, nb = 60, k_lo = 11;
  std::vector<double> a, b;
  Product() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    a.resize(m * nb);
    b.resize(nb * n);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
  }
  std::vector<double> host() const {
    std::vector<double> c(m * n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = 0; l < k; ++l) c[i * n + j] += a[i * nb + k_lo + l] * b[(k_lo + l) * n + j];
    return c;
  }
  std::vector<double> device(Device& d) const {
    cl::Buffer A(d.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 8, const_cast<double*>(a.data()));
    cl::Buffer B(d.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 8, const_cast<double*>(b.data()));
    cl::Buffer C(d.context(), CL_MEM_READ_WRITE, m * n * 8);
    cl_command_queue q = d.queue()();
    // m·n·k is far below CLBlast's size for its indirect kernel (the one the table tunes): the
    // routine's threshold is lowered so that this product runs through Xgemm.
    const std::unordered_map<std::string, std::size_t> indirect{{"XGEMM_MIN_INDIRECT_SIZE", 8}};
    BOOST_REQUIRE(clblast::OverrideParameters(d.device()(), "GemmRoutine", clblast::Precision::kDouble, indirect) ==
                  clblast::StatusCode::kSuccess);
    const auto st = clblast::Gemm<double>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                          m, n, k, 1.0, A(), k_lo, nb, B(), k_lo * n, n, 0.0, C(), 0, n, &q, nullptr);
    BOOST_REQUIRE(st == clblast::StatusCode::kSuccess);
    std::vector<double> c(m * n);
    d.queue().enqueueReadBuffer(C, CL_TRUE, 0, c.size() * 8, c.data());
    return c;
  }
};

double rel_max_diff(const std::vector<double>& x, const std::vector<double>& ref) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return worst / scale;
}

std::unordered_map<std::string, std::size_t> current_xgemm(Device& d) {
  std::unordered_map<std::string, std::size_t> p;
  BOOST_REQUIRE(clblast::RetrieveParameters(d.device()(), "Xgemm", clblast::Precision::kDouble, p) ==
                clblast::StatusCode::kSuccess);
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(rows_match_their_devices_only) {
  unsetenv("EDM_CLBLAST_TUNING");  // the table on, whatever the caller's environment
  const auto h200 = like("NVIDIA Corporation", "NVIDIA H200");
  const auto rows = detail::clblast_rows(h200, detail::clblast_table());
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(std::string(rows[0]->kernel) == "Xgemm");
  // Every row of the table is a valid set on the device it is meant for.
  for (const auto& r : detail::clblast_table())
    BOOST_TEST(detail::clblast_parameters(r, h200, "the test's H200").size() == 16u);
  BOOST_TEST(clblast_tuning_record(h200).find("H200: Xgemm GEMMK=0") == 0u);
  // Another NVIDIA GPU, a device named H200 by another vendor, PoCL: no row, CLBlast's own choice.
  for (const auto& d : {like("NVIDIA Corporation", "NVIDIA A100-SXM4-80GB"), like("Other", "H200"),
                        like("AuthenticAMD", "pthread-haswell-AMD EPYC")}) {
    BOOST_TEST(detail::clblast_rows(d, detail::clblast_table()).empty());
    BOOST_TEST(clblast_tuning_record(d) == "CLBlast default");
  }
  // The row matches by name: the H200 NVL and the GH200 (the same SM) take it too, unmeasured
  // (share/docs/developing.md, "CLBlast's parameters").
  for (const char* name : {"NVIDIA H200 NVL", "NVIDIA GH200 480GB"})
    BOOST_TEST(detail::clblast_rows(like("NVIDIA Corporation", name), detail::clblast_table()).size() == 1u, name);
  for (const char* off : {"0", "off", "false", "no"}) {
    setenv("EDM_CLBLAST_TUNING", off, 1);
    BOOST_TEST(clblast_tuning_record(h200) == "off (EDM_CLBLAST_TUNING=0)", off);
  }
  for (const char* on : {"1", "on", "true", "yes", ""}) {
    setenv("EDM_CLBLAST_TUNING", on, 1);
    BOOST_TEST(detail::clblast_tuning_enabled(), on);
  }
  // Any other value was taken as "on": a typo of "off" ran with the table meant to be off.
  for (const char* typo : {"banana", "of", "2"}) {
    setenv("EDM_CLBLAST_TUNING", typo, 1);
    try {
      (void)detail::clblast_tuning_enabled();
      BOOST_ERROR("EDM_CLBLAST_TUNING=" << typo << " accepted");
    } catch (const ConfigError& e) {
      BOOST_TEST(e.id() == "EDM-ACC-078");
      BOOST_TEST(std::string(e.what()).find("EDM_CLBLAST_TUNING") != std::string::npos);
    }
  }
  unsetenv("EDM_CLBLAST_TUNING");
}

BOOST_AUTO_TEST_CASE(invalid_sets_are_refused_naming_the_device) {
  const auto d = like("NVIDIA Corporation", "NVIDIA H200");
  const std::string where = "device 3 (NVIDIA H200)";
  auto refused = [&](const char* params, const char* kernel, const std::string& rule) {
    const detail::ClblastRow row{"bad", "NVIDIA", "H200", kernel, params};
    return refused_with([&] { detail::clblast_parameters(row, d, where); }, "EDM-DEV-020", rule) &&
           refused_with([&] { detail::clblast_parameters(row, d, where); }, "EDM-DEV-020", where);
  };
  // MWG = 48 is no multiple of MDIMC·VWM = 32.
  BOOST_TEST(refused("GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=48 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 "
                     "STRM=0 STRN=0 VWM=2 VWN=2",
                     "Xgemm", "MDIMC·VWM"));
  // KWG = 8 is no multiple of KDIMB = MDIMC·NDIMC / NDIMB = 16.
  BOOST_TEST(refused("GEMMK=0 KREG=1 KWG=8 KWI=2 MDIMA=16 MDIMC=16 MWG=64 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 "
                     "STRM=0 STRN=0 VWM=2 VWN=2",
                     "Xgemm", "MDIMC·NDIMC/NDIMB"));
  // Tiles of 64 × 128 in local memory: 8 · (64 + 128) · 64 bytes > 48 KiB.
  BOOST_TEST(refused("GEMMK=0 KREG=1 KWG=64 KWI=2 MDIMA=16 MDIMC=16 MWG=64 NDIMB=16 NDIMC=16 NWG=128 SA=1 SB=1 "
                     "STRM=0 STRN=0 VWM=2 VWN=2",
                     "Xgemm", "local memory"));
  BOOST_TEST(refused("GEMMK=0 KREG=1 KWG=16", "Xgemm", "missing"));
  BOOST_TEST(refused("GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=64 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 "
                     "STRM=1 STRN=1 VWM=2 VWN=2 XYZ=3",
                     "Xgemm", "no parameter XYZ"));
  BOOST_TEST(refused("GEMMK=0 KREG", "Xgemm", "KEY=VALUE"));
  BOOST_TEST(refused(kValid, "Xgemv", "only CLBlast's Xgemm"));
  // Within CLBlast's rules but a wrong product on the H200 (scripts/studies/data/gemm_tune, call 1).
  BOOST_TEST(refused("GEMMK=1 KREG=2 KWG=1 KWI=1 MDIMA=16 MDIMC=16 MWG=64 NDIMB=16 NDIMC=16 NWG=32 SA=0 SB=0 "
                     "STRM=0 STRN=0 VWM=1 VWN=1",
                     "Xgemm", "NWG ≠ MWG"));
}

BOOST_AUTO_TEST_CASE(an_applied_row_changes_the_parameters_and_keeps_the_product) {
  const auto devices = select_devices("auto");
  BOOST_REQUIRE(!devices.empty());
  // Opened with the table off, the device runs with CLBlast's own choice whether or not a row of
  // the table matches it (none matches PoCL; the H200 row would).
  setenv("EDM_CLBLAST_TUNING", "0", 1);
  BOOST_TEST(clblast_tuning_record(devices[0]) == "off (EDM_CLBLAST_TUNING=0)");
  auto device = open_device(devices[0]);
  unsetenv("EDM_CLBLAST_TUNING");
  const auto before = current_xgemm(*device);

  const Product p;
  const auto host = p.host();
  const auto c_default = p.device(*device);
  BOOST_TEST(rel_max_diff(c_default, host) <= kRelTol);

  // A row made to match this device: its set must differ from CLBlast's own for the test to show
  // that it was applied.
  const auto& info = device->info();
  const detail::ClblastRow test_row{"test row", info.vendor.c_str(), info.name.c_str(), "Xgemm", kValid};
  const auto set = detail::clblast_parameters(test_row, info, "the test device");
  const std::unordered_map<std::string, std::size_t> wanted(set.begin(), set.end());
  BOOST_REQUIRE(wanted != before);
  const detail::ClblastRow table[] = {test_row};
  const auto applied = detail::apply_clblast_tuning(*device, table);
  BOOST_REQUIRE_EQUAL(applied.size(), 1u);
  const auto after = current_xgemm(*device);
  for (const auto& [k, v] : set) BOOST_TEST(after.at(k) == v, k);

  const auto c_tuned = p.device(*device);
  BOOST_TEST(rel_max_diff(c_tuned, c_default) <= kRelTol);
  BOOST_TEST(rel_max_diff(c_tuned, host) <= kRelTol);

  // An invalid set in the table is refused before CLBlast sees it, naming the device.
  const detail::ClblastRow bad{"bad row", info.vendor.c_str(), info.name.c_str(), "Xgemm",
                               "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=48 NDIMB=8 NDIMC=8 NWG=64 SA=1 "
                               "SB=1 STRM=0 STRN=0 VWM=2 VWN=2"};
  const detail::ClblastRow bad_table[] = {bad};
  BOOST_TEST(refused_with([&] { detail::apply_clblast_tuning(*device, bad_table); }, "EDM-DEV-020", info.name));
  // …and leaves the applied set in place.
  BOOST_TEST(current_xgemm(*device) == after);
}
