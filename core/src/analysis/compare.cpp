// edm compare's arithmetic (edm/compare.hpp): the screens checked to be one (or mirror images),
// then the differences of every dataset both runs hold, accumulated so that field.h5 is never held
// whole.
#include "edm/compare.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <map>
#include <numbers>

#include "edm/error.hpp"
#include "edm/screen.hpp"

namespace edm {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw ConfigError("EDM-CMP-001", "the runs are not comparable: " + what);
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void same_count(const char* key, std::size_t a, std::size_t b) {
  if (a != b) refuse(std::string(key) + " differs (" + std::to_string(a) + " in A, " + std::to_string(b) + " in B)");
}

// An axis agrees when every element is within kAxisTolerance of the axis's own scale (its largest
// magnitude), so that a zero-crossing pixel centre is not compared relative to itself.
void same_axis(const char* key, const std::vector<double>& a, const std::vector<double>& b) {
  same_count(key, a.size(), b.size());
  double scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) scale = std::max({scale, std::abs(a[i]), std::abs(b[i])});
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= kAxisTolerance * scale))
      refuse(std::string(key) + " differs at index " + std::to_string(i) + " (" + num(a[i]) + " in A, " +
             num(b[i]) + " in B)");
}

// Sums of one real quantity: Σ(a−b)², Σb², max|a−b|; a NaN on one side only is an infinite difference.
struct Acc {
  double d2 = 0, b2 = 0, max_abs = 0;
  std::size_t n = 0;
  void add(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) {
      ++n;
      if (!(std::isnan(a) && std::isnan(b))) d2 = max_abs = INFINITY;
      return;
    }
    add_difference(a - b, b);
  }
  // A difference of magnitude |d| against a reference of magnitude |b| (complex values' moduli).
  void add_difference(double d, double b) {
    ++n;
    if (std::isnan(d) || std::isnan(b)) {
      d2 = max_abs = INFINITY;
      return;
    }
    d2 += d * d;
    b2 += b * b;
    max_abs = std::max(max_abs, std::abs(d));
  }
  double rel() const {
    if (d2 == 0) return 0;
    return b2 > 0 ? std::sqrt(d2 / b2) : INFINITY;
  }
};

CompareRow row_of(const std::string& file, const std::string& name, const char* measure, const std::string& unit,
                  const Acc& acc) {
  return {file, name, measure, unit, acc.rel(), acc.max_abs, acc.n};
}

// A phase in (−π, π]: a vortex map's principal values jump by 2π where the runs barely differ.
double wrapped(double d) { return std::remainder(d, 2 * std::numbers::pi); }

// The sign a component of B takes under the reflection z → −z: E is a vector (E_z flips), B an
// axial vector (B_x and B_y flip).
double mirror_sign(const std::string& bucket_text, int comp) {
  const bool electric = bucket_text[0] == 'E';
  return (electric ? comp == 2 : comp < 2) ? -1.0 : 1.0;
}

void compare_field(const FieldFile& a, const FieldFile& b, bool mirror_z, CompareResult& out) {
  const FieldGeometry& g = a.geometry();
  // About 4 Mi doubles per slab and side, whatever the screen.
  const std::size_t row_elems = std::max<std::size_t>(1, g.nx * g.samples);
  const std::size_t slab = std::max<std::size_t>(1, (std::size_t{1} << 22) / row_elems);
  std::vector<double> ra, rb;
  if (g.potential) {  // run.mode = "potential": /A/x, /A/y, /A/z, /A0 (V·s/m) instead of the buckets
    for (int comp = 0; comp < 4; ++comp) {
      // Under z → −z the vector potential is a polar vector (A_z flips) and φ/c a scalar.
      const double sign = mirror_z && comp == 2 ? -1.0 : 1.0;
      Acc acc;
      for (std::size_t iy = 0; iy < g.ny; iy += slab) {
        const std::size_t iy1 = std::min(g.ny, iy + slab);
        a.read_potential_rows(comp, iy, iy1, ra);
        b.read_potential_rows(comp, iy, iy1, rb);
        for (std::size_t i = 0; i < ra.size(); ++i) acc.add(ra[i], sign * rb[i]);
      }
      out.rows.push_back(row_of(a.path().filename().string(), FieldFile::potential_name(comp), "value", "V s/m", acc));
    }
    return;
  }
  for (const std::string& bucket_text : a.summary().buckets) {
    int bucket = -1;
    for (int k = kBucketE; k <= kBucketBFar; ++k)
      if (bucket_text == bucket_name(k)) bucket = k;
    if (bucket < 0) continue;  // FieldFile::open admits only these four
    for (int comp = 0; comp < 3; ++comp) {
      const double sign = mirror_z ? mirror_sign(bucket_text, comp) : 1.0;
      Acc acc;
      for (std::size_t iy = 0; iy < g.ny; iy += slab) {
        const std::size_t iy1 = std::min(g.ny, iy + slab);
        a.read_rows(bucket, comp, iy, iy1, ra);
        b.read_rows(bucket, comp, iy, iy1, rb);
        for (std::size_t i = 0; i < ra.size(); ++i) acc.add(ra[i], sign * rb[i]);
      }
      out.rows.push_back(row_of(a.path().filename().string(), FieldFile::component_name(bucket, comp), "value",
                                bucket_text[0] == 'E' ? "V/m" : "T", acc));
    }
  }
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// `file`: the name the rows give (the owner's file name: no file name is spelled here).
void compare_real(const std::string& file, const SpectrumFile::Dataset& a, const SpectrumFile::Dataset& b,
                  CompareResult& out) {
  // A principal-value phase map (harmonic_field/*_phase) is compared modulo 2π.
  const bool phase = ends_with(a.name, "_phase");
  Acc acc;
  for (std::size_t i = 0; i < a.real.size(); ++i) {
    if (phase && std::isfinite(a.real[i]) && std::isfinite(b.real[i]))
      acc.add(b.real[i] + wrapped(a.real[i] - b.real[i]), b.real[i]);
    else
      acc.add(a.real[i], b.real[i]);
  }
  out.rows.push_back(row_of(file, a.name, "value", a.unit, acc));
}

// A complex dataset: the complex difference, the amplitudes', and the phases' weighted by |b|².
void compare_complex(const std::string& file, const SpectrumFile::Dataset& a, const SpectrumFile::Dataset& b,
                     CompareResult& out) {
  Acc value, amp;
  double bmax = 0;
  for (std::size_t i = 0; i < b.real.size(); ++i) bmax = std::max(bmax, std::hypot(b.real[i], b.imag[i]));
  double w2 = 0, wphi2 = 0, phi_max = 0;
  for (std::size_t i = 0; i < a.real.size(); ++i) {
    const std::complex<double> za(a.real[i], a.imag[i]), zb(b.real[i], b.imag[i]);
    if (std::isnan(std::abs(za)) && std::isnan(std::abs(zb))) continue;  // the same gap in both runs
    const std::complex<double> dz = za - zb;
    value.add_difference(std::abs(dz), std::abs(zb));
    amp.add(std::abs(za), std::abs(zb));
    const double ab = std::abs(zb);
    if (ab == 0 || std::abs(za) == 0) continue;
    const double dphi = wrapped(std::arg(za) - std::arg(zb));
    w2 += ab * ab;
    wphi2 += ab * ab * dphi * dphi;
    if (ab >= kPhaseFloor * bmax) phi_max = std::max(phi_max, std::abs(dphi));
  }
  out.rows.push_back(row_of(file, a.name, "value", a.unit, value));
  out.rows.push_back(row_of(file, a.name, "amplitude", a.unit, amp));
  const double phase_rms = wphi2 == 0 ? 0 : (w2 > 0 ? std::sqrt(wphi2 / w2) : INFINITY);
  out.rows.push_back({file, a.name, "phase", "rad", phase_rms, phi_max, a.real.size()});
}

void compare_part(const SpectrumFile& a, const SpectrumFile& b, SpectrumPart part, CompareResult& out) {
  const std::string file = a.path().filename().string();
  std::map<std::string, SpectrumFile::Dataset> bs;
  for (auto& d : b.datasets(part)) bs.emplace(d.name, std::move(d));
  for (const auto& da : a.datasets(part)) {
    const auto it = bs.find(da.name);
    if (it == bs.end()) {
      out.only_a.push_back(file + " " + da.name);
      continue;
    }
    const auto& db = it->second;
    if (da.shape != db.shape || da.complex != db.complex)
      refuse(file + " dataset " + da.name + " has another shape or type in A than in B");
    if (da.complex)
      compare_complex(file, da, db, out);
    else
      compare_real(file, da, db, out);
    bs.erase(it);
  }
  for (const auto& [name, d] : bs) out.only_b.push_back(file + " " + name);
}

}  // namespace

const CompareRow* CompareResult::largest() const {
  const CompareRow* best = nullptr;
  for (const auto& r : rows)
    if (!best || std::isnan(r.rel_l2) || (!std::isnan(best->rel_l2) && r.rel_l2 > best->rel_l2)) {
      best = &r;
      if (std::isnan(r.rel_l2)) break;
    }
  return best;
}

void check_comparable(const FieldFile& a, const FieldFile& b, bool mirror_z) {
  const FieldFileSummary &sa = a.summary(), &sb = b.summary();
  if (sa.screen_type != sb.screen_type)
    refuse("screen.type differs (" + sa.screen_type + " in A, " + sb.screen_type + " in B)");
  if (mirror_z && a.geometry().angular)
    refuse("a mirror comparison (z → −z) takes flat screens; screen.type is " + sa.screen_type +
           " (the mirror of an angular screen about one axis is the screen about the opposite axis, whose θy "
           "runs the other way)");
  const FieldGeometry &ga = a.geometry(), &gb = b.geometry();
  same_count("screen.nx", ga.nx, gb.nx);
  same_count("screen.ny", ga.ny, gb.ny);
  same_count("screen.samples", ga.samples, gb.samples);
  same_axis("the screen's x axis", ga.x, gb.x);
  same_axis("the screen's y axis", ga.y, gb.y);
  same_axis("the observer time axis t", ga.t, gb.t);
  const double zb = mirror_z ? -gb.screen_z : gb.screen_z;  // B's screen reflected onto A's side
  const bool both_inf = std::isinf(ga.screen_z) && std::isinf(zb) && ga.screen_z == zb;
  if (!both_inf && !(std::abs(ga.screen_z - zb) <= kAxisTolerance * std::abs(zb)))
    refuse(std::string(mirror_z ? "screen.distance is not mirrored (B's must be minus A's: " : "screen.distance differs (") +
           num(ga.screen_z) + " m in A, " + num(gb.screen_z) + " m in B)");
  if (ga.angular && (ga.screen_angles != gb.screen_angles || ga.screen_axis != gb.screen_axis))
    refuse("screen.angles or screen.axis differs (" + ga.screen_angles + "/" + ga.screen_axis + " in A, " +
           gb.screen_angles + "/" + gb.screen_axis + " in B)");
  if (sa.mode != sb.mode) refuse("mode differs (" + sa.mode + " in A, " + sb.mode + " in B)");
  if (sa.buckets != sb.buckets) {
    std::string ja, jb;
    for (const auto& s : sa.buckets) ja += (ja.empty() ? "" : ",") + s;
    for (const auto& s : sb.buckets) jb += (jb.empty() ? "" : ",") + s;
    refuse(a.path().filename().string() + "'s buckets differ (" + ja + " in A, " + jb + " in B)");
  }
}

CompareResult compare_runs(const FieldFile& a, const FieldFile& b, const SpectrumFile* sa, const SpectrumFile* sb,
                           bool mirror_z) {
  check_comparable(a, b, mirror_z);
  CompareResult out;
  compare_field(a, b, mirror_z, out);
  if (mirror_z) {
    if (sa && sb) out.not_compared.push_back(sa->path().filename().string() + " (under the mirror z → −z)");
    return out;
  }
  const auto part_of = [](const SpectrumFile* s, SpectrumPart p) {
    return s && (p == SpectrumPart::Direct ? s->has_direct() : s->has_analysis());
  };
  for (SpectrumPart p : {SpectrumPart::Direct, SpectrumPart::Analysis}) {
    const bool ha = part_of(sa, p), hb = part_of(sb, p);
    const SpectrumFile* s = ha ? sa : sb;
    const std::string label = (s ? s->path().filename().string() : std::string()) +
                              (p == SpectrumPart::Direct ? " /direct (edm run)" : " (edm spectrum's part)");
    if (ha && hb)
      compare_part(*sa, *sb, p, out);
    else if (ha)
      out.only_a.push_back(label);
    else if (hb)
      out.only_b.push_back(label);
  }
  return out;
}

}  // namespace edm
