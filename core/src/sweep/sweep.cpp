// The [sweep] table of a campaign file (share/docs/sweeps.md): axes over keys of the key table (or
// the scenario's own keys), as lists or ranges, combined as a grid or zipped, expanded into cells
// with labels derived from the values; and each cell's campaign (the base file, the base overrides,
// the cell's, its run folder under the campaign folder).
#include <algorithm>
#include <cctype>
#include <tuple>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "edm/error.hpp"
#include "edm/schema.hpp"
#include "edm/sweep.hpp"

namespace edm {

const char* sweep_mode_name(SweepMode m) { return m == SweepMode::Zip ? "zip" : "grid"; }

namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError("EDM-CFG-002", file.string() + ": cannot open the campaign file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

toml::table parse_file(const std::filesystem::path& file) {
  try {
    return toml::parse(read_text(file), file.string());
  } catch (const toml::parse_error& e) {
    throw ConfigError("EDM-SWP-014", file.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                                         std::to_string(e.source().begin.column) +
                                         ": syntax error: " + std::string(e.description()));
  }
}

std::string at(const std::filesystem::path& file, const toml::source_region& src) {
  return file.string() + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

// Shortest text that reads back as the same double (so labels are stable and short: 0.1, 1e-06).
std::string number_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // TOML needs a fraction or an exponent for a float: "2" would be read as an integer.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// One value of an axis as the TOML text an override takes.
std::string value_text(const toml::node& v, const std::string& where, const std::string& key) {
  if (auto i = v.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = v.value_exact<double>()) {
    // [nan, nan] was refused as one label repeated (EDM-SWP-009), a lone nan ran as a cell.
    if (!std::isfinite(*d))
      throw ConfigError("EDM-SWP-031", where + ": the list of '" + key + "' holds " + number_text(*d) +
                                           ", not a finite number");
    return number_text(*d);
  }
  if (auto b = v.value_exact<bool>()) return *b ? "true" : "false";
  if (auto s = v.value_exact<std::string>()) return toml_string(*s);
  throw ConfigError("EDM-SWP-004", where + ": a sweep value must be a number, a boolean or a string");
}

// The most cells a sweep may have even with --yes: beyond it the labels, rows and overrides alone
// would fill the host's memory long before a cell runs (a range of count = 1e11 grew without bound).
constexpr std::uint64_t kCellCeiling = 1'000'000;

// Refuses `count` cells of the sweep (or values of one range: `what` says which, `where` is the file
// or the range's line) over the limit before any is expanded.
void check_cell_count(const std::string& where, const std::string& what, const char* noun, std::uint64_t count,
                      std::uint64_t max_cells, bool allow_large) {
  const bool over_ceiling = count > kCellCeiling;
  if (!over_ceiling && (count <= max_cells || allow_large)) return;
  // Over the ceiling --yes cannot help, so the message does not offer it (found in review).
  const std::string limit = over_ceiling
                                ? "more than the " + std::to_string(kCellCeiling) +
                                      " cells a sweep may have even with --yes: sweep fewer values"
                                : "more than max_cells = " + std::to_string(max_cells) +
                                      ": pass --yes to run them all, or raise [sweep] max_cells";
  throw ConfigError("EDM-SWP-008",
                    where + ": " + what + " has " + std::to_string(count) + " " + noun + ", " + limit);
}

struct CountLimit {
  std::uint64_t max_cells;
  bool allow_large;
};

// { from = a, to = b, count = n [, scale = "log"] }: n values from a to b inclusive. The count is
// checked against the limit before any value is made.
std::vector<std::string> range_values(const toml::table& t, const std::string& where, const std::string& key,
                                      const CountLimit& limit) {
  for (auto&& [k, v] : t)
    if (k != "from" && k != "to" && k != "count" && k != "scale")
      throw ConfigError("EDM-SWP-004", where + ": a range has from, to, count and optionally scale = "
                                               "\"linear\" | \"log\"; '" + std::string(k.str()) + "' is none of them");
  const auto from = t["from"].value<double>(), to = t["to"].value<double>();
  const auto count = t["count"].value_exact<std::int64_t>();
  const std::string scale = t["scale"].value_or(std::string("linear"));
  if (!from || !to || !count)
    throw ConfigError("EDM-SWP-004", where + ": a range needs from (number), to (number) and count (integer)");
  if (*count < 1) throw ConfigError("EDM-SWP-003", where + ": the range has count " + std::to_string(*count) +
                                                       ": an axis needs one value or more");
  // A NaN end made every value 'nan' (refused as one label repeated, EDM-SWP-009); an infinite one
  // made NaN steps.
  if (!std::isfinite(*from) || !std::isfinite(*to))
    throw ConfigError("EDM-SWP-031", where + ": the range of '" + key + "' has from = " + number_text(*from) +
                                         ", to = " + number_text(*to) + ": both ends must be finite numbers");
  check_cell_count(where, "the range of '" + key + "'", "values", std::uint64_t(*count), limit.max_cells,
                   limit.allow_large);
  if (scale != "linear" && scale != "log")
    throw ConfigError("EDM-SWP-004", where + ": scale = \"" + scale + "\": use \"linear\" or \"log\"");
  if (scale == "log" && (*from <= 0 || *to <= 0))
    throw ConfigError("EDM-SWP-004", where + ": a log range needs from > 0 and to > 0");
  // Integers stay integers when both ends are integers and every step lands on one.
  const bool ints = t["from"].is_integer() && t["to"].is_integer() && scale == "linear" &&
                    (*count == 1 || (std::int64_t(*to - *from) % (*count - 1)) == 0);
  std::vector<std::string> out;
  for (std::int64_t i = 0; i < *count; ++i) {
    const double f = *count == 1 ? 0.0 : double(i) / double(*count - 1);
    double v = scale == "log" ? *from * std::pow(*to / *from, f) : *from + (*to - *from) * f;
    if (i == *count - 1) v = *to;  // the end exactly, not a rounding of it
    out.push_back(ints ? std::to_string(std::llround(v)) : number_text(v));
  }
  return out;
}

// The axis key must be a key of the table (core) or of the scenario's section.
void check_axis_key(const std::string& key, const std::string& scenario, const std::vector<KeySpec>& plugin_keys,
                    const std::string& where) {
  const auto dot = key.find('.');
  const std::string section = dot == std::string::npos ? key : key.substr(0, dot);
  const std::string name = dot == std::string::npos ? "" : key.substr(dot + 1);
  if (key == "run.output")
    throw ConfigError("EDM-SWP-006", where + ": run.output cannot be swept: each cell's folder is "
                                             "OUTPUT/<label>/ under the campaign's run.output");
  bool known = core_key(section, name) != nullptr;
  if (!known && section == scenario)
    known = std::any_of(plugin_keys.begin(), plugin_keys.end(), [&](const KeySpec& k) { return k.key == name; });
  if (!known)
    throw ConfigError("EDM-SWP-002", where + ": sweep over '" + key + "': not a key of the campaign (`edm schema` "
                                             "lists them; the scenario's own keys are '" + scenario + ".KEY')");
}

struct RawAxis {
  SweepAxis axis;
  std::size_t line = 0, column = 0;
};

// The axes of [sweep]: "section.key = [...]" or "section.key = {from, to, count}", as dotted keys
// (a table per section) or quoted keys ("laser.a0" = [...]).
void collect_axes(const toml::table& t, const std::string& prefix, const std::filesystem::path& file,
                  const CountLimit& limit, std::vector<RawAxis>& out) {
  for (auto&& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    const std::string where = at(file, k.source());
    if (prefix.empty() && (key == "mode" || key == "max_cells")) continue;
    RawAxis a;
    a.axis.key = key;
    a.line = k.source().begin.line;
    a.column = k.source().begin.column;
    if (const toml::array* arr = v.as_array()) {
      if (arr->empty()) throw ConfigError("EDM-SWP-003", where + ": the axis '" + key + "' has no values");
      for (auto&& x : *arr) a.axis.values.push_back(value_text(x, at(file, x.source()), key));
    } else if (const toml::table* sub = v.as_table()) {
      // A table under a bare section name holds that section's axes, never a range: a range is the
      // value of a section.key. `electrons.count = [2, 3]` is the table electrons = { count = [2, 3] },
      // and its key `count` made it read as a range of 'electrons' ("a range needs from, to and count").
      if (key.find('.') == std::string::npos) {
        collect_axes(*sub, key, file, limit, out);
        continue;
      }
      if (sub->contains("from") || sub->contains("to") || sub->contains("count")) {
        a.axis.values = range_values(*sub, where, key, limit);
      } else {
        throw ConfigError("EDM-SWP-004", where + ": '" + key + "' is neither a list of values nor a range "
                                                 "{ from, to, count }");
      }
    } else {
      throw ConfigError("EDM-SWP-004", where + ": the axis '" + key + "' must be a list of values or a range "
                                               "{ from = …, to = …, count = … }");
    }
    out.push_back(std::move(a));
  }
}

std::string short_name(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '+' ||
                    ch == '-' || ch == '=';
    out += ok ? ch : '_';
  }
  return out;
}

std::string unquote(const std::string& v) {
  return v.size() >= 2 && v.front() == '"' && v.back() == '"' ? v.substr(1, v.size() - 2) : v;
}

}  // namespace

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool has_sweep(const std::filesystem::path& file) { return parse_file(file).contains("sweep"); }

SweepSpec read_sweep(const std::filesystem::path& file, const std::string& scenario,
                     const std::vector<KeySpec>& plugin_keys, bool allow_large) {
  const toml::table root = parse_file(file);
  const toml::node* node = root.get("sweep");
  if (!node)
    throw ConfigError("EDM-SWP-001", file.string() + ": no [sweep] table: `edm sweep` needs axes (share/docs/"
                                                     "sweeps.md); `edm run` runs a single cell");
  const toml::table* t = node->as_table();
  if (!t) throw ConfigError("EDM-SWP-004", file.string() + ": sweep must be a table ([sweep])");
  SweepSpec spec;
  spec.file = file;
  if (const toml::node* m = t->get("mode")) {
    const auto word = m->value<std::string>();
    if (!word || (*word != "grid" && *word != "zip"))
      throw ConfigError("EDM-SWP-005", at(file, m->source()) + ": [sweep] mode must be \"grid\" or \"zip\"");
    spec.mode = *word == "zip" ? SweepMode::Zip : SweepMode::Grid;
  }
  if (const toml::node* m = t->get("max_cells")) {
    const auto n = m->value_exact<std::int64_t>();
    if (!n || *n < 1)
      throw ConfigError("EDM-SWP-004", at(file, m->source()) + ": [sweep] max_cells must be an integer ≥ 1");
    spec.max_cells = std::uint64_t(*n);
  }
  std::vector<RawAxis> raw;
  collect_axes(*t, "", file, CountLimit{spec.max_cells, allow_large}, raw);
  if (raw.empty())
    throw ConfigError("EDM-SWP-003", file.string() + ": [sweep] has no axes (e.g. laser.a0 = [0.1, 0.5, 1.0])");
  // File order, not toml++'s (sorted) order: the first axis written varies slowest.
  std::stable_sort(raw.begin(), raw.end(),
                   [](const RawAxis& a, const RawAxis& b) { return std::tie(a.line, a.column) < std::tie(b.line, b.column); });
  for (auto& a : raw) {
    check_axis_key(a.axis.key, scenario, plugin_keys, file.string() + ":" + std::to_string(a.line));
    spec.axes.push_back(std::move(a.axis));
  }
  return spec;
}

// The longest cell label: a file name holds 255 bytes on the common file systems (ext4, xfs, btrfs,
// NAME_MAX), and edm adds up to ".toml.tmp." and a process id to a label.
constexpr std::size_t kMaxLabelBytes = 224;

namespace {
// Axis i's name in labels: its short name, or its whole key where another axis shares the short name.
std::string label_name(const std::vector<SweepAxis>& axes, std::size_t i) {
  const std::string name = short_name(axes[i].key);
  const auto same = std::count_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return short_name(a.key) == name; });
  return same > 1 ? axes[i].key : name;
}
}  // namespace

std::string cell_label(const std::vector<SweepAxis>& axes, const std::vector<std::string>& values) {
  std::string label;
  for (std::size_t i = 0; i < axes.size(); ++i)
    label += (i ? "," : "") + sanitize(label_name(axes, i) + "=" + unquote(values[i]));
  return label;
}

namespace {

std::uint64_t cell_count(const SweepSpec& spec) {
  if (spec.mode == SweepMode::Zip) {
    const std::uint64_t count = spec.axes.front().values.size();
    for (const auto& a : spec.axes)
      if (a.values.size() != count)
        throw ConfigError("EDM-SWP-007", spec.file.string() + ": [sweep] mode = \"zip\" needs axes of one length: '" +
                                             spec.axes.front().key + "' has " + std::to_string(count) + " values, '" +
                                             a.key + "' " + std::to_string(a.values.size()));
    return count;
  }
  std::uint64_t count = 1;
  for (const auto& a : spec.axes) {
    count *= a.values.size();
    if (count > (std::uint64_t(1) << 40)) break;  // far beyond any limit; no overflow
  }
  return count;
}

// The label part of each value of each axis: a label is these parts joined by ',' (a part holds no
// ',': sanitize replaces it), so two labels are equal exactly when every axis's part is.
std::vector<std::vector<std::string>> label_parts(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<std::string>> parts(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::string name = label_name(axes, i);
    for (const auto& v : axes[i].values) parts[i].push_back(sanitize(name + "=" + unquote(v)));
  }
  return parts;
}

struct Clash {
  std::size_t first = 0, cell = 0;  // cell repeats the label of the earlier cell `first`
};

// The first cell, in order, whose label an earlier cell has: in a grid, a cell repeats a label
// exactly when some axis repeats a part, and the earliest such cell is that axis's first repeated
// value with every other axis at its first value; zip compares the cells' labels by a hash, sorted.
std::optional<Clash> first_clash(const SweepCells& cells, const std::vector<std::vector<std::string>>& parts,
                                 const std::vector<std::size_t>& stride, SweepMode mode) {
  std::optional<Clash> best;
  if (mode == SweepMode::Grid) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::map<std::string, std::size_t> seen;
      for (std::size_t j = 0; j < parts[i].size(); ++j) {
        const auto [it, fresh] = seen.emplace(parts[i][j], j);
        if (fresh) continue;
        const Clash c{it->second * stride[i], j * stride[i]};
        if (!best || c.cell < best->cell) best = c;
        break;
      }
    }
    return best;
  }
  std::vector<std::pair<std::uint64_t, std::size_t>> keys(cells.size());
  for (std::size_t k = 0; k < cells.size(); ++k) keys[k] = {std::hash<std::string>{}(cells.label(k)), k};
  std::sort(keys.begin(), keys.end());
  for (std::size_t a = 0; a < keys.size();) {
    std::size_t b = a + 1;
    while (b < keys.size() && keys[b].first == keys[a].first) ++b;
    for (std::size_t x = a; x < b; ++x)  // a run of one hash: rarely more than one cell
      for (std::size_t y = a; y < x; ++y)
        if (cells.label(keys[y].second) == cells.label(keys[x].second) && (!best || keys[x].second < best->cell)) {
          best = Clash{keys[y].second, keys[x].second};
          break;
        }
    a = b;
  }
  return best;
}

// The first cell whose label is longer than a file name can take, if any.
std::optional<std::size_t> first_long_label(const SweepCells& cells, const std::vector<std::vector<std::string>>& parts) {
  std::size_t longest = parts.size() - 1;
  for (const auto& p : parts) {
    std::size_t m = 0;
    for (const auto& s : p) m = std::max(m, s.size());
    longest += m;
  }
  if (longest <= kMaxLabelBytes) return std::nullopt;
  for (std::size_t k = 0; k < cells.size(); ++k)
    if (cells.label(k).size() > kMaxLabelBytes) return k;
  return std::nullopt;
}

}  // namespace

std::size_t SweepCells::value_index(std::size_t k, std::size_t i) const {
  return mode_ == SweepMode::Zip ? k : (k / stride_[i]) % axes_[i].values.size();
}

std::string SweepCells::label(std::size_t k) const {
  std::string label;
  for (std::size_t i = 0; i < axes_.size(); ++i) label += (i ? "," : "") + parts_[i][value_index(k, i)];
  return label;
}

SweepCell SweepCells::operator[](std::size_t k) const {
  SweepCell cell;
  cell.index = k;
  cell.label = label(k);
  for (std::size_t i = 0; i < axes_.size(); ++i)
    cell.overrides.push_back({axes_[i].key, axes_[i].values[value_index(k, i)], Origin::CommandLine});
  return cell;
}

SweepCells sweep_cells(const SweepSpec& spec, bool allow_large) {
  const std::uint64_t count = cell_count(spec);
  check_cell_count(spec.file.string(), "the sweep", "cells", count, spec.max_cells, allow_large);
  SweepCells cells;
  cells.mode_ = spec.mode;
  cells.axes_ = spec.axes;
  cells.parts_ = label_parts(spec.axes);
  cells.count_ = std::size_t(count);
  cells.stride_.assign(spec.axes.size(), 1);
  for (std::size_t i = spec.axes.size(); i-- > 1;)
    cells.stride_[i - 1] = cells.stride_[i] * spec.axes[i].values.size();
  const auto long_label = first_long_label(cells, cells.parts_);
  const auto clash = first_clash(cells, cells.parts_, cells.stride_, spec.mode);
  // The label names files in the campaign folder (<label>/, .cells/<label>.toml.tmp.<pid>, .lock):
  // past a file name's 255 bytes, writing the cell's state failed as "cannot write the campaign table".
  if (long_label && (!clash || *long_label <= clash->cell)) {
    const std::string label = cells.label(*long_label);
    throw ConfigError("EDM-SWP-043", spec.file.string() + ": cell " + std::to_string(*long_label) + "'s label is " +
                                         std::to_string(label.size()) + " bytes, more than the " +
                                         std::to_string(kMaxLabelBytes) + " a file name in the campaign folder can "
                                         "take with edm's suffixes (255 bytes in all): sweep shorter values ('" +
                                         label.substr(0, 60) + "…')");
  }
  if (clash)
    throw ConfigError("EDM-SWP-009", spec.file.string() + ": cells " + std::to_string(clash->first) + " and " +
                                         std::to_string(clash->cell) + " have one label '" + cells.label(clash->cell) +
                                         "' (an axis repeats a value, or two values read alike)");
  return cells;
}

std::vector<SweepCell> expand_sweep(const SweepSpec& spec, bool allow_large) {
  const SweepCells cells = sweep_cells(spec, allow_large);
  return std::vector<SweepCell>(cells.begin(), cells.end());
}

std::vector<Override> cell_overrides(const SweepCell& cell, const std::vector<Override>& base,
                                     const std::filesystem::path& output) {
  std::vector<Override> all = base;
  for (const auto& o : cell.overrides) all.push_back(o);
  all.push_back({"run.output", toml_string((output / cell.label).string()), Origin::CommandLine});
  return all;
}

Campaign cell_campaign(const SweepSpec& spec, const SweepCell& cell, const std::vector<Override>& base,
                       const std::filesystem::path& output, const PluginRegistry& plugins) {
  const std::vector<Override> all = cell_overrides(cell, base, output);
  const std::string scenario = peek_scenario(spec.file, all);
  return load_campaign(spec.file, all, plugins.get(scenario).keys(), true, true);
}

std::filesystem::path campaign_output(const std::filesystem::path& file, const std::vector<Override>& base,
                                      const PluginRegistry& plugins) {
  const std::string scenario = peek_scenario(file, base);
  return load_campaign(file, base, plugins.get(scenario).keys(), true, true).run.output;
}

namespace {

// Up to this many cells every cell's whole campaign is loaded before anything runs.
constexpr std::size_t kCheckEveryCell = 1000;

// Every cell's campaign is checked before anything runs: a bad value fails now, not hours in. A
// campaign loads in about 0.2 ms (the file parsed, every key checked), so 10⁶ cells took minutes
// even with --print-only (found by profiling: load_campaign under cell_campaign was nearly all of
// it). Past kCheckEveryCell cells, each value of each axis is loaded once over the base, and the
// first and the last cell whole: a value no cell may take still fails now; a combination that only
// a rule across keys refuses fails its own cell when that runs (share/docs/sweeps.md).
void check_cells(const SweepSpec& spec, const SweepCells& cells, const std::vector<Override>& base,
                 const std::filesystem::path& output, const PluginRegistry& plugins) {
  if (cells.size() <= kCheckEveryCell) {
    for (const auto& c : cells) (void)cell_campaign(spec, c, base, output, plugins);
    return;
  }
  for (const auto& axis : spec.axes)
    for (const auto& v : std::set<std::string>(axis.values.begin(), axis.values.end())) {
      SweepCell one = cells.front();
      one.overrides = {{axis.key, v, Origin::CommandLine}};
      (void)cell_campaign(spec, one, base, output, plugins);
    }
  (void)cell_campaign(spec, cells.front(), base, output, plugins);
  (void)cell_campaign(spec, cells.back(), base, output, plugins);
}

}  // namespace

LoadedSweep load_sweep(const std::filesystem::path& file, const std::vector<Override>& base,
                       const PluginRegistry& plugins, bool allow_large) {
  LoadedSweep s;
  const std::string scenario = peek_scenario(file, base);
  s.spec = read_sweep(file, scenario, plugins.get(scenario).keys(), allow_large);
  s.cells = sweep_cells(s.spec, allow_large);
  s.output = campaign_output(file, base, plugins);
  check_cells(s.spec, s.cells, base, s.output, plugins);
  return s;
}

}  // namespace edm
