// run.toml read back (share/docs/outputs.md): parsed once, checked to be a manifest of this edm's
// format (kRunFormat), and read through typed accessors. Every reader of a run's run.toml in core
// and apps takes a RunManifest; its writer is make_manifest/write_manifest (edm/manifest.hpp).
// Errors, one id per kind of damage, each naming the file and the key:
//   EDM-INFO-001 no run.toml in the folder      EDM-INFO-002 not TOML (line:column)
//   EDM-INFO-003 a key missing                  EDM-IO-160 another format version (both named)
//   EDM-INFO-005 a key of the wrong type or out of its range
// Public, at the io level (share/docs/developing.md, "Levels").
#pragma once
#include <toml++/toml.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "edm/kinematics.hpp"
#include "edm/manifest.hpp"
#include "edm/run_files.hpp"

namespace edm {

class RunManifest {
 public:
  // FOLDER/run.toml, parsed and checked: the folder must exist and hold run.toml (EDM-INFO-001),
  // a regular file (EDM-IO-142), TOML (EDM-INFO-002), with [provenance] format = kRunFormat
  // (IoError EDM-IO-160, the id of every run-folder file's format, names the file, the edm that wrote it and both formats, and says how to replay
  // it) and a non-empty [provenance] run_id (EDM-INFO-003).
  static RunManifest read(const RunFolder& folder);

  const std::filesystem::path& file() const { return file_; }
  // The whole table, for showing it as it is (edm info's sections); readers use the accessors.
  const toml::table& table() const { return t_; }

  int format() const;                 // [provenance] format
  std::string run_id() const;         // [provenance] run_id
  std::string edm_version() const;    // [provenance] edm_version ("" if absent)
  std::string scenario() const;       // [config] scenario
  // [campaign] as the text of a campaign file (`edm run RUN/run.toml` replays it).
  std::string campaign_text() const;

  double laser_omega() const;  // [laser] omega, rad/s, > 0
  double a0() const;           // [laser] a0 (the effective one), ≥ 0
  // [kinematics]: nullopt when the run recorded no ensemble (electrons = 0: a run of no electrons);
  // EDM-INFO-005 naming the key when one is out of its range. total_weight ([electrons]) is not
  // read back: no reader takes it.
  std::optional<EnsembleKinematics> kinematics() const;
  std::string screen_type() const;  // [screen] type: "flat" | "angular"
  // The screen's side of the origin along z: +1, −1, or 0 where it has none (an angular screen
  // about x or y). A flat screen's sign of [screen] distance; an angular one's [campaign.screen] axis.
  int screen_side() const;
  // The unit axis of the screen: an angular screen's [campaign.screen] axis, a flat one's
  // sign([screen] distance)·ẑ.
  std::array<double, 3> screen_axis() const;
  int knots_per_period() const;  // [config] knots_per_period

  // [window]: the run's verdicts on its window. The optional ones are recorded only where known.
  struct Window {
    bool covered = true, strict = false, emission_needed = false;
    std::int64_t clipped_electrons = 0, burst_missed_electrons = 0, burst_cut_electrons = 0,
                 emission_cut_electrons = 0;
    std::optional<bool> emission_in_window, roots_converged, burst_in_window;
    std::optional<double> root_samples_per_period;
  };
  Window window() const;
  std::vector<std::string> warnings() const;  // [warnings] messages
  std::optional<double> timing_total() const;  // [timing] total, s
  // [field_file]: the field.h5 this manifest belongs to (run id, size once renamed into place);
  // absent for a run that wrote no field file.
  std::optional<std::string> field_run_id() const;
  std::optional<std::int64_t> field_bytes() const;
  // [inputs] files: every data file the run read (key, path, bytes, digest); empty for a run that
  // read none, or one of an edm before the record. EDM-INFO-005 naming the key for a damaged entry.
  std::vector<InputFile> inputs() const;
  // The same from a manifest parsed elsewhere (`edm run RUN/run.toml`: the replayed file may have
  // any name and lie outside a run folder).
  static std::vector<InputFile> inputs_of(const toml::table& manifest, const std::filesystem::path& file);

 private:
  std::filesystem::path file_;
  toml::table t_;
  // The node at "section.key" (dots split sections), or EDM-INFO-003 naming the file and the key.
  const toml::node& need(const std::string& key) const;
  template <class T>
  T need_as(const std::string& key, const char* type) const;
};

}  // namespace edm
