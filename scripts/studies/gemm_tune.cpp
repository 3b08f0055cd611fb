// CLBlast's DGEMM parameters for the dft spectra's shapes (BENCHMARKS.md "CLBlast's DGEMM on the
// H200"): the dft method (core/src/field/spectra_dft.cpp) calls, per electron, row-major
// clblast::Gemm<double>(kNo, kNo) with A = the Fourier matrix W (m = 2·nω rows of `nb` samples,
// lda = nb, column offset k_lo), B = field-cube rows k_lo … k_lo + k (ldb = n), C = m × n. This
// study allocates A, B, C with that layout (random values in [-1, 1]), and for each candidate set of
// the "Xgemm" kernel's parameters (and a few of the direct kernel "XgemmDirect", forced by
// GemmRoutine's XGEMM_MIN_INDIRECT_SIZE) calls clblast::OverrideParameters and times clblast::Gemm:
// one untimed call (it compiles), then REPS timed calls, wall clock from the first enqueue to
// clFinish. Each candidate's C is checked against the C of CLBlast's own parameters.
//   g++ -std=c++20 -O2 scripts/studies/gemm_tune.cpp -lclblast -lOpenCL -o build/studies/gemm_tune
//   build/studies/gemm_tune [DEVICE] [M N K ...]    (default: 0 4096 4096 651)
// DEVICE is the global index over all platforms (as `edm devices` lists them), or "gpu" (the first
// GPU). The first shape is searched; the best TOP candidates (and CLBlast's default) are then timed
// again on every shape. A set that gives a wrong C can leave the context unusable: the search then
// stops and prints its ranking so far.
// Env: CAP_S (wall-clock seconds for the search, default 240), MAX (candidates, default 400),
// REPS (timed calls, default 5), TOP (default 8), NB (samples of W and the cube, default 2048),
// CANDS (a file of candidates timed first: "Xgemm KEY=V ..." a line), STAGES (default 1234: tile
// shapes, neighbours of the AROUND best (default 3), GEMMK 1, the direct kernel),
// KLO (column offset, default 700; clamped so that KLO + K <= NB), ONLY_DEFAULT=1 (no search),
// DIRECT_ONLY=1 (the direct kernel's candidates first), STAGE1_SHARE (of CAP_S, default 0.45).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using Params = std::map<std::string, std::size_t>;  // ordered: printed in the database's order

// Summation order differs between parameter sets (KWG, KREG, the direct kernel); the products of
// values in [-1, 1] summed over k ≤ 2048 terms round at ≲ k·ε of the largest partial sum, ≪ 1e-12
// of max|C| (~ √k): anything above is a wrong kernel, not rounding.
constexpr double kRelTol = 1e-12;

double env_num(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

void check(cl_int st, const char* what) {
  if (st != CL_SUCCESS) {
    std::fprintf(stderr, "OpenCL error %d in %s\n", st, what);
    std::exit(1);
  }
}

std::string text(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

struct Shape {
  std::size_t m, n, k;
};

struct Setup {
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;
  std::size_t nb, k_lo;
  std::size_t local_mem, max_wg;
};

// One shape's buffers and its reference result (CLBlast's own parameters).
struct Problem {
  Shape s;
  cl_mem A, B, C;
  std::size_t k_lo;
  std::vector<double> reference;
  double ref_max = 0;
};

Problem make_problem(const Setup& S, Shape s, std::uint32_t seed) {
  Problem p{s, nullptr, nullptr, nullptr, std::min(S.k_lo, S.nb - s.k), {}, 0};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(s.m * S.nb), b(S.nb * s.n);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  cl_int st;
  p.A = clCreateBuffer(S.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 8, a.data(), &st);
  check(st, "A");
  p.B = clCreateBuffer(S.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 8, b.data(), &st);
  check(st, "B");
  p.C = clCreateBuffer(S.ctx, CL_MEM_READ_WRITE, s.m * s.n * 8, nullptr, &st);
  check(st, "C");
  return p;
}

clblast::StatusCode gemm(const Setup& S, const Problem& p) {
  cl_command_queue q = S.queue;
  return clblast::Gemm<double>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                               p.s.m, p.s.n, p.s.k, 1.0, p.A, p.k_lo, S.nb, p.B, p.k_lo * p.s.n, p.s.n, 0.0,
                               p.C, 0, p.s.n, &q, nullptr);
}

// Empty when the read fails: a kernel that wrote out of bounds leaves the context unusable.
std::vector<double> download(const Setup& S, const Problem& p) {
  std::vector<double> c(p.s.m * p.s.n);
  if (clEnqueueReadBuffer(S.queue, p.C, CL_TRUE, 0, c.size() * 8, c.data(), 0, nullptr, nullptr) != CL_SUCCESS)
    c.clear();
  return c;
}

// A candidate: the kernel it tunes ("Xgemm", or "XgemmDirect" with the direct path forced).
struct Candidate {
  bool direct = false;
  Params p;
};

struct Result {
  Candidate c;
  double ms = -1, tflops = 0, err = 0;
  std::string status;  // "ok", or why not
};

Params g_routine_default, g_xgemm_default, g_direct_default;

// Applies a candidate (the routine's size threshold restored, or raised so that the direct kernel
// runs), then one untimed call (compiles) and REPS timed ones.
Result measure(const Setup& S, Problem& p, const Candidate& c, int reps) {
  Result r;
  r.c = c;
  std::unordered_map<std::string, std::size_t> xp(c.p.begin(), c.p.end());
  std::unordered_map<std::string, std::size_t> rp(g_routine_default.begin(), g_routine_default.end());
  if (c.direct) rp["XGEMM_MIN_INDIRECT_SIZE"] = 1u << 20;
  auto st = clblast::OverrideParameters(S.device, "GemmRoutine", clblast::Precision::kDouble, rp);
  if (st == clblast::StatusCode::kSuccess)
    st = clblast::OverrideParameters(S.device, c.direct ? "XgemmDirect" : "Xgemm", clblast::Precision::kDouble, xp);
  if (st != clblast::StatusCode::kSuccess) {
    r.status = "override status " + std::to_string(int(st));
    return r;
  }
  st = gemm(S, p);
  if (st != clblast::StatusCode::kSuccess) {
    r.status = "gemm status " + std::to_string(int(st));
    return r;
  }
  clFinish(S.queue);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) gemm(S, p);
  clFinish(S.queue);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  r.ms = sec * 1e3;
  r.tflops = 2.0 * double(p.s.m) * double(p.s.n) * double(p.s.k) / sec * 1e-12;
  const auto c_now = download(S, p);
  if (c_now.empty()) {
    r.status = "BROKEN (reading C failed: the context is lost)";
    return r;
  }
  double worst = 0;
  for (std::size_t i = 0; i < c_now.size(); ++i) worst = std::max(worst, std::abs(c_now[i] - p.reference[i]));
  r.err = worst / p.ref_max;
  r.status = r.err <= kRelTol ? "ok" : "WRONG";
  return r;
}

void print(const char* tag, const Shape& s, const Result& r) {
  std::printf("%s m=%zu n=%zu k=%zu %s %s ms=%.3f TFLOP/s=%.2f err=%.2e %s\n", tag, s.m, s.n, s.k,
              r.c.direct ? "XgemmDirect" : "Xgemm", text(r.c.p).c_str(), r.ms, r.tflops, r.err, r.status.c_str());
  std::fflush(stdout);
}

// CLBlast's constraints of the indirect kernel (its xgemm tuner): KWG a multiple of KWI; MWG of
// MDIMC·VWM and MDIMA·VWM; NWG of NDIMC·VWN and NDIMB·VWN; for GEMMK 0, KWG of KDIMA = MDIMC·NDIMC /
// MDIMA and of KDIMB = MDIMC·NDIMC / NDIMB; for GEMMK 1 (2D register tiling), KWG = KWI = 1,
// MDIMA = MDIMC, NDIMB = NDIMC, no local memory and KREG a multiple of VWN. Plus the device: the
// local tiles fit its local memory and the work-group its maximum.
bool valid(const Params& p, const Setup& S) {
  auto g = [&](const char* k) { return p.at(k); };
  const std::size_t wg = g("MDIMC") * g("NDIMC");
  if (wg > S.max_wg || wg < 32) return false;
  if (g("KWG") % g("KWI") || g("MWG") % (g("MDIMC") * g("VWM")) || g("MWG") % (g("MDIMA") * g("VWM")) ||
      g("NWG") % (g("NDIMC") * g("VWN")) || g("NWG") % (g("NDIMB") * g("VWN")))
    return false;
  if (g("GEMMK") == 0) {
    if (wg % g("MDIMA") || wg % g("NDIMB")) return false;
    if (g("KWG") % (wg / g("MDIMA")) || g("KWG") % (wg / g("NDIMB"))) return false;
  } else {
    if (g("KWG") != 1 || g("KWI") != 1 || g("MDIMA") != g("MDIMC") || g("NDIMB") != g("NDIMC") || g("SA") ||
        g("SB") || g("KREG") % g("VWN"))
      return false;
  }
  const std::size_t local = 8 * (g("SA") * g("KWG") * g("MWG") + g("SB") * g("KWG") * g("NWG"));
  // Tiles of exactly the device's local memory were refused by CLBlast at launch on the H200
  // (kInvalidLocalMemUsage, status -2046): the compiled kernel takes a little more; 1 KiB is kept free.
  if (local + 1024 > S.local_mem) return false;
  // The per-work-item tile of C lives in registers: beyond 64 doubles (128 of NVIDIA's 255
  // registers) it spills, below 4 the work-item loads more than it computes.
  const std::size_t tile = (g("MWG") / g("MDIMC")) * (g("NWG") / g("NDIMC"));
  return tile >= 4 && tile <= 64;
}

Params xgemm(std::size_t gemmk, std::size_t mwg, std::size_t nwg, std::size_t kwg, std::size_t mdimc,
             std::size_t ndimc, std::size_t mdima, std::size_t ndimb, std::size_t kwi, std::size_t vwm,
             std::size_t vwn, std::size_t strm, std::size_t strn, std::size_t sa, std::size_t sb, std::size_t kreg) {
  return {{"GEMMK", gemmk}, {"MWG", mwg},   {"NWG", nwg},   {"KWG", kwg},   {"MDIMC", mdimc}, {"NDIMC", ndimc},
          {"MDIMA", mdima}, {"NDIMB", ndimb}, {"KWI", kwi}, {"VWM", vwm},   {"VWN", vwn},     {"STRM", strm},
          {"STRN", strn},   {"SA", sa},     {"SB", sb},     {"KREG", kreg}};
}

// Stage 1, the tile shapes (CLBlast's exhaustive variant: MDIMA = MDIMC, NDIMB = NDIMC, local
// memory for both, KWI = 2), ordered so that the shapes a large FP64 GPU favours come first:
// 128- and 64-wide work-group tiles, 256 work-items, 16–64 doubles of C per work-item.
std::vector<Candidate> stage_tiles(const Setup& S) {
  std::vector<std::pair<double, Candidate>> scored;
  for (std::size_t mwg : {128, 64, 32})
    for (std::size_t nwg : {128, 64, 32})
      for (std::size_t kwg : {16, 32})
        for (std::size_t mdimc : {16, 8, 32})
          for (std::size_t ndimc : {16, 8, 32})
            for (std::size_t vwm : {2, 1, 4})
              for (std::size_t vwn : {2, 1, 4}) {
                Params p = xgemm(0, mwg, nwg, kwg, mdimc, ndimc, mdimc, ndimc, 2, vwm, vwn, 0, 0, 1, 1, 1);
                if (!valid(p, S)) continue;
                const double tile = double((mwg / mdimc) * (nwg / ndimc));
                const double wg = double(mdimc * ndimc);
                double score = std::abs(std::log2(tile / 32.0)) + 0.7 * std::abs(std::log2(wg / 256.0)) +
                               0.5 * std::abs(std::log2(double(mwg * nwg) / (128.0 * 64.0))) +
                               0.3 * (vwm == 2 ? 0 : 1) + 0.3 * (vwn == 2 ? 0 : 1) + 0.2 * (kwg == 16 ? 0 : 1);
                scored.push_back({score, {false, p}});
              }
  std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<Candidate> out;
  for (auto& [s, c] : scored) out.push_back(c);
  return out;
}

// Stage 2: around each of the best tile shapes, the parameters stage 1 held fixed (local memory
// for A and B, strides, the re-shaped loading tiles MDIMA/NDIMB, the unroll KWI, KWG).
std::vector<Candidate> stage_neighbours(const Setup& S, const Params& base) {
  std::vector<Candidate> out;
  auto add = [&](Params p) {
    if (valid(p, S)) out.push_back({false, p});
  };
  for (std::size_t sa : {0, 1})
    for (std::size_t sb : {0, 1}) {
      Params p = base;
      p["SA"] = sa, p["SB"] = sb;
      add(p);
    }
  for (std::size_t strm : {0, 1})
    for (std::size_t strn : {0, 1}) {
      Params p = base;
      p["STRM"] = strm, p["STRN"] = strn;
      add(p);
    }
  for (std::size_t mdima : {8, 16, 32})
    for (std::size_t ndimb : {8, 16, 32}) {
      Params p = base;
      p["MDIMA"] = mdima, p["NDIMB"] = ndimb;
      add(p);
    }
  for (std::size_t kwi : {1, 2, 4, 8}) {
    Params p = base;
    p["KWI"] = kwi;
    add(p);
  }
  for (std::size_t kwg : {8, 16, 32, 64}) {
    Params p = base;
    p["KWG"] = kwg;
    add(p);
  }
  return out;
}

// Stage 3: the 2D-register-tiling kernel (GEMMK = 1, no local memory; TITAN RTX's entry in
// CLBlast's database uses it). NWG = 32 gave wrong products on the H200 and then a lost context
// (BENCHMARKS.md "CLBlast's DGEMM on the H200"), so only 64- and 128-wide tiles are tried.
std::vector<Candidate> stage_gemmk1(const Setup& S) {
  std::vector<Candidate> out;
  for (std::size_t mwg : {64, 128})
    for (std::size_t nwg : {64, 128})
      for (std::size_t mdimc : {16, 8})
        for (std::size_t ndimc : {16, 8})
          for (std::size_t v : {1, 2})
            for (std::size_t kreg : {2, 4}) {
              Params p = xgemm(1, mwg, nwg, 1, mdimc, ndimc, mdimc, ndimc, 1, v, v, 0, 0, 0, 0, kreg);
              if (valid(p, S)) out.push_back({false, p});
            }
  return out;
}

// Stage 4: the direct kernel (no padding or transposing copies of A, B and C; CLBlast meant it for
// small products) with WGD the tile in m, n and k. Its tuner's constraints: WGD a multiple of KWID,
// of MDIMCD·VWMD, MDIMAD·VWMD, NDIMCD·VWND, NDIMBD·VWND, and of MDIMCD·NDIMCD / MDIMAD (/ NDIMBD).
std::vector<Candidate> stage_direct(const Setup& S) {
  std::vector<Candidate> out;
  for (std::size_t wgd : {32, 64})
    for (std::size_t dim : {16, 8})
      for (std::size_t v : {2, 1, 4})
        for (std::size_t kwid : {2, 8}) {
          const std::size_t wg = dim * dim;
          if (wgd % kwid || wgd % (dim * v) || wgd % (wg / dim) || wg > S.max_wg) continue;
          if (8 * 2 * wgd * (wgd + 1) > S.local_mem) continue;
          const std::size_t tile = (wgd / dim) * (wgd / dim);
          if (tile > 64) continue;
          out.push_back({true, {{"WGD", wgd}, {"MDIMCD", dim}, {"NDIMCD", dim}, {"MDIMAD", dim}, {"NDIMBD", dim},
                                {"KWID", kwid}, {"VWMD", v}, {"VWND", v}, {"PADA", 1}, {"PADB", 1}}});
        }
  return out;
}

// Candidates from a file, one a line: "Xgemm KEY=V ..." or "XgemmDirect KEY=V ..." ('#' lines skipped).
std::vector<Candidate> read_candidates(const char* file) {
  std::vector<Candidate> out;
  std::FILE* f = std::fopen(file, "r");
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", file);
    std::exit(2);
  }
  char line[2048];
  while (std::fgets(line, sizeof line, f)) {
    std::string l(line);
    if (l.empty() || l[0] == '#' || l[0] == '\n') continue;
    Candidate c;
    std::size_t pos = 0;
    bool first = true;
    while (pos < l.size()) {
      const std::size_t b = l.find_first_not_of(" \t\n", pos);
      if (b == std::string::npos) break;
      const std::size_t e = l.find_first_of(" \t\n", b);
      const std::string tok = l.substr(b, e == std::string::npos ? std::string::npos : e - b);
      pos = e == std::string::npos ? l.size() : e;
      if (first) {
        c.direct = tok == "XgemmDirect";
        first = false;
        continue;
      }
      const std::size_t eq = tok.find('=');
      if (eq != std::string::npos) c.p[tok.substr(0, eq)] = std::size_t(std::atoll(tok.c_str() + eq + 1));
    }
    out.push_back(c);
  }
  std::fclose(f);
  return out;
}

Params retrieve(const Setup& S, const char* kernel) {
  std::unordered_map<std::string, std::size_t> p;
  if (clblast::RetrieveParameters(S.device, kernel, clblast::Precision::kDouble, p) != clblast::StatusCode::kSuccess) {
    std::fprintf(stderr, "RetrieveParameters(%s) failed\n", kernel);
    std::exit(1);
  }
  return Params(p.begin(), p.end());
}

// `spec`: a global index, or "gpu" for the first GPU.
Setup open(const std::string& spec) {
  int index = spec == "gpu" ? -1 : std::atoi(spec.c_str());
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> plats(np);
  clGetPlatformIDs(np, plats.data(), nullptr);
  std::vector<cl_device_id> all;
  for (auto p : plats) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) continue;
    std::vector<cl_device_id> d(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, d.data(), nullptr);
    all.insert(all.end(), d.begin(), d.end());
  }
  for (std::size_t i = 0; index < 0 && i < all.size(); ++i) {
    cl_device_type t = 0;
    clGetDeviceInfo(all[i], CL_DEVICE_TYPE, sizeof t, &t, nullptr);
    if (t & CL_DEVICE_TYPE_GPU) index = int(i);
  }
  if (index < 0 || std::size_t(index) >= all.size()) {
    std::fprintf(stderr, "no device %d (%zu devices)\n", index, all.size());
    std::exit(2);
  }
  Setup S{};
  S.device = all[std::size_t(index)];
  char name[256] = {0}, vendor[256] = {0}, driver[256] = {0};
  clGetDeviceInfo(S.device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  clGetDeviceInfo(S.device, CL_DEVICE_VENDOR, sizeof vendor - 1, vendor, nullptr);
  clGetDeviceInfo(S.device, CL_DRIVER_VERSION, sizeof driver - 1, driver, nullptr);
  cl_ulong local = 0;
  clGetDeviceInfo(S.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
  clGetDeviceInfo(S.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof S.max_wg, &S.max_wg, nullptr);
  S.local_mem = local;
  std::printf("device %d: %s (%s), driver %s, local memory %zu B, max work-group %zu\n", index, name, vendor,
              driver, S.local_mem, S.max_wg);
  cl_int st;
  S.ctx = clCreateContext(nullptr, 1, &S.device, nullptr, nullptr, &st);
  check(st, "context");
  S.queue = clCreateCommandQueue(S.ctx, S.device, 0, &st);
  check(st, "queue");
  return S;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string spec = argc > 1 ? argv[1] : "0";
  std::vector<Shape> shapes;
  for (int i = 2; i + 2 < argc; i += 3)
    shapes.push_back({std::size_t(std::atoll(argv[i])), std::size_t(std::atoll(argv[i + 1])),
                      std::size_t(std::atoll(argv[i + 2]))});
  if (shapes.empty()) shapes.push_back({4096, 4096, 651});
  const double cap = env_num("CAP_S", 240), max_candidates = env_num("MAX", 400);
  const int reps = int(env_num("REPS", 5)), top = int(env_num("TOP", 8));
  Setup S = open(spec);
  S.nb = std::size_t(env_num("NB", 2048));
  S.k_lo = std::size_t(env_num("KLO", 700));
  for (auto& s : shapes)
    if (s.k > S.nb) S.nb = s.k;

  g_routine_default = retrieve(S, "GemmRoutine");
  g_xgemm_default = retrieve(S, "Xgemm");
  g_direct_default = retrieve(S, "XgemmDirect");
  std::printf("CLBlast default GemmRoutine: %s\n", text(g_routine_default).c_str());
  std::printf("CLBlast default Xgemm: %s\n", text(g_xgemm_default).c_str());
  std::printf("CLBlast default XgemmDirect: %s\n", text(g_direct_default).c_str());

  // Every shape's reference C from CLBlast's own parameters (timed too: the baseline).
  std::vector<Problem> problems;
  std::vector<Result> defaults;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    problems.push_back(make_problem(S, shapes[i], 1234u + std::uint32_t(i)));
    Problem& p = problems.back();
    if (gemm(S, p) != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "the default Gemm failed\n");
      return 1;
    }
    p.reference = download(S, p);
    if (p.reference.empty()) {
      std::fprintf(stderr, "reading the default C failed\n");
      return 1;
    }
    for (double x : p.reference) p.ref_max = std::max(p.ref_max, std::abs(x));
    Result r = measure(S, p, {false, g_xgemm_default}, reps);
    print("default", p.s, r);
    defaults.push_back(r);
  }
  if (env_num("ONLY_DEFAULT", 0) > 0) return 0;

  // The search, on the first shape, in stages, under the wall-clock cap.
  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  std::vector<Result> results;
  std::set<std::string> seen{text(g_xgemm_default)};
  bool broken = false;
  auto run = [&](const Candidate& c) {
    if (broken || elapsed() > cap || double(results.size()) >= max_candidates) return false;
    const std::string key = (c.direct ? "D " : "X ") + text(c.p);
    if (!seen.insert(key).second) return true;
    Result r = measure(S, problems[0], c, reps);
    print("cand", problems[0].s, r);
    results.push_back(r);
    broken = r.status.rfind("BROKEN", 0) == 0;
    return !broken;
  };
  auto best_ok = [&](std::size_t n) {
    std::vector<Result> ok;
    for (auto& r : results)
      if (r.status == "ok" && !r.c.direct) ok.push_back(r);
    std::sort(ok.begin(), ok.end(), [](auto& a, auto& b) { return a.ms < b.ms; });
    if (ok.size() > n) ok.resize(n);
    return ok;
  };
  const double stage1_share = env_num("STAGE1_SHARE", 0.45);
  const std::string stages = std::getenv("STAGES") ? std::getenv("STAGES") : "1234";
  auto stage = [&](char c) { return stages.find(c) != std::string::npos; };
  if (const char* f = std::getenv("CANDS"); f && *f) {
    for (const auto& c : read_candidates(f)) {
      if (!c.direct && (c.p.size() != 16 || !valid(c.p, S))) {
        std::printf("skipped (breaks CLBlast's rules or the device's limits): %s\n", text(c.p).c_str());
        continue;
      }
      if (!run(c)) break;
    }
    std::printf("# stage 0 (%s) done: %zu candidates, %.1f s\n", f, results.size(), elapsed());
  }
  if (env_num("DIRECT_ONLY", 0) > 0)
    for (const auto& c : stage_direct(S)) run(c);
  if (stage('1'))
    for (const auto& c : stage_tiles(S))
      if (elapsed() > stage1_share * cap || !run(c)) break;
  std::printf("# stage 1 (tile shapes) done: %zu candidates, %.1f s\n", results.size(), elapsed());
  if (stage('2'))
    for (const auto& b : best_ok(std::size_t(env_num("AROUND", 3))))
      for (const auto& c : stage_neighbours(S, b.c.p))
        if (elapsed() > 0.75 * cap || !run(c)) break;
  std::printf("# stage 2 (neighbours) done: %zu candidates, %.1f s\n", results.size(), elapsed());
  if (stage('3'))
    for (const auto& c : stage_gemmk1(S))
      if (elapsed() > 0.88 * cap || !run(c)) break;
  std::printf("# stage 3 (GEMMK 1) done: %zu candidates, %.1f s\n", results.size(), elapsed());
  if (stage('4'))
    for (const auto& c : stage_direct(S))
      if (!run(c)) break;
  std::printf("# stage 4 (direct) done: %zu candidates, %.1f s\n", results.size(), elapsed());

  std::vector<Result> ranked;
  for (auto& r : results)
    if (r.status == "ok") ranked.push_back(r);
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.ms < b.ms; });
  std::printf("# ranking on m=%zu n=%zu k=%zu (%zu ok of %zu)\n", shapes[0].m, shapes[0].n, shapes[0].k,
              ranked.size(), results.size());
  for (std::size_t i = 0; i < ranked.size() && i < 20; ++i) print("rank", shapes[0], ranked[i]);
  if (ranked.size() > std::size_t(top)) ranked.resize(std::size_t(top));

  // The best again on every shape (the first too: a second sample of its time), with the default.
  for (std::size_t i = 0; i < problems.size() && !broken; ++i) {
    print("again-default", problems[i].s, measure(S, problems[i], {false, g_xgemm_default}, reps));
    for (const auto& r : ranked) print("again", problems[i].s, measure(S, problems[i], r.c, reps));
  }
  if (!ranked.empty()) print("best", shapes[0], ranked.front());
  return 0;
}
