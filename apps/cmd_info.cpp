// edm info RUN: summarises a run folder — provenance, configuration, physics, window coverage,
// timings, what field.h5 holds, the energy through the screen when spectrum.h5 exists, file sizes.
// The reading is edm::inspect_run_folder (core); this file only formats.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "options.hpp"
#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum_file.hpp"
#include "edm/spectrum.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
  return buf;
}

std::string scalar(const toml::node& n) {
  if (auto s = n.value<std::string>()) return *s;
  if (auto i = n.value_exact<int64_t>()) return std::to_string(*i);
  if (auto d = n.value<double>()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", *d);
    return buf;
  }
  if (auto b = n.value<bool>()) return *b ? "true" : "false";
  // Dates, times and anything else: let toml++ format it.
  std::string out;
  n.visit([&](const auto& v) {
    std::ostringstream os;
    if constexpr (toml::is_date<decltype(v)> || toml::is_time<decltype(v)> || toml::is_date_time<decltype(v)>)
      os << v;
    else
      os << "?";
    out = os.str();
  });
  return out;
}

// One manifest section as "  title: key=value, key=value …", wrapped; sub-tables are skipped
// ([config.origin] is long and belongs to `cat run.toml`). A section the run did not write prints
// nothing.
void section(const toml::table& m, const char* name, const char* title, const char* units = nullptr) {
  const toml::table* t = m[name].as_table();
  if (!t || t->empty()) return;
  std::string line = std::string("  ") + title + ":";
  const std::size_t indent = line.size();
  std::string out;
  bool first = true;
  for (const auto& [k, v] : *t) {
    if (v.is_table() || v.is_array()) continue;
    std::string item = std::string(k.str()) + "=" + scalar(v);
    if (line.size() + item.size() + 2 > 100 && !first) {
      out += line + ",\n";
      line = std::string(indent, ' ');
      first = true;
    }
    line += (first ? " " : ", ") + item;
    first = false;
  }
  out += line;
  if (units) out += std::string("   [") + units + "]";
  std::cout << out << "\n";
}

// /direct at the direction nearest the axis (nearest_axis_sample: the one edm spectrum picks), per
// sum: the peak there and the yield at the run's line.
void print_direct_on_axis(const RunFolderInfo& info, double line_omega, double wl) {
  const auto d = read_direct_on_axis(*info.spectrum_file, info.manifest.screen_axis(), line_omega);
  if (!d) return;
  std::cout << "            on axis: " << axis_sample_text(d->axis, false) << "\n";
  char buf[400];
  for (const auto& p : d->sums) {
    std::snprintf(buf, sizeof buf, "            %s on axis (n = %.4g, %.4g, %.4g): ", p.sum.c_str(), d->direction[0],
                  d->direction[1], d->direction[2]);
    std::cout << buf;
    if (!std::isfinite(p.peak_omega)) {
      std::cout << "no light on axis\n";
      continue;
    }
    std::snprintf(buf, sizeof buf, "peak %.6g ω_L, d²W/dωdΩ %.6e J·s/rad/sr, %.6e photons/sr per 0.1%% BW",
                  p.peak_omega / wl, p.peak_d2W, p.peak_photons_per_bw);
    std::cout << buf;
    if (std::isfinite(p.line_photons_per_bw)) {
      std::snprintf(buf, sizeof buf,
                    "; at the line ω_1 = %.6g ω_L %.4e photons/sr per 0.1%% BW (linear between /direct's %.6g and "
                    "%.6g ω_L)",
                    line_omega / wl, p.line_photons_per_bw, p.line_from / wl, p.line_to / wl);
      std::cout << buf;
    }
    std::cout << "\n";
  }
}

// spectrum.h5's /direct (the run's direct spectra): grid, method, sums and the on-axis peaks. Its
// run id must be the folder's (run.toml, and field.h5 when present); a mismatch is printed and
// returned, so the caller refuses the folder after the summary, never showing it as valid.
std::string direct_spectra(const RunFolderInfo& info, const std::string& run_id, double line_omega) {
  const auto d = info.spectrum_file->direct_summary();
  if (!d) return "";
  char buf[320];
  const double wl = d->laser_omega;
  std::snprintf(buf, sizeof buf,
                "  spectrum.h5 /direct: %zu x %zu directions x %zu ω (%s, %.6g … %.6g ω_L = %.6g … %.6g rad/s), "
                "sum %s\n",
                d->nx, d->ny, d->frequencies, d->scale.c_str(), d->omega_min / wl, d->omega_max / wl, d->omega_min,
                d->omega_max, d->sum.c_str());
  std::cout << buf;
  std::snprintf(buf, sizeof buf, "            method %s, nodes %g, phase %g rad; %.0f electrons, weight sum %.6g\n",
                d->method.c_str(), d->nodes, d->phase, d->electrons, d->weight_sum);
  std::cout << buf;
  print_direct_on_axis(info, line_omega, wl);
  const RunFolder run(info.folder);
  std::string want = run_id, of = run.manifest().filename().string();
  if (info.field && !info.field->run_id.empty() && want == "?") want = info.field->run_id, of = run.field().filename().string();
  if (d->run_id == want) return "";
  const std::string why = RunFolder(info.folder).spectrum().string() + " /direct is of run " + d->run_id + ", " + of +
                          "'s run is " + want + " (two runs wrote this folder, or a file was replaced)";
  std::cout << "            MISMATCH: " << why << "\n";
  return why;
}

// The time-domain spectrum of spectrum.h5 (edm spectrum) carries the run id of the field.h5 it
// was computed from: one of another run (a file copied in, or left by a run that --overwrite
// replaced before edm moved it aside) is refused, not shown as this run's (found by tests/test_hostile).
std::string time_domain_mismatch(const RunFolderInfo& info, const std::string& run_id) {
  const SpectrumSummary& s = *info.spectrum;
  if (s.run_id.empty()) return "";
  // The field's id: field.h5's own, else the one run.toml's [field_file] records, else its run's.
  const RunFolder run(info.folder);
  std::string want = info.manifest.field_run_id().value_or(run_id), of = run.manifest().filename().string();
  if (info.field && !info.field->run_id.empty()) want = info.field->run_id, of = run.field().filename().string();
  if (want == "?" || s.run_id == want) return "";
  const std::string why = RunFolder(info.folder).spectrum().string() + " is the spectrum of run " + s.run_id + ", " +
                          of + "'s run is " + want + " (two runs wrote this folder, or a file was replaced)";
  std::cout << "            MISMATCH: " << why << "\n";
  return why;
}

// The run's expected line: the one edm spectrum recorded, else the run's own (0: not known).
double run_line_omega(const RunFolderInfo& info) {
  if (info.spectrum && info.spectrum->line_omega > 0) return info.spectrum->line_omega;
  try {
    const RunPhysics p = read_run_physics(info.manifest);
    return line_known(p) ? expected_line_omega(p) : 0.0;
  } catch (const ConfigError&) {
    return 0.0;  // no line to show: the direct spectra's peaks are still shown
  }
}

// spectrum.h5's time-domain summary: the energy, the on-axis sample (the one edm spectrum printed)
// with its peak or "no light on axis", and the unwindowed yield at the line.
void print_time_domain(const RunFolderInfo& info) {
  const auto& s = *info.spectrum;
  // An angular run's energy is Σ F ΔΩ over its directions (share/docs/outputs.md), not a flux through a plane.
  const bool angular_run = info.field && info.field->screen_type == "angular";
  char buf[400];
  std::snprintf(buf, sizeof buf, "  spectrum.h5: energy %s %.6e J (window %s, field %s)\n",
                angular_run ? "into the grid's directions" : "through the screen", s.total_energy, s.window.c_str(),
                s.field.c_str());
  std::cout << buf;
  AxisSample a;
  a.ix = std::size_t(s.axis_ix), a.iy = std::size_t(s.axis_iy), a.angle = s.axis_angle, a.on_axis = s.on_axis;
  const std::string where = axis_sample_text(a, !angular_run, s.axis_x, s.axis_y);
  if (std::isfinite(s.peak_omega_on_axis))
    std::snprintf(buf, sizeof buf, "            on axis (%s): peak %.6g ω", where.c_str(),
                  s.peak_omega_on_axis / s.laser_omega);
  else
    std::snprintf(buf, sizeof buf, "            on axis (%s): no light on axis", where.c_str());
  std::cout << buf;
  if (std::isfinite(s.line_photons_per_bw)) {
    std::snprintf(buf, sizeof buf, "; at the line ω_1 = %.6g ω %.4e photons/sr per 0.1%% BW (unwindowed)",
                  s.line_omega / s.laser_omega, s.line_photons_per_bw);
    std::cout << buf;
  }
  std::cout << "\n";
}

}  // namespace

int cmd_info(const Args& args) {
  po::options_description desc("edm info RUN");
  std::string run;
  desc.add_options()("help,h", "this help");
  po::variables_map vm;
  if (!parse_command(args, desc, "run", run, vm)) return 0;  // --help
  if (run.empty()) throw ConfigError("EDM-CLI-002", "edm info: no run folder given");

  const RunFolderInfo info = inspect_run_folder(run);
  const toml::table& m = info.manifest.table();
  const std::string run_id = info.manifest.run_id();
  std::cout << "run " << run_id << " in " << info.folder.string() << "\n";
  section(m, "provenance", "provenance");
  section(m, "config", "config");
  section(m, "laser", "laser", "SI: m, s, rad/s");
  section(m, "electrons", "electrons");
  section(m, "screen", "screen", "SI: m, s");
  section(m, "window", "window", "margins in s");
  section(m, "timing", "timing", "s");
  section(m, "flops", "flops");
  section(m, "memory", "memory", "bytes");

  char buf[256];
  if (info.field) {
    const auto& f = *info.field;
    std::string buckets;
    for (const auto& b : f.buckets) buckets += (buckets.empty() ? "" : ",") + b;
    // An angular screen's axes are angles (rad) and its distance a radius, or infinity (the far field).
    const bool angular = f.screen_type == "angular";
    const char* unit = angular ? "rad" : "m";
    std::snprintf(buf, sizeof buf, "  field.h5: %zu x %zu %s x %zu samples, buckets %s, mode %s, %.0f electrons, %s %.6g m\n",
                  f.nx, f.ny, angular ? "directions" : "pixels", f.samples, buckets.c_str(), f.mode.c_str(),
                  f.electron_count, angular ? "radius" : "screen z", f.screen_z);
    std::cout << buf;
    std::snprintf(buf, sizeof buf, "            x %.4g … %.4g %s, y %.4g … %.4g %s, t %.9g … %.9g s\n", f.x_min,
                  f.x_max, unit, f.y_min, f.y_max, unit, f.t_first, f.t_last);
    std::cout << buf;
    if (f.has_gamma) {
      std::snprintf(buf, sizeof buf, "            γ(τ) ensemble mean %.6g → %.6g\n", f.gamma_mean_first,
                    f.gamma_mean_last);
      std::cout << buf;
    }
  } else {
    std::cout << "  field.h5: missing\n";
  }
  if (info.spectrum) {
    print_time_domain(info);
  } else {
    std::cout << "  spectrum.h5: " << (info.spectrum_file ? "no time-domain spectrum" : "not computed")
              << " (edm spectrum " << run << ")\n";
  }
  const std::string stale = info.spectrum ? time_domain_mismatch(info, run_id) : "";
  const std::string mismatch = info.spectrum_file ? direct_spectra(info, run_id, run_line_omega(info)) : "";
  std::uintmax_t total = 0;
  std::cout << "  files:\n";
  for (const auto& f : info.files) {
    // A file removed by another process while the folder was read is named, not an error.
    std::snprintf(buf, sizeof buf, "    %-32s %12s\n", f.name.c_str(),
                  f.vanished ? "vanished (removed while edm info read the folder)" : human_bytes(double(f.bytes)).c_str());
    std::cout << buf;
    total += f.bytes;
  }
  std::cout << "    total " << human_bytes(double(total)) << "\n";
  if (!stale.empty()) throw IoError("EDM-IO-140", stale);
  if (!mismatch.empty()) throw IoError("EDM-INFO-020", mismatch);
  return 0;
}

}  // namespace edm::app
