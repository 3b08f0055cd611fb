// One cell of a campaign: claimed, run (or resumed from its checkpoint) into its normal run folder
// OUTPUT/<label>/ by the run driver, its key results taken from the spectrum `edm spectrum` computes
// with its defaults, and its row recorded at every change of state. The cell's own errors end the
// cell, not the campaign: they are recorded, never thrown.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/run_folder.hpp"
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
  const std::string scenario = toml::parse(st.campaign_text)["run"]["scenario"].value_or(std::string());
  Campaign c = parse_campaign(st.campaign_text, file.string() + " [campaign]",
                               {{"run.output", toml_string(folder.string()), Origin::CommandLine}},
                               plugins.get(scenario).keys(), false);
  if (!st.campaign_provenance.empty()) restore_provenance(c, st.campaign_provenance, file.string());
  return c;
}

// Energy through the screen and the on-axis peak ω, from the spectrum `edm spectrum` computes with
// its defaults, written as spectrum.h5 unless `keep` and one is there already: an adopted cell's
// folder may hold the user's own spectrum (other harmonics, another window), which the results must
// not replace (found in review).
std::map<std::string, double> cell_results(const fs::path& folder, bool keep = false) {
  const SpectrumResult r = compute_spectrum(folder, SpectrumOptions{});
  if (!(keep && fs::exists(folder / "spectrum.h5"))) write_spectrum(folder / "spectrum.h5", r);
  return {{"energy", r.total_energy}, {"peak_omega_on_axis", r.peak_omega_on_axis_interp}};
}

// A complete run: field.h5 and run.toml, the pair the run driver commits last. A folder holding
// one is never started again by a sweep (README: a run folder is never overwritten without
// --overwrite): a pending row does not prove the folder is the cell's unfinished run, since the
// user may have run, resumed or copied a run into it, or edited the cell's state file by hand.
bool holds_complete_run(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / "field.h5", ec) && fs::exists(folder / "run.toml", ec);
}

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
    refuse_special_run_files(folder);
    const std::string text = campaign_text_from_manifest(folder / "run.toml");
    const std::string scenario = toml::parse(text)["run"]["scenario"].value_or(std::string());
    theirs = detail::campaign_identity(parse_campaign(text, (folder / "run.toml").string() + " [campaign]",
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

// The wall time run.toml records ([timing] total), for a cell adopted from its folder.
std::optional<double> recorded_wall_time(const fs::path& folder) {
  try {
    return toml::parse_file((folder / "run.toml").string())["timing"]["total"].value<double>();
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

}  // namespace

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
      rec.results = cell_results(folder, true);
      rec.state = CellState::Done;
      rec.wall_s = recorded_wall_time(folder);
      if (!rec.wall_s) rec.wall_s = elapsed();
      record_cell(output, rec);
      return CellOutcome::Done;
    }
    RunOptions ro;
    ro.stop = options.stop;
    ro.checkpoint_every = options.checkpoint_every;
    ro.resume = resume;
    ro.overwrite = !resume;  // an unfinished folder (no complete run, no checkpoint) is started again
    const Campaign c = resume ? resumed_campaign(folder, plugins) : cell_campaign(spec, cell, base, output, plugins);
    observer.phase("cell", cell.label + (resume ? " (resumed from its checkpoint)" : ""));
    run_campaign(c, plugins, ro, observer);
    rec.results = cell_results(folder);
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

}  // namespace edm
