// `edm campaign collect`: the campaign table's cells as one HDF5 table for plotting (layout in
// share/docs/sweeps.md): one row per cell in the campaign's order, one dataset per column.
#include <cmath>
#include <set>

#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "io/h5.hpp"
#include "io/run_lock.hpp"

namespace edm {

namespace {

namespace fs = std::filesystem;

void write_strings(hid_t parent, const char* name, const std::vector<std::string>& v, const fs::path& where) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  h5::check(H5Tset_size(type.get(), H5T_VARIABLE), "string type", where);
  const hsize_t n = v.size();
  h5::Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  h5::Handle d(H5Dcreate2(parent, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) h5::io_fail(std::string("cannot create ") + name, where);
  std::vector<const char*> ptrs;
  for (const auto& s : v) ptrs.push_back(s.c_str());
  if (n) h5::check(H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), name, where);
}

// A column as numbers when every present value is one (NaN where absent), else as strings.
void write_column(hid_t group, const std::string& name, const std::vector<std::optional<std::string>>& text,
                  const fs::path& where) {
  std::vector<double> num;
  bool numeric = true;
  for (const auto& t : text) {
    if (!t) {
      num.push_back(NAN);
      continue;
    }
    try {
      std::size_t used = 0;
      const double d = std::stod(*t, &used);
      if (used != t->size()) numeric = false;
      num.push_back(d);
    } catch (const std::exception&) {
      numeric = false;
    }
  }
  if (numeric) {
    h5::write_dataset(group, name.c_str(), {hsize_t(num.size())}, num.data(), "", where);
    return;
  }
  std::vector<std::string> s;
  for (const auto& t : text) s.push_back(t ? *t : "");
  write_strings(group, name.c_str(), s, where);
}

// The unit of a result column (sweep.hpp, CellRecord::results).
const char* result_unit(const std::string& k) {
  if (k == "energy") return "J";
  if (k == "peak_omega_on_axis" || k == "line_omega" || k == "laser_omega") return "rad/s";
  if (k == "line_photons") return "photons/sr/0.1% BW";
  return "";
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// /cells/suspect, /cells/warnings, /cells/warning_count and /verdicts/<name> (1 true, 0 false,
// NaN not recorded): what the run said about its own field, beside its results.
void write_verdicts(hid_t file, hid_t cells, const CampaignTable& table, const fs::path& where) {
  std::vector<std::string> suspect, warnings;
  std::vector<double> count;
  std::set<std::string> vkeys;
  for (const auto& c : table.cells) {
    suspect.push_back(joined(c.suspect, "; "));
    warnings.push_back(joined(c.warnings, "\n"));
    // Known only for a cell whose run finished (its run.toml [warnings]): NaN for the others.
    count.push_back(c.state == CellState::Done || !c.warnings.empty() ? double(c.warnings.size()) : NAN);
    for (const auto& [k, v] : c.verdicts) vkeys.insert(k);
  }
  write_strings(cells, "suspect", suspect, where);
  write_strings(cells, "warnings", warnings, where);
  h5::write_dataset(cells, "warning_count", {hsize_t(count.size())}, count.data(), "", where);
  h5::Handle vg = h5::create_group(file, "verdicts", where);
  for (const auto& k : vkeys) {
    std::vector<double> col;
    for (const auto& c : table.cells) {
      const auto it = c.verdicts.find(k);
      col.push_back(it == c.verdicts.end() ? NAN : (it->second ? 1.0 : 0.0));
    }
    h5::write_dataset(vg.get(), k.c_str(), {hsize_t(col.size())}, col.data(), "", where);
  }
}

constexpr const char* kLayout = "edm campaign table (share/docs/sweeps.md)";

// The collected table is replaced only when FILE is one: `-o` naming the campaign's own
// campaign.toml, a cell's field.h5 or any other file truncated it (found by tests/test_hostile).
void refuse_foreign_target(const fs::path& file) {
  std::error_code ec;
  const auto st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) return;
  bool ours = false;
  if (fs::is_regular_file(fs::status(file, ec))) {
    h5::Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    ours = f.valid() && h5::attr_string(f.get(), "layout").value_or("") == kLayout;
  }
  if (!ours)
    throw ConfigError("EDM-SWP-030", file.string() +
                                         ": exists and is not a table edm campaign collect wrote; it is left as it "
                                         "is (give -o a new file name, or remove it yourself)");
}

}  // namespace

std::size_t collect_campaign(const fs::path& output, const fs::path& file) {
  const CampaignTable table = read_campaign_table(output);
  h5::start();
  h5::silence();
  refuse_foreign_target(file);
  const fs::path partial = file.string() + ".partial";
  // Whatever is under the temporary name (a table cut short, a link to some file that H5F_ACC_TRUNC
  // would truncate through) is kept aside, never written over (share/docs/outputs.md).
  move_aside(partial);
  try {
    h5::Handle f(H5Fcreate(partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);  // never through a link
    if (!f.valid()) h5::io_fail("cannot create the collected table", partial);
    for (const auto& [k, v] : table.meta) h5::write_attr(f.get(), k.c_str(), v);
    h5::write_attr(f.get(), "layout", kLayout);
    std::vector<std::string> labels, states, errors;
    std::vector<double> wall;
    std::set<std::string> okeys, rkeys;
    for (const auto& c : table.cells) {
      labels.push_back(c.label);
      states.push_back(cell_state_word(c));
      errors.push_back(c.error);
      wall.push_back(c.wall_s ? *c.wall_s : NAN);
      for (const auto& [k, v] : c.overrides) okeys.insert(k);
      for (const auto& [k, v] : c.results) rkeys.insert(k);
    }
    h5::Handle cells = h5::create_group(f.get(), "cells", partial);
    write_strings(cells.get(), "label", labels, partial);
    write_strings(cells.get(), "state", states, partial);
    write_strings(cells.get(), "error", errors, partial);
    h5::write_dataset(cells.get(), "wall_s", {hsize_t(wall.size())}, wall.data(), "s", partial);
    write_verdicts(f.get(), cells.get(), table, partial);
    h5::Handle ov = h5::create_group(f.get(), "overrides", partial);
    for (const auto& k : okeys) {
      std::vector<std::optional<std::string>> col;
      for (const auto& c : table.cells) {
        const auto it = c.overrides.find(k);
        col.push_back(it == c.overrides.end() ? std::nullopt : std::optional<std::string>(it->second));
      }
      write_column(ov.get(), k, col, partial);
    }
    h5::Handle rs = h5::create_group(f.get(), "results", partial);
    for (const auto& k : rkeys) {
      std::vector<double> col;
      for (const auto& c : table.cells) {
        const auto it = c.results.find(k);
        col.push_back(it == c.results.end() ? NAN : it->second);
      }
      h5::write_dataset(rs.get(), k.c_str(), {hsize_t(col.size())}, col.data(), result_unit(k), partial);
    }
    // On a full disk H5Fclose may report success over a file whose metadata never reached the disk
    // (found by tests/test_hostile: a corrupt table renamed into place, exit 0); the flush does not.
    if (H5Fflush(f.get(), H5F_SCOPE_GLOBAL) < 0)
      throw IoError("EDM-SWP-013", partial.string() + ": cannot write the collected table (disk full?)");
    h5::check(H5Fclose(f.release()), "closing the collected table", partial);
  } catch (...) {
    std::error_code rm;
    fs::remove(partial, rm);  // a half-written table under no name that anything reads
    throw;
  }
  std::error_code ec;
  fs::rename(partial, file, ec);
  if (ec) throw IoError("EDM-SWP-013", file.string() + ": cannot rename the collected table into place");
  return table.cells.size();
}

}  // namespace edm
