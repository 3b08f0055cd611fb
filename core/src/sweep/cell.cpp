// One cell of a campaign: claimed, run (or resumed from its checkpoint) into its normal run folder
// OUTPUT/<label>/ by the run driver, its key results taken from the spectrum `edm spectrum` computes
// with its defaults, and its row recorded at every change of state. The cell's own errors end the
// cell, not the campaign: they are recorded, never thrown.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/photon_yield.hpp"
#include "edm/run_folder.hpp"
#include "edm/launch.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum.hpp"
#include "edm/sweep.hpp"
#include "sweep/identity.hpp"

namespace edm {

namespace {

namespace fs = std::filesystem;

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// The campaign a resumed cell continues: the one stored in its checkpoint (as `edm resume` does).
Campaign resumed_campaign(const fs::path& folder, const PluginRegistry& plugins) {
  const fs::path file = checkpoint_path(folder);
  const CheckpointState st = read_checkpoint_state(file);
  const std::string scenario = scenario_of(st.campaign_text, {});
  Campaign c = parse_campaign(st.campaign_text, file.string() + " [campaign]",
                               {{"run.output", toml_string(folder.string()), Origin::CommandLine}},
                               plugins.get(scenario).keys(), false);
  if (!st.campaign_provenance.empty()) restore_provenance(c, st.campaign_provenance, file.string());
  return c;
}

// The on-axis peak of the spectrum, or none when no bin above ω = 0 holds any energy (a zero field:
// its argmax is an arbitrary bin, which the table recorded as a line at 4 ω_L; issue 29).
std::optional<double> on_axis_peak(const SpectrumResult& r) {
  bool any = false;
  for (std::size_t k = 1; k < r.on_axis.size(); ++k) any = any || r.on_axis[k] > 0;
  const double w = r.peak_omega_on_axis_interp;
  if (!any || !std::isfinite(w) || w <= 0) return std::nullopt;
  return w;
}

// cell_results from the run.toml the caller has read.
std::map<std::string, double> results_from(const fs::path& folder, const RunManifest& manifest, bool keep) {
  const RunFolder run(folder);
  const RunPhysics physics = read_run_physics(manifest);
  const FieldFile field = FieldFile::open(run.field());
  check_field_belongs_to_run(manifest, field);
  const SpectrumResult r = compute_spectrum(field, physics, SpectrumOptions{});
  // The user's own spectrum.h5 in an adopted folder (other harmonics, another window) is not
  // replaced (found in review).
  if (!(keep && run.has_spectrum())) {
    SpectrumWriter out = SpectrumWriter::open(run.spectrum(), SpectrumPart::Analysis);
    write_spectrum(out, r);
    out.commit();
  }
  std::map<std::string, double> out{{"energy", r.total_energy}, {"laser_omega", r.laser_omega}};
  if (const auto peak = on_axis_peak(r)) out["peak_omega_on_axis"] = *peak;
  // compute_spectrum's own reading of the line: 0 where the run has none (an angular screen about x
  // or y has no side for it; expected_line_omega threw there and failed a good cell: found in review).
  if (r.line_omega > 0 && std::isfinite(r.line_omega)) out["line_omega"] = r.line_omega;
  if (const LineYield y = on_axis_line_yield(r, physics); y.known && std::isfinite(y.photons_per_bw))
    out["line_photons"] = y.photons_per_bw;
  return out;
}

// Why the run's field is wrong, from what its run.toml records ([window]): each reason the run
// warned about, in its words' short form. Empty: nothing known against it.
std::vector<std::string> suspect_reasons(const RunManifest::Window& win) {
  std::vector<std::string> why;
  if (win.roots_converged == false)
    why.push_back("retarded-time roots not converged (run.toml [window] roots_converged = false: raise "
                  "screen.samples_per_period or accumulator.newton_iters)");
  if (const auto p = win.root_samples_per_period; p && *p < 2.0)
    why.push_back("aliased fundamental (run.toml [window] root_samples_per_period = " + std::to_string(*p) +
                  " < 2: raise screen.samples_per_period)");
  if (win.burst_missed_electrons > 0)
    why.push_back("burst missed: the window holds none of the burst's light at some pixel for " +
                  std::to_string(win.burst_missed_electrons) + " electron(s)");
  else if (win.burst_cut_electrons > 0)
    why.push_back("burst cut: the window holds only part of the burst's light at some pixel for " +
                  std::to_string(win.burst_cut_electrons) + " electron(s): raise screen.samples");
  // The run's own spectra from the samples (the dft or fft method its devices took) need the
  // emission span's light.
  if (win.emission_needed && win.emission_in_window == false)
    why.push_back("emission cut: the window cuts light the dft/fft direct spectra need for " +
                  std::to_string(win.emission_cut_electrons) + " electron(s)");
  if (!win.covered)
    why.push_back("window clipped for " + std::to_string(win.clipped_electrons) +
                  " electron(s) (screen.allow_clipping = true)");
  return why;
}

// The cell's results, verdicts, warnings and suspect reasons from its finished run folder, whose
// run.toml is read once; returns the wall time it records ([timing] total), for a cell adopted
// from its folder. A field that is wrong under screen.strict fails the cell (EDM-SWP-034): the run
// refuses most of these itself, but not a window clipped with allow_clipping.
std::optional<double> record_outcome(const fs::path& folder, CellRecord& rec, bool keep) {
  const RunManifest m = RunManifest::read(RunFolder(folder));
  rec.results = results_from(folder, m, keep);
  const RunManifest::Window win = m.window();
  rec.verdicts.clear();
  rec.verdicts["covered"] = win.covered;
  if (win.roots_converged) rec.verdicts["roots_converged"] = *win.roots_converged;
  if (win.burst_in_window) rec.verdicts["burst_in_window"] = *win.burst_in_window;
  rec.warnings = m.warnings();
  rec.suspect = suspect_reasons(win);
  if (!rec.suspect.empty() && win.strict) {
    std::string why;
    for (const auto& r : rec.suspect) why += (why.empty() ? "" : "; ") + r;
    throw PhysicsError("EDM-SWP-034", folder.string() + ": the run's field is wrong (" + why +
                                          ") and the campaign sets screen.strict = true");
  }
  return m.timing_total();
}

// A complete run: field.h5 and run.toml, the pair the run driver commits last. A folder holding
// one is never started again by a sweep (README: a run folder is never overwritten without
// --overwrite): a pending row does not prove the folder is the cell's unfinished run, since the
// user may have run, resumed or copied a run into it, or edited the cell's state file by hand.
bool holds_complete_run(const fs::path& folder) { return RunFolder(folder).complete(); }

// A value as the message shows it: a number as its shortest text (0.9, not toml++'s 0.90000000000000002).
std::string node_text(const toml::node& n) {
  if (const auto d = n.value_exact<double>()) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, r.ptr);
  }
  std::ostringstream os;
  n.visit([&os](auto&& x) { os << x; });
  return os.str();
}

// The first key where the folder's run and the cell differ, as "key = X in run.toml, Y in this cell".
std::string first_difference(const toml::table& theirs, const toml::table& ours, const std::string& prefix = "") {
  std::vector<std::string> keys;
  for (auto&& [k, v] : theirs) keys.emplace_back(k.str());
  for (auto&& [k, v] : ours)
    if (!theirs.contains(k.str())) keys.emplace_back(k.str());
  for (const auto& k : keys) {
    const toml::node* a = theirs.get(k);
    const toml::node* b = ours.get(k);
    const std::string key = prefix + k;
    if (a && b && a->is_table() && b->is_table()) {
      const std::string d = first_difference(*a->as_table(), *b->as_table(), key + ".");
      if (!d.empty()) return d;
      continue;
    }
    const std::string x = a ? node_text(*a) : "absent", y = b ? node_text(*b) : "absent";
    if (x != y) return key + " = " + x + " in its run.toml, " + y + " in this cell";
  }
  return "";
}

// Why the complete run in `folder` is not this cell's ("" when it is): its stored campaign against
// the one the sweep would run, each as the campaign's fingerprint sees it (sweep/identity.hpp).
std::string foreign_run(const fs::path& folder, const Campaign& cell, const PluginRegistry& plugins) {
  toml::table theirs;
  try {
    const RunFolder run(folder);
    run.refuse_special_files();
    const std::string text = RunManifest::read(run).campaign_text();
    const std::string scenario = scenario_of(text, {});
    theirs = detail::campaign_identity(parse_campaign(text, run.manifest().string() + " [campaign]",
                                         {{"run.output", toml_string(folder.string()), Origin::CommandLine}},
                                         plugins.get(scenario).keys(), false));
  } catch (const Error& e) {
    return std::string("its run.toml does not read as a campaign of this edm: ") + e.id() + ": " + e.what();
  } catch (const toml::parse_error& e) {
    return "its run.toml's [campaign] does not parse: " + std::string(e.description());
  }
  const toml::table ours = detail::campaign_identity(cell);
  return theirs == ours ? std::string() : first_difference(theirs, ours);
}

// The cell's run, resumed from its checkpoint or started afresh, in this process or through the
// options' runner (edm sweep --ranks-per-cell: under mpirun).
void start_run(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base, const fs::path& output,
               const PluginRegistry& plugins, const CellRunOptions& options, RunObserver& observer, bool resume) {
  const fs::path folder = output / cell.label;
  RunOptions ro;
  ro.stop = options.stop;
  ro.checkpoint_every = options.checkpoint_every;
  ro.resume = resume;
  ro.overwrite = !resume;  // an unfinished folder (no complete run, no checkpoint) is started again
  const Campaign c = resume ? resumed_campaign(folder, plugins) : cell_campaign(spec, cell, base, output, plugins);
  observer.phase("cell", cell.label + (resume ? " (resumed from its checkpoint)" : ""));
  if (options.runner)
    options.runner(spec.file, cell_overrides(cell, base, output), folder, ro);
  else
    run_campaign(c, plugins, ro, observer);
}

}  // namespace

std::map<std::string, double> cell_results(const fs::path& folder, bool keep) {
  return results_from(folder, RunManifest::read(RunFolder(folder)), keep);
}

CellOutcome run_cell(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                     const fs::path& output, const PluginRegistry& plugins, const CellRunOptions& options,
                     RunObserver& observer, std::string* error) {
  CellRecord rec = cell_record(output, cell);
  if (rec.state == CellState::Done) return CellOutcome::Skipped;
  if (rec.state == CellState::Failed && !options.retry_failed) return CellOutcome::Skipped;
  CellClaim claim(output, cell.label);
  if (!claim.held()) return CellOutcome::Busy;
  rec = cell_record(output, cell);  // again, now that no one else can change it
  if (rec.state == CellState::Done) return CellOutcome::Skipped;

  const fs::path folder = output / cell.label;
  const bool resume = fs::exists(checkpoint_path(folder));
  rec.state = CellState::Running;
  rec.error.clear();
  rec.results.clear();
  rec.verdicts.clear();
  rec.suspect.clear();
  rec.warnings.clear();
  rec.wall_s.reset();
  rec.host = host_name();
  record_cell(output, rec);

  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  try {
    if (holds_complete_run(folder)) {
      // Adopted when it is this very cell's run (resumed by hand, or finished by a sweep that was
      // killed before it recorded the cell); anything else is left as it is and the cell fails.
      const std::string why = foreign_run(folder, cell_campaign(spec, cell, base, output, plugins), plugins);
      if (!why.empty())
        throw ConfigError("EDM-SWP-033", folder.string() + " holds a complete run (field.h5, run.toml) that is not "
                                         "this cell's (" + why + "): edm sweep never replaces it; move the folder "
                                         "away, then edm sweep --retry-failed runs the cell");
      observer.phase("cell", cell.label + " (its folder holds this cell's complete run: adopted, not run again)");
      rec.wall_s = record_outcome(folder, rec, true);
      rec.state = CellState::Done;
      if (!rec.wall_s) rec.wall_s = elapsed();
      record_cell(output, rec);
      return CellOutcome::Done;
    }
    start_run(spec, cell, base, output, plugins, options, observer, resume);
    record_outcome(folder, rec, false);
    rec.state = CellState::Done;
    rec.wall_s = elapsed();
    record_cell(output, rec);
    return CellOutcome::Done;
  } catch (const Interrupted& e) {
    rec.state = CellState::Pending;
    rec.wall_s = elapsed();
    rec.error = std::string(e.id()) + ": stopped; " +
                (fs::exists(checkpoint_path(folder)) ? "checkpoint kept, the next edm sweep resumes it"
                                                     : "no checkpoint, the next edm sweep runs it again");
    if (error) *error = rec.error;
    record_cell(output, rec);
    return CellOutcome::Stopped;
  } catch (const Error& e) {
    rec.state = CellState::Failed;
    rec.wall_s = elapsed();
    rec.error = std::string(e.id()) + ": " + e.what();
  } catch (const std::exception& e) {
    rec.state = CellState::Failed;
    rec.wall_s = elapsed();
    // Recorded with an id of its own (thrown here only to build it as the registry expects).
    try {
      throw Error("EDM-SWP-015", std::string("unexpected failure: ") + e.what());
    } catch (const Error& wrapped) {
      rec.error = wrapped.id() + ": " + wrapped.what();
    }
  }
  if (error) *error = rec.error;
  record_cell(output, rec);
  return CellOutcome::Failed;
}

std::string cell_folder_plan(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                             const fs::path& output, const PluginRegistry& plugins) {
  const fs::path folder = output / cell.label;
  if (holds_complete_run(folder)) {
    const std::string why = foreign_run(folder, cell_campaign(spec, cell, base, output, plugins), plugins);
    if (why.empty()) return "its folder holds this cell's complete run: adopted as done, not run again";
    return "its folder holds a complete run that is not this cell's (" + why +
           "): the cell would fail with EDM-SWP-033 and the folder be left as it is";
  }
  if (fs::exists(checkpoint_path(folder))) return "its folder holds a checkpoint: the cell resumes from it";
  return "";
}

RunSummary estimate_cell(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                         const fs::path& output, const PluginRegistry& plugins) {
  RunOptions ro;
  ro.dry_run = true;
  RunObserver quiet;
  return run_campaign(cell_campaign(spec, cell, base, output, plugins), plugins, ro, quiet);
}

SweepTally tally_cells(const SweepCells& cells, const fs::path& output, std::int64_t only) {
  SweepTally t;
  // One cell formed at a time, and only cell `only` when it is given (10⁶ cells are not listed).
  const std::size_t from = only >= 0 ? std::size_t(only) : 0, to = only >= 0 ? from + 1 : cells.size();
  for (std::size_t k = from; k < to && k < cells.size(); ++k) {
    const SweepCell c = cells[k];
    const CellRecord r = cell_record(output, c);
    if (r.state == CellState::Done) {
      ++t.done;
      if (!r.suspect.empty()) t.suspect.push_back(r.label);
    } else if (r.state == CellState::Failed) {
      ++t.failed;
      if (t.first_error.empty()) t.first_error = r.label + ": " + r.error;
    } else {
      ++t.other;
    }
  }
  return t;
}

bool run_cells_in_turn(const LoadedSweep& sweep, const std::vector<Override>& base, const PluginRegistry& plugins,
                       const CellRunOptions& options, std::int64_t only, RunObserver& observer,
                       const CellReport& report) {
  const std::size_t from = only >= 0 ? std::size_t(only) : 0, to = only >= 0 ? from + 1 : sweep.cells.size();
  for (std::size_t k = from; k < to && k < sweep.cells.size(); ++k) {
    const SweepCell c = sweep.cells[k];
    if (options.stop && options.stop->load()) return true;
    std::string err;
    const CellOutcome out = run_cell(sweep.spec, c, base, sweep.output, plugins, options, observer, &err);
    if (report) report(c, out, err);
    if (out == CellOutcome::Stopped) return true;
  }
  return false;
}

void throw_sweep_outcome(const SweepTally& t, const fs::path& output, bool stopped) {
  if (stopped)
    throw Interrupted("EDM-SWP-026", "the campaign was stopped on request; run the same edm sweep again to "
                                     "resume (" + std::to_string(t.done) + " cells done)");
  if (t.failed)
    throw CellsFailed("EDM-SWP-020", std::to_string(t.failed) + " of " + std::to_string(t.done + t.failed + t.other) +
                                         " cells failed (first: " + t.first_error + "); edm campaign status " +
                                         output.string());
}

}  // namespace edm
