// Checkpoints of a running cell (RUN/checkpoint.h5): the partial cube of every device as summed so
// far (raw device layout), the electrons done, the γ trace and coverage records so far, timings,
// and the effective campaign. Written atomically (checkpoint.h5.partial, then rename), so a kill at
// any moment leaves either the previous checkpoint or the new one. `edm resume RUN` continues from
// it; on one device the result is bit-identical to an uninterrupted run.
#pragma once
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <functional>

#include "edm/campaign.hpp"
#include "edm/coverage.hpp"
#include "edm/run_files.hpp"
#include "edm/run_summary.hpp"
#include "edm/spectra.hpp"
#include "edm/trajectory.hpp"

namespace edm {

struct CheckpointState {
  std::string run_id;
  std::string campaign_text;           // the effective campaign (TOML), replayable
  // Where each key of it came from and the campaign file (provenance_text); `edm resume` puts them
  // back (restore_provenance). Empty: a checkpoint of an older edm.
  std::string campaign_provenance;
  std::uint64_t next_electron = 0;     // electrons [0, next_electron) are in the cube
  std::uint64_t batches_done = 0;
  std::uint32_t devices = 1;
  double trajectories = 0, trajectories_overlapped = 0, kernel = 0;
  std::uint64_t knots_total = 0, spline_bytes_per_electron = 0;
  GammaTrace gamma;
  std::vector<CoverageRecord> coverage;
  // Under mpirun (share/docs/outputs.md, "Checkpoints under MPI"): the number of ranks and the
  // generation, the count of checkpoints of the run so far, the same on every rank's file of one
  // checkpoint.
  std::uint32_t ranks = 1;
  std::uint64_t generation = 0;
  // What the run was asked for: checkpoint every K batches (0 automatic, −1 never); `edm resume`
  // keeps it unless given --checkpoint-every. A checkpoint written before it was recorded reads 0.
  std::int64_t checkpoint_every = 0;
  // [spectra] enabled: each device's direct-spectra sums so far, in device order (the group
  // /spectra of the file); empty for a run without them, whose checkpoints have no such group.
  std::vector<SpectraSums> spectra;
  // Whether the file holds the cubes (and the spectra sums). A checkpoint of no electron done (a
  // stop during the first solve) holds neither: its cube is all zeros, which `edm resume` starts
  // from as a fresh run does (attribute cube_saved = 0; share/docs/outputs.md, "Checkpoints").
  // Checkpoints written before the attribute hold their cubes.
  bool cube = true;
  // FNV-1a of the initial states and weights of the electrons summed so far, [first, next_electron)
  // of this rank, as the campaign gave them: `edm resume` refuses data changed under them
  // (EDM-CKP-071). 0: none recorded (an older edm).
  std::uint64_t input_digest = 0;
  // The observer window the cube was summed on (screen-relative first sample and spacing, laser
  // units): a resume whose campaign places it elsewhere (an edm whose auto window moved) would add
  // its electrons on other times. NaN: a checkpoint of an edm before it was recorded.
  double window_t0 = NAN, window_dt = NAN;
  // The CLBlast parameter sets of the processes that summed [first, next_electron) (TuningSpan,
  // dataset clblast_tuning: "first<TAB>record" a line); empty: a checkpoint of an older edm.
  std::vector<TuningSpan> tuning;
  // A screen run in passes of rows (share/docs/design.md, "Screens larger than the devices"): the
  // pass whose cube this is (0: the first) of `passes`, and its rows [pass_row0, pass_row1) of the
  // whole screen. The passes before it are written in field.h5.partial. In a checkpoint of a later
  // pass (pass > 0), next_electron, batches_done and the cube are the pass's, while gamma, coverage
  // and knots_total are the run's (every electron's, from the first pass, which later passes repeat).
  // A checkpoint without the attributes: the first pass of one.
  std::uint32_t pass = 0, passes = 1;
  std::int32_t pass_row0 = 0, pass_row1 = 0;
};

// A campaign's provenance as a checkpoint keeps it (TOML: file, and origin.<key> = default | file |
// environment | command line), and back. A resumed run's run.toml said that every key came from the
// file and named no campaign file (found by a hostile tester). restore_provenance keeps
// run.output's origin (the resume sets the folder) and throws IoError EDM-CKP-083 naming `where`
// when the text is not such a table.
std::string provenance_text(const Campaign& campaign);
void restore_provenance(Campaign& campaign, const std::string& text, const std::string& where);

// RUN/checkpoint.h5: the checkpoint of a one-process run; under mpirun, rank 0's, written last,
// so that its rename commits the whole generation.
inline std::filesystem::path checkpoint_path(const std::filesystem::path& run_folder) {
  return RunFolder(run_folder).checkpoint();
}
// Rank r's (r > 0) checkpoint of one generation under mpirun: RUN/checkpoint.g<G>.r<r>.h5.
inline std::filesystem::path rank_checkpoint_path(const std::filesystem::path& run_folder,
                                                  std::uint64_t generation, int rank) {
  return run_folder / ("checkpoint.g" + std::to_string(generation) + ".r" + std::to_string(rank) + ".h5");
}
// Whether `name` is one of those rank files.
bool is_rank_checkpoint_name(const std::string& name);

// Which generation RUN/checkpoint.h5 commits, and for how many ranks (a checkpoint written
// before ranks were recorded: 1 rank, generation 0).
struct CheckpointCommit {
  std::uint32_t ranks = 1;
  std::uint64_t generation = 0;
  // What the run was asked for: checkpoint every K batches (0 automatic, −1 never); `edm resume`
  // keeps it unless given --checkpoint-every. A checkpoint written before it was recorded reads 0.
  std::int64_t checkpoint_every = 0;
};
CheckpointCommit read_checkpoint_commit(const std::filesystem::path& file);

// What a checkpoint needs of the field stage: each device's raw cube (device layout, bucket by
// bucket, streamed in chunks so no whole-cube host copy is made) and its layout fingerprint. The run
// driver adapts its accumulators to it (run/), so io/ does not depend on field/.
class RawCubes {
 public:
  using Sink = std::function<void(int bucket, std::uint64_t offset, const double* data, std::size_t n)>;
  using Source = std::function<void(int bucket, std::uint64_t offset, double* data, std::size_t n)>;
  virtual ~RawCubes() = default;
  virtual std::size_t devices() const = 0;
  virtual int buckets() const = 0;
  virtual std::uint64_t doubles_per_bucket() const = 0;  // the same on every device
  virtual std::uint64_t layout_hash() const = 0;         // the same on every device
  // The settings the layout comes from ("screen.nx" → "64", "accumulator.pixel_order" → "rings",
  // effective values), saved with the cube so that a resume with another layout names the key.
  using LayoutKeys = std::vector<std::pair<std::string, std::string>>;
  virtual LayoutKeys layout_keys() const { return {}; }
  virtual void download(std::size_t device, const Sink& sink) = 0;      // drains first
  virtual void upload(std::size_t device, const Source& source) = 0;    // overwrites the cube
};

void write_checkpoint(const std::filesystem::path& file, const CheckpointState& state, RawCubes& cubes);
// Every attribute and dataset checked against its type, shape and stored size; the γ vectors of
// one length; the campaign text TOML. IoError (exit 4) naming the file and the dataset otherwise.
// A checkpoint without a cube that records an electron done (γ counts, drains, coverage, knots,
// batches) or holds cube or spectra datasets anyway is refused (EDM-CKP-070).
CheckpointState read_checkpoint_state(const std::filesystem::path& file);
// Throws IoError (EDM-CKP-024) unless `state` can continue a campaign of `electrons` electrons:
// next_electron ≤ electrons, and no batch count, γ count, drain or coverage record beyond the
// electrons done. The run driver calls it before anything is restored.
void check_resume_state(const CheckpointState& state, std::uint64_t electrons, const std::filesystem::path& file);
// Uploads the saved cubes into `cubes` (same device count, screen and mode; every cube dataset
// present, really stored and finite; IoError otherwise). A layout that differs is EDM-CKP-004
// naming the first layout key that differs (checkpoints that predate the keys: the pixel order).
// A checkpoint that holds no cube (CheckpointState::cube false) uploads nothing and returns false:
// `cubes` keep the zero cube of a fresh accumulator, which is what it saved.
bool load_checkpoint_cube(const std::filesystem::path& file, RawCubes& cubes);
// The direct-spectra sums of a checkpoint of a [spectra] run: one per device (`devices` of them),
// each of `directions` × `frequencies` bins. IoError naming the file and the dataset for a
// checkpoint without the group /spectra (EDM-CKP-060), another grid or device count (EDM-CKP-061),
// a dataset of the wrong type, shape or length (EDM-CKP-062), one never written (EDM-CKP-063) or
// holding a value that is not finite (EDM-CKP-064).
// The method that summed each device's direct spectra ("auto" resolved, as SpectraSums::method),
// as the checkpoint records it (attribute methods of /spectra, one name a device, comma-separated):
// `edm resume` continues with it. Empty for a checkpoint without the group (no electron done, or no
// [spectra]) and for one of an edm that did not record it. IoError EDM-CKP-080 for a record that is
// not one of direct, fft, dft for each of `devices` devices.
std::vector<SpectraMethod> read_checkpoint_spectra_methods(const std::filesystem::path& file, std::size_t devices);
std::vector<SpectraSums> load_checkpoint_spectra(const std::filesystem::path& file, std::size_t devices,
                                                 std::size_t directions, std::size_t frequencies);

}  // namespace edm
