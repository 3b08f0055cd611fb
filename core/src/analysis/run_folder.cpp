// Run folder inspection for `edm info`: parses run.toml with toml++, takes field.h5's summary from
// FieldFile (root attributes, axes, /gamma ends; the cube is never read), and spectrum.h5's summary
// attributes.
#include "edm/run_folder.hpp"

#include <algorithm>
#include <cmath>

#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/photon_units.hpp"
#include "edm/photon_yield.hpp"
#include "io/h5.hpp"

namespace edm {

namespace {

// field.h5 and run.toml are one result only when they come from the same run: the run id the
// manifest's [field_file] records must be the field file's, and its recorded size the file's size.
// Anything else (two runs into one folder, a file copied over) is refused rather than summarised as
// a valid run. A manifest that records no field file has none: a field.h5 beside it is another's.
[[noreturn]] void refuse_pair(const RunManifest& manifest, const std::filesystem::path& field_file,
                              const std::string& why) {
  throw IoError("EDM-INFO-010", field_file.string() + " does not belong to " + manifest.file().string() + ": " +
                                    why + " (two runs wrote this folder, or a file was replaced)");
}

std::string field_id_mismatch(const RunManifest& manifest, const std::string& field_run_id) {
  const auto want_id = manifest.field_run_id();
  if (!want_id) return "the manifest records no field file";
  if (field_run_id != *want_id) return "its run id is " + field_run_id + ", the manifest's " + *want_id;
  return "";
}

void check_field_matches_manifest(const RunFolderInfo& info, const std::filesystem::path& field_file) {
  std::string why = field_id_mismatch(info.manifest, info.field->run_id);
  if (why.empty()) {
    const auto want_bytes = info.manifest.field_bytes();
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(field_file, ec);
    if (want_bytes && !ec && std::int64_t(bytes) != *want_bytes)
      why = "it has " + std::to_string(bytes) + " bytes, the manifest records " + std::to_string(*want_bytes);
  }
  if (!why.empty()) refuse_pair(info.manifest, field_file, why);
}

}  // namespace

void refuse_special_run_files(const std::filesystem::path& folder) { RunFolder(folder).refuse_special_files(); }

void check_field_belongs_to_run(const RunManifest& manifest, const FieldFile& field) {
  // Only the id counts here: a field.h5 rewritten whole (h5repack) keeps its run but not its size.
  if (const std::string why = field_id_mismatch(manifest, field.summary().run_id); !why.empty())
    refuse_pair(manifest, field.path(), why);
}

RunFolderInfo inspect_run_folder(const std::filesystem::path& folder) {
  const RunFolder run(folder);
  RunFolderInfo info;
  info.folder = folder;
  info.manifest = RunManifest::read(run);
  if (run.has_field()) {
    info.field = FieldFile::open(run.field()).summary();
    check_field_matches_manifest(info, run.field());
  }
  if (run.has_spectrum()) {
    info.spectrum_file = std::make_shared<const SpectrumFile>(SpectrumFile::open(run.spectrum()));
    info.spectrum = info.spectrum_file->summary();
  }
  info.files = run.listing();
  return info;
}

namespace {

// One sum's spectrum at the chosen direction: its peak and its value at the line.
DirectOnAxis::Sum direct_sum_on_axis(const SpectrumFile& file, const DirectGrid& grid, const std::string& sum,
                                     const DirectOnAxis& d, double line_omega) {
  const std::vector<double>& omega = grid.omega;
  const std::vector<double> row = file.direct_row(grid, sum, d.axis.iy);
  const std::vector<double> s(row.begin() + std::ptrdiff_t(d.axis.ix * omega.size()),
                              row.begin() + std::ptrdiff_t((d.axis.ix + 1) * omega.size()));
  DirectOnAxis::Sum out;
  out.sum = sum;
  std::size_t k = 0;
  for (std::size_t j = 1; j < s.size(); ++j)
    if (s[j] > s[k]) k = j;
  out.peak_omega = s[k] > 0 ? omega[k] : std::nan("");  // no light there: no peak
  out.peak_d2W = s[k];
  out.peak_photons_per_bw = photons_per_bandwidth(s[k]);
  out.line_d2W = line_omega > 0 ? interpolate_at(omega, s, line_omega) : std::nan("");
  out.line_photons_per_bw = photons_per_bandwidth(out.line_d2W);
  if (std::isfinite(out.line_d2W)) {
    // A coarse grid's chord across a narrow line is its own error: the reader is told which one.
    const auto hi = std::upper_bound(omega.begin(), omega.end(), line_omega);
    out.line_from = *(hi - 1), out.line_to = *hi;
  }
  return out;
}

}  // namespace

std::optional<DirectOnAxis> read_direct_on_axis(const SpectrumFile& file, const std::array<double, 3>& axis,
                                                double line_omega) {
  const std::optional<DirectGrid> grid = file.direct_grid();
  if (!grid) return std::nullopt;
  DirectOnAxis d;
  d.ny = grid->ny;
  d.nx = grid->nx;
  d.axis = nearest_axis_sample(grid->directions, d.nx, d.ny, axis);
  const std::size_t at = 3 * (d.axis.iy * d.nx + d.axis.ix);
  d.direction = {grid->directions[at], grid->directions[at + 1], grid->directions[at + 2]};
  for (const std::string& sum : grid->sums) d.sums.push_back(direct_sum_on_axis(file, *grid, sum, d, line_omega));
  return d;
}

}  // namespace edm
