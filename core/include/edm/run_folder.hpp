// What is in a run folder (`edm info`): the parsed manifest run.toml, the root attributes and shape
// of field.h5, the summary of spectrum.h5 when it exists, and the size of every file. Reading only;
// the app formats it.
#pragma once
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edm/field_file.hpp"
#include "edm/spectrum.hpp"
#include <array>

namespace edm {

struct RunFolderInfo {
  std::filesystem::path folder;
  toml::table manifest;                     // RUN/run.toml
  std::optional<FieldFileSummary> field;    // RUN/field.h5, when present (FieldFile::summary)
  std::shared_ptr<const SpectrumFile> spectrum_file;  // RUN/spectrum.h5, when present (opened and checked once)
  std::optional<SpectrumSummary> spectrum;            // its edm spectrum part, when present
  struct File {
    std::string name;  // relative to the folder
    std::uintmax_t bytes = 0;
    // Listed, then gone before its size was read: another process (edm plot, a run) removed it
    // while the folder was read. Reported, not an error.
    bool vanished = false;
  };
  std::vector<File> files;  // regular files, recursively (plots/ included), sorted
};
// A folder without run.toml is ConfigError EDM-INFO-001 naming it; a malformed run.toml is
// EDM-INFO-002 with toml++'s line:column, one that is no manifest EDM-INFO-003 (read_run_manifest).
// A folder whose listing fails part way (a subfolder removed while it is read) is IoError EDM-IO-150
// naming it.
RunFolderInfo inspect_run_folder(const std::filesystem::path& folder);

// FOLDER/run.toml, parsed and checked to be a manifest edm run wrote: ConfigError EDM-INFO-001 when
// it is missing, EDM-INFO-002 when it is not TOML, and EDM-INFO-003 (check_run_manifest) when it has
// no [provenance] run_id.
toml::table read_run_manifest(const std::filesystem::path& folder);

// ConfigError EDM-INFO-003 naming `file` unless `manifest` has a non-empty string [provenance]
// run_id: every manifest edm run has written carries one, and the run-id checks that keep runs
// apart compare against it, so an empty run.toml (or any other TOML) must not pass for a run whose
// checks then have nothing to compare.
void check_run_manifest(const toml::table& manifest, const std::filesystem::path& file);

// For the commands that hand a run folder to other readers (edm plot's script): IoError EDM-IO-142
// naming FOLDER/run.toml, field.h5 or spectrum.h5 when one is a FIFO, socket or device.
void refuse_special_run_files(const std::filesystem::path& folder);

// For the analysis commands: IoError EDM-INFO-010 naming the field file when its run id
// (field.summary()) is not the one FOLDER/run.toml records. Only non-empty ids are compared (a
// field.h5 that FieldWriter wrote in a test, with an empty run id, is analysed as before).
void check_field_belongs_to_run(const std::filesystem::path& folder, const FieldFile& field);

// The unit axis of a run's screen from its manifest: an angular screen's [campaign.screen] axis
// (default z), a flat one's sign([screen] distance)·ẑ.
std::array<double, 3> run_screen_axis(const toml::table& manifest);

// spectrum.h5's /direct read at the direction nearest the axis (nearest_axis_sample, the choice
// `edm spectrum` makes for the time-domain spectrum): per sum written, the peak there and the
// yield at `line_omega` (linear between the two frequencies around it; NaN outside /direct's ω
// range or line_omega 0). nullopt when the file has no /direct. The damage SpectrumFile::direct_grid
// finds is its IoError (edm/spectrum_file.hpp), naming the file and the dataset.
struct DirectOnAxis {
  AxisSample axis;
  std::array<double, 3> direction{};  // its n̂
  std::size_t nx = 0, ny = 0;
  struct Sum {
    std::string sum;                                    // "coherent" | "incoherent"
    double peak_omega = 0, peak_d2W = 0, peak_photons_per_bw = 0;  // rad/s, J·s/rad/sr, photons/sr per 0.1 % BW
    double line_d2W = 0, line_photons_per_bw = 0;       // at line_omega
    double line_from = 0, line_to = 0;                  // rad/s: the two grid frequencies around it
  };
  std::vector<Sum> sums;
};
std::optional<DirectOnAxis> read_direct_on_axis(const SpectrumFile& spectrum, const std::array<double, 3>& axis,
                                                double line_omega);

}  // namespace edm
