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

// field.h5 and run.toml are one result only when they come from the same run: the manifest's run
// id ([field_file] run_id, or [provenance] run_id for manifests written before [field_file]) must
// be the field file's, and its recorded size the file's size. Anything else (two runs into one
// folder, a file copied over) is refused rather than summarised as a valid run.
std::string manifest_field_run_id(const toml::table& manifest) {
  const auto* ff = manifest["field_file"].as_table();
  return ff ? (*ff)["run_id"].value_or(std::string()) : manifest["provenance"]["run_id"].value_or(std::string());
}

[[noreturn]] void refuse_pair(const std::filesystem::path& folder, const std::filesystem::path& field_file,
                              const std::string& why) {
  throw IoError("EDM-INFO-010", field_file.string() + " does not belong to " + (folder / "run.toml").string() +
                                    ": " + why + " (two runs wrote this folder, or a file was replaced)");
}

void check_field_matches_manifest(const RunFolderInfo& info, const std::filesystem::path& field_file) {
  const auto* ff = info.manifest["field_file"].as_table();
  const std::string want_id = manifest_field_run_id(info.manifest);
  std::string why;
  if (!want_id.empty() && info.field->run_id != want_id)
    why = "its run id is " + info.field->run_id + ", the manifest's " + want_id;
  if (ff && why.empty()) {
    const auto want_bytes = (*ff)["bytes"].value<std::int64_t>();
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(field_file, ec);
    if (want_bytes && !ec && std::int64_t(bytes) != *want_bytes)
      why = "it has " + std::to_string(bytes) + " bytes, the manifest records " + std::to_string(*want_bytes);
  }
  if (!why.empty()) refuse_pair(info.folder, field_file, why);
}

// The folder's regular files, recursively. Another process may remove one between the listing and
// its size (edm plot replacing plots/): it used to end `edm info` with "EDM-IO-094: FILE: No such
// file or directory" (found by tests/test_hostile); it is now listed as vanished.
std::vector<RunFolderInfo::File> list_files(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::vector<RunFolderInfo::File> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::error_code size_ec;
    // lexically: fs::relative resolves the path on disk, which fails too once the file is gone.
    RunFolderInfo::File f{e.path().lexically_relative(folder).string(), 0, false};
    const bool regular = e.is_regular_file(size_ec);
    if (!size_ec && !regular) continue;
    if (!size_ec) f.bytes = e.file_size(size_ec);
    if (size_ec && size_ec != std::errc::no_such_file_or_directory)
      throw IoError("EDM-IO-151", e.path().string() + ": cannot read its size: " + size_ec.message());
    f.vanished = bool(size_ec);
    files.push_back(std::move(f));
  }
  if (ec)
    throw IoError("EDM-IO-150", folder.string() + ": listing the run folder failed part way (" + ec.message() +
                                    "): another process changed it while it was read; run edm info again");
  return files;
}

}  // namespace

void refuse_special_run_files(const std::filesystem::path& folder) {
  for (const char* name : {"run.toml", "field.h5", "spectrum.h5"}) h5::refuse_special_file(folder / name);
}

void check_field_belongs_to_run(const std::filesystem::path& folder, const FieldFile& field) {
  // The caller has read run.toml already (a malformed one is its own error); here only the id counts:
  // a field.h5 rewritten whole (h5repack) keeps its run but not its size.
  toml::table manifest;
  try {
    manifest = toml::parse_file((folder / "run.toml").string());
  } catch (const toml::parse_error&) {
    return;
  }
  const std::string want_id = manifest_field_run_id(manifest);
  const std::string& have_id = field.summary().run_id;
  if (!want_id.empty() && !have_id.empty() && have_id != want_id)
    refuse_pair(folder, field.path(), "its run id is " + have_id + ", the manifest's " + want_id);
}

void check_run_manifest(const toml::table& manifest, const std::filesystem::path& file) {
  const auto id = manifest["provenance"]["run_id"].value<std::string>();
  if (!id || id->empty())
    throw ConfigError("EDM-INFO-003", file.string() + ": not a run manifest: " +
                                          (id ? "its [provenance] run_id is empty" : "it has no [provenance] run_id") +
                                          " (edm run writes one into every run.toml; this file is empty, "
                                          "damaged or not edm's)");
}

toml::table read_run_manifest(const std::filesystem::path& folder) {
  const auto manifest = folder / "run.toml";
  if (!std::filesystem::exists(manifest))
    throw ConfigError("EDM-INFO-001", folder.string() + ": not a run folder (no run.toml in it)");
  h5::refuse_special_file(manifest);
  toml::table t;
  try {
    t = toml::parse_file(manifest.string());
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError("EDM-INFO-002", manifest.string() + ":" + std::to_string(b.line) + ":" +
                                          std::to_string(b.column) + ": " + std::string(e.description()));
  }
  check_run_manifest(t, manifest);
  return t;
}

RunFolderInfo inspect_run_folder(const std::filesystem::path& folder) {
  RunFolderInfo info;
  info.folder = folder;
  if (!std::filesystem::is_directory(folder))
    throw ConfigError("EDM-INFO-001", folder.string() + ": no such run folder");
  info.manifest = read_run_manifest(folder);
  if (std::filesystem::exists(folder / "field.h5")) {
    info.field = FieldFile::open(folder / "field.h5").summary();
    check_field_matches_manifest(info, folder / "field.h5");
  }
  if (std::filesystem::exists(folder / "spectrum.h5")) {
    info.spectrum_file = std::make_shared<const SpectrumFile>(SpectrumFile::open(folder / "spectrum.h5"));
    info.spectrum = info.spectrum_file->summary();
  }
  info.files = list_files(folder);
  std::sort(info.files.begin(), info.files.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return info;
}

std::array<double, 3> run_screen_axis(const toml::table& m) {
  if (m["screen"]["type"].value_or(std::string()) == "angular")
    return axis_frame(parse_choice<ScreenAxis>(m["campaign"]["screen"]["axis"].value_or(std::string("z")))).a;
  const double z = m["screen"]["distance"].value_or(m["campaign"]["screen"]["distance"].value_or(1.0));
  return {0, 0, z < 0 ? -1.0 : 1.0};
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
