// The campaign table (share/docs/sweeps.md, share/docs/outputs.md): OUTPUT/campaign.toml, one
// [[cell]] per cell, merged from one state file per cell (OUTPUT/.cells/<label>.toml). A cell's
// process writes only its own state file, then rewrites the table under an flock, each file written
// whole under a temporary name and renamed: concurrent cells (SLURM array tasks, one per device)
// never lose each other's rows, and a reader never sees half a file.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "sweep/identity.hpp"
#include "field/fnv1a.hpp"
#include "io/h5.hpp"
#include "io/run_lock.hpp"
#include "edm/run_files.hpp"

namespace edm {

const char* cell_state_name(CellState s) {
  switch (s) {
    case CellState::Pending:
      return "pending";
    case CellState::Running:
      return "running";
    case CellState::Done:
      return "done";
    case CellState::Failed:
      return "failed";
  }
  return "pending";
}

constexpr const char* kSuspectWord = "done (suspect)";

std::string cell_state_word(const CellRecord& r) {
  return r.state == CellState::Done && !r.suspect.empty() ? kSuspectWord : cell_state_name(r.state);
}

namespace {

namespace fs = std::filesystem;

// "done (suspect)" reads back as Done: the cell completed (its reasons are in `suspect`).
CellState parse_state(const std::string& s, const fs::path& where) {
  if (s == kSuspectWord) return CellState::Done;
  for (CellState c : {CellState::Pending, CellState::Running, CellState::Done, CellState::Failed})
    if (s == cell_state_name(c)) return c;
  throw IoError("EDM-SWP-011",
                where.string() + ": state '" + s + "' is not pending, running, done, done (suspect) or failed");
}

toml::array string_array(const std::vector<std::string>& v) {
  toml::array a;
  for (const auto& s : v) a.push_back(s);
  return a;
}

std::vector<std::string> strings_of(const toml::node_view<const toml::node>& n) {
  std::vector<std::string> v;
  if (const toml::array* a = n.as_array())
    for (auto&& e : *a)
      if (auto s = e.value<std::string>()) v.push_back(*s);
  return v;
}

fs::path cells_dir(const fs::path& output) { return output / ".cells"; }

// Whole file under <name>.tmp.<pid>, then renamed over the old one (atomic within a folder). The
// temporary name is created exclusively and never through a link (issue 30: an ofstream here wrote
// through a symbolic link planted under the predictable name into the file it points to); whatever
// is under it is not this process's and is moved aside.
void write_atomic(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp." + std::to_string(::getpid());
  move_aside(tmp);
  if (const int err = RunFolder::write_new_file(tmp, text))
    throw IoError("EDM-SWP-013", tmp.string() + ": cannot write " +
                                     (file.filename() == "campaign.toml" ? "the campaign table" : "a cell's state file") +
                                     " (" + std::strerror(err) + ")");
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw IoError("EDM-SWP-013", file.string() + ": cannot replace the campaign table");
  }
}

// A file written row by row under <name>.tmp.<pid> and renamed over the old one as write_atomic
// does (created exclusively, never through a link): the table of 10⁶ cells was built whole as one
// toml tree and one string, about 2 GB (issue 30).
class StreamedFile {
 public:
  explicit StreamedFile(const fs::path& file) : file_(file), tmp_(file.string() + ".tmp." + std::to_string(::getpid())) {
    move_aside(tmp_);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) fail(errno);  // nothing of this process's under the name: nothing to remove
    struct stat st {};
    const bool stat_ok = ::fstat(fd_, &st) == 0;
    if (!stat_ok || !S_ISREG(st.st_mode)) {
      const int err = stat_ok ? EINVAL : errno;
      ::close(fd_);
      ::unlink(tmp_.c_str());
      fail(err);
    }
  }
  ~StreamedFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!done_) ::unlink(tmp_.c_str());
  }
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  void write(const std::string& text) {
    buf_ += text;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void commit() {
    flush();
    if (::fsync(fd_) != 0) fail(errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno);
    std::error_code ec;
    fs::rename(tmp_, file_, ec);
    if (ec) throw IoError("EDM-SWP-013", file_.string() + ": cannot replace the campaign table");
    done_ = true;
  }

 private:
  void flush() {
    for (std::size_t at = 0; at < buf_.size();) {
      const ssize_t n = ::write(fd_, buf_.data() + at, buf_.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(n < 0 ? errno : EIO);
      at += std::size_t(n);
    }
    buf_.clear();
  }
  [[noreturn]] void fail(int err) {
    throw IoError("EDM-SWP-013", tmp_.string() + ": cannot write the campaign table (" + std::strerror(err) + ")");
  }
  fs::path file_, tmp_;
  int fd_ = -1;
  bool done_ = false;
  std::string buf_;
};

toml::table read_toml(const fs::path& file) {
  h5::refuse_special_file(file);
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw IoError("EDM-SWP-011", file.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                                     std::string(e.description()));
  }
}

// A value's TOML text back into a node of a table (the overrides keep their type).
void insert_text(toml::table& t, const std::string& key, const std::string& text) {
  try {
    toml::table v = toml::parse("v = " + text);
    t.insert_or_assign(key, *v.get("v"));
  } catch (const toml::parse_error&) {
    t.insert_or_assign(key, text);
  }
}

std::string node_text(const toml::node& n) {
  std::ostringstream os;
  n.visit([&os](auto&& x) { os << x; });
  return os.str();
}

toml::table record_table(const CellRecord& r) {
  toml::table t;
  t.insert("label", r.label);
  t.insert("state", cell_state_word(r));
  if (r.wall_s) t.insert("wall_s", *r.wall_s);
  if (!r.error.empty()) t.insert("error", r.error);
  if (!r.suspect.empty()) t.insert("suspect", string_array(r.suspect));
  if (!r.warnings.empty()) t.insert("warnings", string_array(r.warnings));
  toml::table o, res, ver;
  for (const auto& [k, v] : r.overrides) insert_text(o, k, v);
  for (const auto& [k, v] : r.results) res.insert(k, v);
  for (const auto& [k, v] : r.verdicts) ver.insert(k, v);
  t.insert("overrides", std::move(o));
  t.insert("results", std::move(res));
  if (!ver.empty()) t.insert("verdicts", std::move(ver));
  return t;
}

CellRecord record_from(const toml::table& t, const fs::path& where) {
  CellRecord r;
  r.label = t["label"].value_or(std::string());
  if (r.label.empty()) throw IoError("EDM-SWP-011", where.string() + ": a cell without a label");
  const std::string state = t["state"].value_or(std::string("pending"));
  r.state = parse_state(state, where);
  r.suspect = strings_of(t["suspect"]);
  // A row edited to "done (suspect)" without its reasons stays suspect.
  if (state == kSuspectWord && r.suspect.empty()) r.suspect.push_back("recorded suspect without a reason");
  r.warnings = strings_of(t["warnings"]);
  if (const toml::table* v = t["verdicts"].as_table())
    for (auto&& [k, b] : *v)
      if (auto x = b.value<bool>()) r.verdicts[std::string(k.str())] = *x;
  if (auto w = t["wall_s"].value<double>()) r.wall_s = *w;
  r.error = t["error"].value_or(std::string());
  r.host = t["host"].value_or(std::string());
  if (const toml::table* o = t["overrides"].as_table())
    for (auto&& [k, v] : *o) r.overrides[std::string(k.str())] = node_text(v);
  if (const toml::table* o = t["results"].as_table())
    for (auto&& [k, v] : *o)
      if (auto d = v.value<double>()) r.results[std::string(k.str())] = *d;
  return r;
}

// The lock of the table: held while one process merges the state files and renames the table.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& output) {
    const fs::path file = output / ".campaign.lock";
    // O_NOFOLLOW: a dangling link under the lock's name made edm create the file it points to.
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
      throw IoError("EDM-SWP-013", file.string() + ": cannot lock the campaign folder" +
                                       (fd_ < 0 && errno == ELOOP ? std::string(": it is a symbolic link, which edm "
                                                                                "never follows (remove it)")
                                                                  : std::string()));
  }
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

const char* const kTableHead =
    "# The campaign table of edm sweep (share/docs/sweeps.md); rewritten after every cell.\n"
    "# Each cell's own state is OUTPUT/.cells/<label>.toml; edm campaign status OUTPUT prints this.\n\n";

// The table's text is [campaign], then one [[cell]] per row, each formatted alone: the same bytes
// toml++ gives the whole table (a blank line between tables), so a table written row by row reads
// as the one written whole before.
std::string meta_text(const std::map<std::string, std::string>& meta) {
  toml::table root, m;
  for (const auto& [k, v] : meta) m.insert(k, v);
  root.insert("campaign", std::move(m));
  std::ostringstream os;
  os << kTableHead << toml::toml_formatter(root);
  return os.str();
}

std::string row_text(const CellRecord& r) {
  toml::array one;
  one.push_back(record_table(r));
  std::ostringstream os;
  os << "\n\n" << toml::toml_formatter(toml::table{{"cell", std::move(one)}});
  return os.str();
}

// Whether a line of the table opens a row: "[[cell]]", as toml++ writes it.
bool starts_row_line(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string::npos && line.compare(first, 8, "[[cell]]") == 0;
}

// Calls `row` with each cell of the table in order: the text before the first [[cell]] line is
// parsed whole, each [[cell]] with its sub-tables alone, so the table is never whole in memory.
void for_each_row(const fs::path& file, const std::function<void(const toml::table&)>& row,
                  std::map<std::string, std::string>* meta) {
  h5::refuse_special_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IoError("EDM-SWP-011", file.string() + ": cannot read the campaign table");
  std::string chunk, line;
  std::size_t chunk_line = 1, line_no = 0;
  bool head = true;
  const auto parse_chunk = [&] {
    toml::table t;
    try {
      t = toml::parse(chunk, file.string());
    } catch (const toml::parse_error& e) {
      throw IoError("EDM-SWP-011", file.string() + ":" + std::to_string(e.source().begin.line + chunk_line - 1) +
                                       ": " + std::string(e.description()));
    }
    if (head && meta)
      if (const toml::table* m = t["campaign"].as_table())
        for (auto&& [k, v] : *m)
          if (auto s = v.value<std::string>()) (*meta)[std::string(k.str())] = *s;
    if (const toml::node* rows = t.get("cell")) {
      const toml::array* a = rows->as_array();
      if (!a) throw IoError("EDM-SWP-011", file.string() + ": cell must be an array of tables");
      for (auto&& r : *a) {
        const toml::table* rt = r.as_table();
        if (!rt) throw IoError("EDM-SWP-011", file.string() + ": cell must be an array of tables");
        row(*rt);
      }
    }
    head = false;
  };
  while (std::getline(in, line)) {
    ++line_no;
    const bool starts_row = starts_row_line(line);
    if (starts_row && (!head || !chunk.empty())) {
      parse_chunk();
      chunk.clear();
      chunk_line = line_no;
    } else if (starts_row) {
      chunk_line = line_no;
    }
    chunk += line;
    chunk += '\n';
  }
  parse_chunk();
}

// Each row of the table, merged with its state file: the label and overrides from the table, the
// rest from the state file, else pending.
void for_each_merged(const fs::path& output, const std::function<void(CellRecord&&)>& each,
                     std::map<std::string, std::string>* meta) {
  const fs::path file = table_path(output);
  if (!fs::exists(file))
    throw IoError("EDM-SWP-011", file.string() + ": no campaign table here (edm sweep CAMPAIGN.toml writes it)");
  for_each_row(
      file,
      [&](const toml::table& rt) {
        CellRecord r = record_from(rt, file);
        const fs::path state = cell_state_path(output, r.label);
        if (fs::exists(state)) {
          CellRecord s = record_from(read_toml(state), state);
          s.overrides = r.overrides;
          r = std::move(s);
        } else {
          r = CellRecord{r.label, CellState::Pending, r.overrides, {}, {}, {}, {}};
        }
        each(std::move(r));
      },
      meta);
}

// The [campaign] meta of a table: the text before its first row.
std::map<std::string, std::string> table_meta(const fs::path& file) {
  std::map<std::string, std::string> meta;
  h5::refuse_special_file(file);
  std::ifstream in(file, std::ios::binary);
  std::string text, line;
  while (std::getline(in, line) && !starts_row_line(line)) text += line + "\n";
  try {
    const toml::table t = toml::parse(text, file.string());
    if (const toml::table* m = t["campaign"].as_table())
      for (auto&& [k, v] : *m)
        if (auto s = v.value<std::string>()) meta[std::string(k.str())] = *s;
  } catch (const toml::parse_error& e) {
    throw IoError("EDM-SWP-011", file.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                                     std::string(e.description()));
  }
  return meta;
}

using CellAt = std::function<SweepCell(std::size_t)>;

std::string fingerprint_of(const SweepSpec& spec, std::size_t count, const CellAt& at,
                           const std::vector<Override>& base, const PluginRegistry& plugins) {
  // The base campaign's effective keys without run.output (the folder may move) and without the
  // environment (a SLURM node's EDM_DEVICE does not make another campaign), then the cells, hashed
  // line by line (the same bytes, hence the same fingerprint, as when the text was made whole).
  const std::string scenario = peek_scenario(spec.file, base);
  Campaign c = load_campaign(spec.file, base, plugins.get(scenario).keys(), false, true);
  toml::table t = detail::campaign_identity(c);
  std::ostringstream os;
  os << t << "\nmode=" << sweep_mode_name(spec.mode) << "\n";
  std::uint64_t h = detail::fnv1a(os.str());
  for (std::size_t k = 0; k < count; ++k) {
    const SweepCell cell = at(k);
    std::string line = cell.label;
    for (const auto& o : cell.overrides) line += "|" + o.key + "=" + o.value;
    h = detail::fnv1a(line + "\n", h);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

fs::path table_path(const fs::path& output) { return output / "campaign.toml"; }

fs::path cell_state_path(const fs::path& output, const std::string& label) {
  return cells_dir(output) / (label + ".toml");
}

std::string campaign_fingerprint(const SweepSpec& spec, const SweepCells& cells, const std::vector<Override>& base,
                                 const PluginRegistry& plugins) {
  return fingerprint_of(spec, cells.size(), [&](std::size_t k) { return cells[k]; }, base, plugins);
}

std::string campaign_fingerprint(const SweepSpec& spec, const std::vector<SweepCell>& cells,
                                 const std::vector<Override>& base, const PluginRegistry& plugins) {
  return fingerprint_of(spec, cells.size(), [&](std::size_t k) { return cells[k]; }, base, plugins);
}

namespace {

// Refuses a folder that holds another campaign's table, or other files and no table.
void check_campaign_folder(const fs::path& output, const std::string& fingerprint) {
  const fs::path file = table_path(output);
  if (fs::exists(file)) {
    const auto meta = table_meta(file);
    const auto theirs = meta.count("fingerprint") ? meta.at("fingerprint") : std::string();
    if (theirs != fingerprint)
      throw ConfigError("EDM-SWP-010",
                        output.string() + ": this folder holds the table of another campaign (" +
                            (meta.count("file") ? meta.at("file") : std::string("?")) + ", fingerprint " +
                            (theirs.empty() ? "none" : theirs) + "; this one is " + fingerprint +
                            "): choose another run.output (-o) for this campaign; its cells are kept");
  } else if (fs::exists(output) && !fs::is_empty(output)) {
    for (const auto& e : fs::directory_iterator(output)) {
      const std::string n = e.path().filename().string();
      if (n != ".cells" && n != ".campaign.lock")
        throw ConfigError("EDM-SWP-010", output.string() + ": the folder exists and holds '" + n +
                                             "' but no campaign table: choose another run.output (-o)");
    }
  }
}

void open_folder(const fs::path& output, const SweepSpec& spec, std::size_t count, const CellAt& at,
                 const std::string& fingerprint) {
  std::error_code ec;
  fs::create_directories(cells_dir(output), ec);
  if (ec) throw IoError("EDM-SWP-013", output.string() + ": cannot create the campaign folder: " + ec.message());
  FolderLock lock(output);
  check_campaign_folder(output, fingerprint);
  std::map<std::string, std::string> meta{{"file", fs::absolute(spec.file).lexically_normal().string()},
                                          {"mode", sweep_mode_name(spec.mode)},
                                          {"fingerprint", fingerprint}};
  std::string axes;
  for (const auto& a : spec.axes) axes += (axes.empty() ? "" : ",") + a.key;
  meta["axes"] = axes;
  StreamedFile out(table_path(output));
  out.write(meta_text(meta));
  for (std::size_t k = 0; k < count; ++k) out.write(row_text(cell_record(output, at(k))));
  out.write("\n");
  out.commit();
}

}  // namespace

void open_campaign_folder(const fs::path& output, const SweepSpec& spec, const SweepCells& cells,
                          const std::string& fingerprint) {
  open_folder(output, spec, cells.size(), [&](std::size_t k) { return cells[k]; }, fingerprint);
}

void open_campaign_folder(const fs::path& output, const SweepSpec& spec, const std::vector<SweepCell>& cells,
                          const std::string& fingerprint) {
  open_folder(output, spec, cells.size(), [&](std::size_t k) { return cells[k]; }, fingerprint);
}

CampaignTable read_campaign_table(const fs::path& output) {
  CampaignTable t;
  for_each_merged(output, [&](CellRecord&& r) { t.cells.push_back(std::move(r)); }, &t.meta);
  return t;
}

CellRecord cell_record(const fs::path& output, const SweepCell& cell) {
  const fs::path state = cell_state_path(output, cell.label);
  CellRecord r;
  if (fs::exists(state)) r = record_from(read_toml(state), state);
  r.label = cell.label;
  r.overrides.clear();
  for (const auto& o : cell.overrides) r.overrides[o.key] = o.value;
  return r;
}

void record_cell(const fs::path& output, const CellRecord& record) {
  toml::table t = record_table(record);
  if (!record.host.empty()) t.insert("host", record.host);
  std::ostringstream os;
  os << t << "\n";
  FolderLock lock(output);
  write_atomic(cell_state_path(output, record.label), os.str());
  // The table again from every state file, one row at a time.
  std::map<std::string, std::string> meta;
  std::optional<StreamedFile> out;
  const fs::path file = table_path(output);
  for_each_merged(
      output,
      [&](CellRecord&& r) {
        if (!out) {
          out.emplace(file);
          out->write(meta_text(meta));
        }
        out->write(row_text(r));
      },
      &meta);
  if (!out) {  // a table of no row
    out.emplace(file);
    out->write(meta_text(meta));
  }
  out->write("\n");
  out->commit();
}

CellClaim::CellClaim(const fs::path& output, const std::string& label) {
  const fs::path file = cells_dir(output) / (label + ".lock");
  // O_NOFOLLOW: a dangling link under the claim's name made edm create the file it points to.
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw IoError("EDM-SWP-013", file.string() + ": cannot claim the cell: it is a symbolic link, which edm never "
                                                 "follows (remove it)");
  if (fd_ < 0) return;
  // A few tries over 0.2 s: `edm campaign status` takes the lock for an instant to see whether a
  // "running" cell is stale, and a sweep claiming the cell just then would skip it (found in review).
  for (int attempt = 0; ::flock(fd_, LOCK_EX | LOCK_NB) != 0; ++attempt) {
    if (attempt == 10) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool CellClaim::unclaimed(const fs::path& output, const std::string& label) {
  const fs::path file = cells_dir(output) / (label + ".lock");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;  // never claimed; unreadable: say nothing
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // releases it
  return free;
}

CellClaim::~CellClaim() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace edm
