// The field kernel's device tuning: the table of defaults per vendor and device type, and how a
// request's explicit values apply over it (tuning.hpp). Only speed depends on these values: every
// slot gets the same additions in the same order whatever they are.
#include "field/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm::detail {
namespace {

// Why each value: BENCHMARKS.md, section "Tuning defaults", the subsection named in the first
// column. Rows are tried in order; the last one matches every device.
// clang-format off
constexpr TuningRow kRows[] = {
    // name            vendor    type   items/CU chunks  G   wg  state  regs  recip  nv_seed interleave tail/CU simd
    {"NVIDIA GPUs",    "NVIDIA", "GPU", 8192,    64,     4,  128, true,  128,  true,  true,   false,     2048,   false},
    {"Other GPUs",     "",       "GPU", 8192,    64,     4,  128, true,  -1,   true,  false,  false,     2048,   false},
    {"CPUs",           "",       "CPU", 8192,    64,     4,  128, false, -1,   false, false,  true,      0,      true},
    {"Other devices",  "",       "",    8192,    64,     4,  128, false, -1,   false, false,  false,     0,      false},
};
// clang-format on

// The same on every device, since the devices of one run must share one cube layout (the reduce
// and checkpoints compare it): BENCHMARKS.md, "Tuning defaults", "Every device".
constexpr PixelOrder kPixelOrder = PixelOrder::Rings;
// Rings suit an ensemble near the screen's axis (a ring is then nearly one arrival time for every
// electron); an electron off the axis by r adds an arrival-time slope r/Z along the screen, which
// runs along a warp's 32-pixel arc but only across a 4 × 8 tile's width. Rough spreads per warp,
// in pitch × (1/Z): rings 32 r + ρ/2, tiles 8 (r + ρ) (ρ: the pixel's distance from the axis), so
// tiles are chosen when the electrons' rms distance r exceeds kTilesAbove × the pixels' rms
// distance: 24 r > 7.5 ρ. Measured on the H200: the benchmark cell (r/ρ = 0.03) rings 6.60 against
// tiles 8.72 ms per electron, the reference's strong cell (r/ρ = 0.94) rings 9.71 against tiles
// 7.62 (BENCHMARKS.md, "Tuning defaults", "Every device").
constexpr double kTilesAbove = 7.5 / 24.0;
constexpr int kTileWidth = 4;  // when tiles are asked for without a width (if it divides the work-group)

// The launch's electrons travel by value, 6 doubles each (lw_group in cl/lienard_wiechert.cl); the
// other arguments take at most 256 bytes of the parameter space.
constexpr std::size_t kGroupBytesPerElectron = 6 * sizeof(double);
constexpr std::size_t kOtherArgumentBytes = 256;

bool matches(const TuningRow& r, const DeviceInfo& d) {
  return (!*r.vendor || d.vendor.find(r.vendor) != std::string::npos) && (!*r.type || d.type == r.type);
}

// Ranges of the explicit values (0 = from the device): the key table's rules, for options built in
// code rather than read from a campaign (tests, tools).
void check_request(const KernelOptions& o) {
  check_key_value("accumulator.newton_iters", o.newton_iters, "EDM-ACC-005");
  check_key_value("accumulator.sample_chunks", o.sample_chunks, "EDM-ACC-006");
  check_key_value("accumulator.work_group", o.work_group, "EDM-ACC-006");
  check_key_value("accumulator.electron_group", o.electron_group, "EDM-ACC-008");
}

// Enough work-items to fill every compute unit many times over, and at least kMinChunkSamples
// samples per chunk. Each chunk's first two samples at a pixel are cold solves (iterated to
// convergence from the whole span, several times a warm one's cost), so C stays as small as that
// allows; on a small screen the work-item target alone would give a chunk one or two samples, every
// solve cold, and the warm path (the midpoint predictor, newton_iters steps: what a production
// screen runs almost everywhere) would not run at all. Production screens are not affected: their
// chunks hold hundreds of samples.
constexpr int kMinChunkSamples = 16;
int default_chunks(const TuningRow& row, const DeviceInfo& d, const Screen& s) {
  const double target = double(row.work_items_per_cu) * d.compute_units;
  const int c = int(std::ceil(target / double(s.pixels())));
  return std::clamp(c, 1, std::max(1, std::min(s.samples / kMinChunkSamples, row.max_chunks)));
}

void check_group_fits(int group, std::size_t max_parameter_bytes, const std::string& where) {
  const std::size_t fit = max_parameter_bytes > kOtherArgumentBytes
                              ? (max_parameter_bytes - kOtherArgumentBytes) / kGroupBytesPerElectron
                              : 1;
  if (std::size_t(group) > fit)
    throw ConfigError("EDM-ACC-015", "accumulator.electron_group = " + std::to_string(group) +
                                         " exceeds the " + std::to_string(fit) +
                                         " electrons per launch that the kernel parameters of " + where +
                                         " can hold");
}

// The solver state in local memory sizes its arrays by the work-group, which is then fixed before
// the build: the set value, else the row's (or the device's maximum). Returns that work-group, or 0
// when the state stays in registers.
std::size_t resolve_state_local(KernelOptions& o, const TuningRow& row, const DeviceInfo& d,
                                const std::string& where) {
  const std::size_t wg = o.work_group > 0 ? std::size_t(o.work_group)
                                          : std::min<std::size_t>(std::size_t(row.work_group),
                                                                  std::max<std::size_t>(1, d.max_work_group));
  const std::uint64_t need = std::uint64_t(o.electron_group) * wg * kStateBytes;
  const bool fits = need + 1024 <= d.local_memory;
  if (o.state_local == 0) o.state_local = row.state_local && fits ? 1 : -1;
  if (o.state_local <= 0) return 0;
  if (!fits)
    throw ConfigError("EDM-ACC-013", "solver state of " + std::to_string(o.electron_group) + " electrons × " +
                                         std::to_string(wg) + " work-items (" + std::to_string(need) +
                                         " bytes) does not fit the local memory of " + where +
                                         "; lower accumulator.electron_group or work_group");
  return wg;
}

// NVIDIA's seeds are inline PTX, which only NVIDIA's OpenCL compiles: asking for them elsewhere, or
// without fast_recip (whose seeds they are), is an error.
void resolve_seeds(KernelOptions& o, const TuningRow& row, const DeviceInfo& d, const std::string& where) {
  if (o.fast_recip == 0) o.fast_recip = row.fast_recip ? 1 : -1;
  const bool nvidia = d.vendor.find("NVIDIA") != std::string::npos;
  if (o.nv_seed == 0) o.nv_seed = row.nv_seed && o.fast_recip > 0 ? 1 : -1;
  if (o.nv_seed > 0 && !(nvidia && o.fast_recip > 0))
    throw ConfigError("EDM-ACC-025",
                      "kernel option nv_seed (NVIDIA's FP64 approximation instructions as seeds of "
                      "fast_recip) needs an NVIDIA device and fast_recip on; " +
                          where + (nvidia ? " has fast_recip off" : " is not an NVIDIA device"));
}

// The phase-by-phase solve holds the group's state in registers (cl/lienard_wiechert.cl).
void resolve_interleave(KernelOptions& o, const TuningRow& row, std::size_t fixed_work_group,
                        const std::string& where) {
  if (o.interleave == 0) o.interleave = row.interleave && fixed_work_group == 0 ? 1 : -1;
  if (o.interleave > 0 && fixed_work_group > 0)
    throw ConfigError("EDM-ACC-024",
                      "the interleaved solve (kernel option interleave) keeps the solver state in "
                      "registers; it cannot be combined with the state in local memory on " +
                          where);
}

// Pixels on the lanes of the device's FP64 vectors (cl/lw_simd.cl): the flat screen only (the
// angular observer has no vector form), a native width of 2 to 16, built-in divisions (the SIMD
// kernel has no refined seeds) and the state in registers. Otherwise the scalar kernel: a request
// it cannot meet is not an error, since both give the same sums (tests/test_accumulator), and the
// manifest's [config] simd records which one ran. The phase-by-phase solve is the scalar kernel's
// alone, so it is recorded off with the lanes.
void resolve_simd(KernelOptions& o, const KernelOptions& requested, const TuningRow& row, const DeviceInfo& d,
                  const Screen& screen, std::size_t fixed_work_group, const std::string& where) {
  // An explicit interleave asks for the scalar kernel's schedule: the lanes then stay off unless
  // they were asked for too, which cannot both be had.
  if (requested.interleave > 0 && requested.simd > 0)
    throw ConfigError("EDM-ACC-026",
                      "accumulator.simd = 1 and accumulator.interleave = 1 were both asked for on " + where +
                          ": the phase-by-phase solve is the scalar kernel's, the lanes are another kernel; "
                          "set one of them to 0 or -1");
  if (o.simd > 1 && o.simd != 2 && o.simd != 4 && o.simd != 8 && o.simd != 16)
    throw ConfigError("EDM-ACC-027", "accumulator.simd = " + std::to_string(o.simd) +
                                         " is not a width of OpenCL's vectors: use 2, 4, 8 or 16 lanes, 1 for the "
                                         "device's native width, 0 (from the device) or -1 (off)");
  if (o.simd == 0) o.simd = row.simd && requested.interleave <= 0 ? 1 : -1;
  // An explicit width is taken as asked (tests/checker runs the lanes on oclgrind, whose native
  // width is 1); 1 takes the device's own.
  const unsigned w = o.simd > 1 ? unsigned(o.simd) : d.double_width;
  const bool fits = !screen.angular() && w >= 2 && w <= 16 && (w & (w - 1)) == 0 && o.fast_recip <= 0 &&
                    fixed_work_group == 0;
  o.simd = o.simd > 0 && fits ? int(w) : -1;
  if (o.simd > 0) o.interleave = -1;
}

// CLBlast's parameter sets. Why each: BENCHMARKS.md, "Tuning defaults", "CLBlast", under the
// row's name (the search: "CLBlast's DGEMM on the H200"). Keys in CLBlast's database order.
// clang-format off
constexpr ClblastRow kClblastRows[] = {
    {"H200", "NVIDIA", "H200", "Xgemm",
     "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=64 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 STRM=1 STRN=1 VWM=2 VWN=2"},
};
// clang-format on

// Every parameter of CLBlast's Xgemm kernel (its database's columns).
constexpr const char* kXgemmKeys[] = {"GEMMK", "KREG", "KWG",  "KWI", "MDIMA", "MDIMC", "MWG",  "NDIMB",
                                      "NDIMC", "NWG",  "SA",   "SB",  "STRM",  "STRN",  "VWM",  "VWN"};

using ClblastParams = std::map<std::string, std::size_t>;
constexpr std::uint64_t kClblastLocalSlack = 1024;

[[noreturn]] void refuse_row(const ClblastRow& row, const std::string& where, const std::string& why) {
  throw DeviceError("EDM-DEV-020", std::string("CLBlast parameter set \"") + row.name + "\" (" + row.kernel +
                                       ") cannot be used on " + where + ": " + why);
}

ClblastParams parse_params(const ClblastRow& row, const std::string& where) {
  ClblastParams p;
  std::istringstream in(row.params);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    char* end = nullptr;
    const unsigned long long v = eq == std::string::npos ? 0 : std::strtoull(tok.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || end == tok.c_str() + eq + 1 || *end != '\0')
      refuse_row(row, where, "\"" + tok + "\" is not KEY=VALUE");
    if (!p.emplace(tok.substr(0, eq), std::size_t(v)).second)
      refuse_row(row, where, tok.substr(0, eq) + " is given twice");
  }
  return p;
}

// CLBlast's rules for its Xgemm kernel (the constraints its own tuner applies, CLBlast 1.5): KWG a
// multiple of KWI; MWG a multiple of MDIMC·VWM and of MDIMA·VWM; NWG of NDIMC·VWN and NDIMB·VWN; for
// GEMMK 0 KWG a multiple of MDIMC·NDIMC/MDIMA and of MDIMC·NDIMC/NDIMB; for GEMMK 1 KWG = KWI = 1,
// MDIMA = MDIMC, NDIMB = NDIMC, no local memory, KREG a multiple of VWN. Beyond CLBlast's own rules:
// GEMMK 1 with NWG ≠ MWG, which its tuner allows, gave wrong products on the H200 (relative error
// 1.4; BENCHMARKS.md "CLBlast's DGEMM on the H200", scripts/studies/data/gemm_tune), so it is refused.
void check_xgemm(const ClblastRow& row, const ClblastParams& p, const DeviceInfo& d, const std::string& where) {
  for (const char* k : kXgemmKeys)
    if (!p.count(k)) refuse_row(row, where, std::string("parameter ") + k + " is missing");
  for (const auto& [k, v] : p) {
    if (std::find_if(std::begin(kXgemmKeys), std::end(kXgemmKeys), [&](const char* x) { return k == x; }) ==
        std::end(kXgemmKeys))
      refuse_row(row, where, "CLBlast's Xgemm has no parameter " + k);
    if (v == 0 && k != "GEMMK" && k != "SA" && k != "SB" && k != "STRM" && k != "STRN")
      refuse_row(row, where, k + " = 0");
  }
  auto g = [&](const char* k) { return p.at(k); };
  auto multiple = [&](const char* a, std::size_t b, const std::string& rule) {
    if (b == 0 || g(a) % b != 0)
      refuse_row(row, where, std::string(a) + " = " + std::to_string(g(a)) + " is not a multiple of " + rule);
  };
  if (g("GEMMK") > 1 || g("SA") > 1 || g("SB") > 1 || g("STRM") > 1 || g("STRN") > 1)
    refuse_row(row, where, "GEMMK, SA, SB, STRM and STRN are 0 or 1");
  const std::size_t wg = g("MDIMC") * g("NDIMC");
  multiple("KWG", g("KWI"), "KWI");
  multiple("MWG", g("MDIMC") * g("VWM"), "MDIMC·VWM");
  multiple("MWG", g("MDIMA") * g("VWM"), "MDIMA·VWM");
  multiple("NWG", g("NDIMC") * g("VWN"), "NDIMC·VWN");
  multiple("NWG", g("NDIMB") * g("VWN"), "NDIMB·VWN");
  if (g("GEMMK") == 0) {
    multiple("KWG", wg / g("MDIMA"), "MDIMC·NDIMC/MDIMA");
    multiple("KWG", wg / g("NDIMB"), "MDIMC·NDIMC/NDIMB");
  } else {
    if (g("KWG") != 1 || g("KWI") != 1 || g("MDIMA") != g("MDIMC") || g("NDIMB") != g("NDIMC") || g("SA") || g("SB"))
      refuse_row(row, where, "GEMMK 1 needs KWG = KWI = 1, MDIMA = MDIMC, NDIMB = NDIMC and SA = SB = 0");
    multiple("KREG", g("VWN"), "VWN");
    if (g("NWG") != g("MWG"))
      refuse_row(row, where, "GEMMK 1 with NWG ≠ MWG gave wrong products on the H200; edm's table takes it only with NWG = MWG");
  }
  if (d.max_work_group > 0 && wg > d.max_work_group)
    refuse_row(row, where, "MDIMC·NDIMC = " + std::to_string(wg) + " work-items exceed the device's " +
                               std::to_string(d.max_work_group));
  // The compiled kernel takes a little local memory beyond its tiles: on the H200 tiles of exactly
  // its 48 KiB were refused by CLBlast at launch (kInvalidLocalMemUsage; BENCHMARKS.md "CLBlast's
  // DGEMM on the H200"), so 1 KiB is kept free, as for the field kernel's state.
  const std::uint64_t local = sizeof(double) * (g("SA") * g("KWG") * g("MWG") + g("SB") * g("KWG") * g("NWG"));
  if (d.local_memory > 0 && local + kClblastLocalSlack > d.local_memory)
    refuse_row(row, where, "its tiles take " + std::to_string(local) + " bytes of local memory, the device has " +
                               std::to_string(d.local_memory) + " (1 KiB of it kept free)");
}

}  // namespace

std::span<const ClblastRow> clblast_table() { return kClblastRows; }

bool clblast_tuning_enabled() {
  const char* v = std::getenv("EDM_CLBLAST_TUNING");
  if (!v) return true;
  const std::string s(v);
  if (s == "0" || s == "off" || s == "false" || s == "no") return false;
  if (s.empty() || s == "1" || s == "on" || s == "true" || s == "yes") return true;
  // Anything else was taken as "on" (EDM_CLBLAST_TUNING=banana; found by a hostile tester): a typo of
  // "off" then ran with the table the user meant to turn off.
  throw ConfigError("EDM-ACC-078", "EDM_CLBLAST_TUNING = \"" + s +
                                       "\" (environment): use 0, off, false or no to run with CLBlast's own "
                                       "parameters, 1, on, true or yes (or leave it unset) for edm's table");
}

std::vector<const ClblastRow*> clblast_rows(const DeviceInfo& d, std::span<const ClblastRow> table) {
  std::vector<const ClblastRow*> out;
  for (const ClblastRow& r : table) {
    if (d.vendor.find(r.vendor) == std::string::npos || d.name.find(r.device) == std::string::npos) continue;
    if (std::none_of(out.begin(), out.end(), [&](const ClblastRow* o) { return std::string(o->kernel) == r.kernel; }))
      out.push_back(&r);
  }
  return out;
}

std::map<std::string, std::size_t> clblast_parameters(const ClblastRow& row, const DeviceInfo& device,
                                                      const std::string& where) {
  ClblastParams p = parse_params(row, where);
  if (std::string(row.kernel) != "Xgemm") refuse_row(row, where, "edm's table tunes only CLBlast's Xgemm kernel");
  check_xgemm(row, p, device, where);
  return p;
}

std::span<const TuningRow> tuning_table() { return kRows; }

const TuningRow& tuning_row(const DeviceInfo& device) {
  for (const TuningRow& r : kRows)
    if (matches(r, device)) return r;
  return kRows[std::size(kRows) - 1];  // unreachable: the last row matches every device
}

KernelTuning resolve_tuning(const KernelOptions& requested, const DeviceInfo& device,
                            std::size_t max_parameter_bytes, const Screen& screen, const std::string& where) {
  check_request(requested);
  const TuningRow& row = tuning_row(device);
  KernelTuning t{requested, 0};
  KernelOptions& o = t.options;
  if (o.sample_chunks == 0) o.sample_chunks = default_chunks(row, device, screen);
  if (o.electron_group == 0) o.electron_group = row.electron_group;
  check_group_fits(o.electron_group, max_parameter_bytes, where);
  o.sample_chunks = std::min(o.sample_chunks, screen.samples);
  t.fixed_work_group = resolve_state_local(o, row, device, where);
  resolve_seeds(o, row, device, where);
  resolve_interleave(o, row, t.fixed_work_group, where);
  resolve_simd(o, requested, row, device, screen, t.fixed_work_group, where);
  if (o.max_registers == 0) o.max_registers = row.max_registers;
  if (o.pixel_order == PixelOrder::Auto && o.tile_width == 0 && o.ensemble_radius > 0) {
    const double pixels_rms = std::sqrt((screen.half_x * screen.half_x + screen.half_y * screen.half_y) / 3.0);
    o.pixel_order = o.ensemble_radius > kTilesAbove * pixels_rms ? PixelOrder::Tiles : kPixelOrder;
  }
  return t;
}

int tail_slabs(int requested, const DeviceInfo& device, const Screen& screen, const KernelOptions& o) {
  if (requested > 0) return std::min(requested, screen.ny);
  const TuningRow& row = tuning_row(device);
  if (requested < 0 || row.tail_items_per_cu <= 0) return 1;
  // On a CPU the slabs would share the cores with the write, so its rows keep one piece.
  const double items_per_cu =
      double(screen.pixels()) * std::max(1, o.sample_chunks) / double(std::max(1u, device.compute_units));
  const int slabs = int(items_per_cu / double(row.tail_items_per_cu));
  return std::clamp(slabs, 1, std::min(kMaxTailSlabs, screen.ny));
}

void resolve_launch_shape(KernelTuning& t, const DeviceInfo& device, std::size_t kernel_max_work_group,
                          std::size_t preferred_multiple, const std::string& where) {
  KernelOptions& o = t.options;
  // The kernel's preferred multiple (warp, wavefront or SIMD width) times what fits up to the row's
  // work-group, unless the local-memory state fixed it or it is set.
  const std::size_t mult = std::max<std::size_t>(1, preferred_multiple);
  const std::size_t aim =
      std::min<std::size_t>(std::size_t(tuning_row(device).work_group), kernel_max_work_group);
  const std::size_t wg = t.fixed_work_group > 0 ? t.fixed_work_group
                         : o.work_group > 0     ? std::size_t(o.work_group)
                                                : std::max(mult, aim / mult * mult);
  if (wg > kernel_max_work_group)
    throw ConfigError("EDM-ACC-007", "accumulator.work_group = " + std::to_string(wg) +
                                         " exceeds the kernel's "
                                         "maximum of " +
                                         std::to_string(kernel_max_work_group) + " on " + where);
  PixelOrder order = o.pixel_order;
  if (order == PixelOrder::Auto)
    order = o.tile_width > 0 ? PixelOrder::Tiles : o.tile_width < 0 ? PixelOrder::Rows : kPixelOrder;
  std::size_t tw = 0;
  if (order == PixelOrder::Tiles) {
    tw = o.tile_width > 0 ? std::size_t(o.tile_width) : (wg % kTileWidth == 0 ? kTileWidth : 1);
    if (wg % tw != 0)
      throw ConfigError("EDM-ACC-009", "tile width " + std::to_string(tw) +
                                           " does not divide the work-group size " + std::to_string(wg));
  }
  o.pixel_order = order;
  o.work_group = int(wg);
  o.tile_width = int(tw);
}

}  // namespace edm::detail

namespace edm {

std::string clblast_tuning_record(const DeviceInfo& device) {
  if (!detail::clblast_tuning_enabled()) return "off (EDM_CLBLAST_TUNING=0)";
  std::string out;
  for (const detail::ClblastRow* r : detail::clblast_rows(device, detail::clblast_table()))
    out += (out.empty() ? "" : ", ") + std::string(r->name) + ": " + r->kernel + " " + r->params;
  return out.empty() ? "CLBlast default" : out;
}

}  // namespace edm
