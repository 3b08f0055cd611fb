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
#include "edm/run_files.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum.hpp"
#include <array>

namespace edm {

struct RunFolderInfo {
  std::filesystem::path folder;
  RunManifest manifest;                     // RUN/run.toml
  std::optional<FieldFileSummary> field;    // RUN/field.h5, when present (FieldFile::summary)
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

// For the analysis commands: IoError EDM-INFO-010 naming the field file when its run id
// (field.summary()) is not the one the run's manifest records in [field_file].
void check_field_belongs_to_run(const RunManifest& manifest, const FieldFile& field);

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
