// run.toml writer: provenance, effective configuration with origins, SI physics, window, timing,
// FLOPs, memory. Written atomically so a crash never leaves a half manifest.
#include "edm/manifest.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/trajectory.hpp"
#include "io/run_lock.hpp"

namespace edm {
namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}


// TOML text of a table with every key quoted where TOML needs it (toml++ writes a key such as
// it's bare, which no TOML reader accepts: the manifest would not read back). Values are written
// by toml++ (its strings, numbers and dates are valid TOML); tables and arrays are walked here.
std::string toml_key(std::string_view k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (bare) return std::string(k);
  std::string q = "\"";
  for (unsigned char c : k) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      q += b;
    } else {
      q += char(c);
    }
  }
  return q + "\"";
}

bool array_of_tables(const toml::node& v) {
  const toml::array* a = v.as_array();
  return a && !a->empty() && std::all_of(a->begin(), a->end(), [](const toml::node& e) { return e.is_table(); });
}

void write_inline(std::ostream& os, const toml::node& v) {
  if (const toml::table* t = v.as_table()) {
    os << "{";
    bool first = true;
    for (auto&& [k, e] : *t) {
      os << (first ? " " : ", ") << toml_key(k.str()) << " = ";
      write_inline(os, e);
      first = false;
    }
    os << (first ? "}" : " }");
  } else if (const toml::array* a = v.as_array()) {
    os << "[";
    for (std::size_t i = 0; i < a->size(); ++i) {
      os << (i ? ", " : " ");
      write_inline(os, *a->get(i));
    }
    os << (a->empty() ? "]" : " ]");
  } else {
    v.visit([&](const auto& x) { os << x; });
  }
}

void write_table(std::ostream& os, const toml::table& t, const std::string& prefix) {
  for (auto&& [k, v] : t)
    if (!v.is_table() && !array_of_tables(v)) {
      os << toml_key(k.str()) << " = ";
      write_inline(os, v);
      os << "\n";
    }
  for (auto&& [k, v] : t) {
    const std::string name = prefix + toml_key(k.str());
    if (const toml::table* sub = v.as_table()) {
      os << "\n[" << name << "]\n";
      write_table(os, *sub, name + ".");
    } else if (array_of_tables(v)) {
      for (const toml::node& e : *v.as_array()) {
        os << "\n[[" << name << "]]\n";
        write_table(os, *e.as_table(), name + ".");
      }
    }
  }
}

}  // namespace

namespace {

// [config]: the effective run settings (after the device's choices) and where each key came from.
toml::table config_table(const Campaign& campaign, const RunSummary& s, const ManifestExtras& x) {
  const auto& a = campaign.accumulator;
  // Where every key's value came from: one entry per key of the key table and of the scenario's
  // section (Campaign::origins holds them all).
  toml::table origins;
  for (const auto& [key, origin] : campaign.origins) origins.insert(key, origin_name(origin));
  toml::table config{{"scenario", campaign.run.scenario},
                     {"mode", name(campaign.run.mode)},
                     {"electron_batch", int64_t(s.electron_batch)},
                     {"electron_batch_setting", a.electron_batch < 0 ? std::string("auto")
                                                                     : std::to_string(a.electron_batch)},
                     {"batch_overlap", a.batch_overlap},
                     {"tail_slabs", s.tail_slabs},
                     {"kernel", name(a.kernel)},
                     {"newton_iters", a.newton_iters},
                     {"coef_reuse", a.coef_reuse},
                     {"sample_chunks", x.sample_chunks},
                     {"work_group", x.work_group},
                     {"electron_group", x.electron_group},
                     {"tile_width", x.tile_width},
                     {"pixel_order", x.pixel_order},
                     {"fast_recip", x.fast_recip},
                     {"interleave", x.interleave},
                     {"simd", x.simd},
                     {"nv_seed", x.nv_seed},
                     {"devices", a.devices},
                     {"sharding", s.sharding},
                     {"sharding_setting", name(a.sharding)},
                     {"sharding_reason", s.sharding_reason},
                     {"passes", s.passes},
                     {"pass_rows", s.pass_rows},
                     {"knots_per_period", s.knots.knots_per_period},
                     {"knots_per_period_setting", s.knots.automatic ? std::string("auto")
                                                                    : std::to_string(s.knots.knots_per_period)},
                     {"model", name(campaign.trajectory.model)},
                     {"checkpoint_every", int64_t(s.checkpoint_every)}};
  if (s.knots.automatic) {  // what "auto" chose it from (share/docs/outputs.md)
    config.insert("tolerance", s.knots.tolerance);
    toml::array estimates, pilots;
    for (const auto& [K, e] : s.knots.estimates) estimates.push_back(toml::array{K, e});
    for (const std::uint64_t p : s.knots.pilots) pilots.push_back(int64_t(p));
    config.insert("knots_estimates", std::move(estimates));
    config.insert("knots_pilots", std::move(pilots));
  }
  // A screen in passes: the later passes' splines, kept on the host or solved again, and why.
  if (s.passes > 1) {
    config.insert("pass_splines", s.pass_splines);
    config.insert("pass_splines_bytes", int64_t(s.pass_splines_bytes));
    config.insert("pass_splines_reason", s.pass_splines_reason);
  }
  config.insert("origin", std::move(origins));
  return config;
}


// [laser], [electrons], [kinematics], [screen], [window]: the physics in SI.
void insert_physics(toml::table& m, const Campaign& campaign, const RunSummary& s, const Normalization& units,
                    const ManifestExtras& x) {
  const auto& L = campaign.laser;
  m.insert("laser", toml::table{{"profile", name(L.profile)},
                                {"wavelength", L.wavelength},
                                {"omega", units.omega},
                                {"a0", x.a0_effective},
                                {"polarization", name(L.polarization)},
                                {"duration", L.duration},
                                {"envelope", name(L.envelope)}});
  m.insert("electrons", toml::table{{"distribution", name(campaign.electrons.distribution)},
                                    {"count", int64_t(s.electrons)},
                                    {"batches", int64_t(s.batches)},
                                    {"knots_total", int64_t(s.knots_total)}});
  // Σ of the macro-particle weights (share/docs/ensembles.md): the number of electrons the run's
  // coherent sum stands for (= count when every weight is 1).
  if (x.kinematics.electrons > 0) m["electrons"].as_table()->insert("total_weight", x.kinematics.total_weight);
  if (const EnsembleKinematics& k = x.kinematics; k.electrons > 0)
    m.insert("kinematics", toml::table{{"electrons", int64_t(k.electrons)},
                                       {"laser_direction", k.laser_direction},
                                       {"light_front_h", k.light_front_h},
                                       {"gamma_mean", k.gamma_mean},
                                       {"u_perp2_mean", k.u_perp2_mean}});
  const Screen& sc = s.screen;
  m.insert("screen", toml::table{{"nx", sc.nx},
                                 {"ny", sc.ny},
                                 {"samples", sc.samples},
                                 {"distance", sc.z * units.length()},
                                 {"half_width_x", sc.half_x * units.length()},
                                 {"half_width_y", sc.half_y * units.length()},
                                 {"dt", sc.dt * units.time()},
                                 {"t_start", (sc.t0_rel + sc.time_offset()) * units.time()},
                                 {"type", name(sc.type)},
                                 {"window", name(campaign.screen.window)}});
  const auto& cov = s.coverage;
  m.insert("window", toml::table{{"covered", cov.clipped_electrons() == 0},
                                 {"clipped_electrons", int64_t(cov.clipped_electrons())},
                                 {"dropped_slots", int64_t(cov.dropped_slots())},
                                 {"allow_clipping", campaign.screen.allow_clipping}});
  // The burst's light in the window (share/docs/campaign.md, "The observer window").
  auto& win = *m["window"].as_table();
  // The margins, where finite: at infinity a solved trajectory's free ends cover any window, and
  // the keys are left out (covered = true says it).
  for (const auto& [key, margin] : {std::pair{"min_margin_start", cov.min_margin_start()},
                                    std::pair{"min_margin_end", cov.min_margin_end()}})
    if (cov.records.empty())
      win.insert(key, 0.0);
    else if (std::isfinite(margin))
      win.insert(key, margin * units.time());
  win.insert("burst_missed_electrons", int64_t(cov.burst_missed_electrons()));
  win.insert("burst_cut_electrons", int64_t(cov.burst_cut_electrons()));
  // The emission span's light (coverage.hpp), which the FFT and dft spectra of the field need.
  if (cov.emission_known) {
    win.insert("emission_cut_electrons", int64_t(cov.emission_cut_electrons()));
    win.insert("emission_in_window", cov.emission_cut_electrons() == 0 && cov.burst_missed_electrons() == 0);
    win.insert("emission_needed", s.spectra_from_samples);  // the run's spectra are computed from the samples
  }
  win.insert("strict", campaign.screen.strict);
  // The direct spectra's method and why (share/docs/outputs.md, the cost model of `auto`).
  if (!s.spectra_method.empty())
    m.insert("spectra", toml::table{{"method", s.spectra_method},
                                    {"chosen_by", s.spectra_chosen_by},
                                    {"cost_direct", s.spectra_cost_direct},
                                    {"cost_fft", s.spectra_cost_fft},
                                    {"cost_dft", s.spectra_cost_dft}});
  // The retarded-time roots' sampling (share/docs/campaign.md, "accumulator.newton_iters").
  if (s.root_sampling.known()) {
    win.insert("root_samples_per_period", s.root_sampling.samples_per_period);
    if (std::isfinite(s.root_sampling.samples_per_doppler_efold))
      win.insert("root_samples_per_doppler_efold", s.root_sampling.samples_per_doppler_efold);
    win.insert("roots_converged", s.roots_converged);
  }
  if (const double first = cov.burst_first(), last = cov.burst_last(); std::isfinite(first) && std::isfinite(last)) {
    win.insert("burst_in_window", cov.burst_missed_electrons() == 0 && cov.burst_cut_electrons() == 0);
    win.insert("burst_first_arrival", (first + sc.time_offset()) * units.time());
    win.insert("burst_last_arrival", (last + sc.time_offset()) * units.time());
  }
}

// [ranks]: how the MPI ranks shared the work, every rank's rows by pixels ("0:3" = rows [0, 3)),
// every rank's peak RSS (the flat per-rank memory of pixel sharding is measured from it) and how
// they shared the trajectory solves.
toml::table ranks_table(const ManifestExtras& x) {
  toml::table t{{"count", x.ranks}, {"sharding", x.rank_sharding}, {"sharding_reason", x.rank_sharding_reason}};
  if (!x.rank_rows.empty()) {
    toml::array rows;
    for (const auto& [a, b] : x.rank_rows) rows.push_back(std::to_string(a) + ":" + std::to_string(b));
    t.insert("rows", std::move(rows));
  }
  toml::array rss;
  for (double v : x.rank_timings.host_peak_rss) rss.push_back(v);
  if (!rss.empty()) t.insert("host_peak_rss", std::move(rss));
  // How the trajectory solves were shared, and the electrons each rank solved itself (by pixels a
  // slice of every batch: they sum to the electrons solved, each once; [timing.ranks] trajectories
  // holds each rank's seconds).
  if (!x.rank_timings.solves.empty()) t.insert("solves", x.rank_timings.solves);
  toml::array solved;
  for (double v : x.rank_timings.solved) solved.push_back(std::int64_t(v));
  if (!solved.empty()) t.insert("solved", std::move(solved));
  return t;
}

// [timing] (with per-rank timings under MPI), [flops], [memory].
void insert_performance(toml::table& m, const RunSummary& s, const ManifestExtras& x) {
  const auto& t = s.timing;
  m.insert("timing", toml::table{{"total", t.total},
                                 {"trajectories", t.trajectories},
                                 {"trajectories_overlapped", t.trajectories_overlapped},
                                 {"field", t.field},
                                 {"kernel", t.kernel},
                                 {"reduce", t.reduce},
                                 {"upload", t.upload},
                                 {"upload_bytes", t.upload_bytes},
                                 {"write", t.write}});
  if (x.ranks > 1 && !x.rank_timings.field.empty()) {
    auto arr = [](const std::vector<double>& v) {
      toml::array a;
      for (double d : v) a.push_back(d);
      return a;
    };
    m["timing"].as_table()->insert("ranks", toml::table{{"trajectories", arr(x.rank_timings.trajectories)},
                                                        {"field", arr(x.rank_timings.field)},
                                                        {"kernel", arr(x.rank_timings.kernel)},
                                                        {"electrons", arr(x.rank_timings.electrons)}});
  }
  if (x.ranks > 1) m.insert("ranks", ranks_table(x));
  toml::table flops{{"slots", double(s.slots)}};
  if (x.flop_per_slot > 0) flops.insert("flop_per_slot", x.flop_per_slot);
  if (x.fp64_peak > 0) flops.insert("fp64_peak", x.fp64_peak);
  if (x.flop_per_slot > 0 && x.fp64_peak > 0 && t.field > 0)
    flops.insert("peak_fraction_field", x.flop_per_slot * double(s.slots) / t.field / x.fp64_peak);
  if (t.field > 0) flops.insert("slots_per_second_field", double(s.slots) / t.field);
  m.insert("flops", std::move(flops));
  m.insert("memory", toml::table{{"host_peak_rss", double(s.host_peak_rss)},
                                 {"spline_bytes_per_knot", double(spline_bytes_per_knot())},
                                 {"spline_bytes_per_electron", double(s.spline_bytes_per_electron)},
                                 {"device_buffer_bytes", double(s.device_buffer_bytes)},
                                 {"host_estimate", s.host_estimate_bytes}});
}

}  // namespace

toml::table make_manifest(const Campaign& campaign, const RunSummary& s, const Normalization& units,
                          const ManifestExtras& x) {
  toml::table m;
  m.insert("provenance", toml::table{{"run_id", s.run_id},
                                     {"format", kRunFormat},
                                     {"edm_version", EDM_VERSION},
                                     {"git_commit", EDM_GIT_COMMIT},
                                     {"host", hostname()},
                                     {"time", utc_now()},
                                     {"device", x.device_names},
                                     {"campaign_file", campaign.file.string()},
                                     {"ranks", x.ranks},
                                     {"resumed_from_electron", int64_t(s.resumed_from)},
                                     {"checkpoints_written", int64_t(s.checkpoints_written)}});

  m.insert("config", config_table(campaign, s, x));
  // CLBlast's parameter sets the devices run with (core/src/field/tuning.cpp, share/docs/outputs.md).
  // A run stopped and resumed with other parameters (EDM_CLBLAST_TUNING toggled) summed its
  // electrons with two: clblast says so, and `processes` lists each with the first electron it summed.
  if (s.tuning.size() > 1) {
    toml::array processes;
    for (const TuningSpan& t : s.tuning)
      processes.push_back(toml::table{{"first_electron", int64_t(t.first_electron)}, {"clblast", t.clblast}});
    const bool unknown = std::any_of(s.tuning.begin(), s.tuning.end(),
                                     [](const TuningSpan& t) { return t.clblast == kTuningNotRecorded; });
    m.insert("tuning", toml::table{{"clblast", std::string(unknown ? "partly not recorded: processes before a resume "
                                                                     "from an older edm's checkpoint (tuning.processes)"
                                                                   : "mixed: the electrons were summed by processes "
                                                                     "with different CLBlast parameters (tuning.processes)")},
                                   {"processes", std::move(processes)}});
  } else if (!x.clblast_tuning.empty()) {
    m.insert("tuning", toml::table{{"clblast", x.clblast_tuning}});
  }
  insert_physics(m, campaign, s, units, x);
  // Every warning the run gave, so that a reader of the folder alone (edm sweep's table, a script)
  // learns what the console said: count = 0 says there was none.
  toml::array messages;
  for (const auto& w : s.warnings) messages.push_back(w);
  m.insert("warnings", toml::table{{"count", int64_t(s.warnings.size())}, {"messages", std::move(messages)}});
  insert_performance(m, s, x);
  if (!s.telemetry.empty()) m.insert("telemetry", s.telemetry);  // device telemetry (run/telemetry.cpp)
  if (x.field_bytes > 0)
    m.insert("field_file", toml::table{{"name", s.field_file.filename().string()},
                                       {"run_id", s.run_id},
                                       {"bytes", int64_t(x.field_bytes)}});
  // Every data file the run read, so that a replay can tell the file it reads now from the one the
  // run read (the path alone says nothing: the file may have been edited since).
  if (!x.inputs.empty()) {
    toml::array files;
    for (const auto& f : x.inputs)
      files.push_back(toml::table{{"key", f.key}, {"path", f.path}, {"bytes", int64_t(f.bytes)}, {"digest", f.digest}});
    m.insert("inputs", toml::table{{"files", std::move(files)}});
  }
  m.insert("campaign", campaign.to_toml());
  return m;
}

void write_manifest(const std::filesystem::path& path, const toml::table& manifest) {
  const auto tmp = RunFolder::staging(path);
  std::ostringstream out;
  // The path in the comment without line breaks: a newline in it would end the comment.
  std::string shown = path.string();
  std::replace_if(shown.begin(), shown.end(), [](char c) { return c == '\n' || c == '\r'; }, '?');
  out << "# edm run manifest: `edm run " << shown
      << "` replays this run ([campaign] holds the effective campaign)\n";
  write_table(out, manifest, "");
  // Created exclusively, never through a link (issue 30: an ofstream here wrote through a symbolic
  // link planted at run.toml.partial into the file it points to). Whatever is under the staging
  // name is not this writer's: moved aside, like the field's and the checkpoint's.
  move_aside(tmp);
  if (const int err = RunFolder::write_new_file(tmp, out.str()))
    throw IoError("EDM-IO-020", "cannot write the manifest " + tmp.string() + " (" + std::strerror(err) +
                                    (err == EEXIST ? ": a file appeared under edm's temporary name while it wrote, "
                                                     "and edm never writes through one)"
                                                   : "; disk full?)"));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError("EDM-IO-021", "cannot rename the manifest to " + path.string() + ": " + ec.message());
}

bool is_manifest(const std::filesystem::path& file) {
  try {
    auto t = toml::parse_file(file.string());
    return t.contains("provenance") && t.contains("campaign");
  } catch (...) {
    return false;
  }
}

std::string campaign_text_from_manifest(const std::filesystem::path& file) {
  toml::table t;
  try {
    t = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    // is_manifest parsed it a moment ago: the file changed or cannot be read now.
    const auto& b = e.source().begin;
    throw IoError("EDM-IO-075", file.string() + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                                    ": cannot read the manifest: " + std::string(e.description()));
  }
  auto* c = t["campaign"].as_table();
  if (!c) throw ConfigError("EDM-CFG-090", file.string() + ": manifest has no [campaign] table");
  // The replay looks the scenario up before it parses the rest: a missing or non-string one is
  // named here rather than reported as an unknown scenario "".
  if (!(*c)["run"]["scenario"].is_string())
    throw ConfigError("EDM-CFG-090", file.string() + ": the manifest's [campaign] has no run.scenario string");
  std::ostringstream os;
  os << *c;
  return os.str();
}

}  // namespace edm
