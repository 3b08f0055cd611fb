// Run folder inspection for `edm info`: parses run.toml with toml++, reads field.h5's root
// attributes, axes and /gamma ends (small datasets only; the cube is never read), and spectrum.h5's
// summary attributes.
#include "edm/run_folder.hpp"

#include <algorithm>
#include <cmath>

#include "edm/error.hpp"
#include "io/h5.hpp"

namespace edm {

FieldFileSummary read_field_summary(const std::filesystem::path& field_file) {
  h5::Handle file = h5::open_file(field_file);
  const hid_t f = file.get();
  FieldFileSummary s;
  s.run_id = h5::attr_string(f, "run_id").value_or("");
  s.edm_version = h5::attr_string(f, "edm_version").value_or("");
  s.scenario = h5::attr_string(f, "scenario").value_or("");
  s.mode = h5::attr_string(f, "mode").value_or("");
  s.electron_count = h5::attr_double(f, "electron_count").value_or(0);
  s.screen_z = h5::attr_double(f, "screen_z").value_or(0);
  s.window_clipped_electrons = h5::attr_double(f, "window_clipped_electrons").value_or(0);
  const auto shape = h5::shape_3d(f, "/E/x", field_file);
  s.ny = shape[0];
  s.nx = shape[1];
  s.samples = shape[2];
  // Every component of every bucket has /E/x's shape and the axes its lengths, or the file is
  // damaged: the summary must not describe a cube that spectrum or plot would refuse.
  for (const char* b : {"E", "B", "E_far", "B_far"}) {
    if (!h5::exists(f, std::string("/") + b + "/x")) continue;
    s.buckets.push_back(b);
    for (const char* c : {"x", "y", "z"}) {
      const std::string name = std::string("/") + b + "/" + c;
      if (h5::shape_3d(f, name, field_file) != shape)
        throw IoError("EDM-IO-071", field_file.string() + ": " + name + " does not have the shape of /E/x");
    }
  }
  if (std::find(s.buckets.begin(), s.buckets.end(), std::string("B")) == s.buckets.end())
    throw IoError("EDM-IO-071", field_file.string() + ": /E/x without /B/x");
  const auto t = h5::read_1d(f, "/axes/t", field_file);
  const auto x = h5::read_1d(f, "/axes/x", field_file);
  const auto y = h5::read_1d(f, "/axes/y", field_file);
  if (t.size() != s.samples || x.size() != s.nx || y.size() != s.ny)
    throw IoError("EDM-IO-071", field_file.string() + ": /axes/x, /axes/y, /axes/t do not match the shape of /E/x");
  if (!t.empty()) s.t_first = t.front(), s.t_last = t.back();
  if (!x.empty()) s.x_min = x.front(), s.x_max = x.back();
  if (!y.empty()) s.y_min = y.front(), s.y_max = y.back();
  if (h5::exists(f, "/gamma/mean")) {
    const auto g = h5::read_1d(f, "/gamma/mean", field_file);
    // Grid points no electron reached are NaN; report the first and last defined values.
    auto first = std::find_if(g.begin(), g.end(), [](double v) { return std::isfinite(v); });
    auto last = std::find_if(g.rbegin(), g.rend(), [](double v) { return std::isfinite(v); });
    if (first != g.end()) {
      s.has_gamma = true;
      s.gamma_mean_first = *first;
      s.gamma_mean_last = *last;
    }
  }
  return s;
}

RunFolderInfo inspect_run_folder(const std::filesystem::path& folder) {
  RunFolderInfo info;
  info.folder = folder;
  const auto manifest = folder / "run.toml";
  if (!std::filesystem::is_directory(folder))
    throw ConfigError("EDM-INFO-001", folder.string() + ": no such run folder");
  if (!std::filesystem::exists(manifest))
    throw ConfigError("EDM-INFO-001", folder.string() + ": not a run folder (no run.toml in it)");
  try {
    info.manifest = toml::parse_file(manifest.string());
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError("EDM-INFO-002", manifest.string() + ":" + std::to_string(b.line) + ":" +
                                          std::to_string(b.column) + ": " + std::string(e.description()));
  }
  if (std::filesystem::exists(folder / "field.h5")) info.field = read_field_summary(folder / "field.h5");
  if (std::filesystem::exists(folder / "spectrum.h5"))
    info.spectrum = read_spectrum_summary(folder / "spectrum.h5");
  for (const auto& e : std::filesystem::recursive_directory_iterator(folder)) {
    if (!e.is_regular_file()) continue;
    info.files.push_back({std::filesystem::relative(e.path(), folder).string(), e.file_size()});
  }
  std::sort(info.files.begin(), info.files.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return info;
}

}  // namespace edm
