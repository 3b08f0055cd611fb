// Campaigns of cells (`edm sweep`, `edm campaign`): the [sweep] table of a campaign file expanded
// into cells (a label and the overrides of each), the campaign table OUTPUT/campaign.toml (one row
// per cell, merged from one state file per cell so that concurrent cells — SLURM array tasks,
// one cell per device — never lose each other's rows), one cell run or resumed into its normal run
// folder OUTPUT/<label>/, and the HDF5 table `edm campaign collect` writes. The format of the
// [sweep] table and the table is share/docs/sweeps.md; the executors (in turn, one per device,
// SLURM) live in the app, which owns processes and signals.
#pragma once
#include "edm/error.hpp"
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"

namespace edm {

// Some cells of a campaign failed and the others ran (EDM-SWP-020): each cell's own error is in its
// state (edm campaign status). Not a defect of edm, so not the exit code 1 of Error: 7, the one
// family that only edm sweep throws (hence declared here, not in error.hpp).
class CellsFailed : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 7; }
};

enum class SweepMode { Grid, Zip };
const char* sweep_mode_name(SweepMode m);

// One axis: a campaign key ("laser.a0", or "<scenario>.key" for the plugin's keys) and its values
// as TOML text ("0.1", "\"circular_plus\"", "16"), in the order the campaign file gives them.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

struct SweepSpec {
  std::filesystem::path file;  // the campaign file
  SweepMode mode = SweepMode::Grid;
  std::vector<SweepAxis> axes;  // in file order (the first axis varies slowest in a grid)
  std::uint64_t max_cells = 1000;  // [sweep] max_cells: a larger grid is refused unless allowed
};

// One cell: its index in the expansion (stable: `edm sweep --cell K`, SLURM's array index), its
// label (the folder OUTPUT/<label>/) and the overrides its axes give, one per axis.
struct SweepCell {
  std::size_t index = 0;
  std::string label;
  std::vector<Override> overrides;
};

// Whether the campaign file has a [sweep] table (ConfigError EDM-CFG-001 on a syntax error).
bool has_sweep(const std::filesystem::path& file);
// Reads the [sweep] table. Errors (ConfigError): no [sweep] EDM-SWP-001, an unknown key
// EDM-SWP-002, an empty axis EDM-SWP-003, a malformed axis or range EDM-SWP-004, an unknown mode
// EDM-SWP-005, an axis over run.output EDM-SWP-006, a range with an end that is not finite
// EDM-SWP-031, a range of more values than max_cells (unless `allow_large`, --yes) or than the
// ceiling of 1 000 000 cells EDM-SWP-008, refused before its values are made. `plugin_keys` are the
// scenario's keys (sweepable as "<scenario>.key").
SweepSpec read_sweep(const std::filesystem::path& file, const std::string& scenario,
                     const std::vector<KeySpec>& plugin_keys, bool allow_large = false);
// The cells of a sweep, in order: a grid is the product (last axis fastest), zip pairs the i-th
// values. A cell is its index into the axes, formed (label, overrides) when it is asked for: 10⁶
// cells expanded at once held about 1 GB of labels and overrides (issue 30), so the cells of a
// sweep are never all in memory. Indexing and iteration give a SweepCell by value.
class SweepCells {
 public:
  SweepCells() = default;
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  SweepCell operator[](std::size_t k) const;  // k < size()
  SweepCell front() const { return (*this)[0]; }
  SweepCell back() const { return (*this)[count_ - 1]; }
  // The label of cell k alone (no overrides made).
  std::string label(std::size_t k) const;

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = SweepCell;
    using difference_type = std::ptrdiff_t;
    using pointer = const SweepCell*;
    using reference = const SweepCell&;
    iterator(const SweepCells* cells, std::size_t k) : cells_(cells), k_(k) {}
    SweepCell operator*() const { return (*cells_)[k_]; }
    iterator& operator++() {
      ++k_;
      return *this;
    }
    bool operator==(const iterator& o) const { return k_ == o.k_; }
    bool operator!=(const iterator& o) const { return k_ != o.k_; }

   private:
    const SweepCells* cells_;
    std::size_t k_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  friend SweepCells sweep_cells(const SweepSpec& spec, bool allow_large);
  // Axis i's value index in cell k.
  std::size_t value_index(std::size_t k, std::size_t i) const;
  SweepMode mode_ = SweepMode::Grid;
  std::vector<SweepAxis> axes_;
  std::vector<std::vector<std::string>> parts_;  // axis i, value j: "name=value" of the label
  std::vector<std::size_t> stride_;              // grid: cells between two values of axis i
  std::size_t count_ = 0;
};
// The cells of a sweep, checked as a whole before any is formed: zipped axes of different lengths
// EDM-SWP-007; more than max_cells cells (unless `allow_large`), or more than 1 000 000 at all,
// EDM-SWP-008 with the count; a label too long for a file name EDM-SWP-043; two cells with one label
// EDM-SWP-009 (the first such cell named, as when every label was kept).
SweepCells sweep_cells(const SweepSpec& spec, bool allow_large = false);
// The same cells, all expanded (small sweeps: the tests, the fuzz target).
std::vector<SweepCell> expand_sweep(const SweepSpec& spec, bool allow_large = false);
// The label of one cell from its axes' values: "a0=0.5,gamma=10" (the key's last part unless two
// axes share it; characters other than letters, digits and . _ + - = become '_').
std::string cell_label(const std::vector<SweepAxis>& axes, const std::vector<std::string>& values);

// A string as TOML text in double quotes (an override's value for a string key).
std::string toml_string(const std::string& s);

// The overrides of one cell over its campaign file: the base's, the cell's, then run.output =
// OUTPUT/<label> (what cell_campaign applies, and what a CellRunner passes on as --set).
std::vector<Override> cell_overrides(const SweepCell& cell, const std::vector<Override>& base,
                                     const std::filesystem::path& output);
// The campaign of one cell: the base file with the base overrides, then the cell's, then
// run.output = OUTPUT/<label>. `output` is the campaign folder.
Campaign cell_campaign(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                       const std::filesystem::path& output, const PluginRegistry& plugins);
// The campaign folder: the base campaign's run.output.
std::filesystem::path campaign_output(const std::filesystem::path& file, const std::vector<Override>& base,
                                      const PluginRegistry& plugins);

// ---- The campaign table -------------------------------------------------------------------------

enum class CellState { Pending, Running, Done, Failed };
const char* cell_state_name(CellState s);

struct CellRecord {
  std::string label;
  CellState state = CellState::Pending;
  std::map<std::string, std::string> overrides;  // key → TOML text of the value
  // energy (J), peak_omega_on_axis (rad/s; absent when the on-axis spectrum has no peak: a zero
  // field), line_omega (rad/s, the run's expected line, run.toml [kinematics]), laser_omega
  // (rad/s), line_photons (photons/sr/0.1 % BW on axis at line_omega; photon_yield.hpp)
  std::map<std::string, double> results;
  std::optional<double> wall_s;
  std::string error;  // "EDM-…: message" of a failed (or stopped) cell
  std::string host;   // where it ran last (not in the comparison of two runs)
  // The run's verdicts, read from its run.toml [window] after the run: roots_converged,
  // burst_in_window, covered (absent where the run recorded none).
  std::map<std::string, bool> verdicts;
  // Why the field of a done cell is wrong (the run warned: roots not converged, burst missed,
  // aliased fundamental, window clipped); not empty makes the row "done (suspect)". The cell
  // completed: it stays Done, so no plain edm sweep runs it again.
  std::vector<std::string> suspect;
  std::vector<std::string> warnings;  // every warning the run gave (run.toml [warnings])
};

// The state as the table writes it: cell_state_name, or "done (suspect)" for a done cell with
// reasons in `suspect`.
std::string cell_state_word(const CellRecord& r);

// What identifies a campaign: a hash of the base campaign's effective keys (run.output aside) and
// of every cell's label and overrides. A folder whose table has another fingerprint belongs to
// another campaign (EDM-SWP-010).
std::string campaign_fingerprint(const SweepSpec& spec, const SweepCells& cells,
                                 const std::vector<Override>& base, const PluginRegistry& plugins);
std::string campaign_fingerprint(const SweepSpec& spec, const std::vector<SweepCell>& cells,
                                 const std::vector<Override>& base, const PluginRegistry& plugins);

// OUTPUT/campaign.toml, OUTPUT/.cells/<label>.toml (one state file per cell), the lock.
std::filesystem::path table_path(const std::filesystem::path& output);
std::filesystem::path cell_state_path(const std::filesystem::path& output, const std::string& label);

// Opens (creating when absent) the campaign folder for these cells: EDM-SWP-010 if it holds the
// table of another campaign. Writes the table, row by row (its text is never whole in memory).
void open_campaign_folder(const std::filesystem::path& output, const SweepSpec& spec,
                          const SweepCells& cells, const std::string& fingerprint);
void open_campaign_folder(const std::filesystem::path& output, const SweepSpec& spec,
                          const std::vector<SweepCell>& cells, const std::string& fingerprint);
// The rows: each cell's state file, else pending. Reads the [campaign] table and the cell list of
// OUTPUT/campaign.toml (IoError EDM-SWP-011 when missing or unreadable).
struct CampaignTable {
  std::map<std::string, std::string> meta;  // [campaign]: name, file, mode, fingerprint, axes
  std::vector<CellRecord> cells;
};
CampaignTable read_campaign_table(const std::filesystem::path& output);
// Writes one cell's state file atomically and rewrites OUTPUT/campaign.toml atomically from all the
// state files, under the folder's lock (flock on OUTPUT/.campaign.lock), so concurrent writers
// never lose a row. The table is read and written one row at a time.
void record_cell(const std::filesystem::path& output, const CellRecord& record);
// The state of one cell now (its state file, else pending).
CellRecord cell_record(const std::filesystem::path& output, const SweepCell& cell);

// ---- One cell -----------------------------------------------------------------------------------

// An exclusive claim on a cell while it runs (flock on OUTPUT/.cells/<label>.lock): a second
// process finds the cell busy instead of running it twice. Released on destruction.
class CellClaim {
 public:
  CellClaim(const std::filesystem::path& output, const std::string& label);  // try; held() says
  ~CellClaim();
  CellClaim(const CellClaim&) = delete;
  CellClaim& operator=(const CellClaim&) = delete;
  bool held() const { return fd_ >= 0; }
  // Whether no process holds the cell's claim now (for `edm campaign status`): a look that creates
  // no file and holds the lock only for the instant of the test.
  static bool unclaimed(const std::filesystem::path& output, const std::string& label);

 private:
  int fd_ = -1;
};

// How a cell's run is started in another process (edm sweep --ranks-per-cell: under mpirun, all
// ranks in one MPI_COMM_WORLD): given the cell's campaign file, overrides (the base's, then the
// cell's, then run.output) and folder, and the run's options (resume, overwrite, checkpoint_every),
// it returns when the run has ended and throws its error (Interrupted when it was stopped).
using CellRunner = std::function<void(const std::filesystem::path& file, const std::vector<Override>& overrides,
                                      const std::filesystem::path& folder, const RunOptions& run)>;

struct CellRunOptions {
  const std::atomic<bool>* stop = nullptr;  // the run driver's stop flag (checkpoint, then stop)
  std::int64_t checkpoint_every = 0;
  bool retry_failed = false;
  CellRunner runner;  // empty: the run in this process (run_campaign)
};

enum class CellOutcome { Skipped, Busy, Done, Failed, Stopped };

// Runs one cell unless it is done (skipped), failed (skipped unless retry_failed), or running in
// another process (busy). A folder holding a complete run (field.h5 and run.toml) is never run
// again: adopted as done when its run.toml's campaign is the cell's, else the cell fails with
// EDM-SWP-033 and the folder is left as it is. Otherwise resumes from OUTPUT/<label>/checkpoint.h5
// when one is there, else runs it afresh (replacing an unfinished folder). Records running, then
// done with its results (the
// energy through the screen and the on-axis peak ω of `edm spectrum`'s defaults, spectrum.h5
// written; the line, its photon yield, the run.toml verdicts and warnings: done (suspect) when they
// say the field is wrong, failed with EDM-SWP-034 instead under screen.strict), failed with the error id, or stopped (pending, "checkpoint kept") when the stop flag
// ended it. Never throws for the cell's own errors; `error` gets the one that ended it.
CellOutcome run_cell(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                     const std::filesystem::path& output, const PluginRegistry& plugins,
                     const CellRunOptions& options, RunObserver& observer, std::string* error = nullptr);

// ---- A whole campaign in this process (edm sweep's default executor, and edm.sweep in Python) ----

// A campaign file's sweep, read and checked as every executor starts from it: the [sweep] table
// (read_sweep), its cells (expand_sweep), the campaign folder (campaign_output) and every cell's
// campaign loaded before anything runs (past 1000 cells, each axis value once and the first and
// last cell whole), so that a bad value fails now, not hours in. Errors as read_sweep, expand_sweep
// and load_campaign.
struct LoadedSweep {
  SweepSpec spec;
  SweepCells cells;
  std::filesystem::path output;  // the campaign folder
};
LoadedSweep load_sweep(const std::filesystem::path& file, const std::vector<Override>& base,
                       const PluginRegistry& plugins, bool allow_large);

// What the cells' rows say now (of cell `only` alone when it is >= 0): the counts, the labels of the
// done (suspect) cells and the first failed cell's "label: error".
struct SweepTally {
  std::size_t done = 0, failed = 0, other = 0;
  std::vector<std::string> suspect;
  std::string first_error;
};
SweepTally tally_cells(const SweepCells& cells, const std::filesystem::path& output,
                       std::int64_t only = -1);

// Called after each cell the in-turn executor tried, with its outcome and, for a failed or stopped
// cell, its error ("EDM-…: message"). The front end says it (the command prints; core never does).
using CellReport = std::function<void(const SweepCell&, CellOutcome, const std::string&)>;

// Runs the cells in turn in this process (each through run_cell, of cell `only` alone when it is
// >= 0) until they are all tried or the stop flag of `options` ends one; returns whether it stopped.
bool run_cells_in_turn(const LoadedSweep& sweep, const std::vector<Override>& base, const PluginRegistry& plugins,
                       const CellRunOptions& options, std::int64_t only, RunObserver& observer,
                       const CellReport& report);

// The end of a sweep as its error: Interrupted EDM-SWP-026 when it was stopped, CellsFailed
// EDM-SWP-020 (exit 7) when cells failed; returns when neither.
void throw_sweep_outcome(const SweepTally& tally, const std::filesystem::path& output, bool stopped);

// The results of a finished run folder (CellRecord::results) from the spectrum `edm spectrum`
// computes with its defaults, written as spectrum.h5 unless `keep` and one is there already: the
// energy through the screen, the on-axis peak ω (absent when no bin above ω = 0 holds energy), the
// run's expected line (run.toml [kinematics]; absent when not known) and the photon yield at it.
std::map<std::string, double> cell_results(const std::filesystem::path& folder, bool keep = false);

// What edm sweep would do with a pending or failed cell's folder, for --dry-run: "" when it runs the
// cell afresh; else one line: it adopts the cell's own complete run there, resumes its checkpoint,
// or fails with EDM-SWP-033 because the folder holds a complete run that is not the cell's (why).
std::string cell_folder_plan(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                             const std::filesystem::path& output, const PluginRegistry& plugins);

// The dry-run estimate of one cell (edm run --dry-run's RunSummary).
RunSummary estimate_cell(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                         const std::filesystem::path& output, const PluginRegistry& plugins);

// Writes the table's cells into one HDF5 file (atomically): /cells/label (strings), /cells/state
// ("done (suspect)" included), /cells/wall_s, /cells/suspect (the reasons, "; "-joined),
// /cells/warnings (their text, newline-joined), /cells/warning_count, /verdicts/<name> (1, 0, NaN
// where not recorded), /overrides/<key> and /results/<name> (float64, NaN where absent; a
// non-numeric override as strings). Returns the number of cells.
std::size_t collect_campaign(const std::filesystem::path& output, const std::filesystem::path& file);

}  // namespace edm
