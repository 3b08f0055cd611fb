// One cell of a campaign: claimed, run (or resumed from its checkpoint) into its normal run folder
// OUTPUT/<label>/ by the run driver, its key results taken from the spectrum `edm spectrum` computes
// with its defaults, and its row recorded at every change of state. The cell's own errors end the
// cell, not the campaign: they are recorded, never thrown.
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/spectrum.hpp"
#include "edm/sweep.hpp"

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

// Energy through the screen and the on-axis peak ω, from spectrum.h5 as `edm spectrum` writes it.
std::map<std::string, double> cell_results(const fs::path& folder) {
  const SpectrumResult r = compute_spectrum(folder, SpectrumOptions{});
  write_spectrum(folder / "spectrum.h5", r);
  return {{"energy", r.total_energy}, {"peak_omega_on_axis", r.peak_omega_on_axis_interp}};
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
    RunOptions ro;
    ro.stop = options.stop;
    ro.checkpoint_every = options.checkpoint_every;
    ro.resume = resume;
    ro.overwrite = !resume;  // an unfinished folder of this cell (no checkpoint) is started again
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

RunSummary estimate_cell(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                         const fs::path& output, const PluginRegistry& plugins) {
  RunOptions ro;
  ro.dry_run = true;
  RunObserver quiet;
  return run_campaign(cell_campaign(spec, cell, base, output, plugins), plugins, ro, quiet);
}

}  // namespace edm
