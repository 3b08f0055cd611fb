// run.toml: the manifest of a run (share/docs/outputs.md) — provenance, every effective setting and where it
// came from, the physics inputs in SI, window coverage, timing, FLOPs and memory. It holds the whole
// effective campaign under [campaign], so `edm run RUN/run.toml` replays the run.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/kinematics.hpp"
#include "edm/run_summary.hpp"
#include "edm/units.hpp"

namespace edm {

// One data file the campaign read (electrons.file of a list, the tracks file, an openPMD series), as
// [inputs] records it: `edm run RUN/run.toml` digests the file again and refuses a replay whose
// input changed since (EDM-RUN-072). The digest is the one the MPI ranks compare (run/ranks.hpp).
struct InputFile {
  std::string key;   // the campaign key that names it: "electrons.file", "trajectory.file"
  std::string path;  // as the campaign names it
  std::uint64_t bytes = 0;
  std::string digest;  // "fnv1a <16 hex digits>" (a series: every file's name and bytes in order)
};

struct ManifestExtras {
  std::string device_names;       // "0: NVIDIA H200 (NVIDIA CUDA)"
  std::string clblast_tuning;     // per device, as device_names: "0: H200: Xgemm GEMMK=0 …" or "0: CLBlast default"
  double flop_per_slot = 0;       // 0 = not counted
  double fp64_peak = 0;           // FLOP/s, 0 = not measured
  std::string kernel_options;     // effective tunables
  int sample_chunks = 0, work_group = 0, electron_group = 0, tile_width = 0;
  std::string pixel_order;  // effective (rings, tiles, rows)
  bool fast_recip = false;  // effective: refined seeds for divisions and square roots
  bool nv_seed = false;     // effective: fast_recip seeds from NVIDIA's FP64 approximations
  bool interleave = false;  // effective: the group's solves phase by phase
  int simd = 0;             // effective: pixels per work-item on FP64 vector lanes (0: the scalar kernel)
  double a0_effective = 0;
  int ranks = 1;
  RankTimings rank_timings;
  // [ranks] (MPI, more than one rank): how the ranks shared the work ("pixels" or "electrons", and
  // why) and, by pixels, every rank's rows [first, second) of the screen.
  std::string rank_sharding, rank_sharding_reason;
  std::vector<std::pair<int, int>> rank_rows;
  // The initial ensemble (from the scenario's initial states): [kinematics], which `edm spectrum
  // --of line` reads (share/docs/outputs.md). electrons = 0 writes no section.
  EnsembleKinematics kinematics;
  // The field file this manifest belongs to: [field_file] run_id (= [provenance] run_id, as in
  // field.h5's root attribute) and bytes (its size once renamed into place), which `edm info`
  // checks, so a field.h5 and a run.toml from different runs are never shown as one. 0 = no file.
  std::uint64_t field_bytes = 0;
  // [inputs]: every data file the campaign read; none writes no section.
  std::vector<InputFile> inputs;
};

toml::table make_manifest(const Campaign& campaign, const RunSummary& summary,
                          const Normalization& units, const ManifestExtras& extras);
// Writes atomically (temporary file + rename). Throws IoError naming the path.
void write_manifest(const std::filesystem::path& path, const toml::table& manifest);

// The effective campaign section of a manifest, or of a campaign file (replay support): if `file`
// is a manifest (has [provenance]), returns the text of its [campaign] table as a campaign file.
bool is_manifest(const std::filesystem::path& file);
std::string campaign_text_from_manifest(const std::filesystem::path& file);

}  // namespace edm
