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

#include "edm/run_files.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum.hpp"
#include <array>

namespace edm {

struct FieldFileSummary {
  std::string run_id, edm_version, scenario, mode;
  double electron_count = 0, screen_z = 0, window_clipped_electrons = 0;
  std::string screen_type = "flat";  // "angular": x, y are angles (rad) and screen_z the radius (inf: far field)
  std::size_t nx = 0, ny = 0, samples = 0;
  double t_first = 0, t_last = 0;                     // s, /axes/t
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // m, pixel centres
  std::vector<std::string> buckets;                   // "E", "B", "E_far", "B_far" present
  bool has_gamma = false;
  double gamma_mean_first = 0, gamma_mean_last = 0;  // ensemble mean γ at the ends of /gamma/mean
};
// Throws IoError naming the file if it cannot be opened or has no /E/x.
FieldFileSummary read_field_summary(const std::filesystem::path& field_file);

struct RunFolderInfo {
  std::filesystem::path folder;
  RunManifest manifest;                     // RUN/run.toml
  std::optional<FieldFileSummary> field;    // RUN/field.h5, when present
  std::shared_ptr<const SpectrumFile> spectrum_file;  // RUN/spectrum.h5, when present (opened and checked once)
  std::optional<SpectrumSummary> spectrum;            // its edm spectrum part, when present
  using File = RunFolder::Entry;
  std::vector<File> files;  // regular files, recursively (plots/ included), sorted (RunFolder::listing)
};
// The folder's run.toml is read by RunManifest::read (EDM-INFO-001 … 005); field.h5 of another run
// than the manifest's is EDM-INFO-010; a listing that fails part way EDM-IO-150.
RunFolderInfo inspect_run_folder(const std::filesystem::path& folder);

// For the commands that hand a run folder to other readers (edm plot's script): IoError EDM-IO-142
// naming FOLDER/run.toml, field.h5 or spectrum.h5 when one is a FIFO, socket, device or folder.
void refuse_special_run_files(const std::filesystem::path& folder);

// For the analysis commands: IoError EDM-INFO-010 naming FOLDER/field.h5 when its run id (`field`,
// read_field_summary) is not the one FOLDER/run.toml records in [field_file].
void check_field_belongs_to_run(const std::filesystem::path& folder, const FieldFileSummary& field);
// The same against the manifest the caller has read (no second read of run.toml).
void check_field_belongs_to_run(const RunManifest& manifest, const FieldFileSummary& field);

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
