// MPI glue for the run driver (see ranks.hpp). Compiled with and without MPI.
#include "run/ranks.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include <chrono>
#include <thread>

#include "edm/error.hpp"
#include "edm/openpmd_particles.hpp"
#include "edm/run_files.hpp"
#include "field/fnv1a.hpp"
#include "run/stages.hpp"

#ifdef EDM_WITH_MPI
#include <mpi.h>
#endif

namespace edm {

Ranks current_ranks() {
  Ranks r;
#ifdef EDM_WITH_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  }
#endif
  return r;
}

void reduce_slab_to_root(const double* in, double* out, std::size_t n) {
#ifdef EDM_WITH_MPI
  // MPI counts are int: reduce in pieces of at most 2^28 doubles.
  const std::size_t piece = std::size_t(1) << 28;
  for (std::size_t off = 0; off < n; off += piece) {
    const int m = int(std::min(piece, n - off));
    MPI_Reduce(in + off, out ? out + off : nullptr, m, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
#else
  if (out && out != in) std::copy(in, in + n, out);
#endif
}

#ifdef EDM_WITH_MPI
namespace {

// Every rank's elements, concatenated in rank order on rank 0 (empty elsewhere); `counts` and
// `displs` (rank 0) say where each rank's part lies.
template <class Container>
Container gather_parts(const Ranks& ranks, const Container& mine, MPI_Datatype type, std::vector<int>& counts,
                       std::vector<int>& displs) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const bool root = ranks.rank == 0;
  int n = int(mine.size());
  counts.assign(root ? ranks.size : 0, 0);
  displs.assign(root ? ranks.size : 0, 0);
  MPI_Gather(&n, 1, MPI_INT, root ? counts.data() : nullptr, 1, MPI_INT, 0, w);
  Container all;
  if (root) {
    int acc = 0;
    for (int r = 0; r < ranks.size; ++r) {
      displs[r] = acc;
      acc += counts[r];
    }
    all.resize(std::size_t(acc));
  }
  MPI_Gatherv(mine.data(), n, type, root ? all.data() : nullptr, counts.data(), displs.data(), type, 0, w);
  return all;
}

// Every rank's doubles, concatenated in rank order on rank 0 (empty elsewhere).
std::vector<double> gather_in_rank_order(const Ranks& ranks, const std::vector<double>& mine) {
  std::vector<int> counts, displs;
  return gather_parts(ranks, mine, MPI_DOUBLE, counts, displs);
}

// Per-rank timings and counts on rank 0; sums over ranks of the additive timings, maxima of peak
// RSS and of the slowest field phase.
RankTimings gather_timings(const Ranks& ranks, RunSummary& s, bool every_electron_on_each) {
  RankTimings t;
  const MPI_Comm w = MPI_COMM_WORLD;
  const bool root = ranks.rank == 0;
  constexpr int k = 5;
  double mine[k] = {s.timing.trajectories, s.timing.field, s.timing.kernel, double(s.coverage.records.size()),
                    double(s.host_peak_rss)};
  std::vector<double> all(root ? k * std::size_t(ranks.size) : 0);
  MPI_Gather(mine, k, MPI_DOUBLE, root ? all.data() : nullptr, k, MPI_DOUBLE, 0, w);
  if (root)
    for (int r = 0; r < ranks.size; ++r) {
      t.trajectories.push_back(all[k * r]);
      t.field.push_back(all[k * r + 1]);
      t.kernel.push_back(all[k * r + 2]);
      t.electrons.push_back(all[k * r + 3]);
      t.host_peak_rss.push_back(all[k * r + 4]);
    }
  double sums[3] = {s.timing.trajectories, s.timing.trajectories_overlapped, s.timing.kernel};
  double tot[3];
  MPI_Reduce(sums, tot, 3, MPI_DOUBLE, MPI_SUM, 0, w);
  double maxes[3] = {s.timing.field, double(s.host_peak_rss), double(s.spline_bytes_per_electron)};
  double mx[3];
  MPI_Reduce(maxes, mx, 3, MPI_DOUBLE, MPI_MAX, 0, w);
  unsigned long long knots = s.knots_total, knots_all = 0;
  MPI_Reduce(&knots, &knots_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, w);
  unsigned long long batches = s.batches, batches_all = 0;
  MPI_Reduce(&batches, &batches_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, w);
  if (root && every_electron_on_each) {  // every rank solved the run's electrons: rank 0's count is the run's
    knots_all = s.knots_total;
    batches_all = s.batches;
  }
  if (root) {
    s.timing.trajectories = tot[0];
    s.timing.trajectories_overlapped = tot[1];
    s.timing.kernel = tot[2];
    s.timing.field = mx[0];
    s.host_peak_rss = std::uint64_t(mx[1]);
    s.spline_bytes_per_electron = std::uint64_t(mx[2]);
    s.knots_total = knots_all;
    s.batches = batches_all;
  }
  return t;
}

// Coverage records: 7 numbers each (the burst's flags as missed + 2·cut + 4·emission cut), gathered in rank order
// (= electron order).
void gather_coverage(const Ranks& ranks, RunSummary& s) {
  std::vector<double> rec;
  for (const auto& r : s.coverage.records)
    rec.insert(rec.end(), {double(r.electron), r.margin_start, r.margin_end, double(r.dropped_slots),
                           double(r.burst_missed) + 2.0 * double(r.burst_cut) + 4.0 * double(r.emission_cut), r.burst_first, r.burst_last});
  const std::vector<double> recs = gather_in_rank_order(ranks, rec);
  if (ranks.rank != 0) return;
  s.coverage.records.clear();
  for (std::size_t i = 0; i + 6 < recs.size(); i += 7) {
    CoverageRecord r{std::uint64_t(recs[i]), recs[i + 1], recs[i + 2], std::uint64_t(recs[i + 3])};
    const int flags = int(recs[i + 4]);
    r.burst_missed = flags & 1;
    r.burst_cut = flags & 2;
    r.emission_cut = flags & 4;
    r.burst_first = recs[i + 5];
    r.burst_last = recs[i + 6];
    s.coverage.records.push_back(r);
  }
}

// Fixed-point γ sums (128-bit): gathered as 64-bit halves and added on rank 0 in rank order —
// integer sums, so exact whatever the order.
std::vector<GammaTrace::Sum> gather_gamma_sums(const Ranks& ranks, const GammaTrace& gamma, std::size_t maxlen) {
  const bool root = ranks.rank == 0;
  std::vector<unsigned long long> halves(2 * maxlen), all_halves(root ? 2 * maxlen * std::size_t(ranks.size) : 0);
  for (std::size_t j = 0; j < maxlen; ++j) {
    halves[2 * j] = GammaTrace::low_half(gamma.sum[j]);
    halves[2 * j + 1] = GammaTrace::high_half(gamma.sum[j]);
  }
  MPI_Gather(halves.data(), int(2 * maxlen), MPI_UNSIGNED_LONG_LONG, root ? all_halves.data() : nullptr,
             int(2 * maxlen), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<GammaTrace::Sum> sum(maxlen, 0);
  if (root)
    for (int r = 0; r < ranks.size; ++r)
      for (std::size_t j = 0; j < maxlen; ++j) {
        const std::size_t i = (std::size_t(r) * maxlen + j) * 2;
        sum[j] += GammaTrace::from_halves(all_halves[i + 1], all_halves[i]);
      }
  return sum;
}

// γ trace: pad every rank to the longest grid, then sums / extrema (exact), drains gathered.
void gather_gamma(const Ranks& ranks, GammaTrace& gamma) {
  const MPI_Comm w = MPI_COMM_WORLD;
  unsigned long long len = gamma.count.size(), maxlen = 0;
  MPI_Allreduce(&len, &maxlen, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, w);
  double dt = gamma.dtau, dtmax = 0;
  MPI_Allreduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, w);
  gamma.dtau = dtmax;
  gamma.sum.resize(maxlen, 0);
  gamma.min.resize(maxlen, INFINITY);
  gamma.max.resize(maxlen, -INFINITY);
  gamma.count.resize(maxlen, 0);
  std::vector<double> cnt(gamma.count.begin(), gamma.count.end());
  std::vector<double> mn(maxlen), mxv(maxlen), c(maxlen);
  const std::vector<GammaTrace::Sum> sum = gather_gamma_sums(ranks, gamma, maxlen);
  MPI_Reduce(gamma.min.data(), mn.data(), int(maxlen), MPI_DOUBLE, MPI_MIN, 0, w);
  MPI_Reduce(gamma.max.data(), mxv.data(), int(maxlen), MPI_DOUBLE, MPI_MAX, 0, w);
  MPI_Reduce(cnt.data(), c.data(), int(maxlen), MPI_DOUBLE, MPI_SUM, 0, w);
  std::vector<double> dr;
  for (const auto& [e, d] : gamma.drain) dr.insert(dr.end(), {double(e), d});
  const std::vector<double> drs = gather_in_rank_order(ranks, dr);
  if (ranks.rank != 0) return;
  gamma.sum = sum;
  gamma.min = mn;
  gamma.max = mxv;
  for (std::size_t j = 0; j < maxlen; ++j) gamma.count[j] = std::uint64_t(c[j]);
  gamma.drain.clear();
  for (std::size_t i = 0; i + 1 < drs.size(); i += 2) gamma.drain.push_back({std::uint64_t(drs[i]), drs[i + 1]});
}

}  // namespace
#endif

RankTimings gather_rank_results(const Ranks& ranks, GammaTrace& gamma, RunSummary& s, bool every_electron_on_each) {
  RankTimings t;
  if (ranks.size == 1) {
    t.trajectories = {s.timing.trajectories};
    t.field = {s.timing.field};
    t.kernel = {s.timing.kernel};
    return t;
  }
#ifdef EDM_WITH_MPI
  t = gather_timings(ranks, s, every_electron_on_each);
  if (every_electron_on_each) return t;  // rank 0's γ trace and coverage are the run's already
  gather_coverage(ranks, s);
  gather_gamma(ranks, gamma);
#else
  (void)every_electron_on_each;
#endif
  return t;
}

std::vector<std::string> gather_strings(const Ranks& ranks, const std::string& mine) {
  if (ranks.size == 1) return {mine};
#ifdef EDM_WITH_MPI
  std::vector<int> counts, displs;
  const std::string all = gather_parts(ranks, mine, MPI_CHAR, counts, displs);
  std::vector<std::string> out;
  if (ranks.rank == 0)
    for (int r = 0; r < ranks.size; ++r) out.push_back(all.substr(std::size_t(displs[r]), std::size_t(counts[r])));
  return out;
#else
  return {mine};
#endif
}

void agree_max(const Ranks& ranks, int* flags, int n) {
#ifdef EDM_WITH_MPI
  if (ranks.size > 1) MPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#else
  (void)ranks;
  (void)flags;
  (void)n;
#endif
}

std::vector<double> gather_to_root(const Ranks& ranks, const std::vector<double>& mine) {
#ifdef EDM_WITH_MPI
  if (ranks.size > 1) return gather_in_rank_order(ranks, mine);
#else
  (void)ranks;
#endif
  return mine;
}

void barrier(const Ranks& ranks) {
#ifdef EDM_WITH_MPI
  if (ranks.size > 1) MPI_Barrier(MPI_COMM_WORLD);
#else
  (void)ranks;
#endif
}

// ---- The ranks agree on the campaign -------------------------------------------------------------

namespace {

std::string hex(std::uint64_t h) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

// A value as the ranks compare it: a double by its shortest round-trip form (two values print alike
// only when they are the same double), anything else as TOML writes it.
std::string leaf_text(const toml::node& n) {
  if (const auto* d = n.as_floating_point()) {
    char b[40];
    const auto r = std::to_chars(b, b + sizeof b, d->get());
    return std::string(b, r.ptr);
  }
  std::ostringstream os;
  n.visit([&os](auto&& x) { os << x; });
  return os.str();
}

void flatten(const toml::node& n, const std::string& key, std::vector<CampaignEntry>& out) {
  if (const auto* t = n.as_table()) {
    for (auto&& [k, v] : *t) flatten(v, key.empty() ? std::string(k.str()) : key + "." + std::string(k.str()), out);
  } else if (const auto* a = n.as_array()) {
    if (a->empty()) out.push_back({key, "[]", "[]"});
    for (std::size_t i = 0; i < a->size(); ++i) flatten(*a->get(i), key + "[" + std::to_string(i) + "]", out);
  } else {
    const std::string v = leaf_text(n);
    out.push_back({key, v, v});
  }
}

struct FileDigest {
  std::uint64_t hash = detail::kFnvOffset, bytes = 0;
  std::string error;  // why the file could not be read ("" when it was)
};

// FNV-1a of the file's bytes (the core's one hash; the content, never the path or the time).
FileDigest digest_file(const std::filesystem::path& path, std::uint64_t h = detail::kFnvOffset) {
  FileDigest d;
  d.hash = h;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    d.error = "cannot be opened";
    return d;
  }
  std::vector<char> buf(std::size_t(1) << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    const auto got = std::size_t(in.gcount());
    d.hash = detail::fnv1a(std::string_view(buf.data(), got), d.hash);
    d.bytes += got;
  }
  if (in.bad()) d.error = "cannot be read";
  return d;
}

// A data file's digest. A series (every file of an openPMD series) digests the files' names and
// contents in iteration order.
struct InputDigest {
  FileDigest d;
  std::size_t files = 1;
};
InputDigest digest_input(const std::string& path, bool series) {
  InputDigest r;
  FileDigest& d = r.d;
  try {
    if (series) {
      const auto list = openpmd_series_files(path);
      r.files = list.size();
      for (const auto& f : list) {
        d.hash = detail::fnv1a(f.filename().string() + '\n', d.hash);
        const FileDigest one = digest_file(f, d.hash);
        if (!one.error.empty()) {
          d.error = f.string() + " " + one.error;
          break;
        }
        d.hash = one.hash;
        d.bytes += one.bytes;
      }
    } else {
      d = digest_file(path);
    }
  } catch (const Error& e) {
    d.error = e.what();
  }
  return r;
}

// A data file's entry: its digest compared, its path shown beside it.
CampaignEntry data_entry(const std::string& key, const std::string& path, bool series) {
  const InputDigest r = digest_input(path, series);
  const FileDigest& d = r.d;
  const std::size_t files = r.files;
  const std::string value = d.error.empty() ? "fnv1a " + hex(d.hash) + ", " + std::to_string(d.bytes) + " bytes"
                                            : "unreadable (" + d.error + ")";
  const std::string count = series ? std::to_string(files) + (files == 1 ? " file, " : " files, ") : "";
  return {key, value, "'" + path + "' (" + count + value + ")"};
}

// The data files the campaign reads: key, path and whether it is an openPMD series.
struct DataFile {
  const char* key;
  std::string path;
  bool series;
};
std::vector<DataFile> data_files(const Campaign& c) {
  std::vector<DataFile> out;
  if (c.electrons.distribution == Distribution::List) out.push_back({"electrons.file", c.electrons.file, false});
  if (c.trajectory.model == TrajectoryModel::Tracks) out.push_back({"trajectory.file", c.trajectory.file, false});
  if (c.trajectory.model == TrajectoryModel::OpenPMD) out.push_back({"trajectory.file", c.trajectory.file, true});
  return out;
}

}  // namespace

std::vector<CampaignEntry> campaign_record(const Campaign& c) {
  toml::table t = c.to_toml();
  if (toml::table* acc = t["accumulator"].as_table()) acc->erase("devices");
  std::vector<CampaignEntry> out;
  flatten(t, "", out);
  const auto replace = [&out](const CampaignEntry& e) {
    for (auto& x : out)
      if (x.key == e.key) x = e;
  };
  for (const auto& f : data_files(c)) replace(data_entry(f.key, f.path, f.series));
  // Not a key, but it replaces the kernel source the field is computed with.
  const char* cl = std::getenv("EDM_CL_PATH");
  const std::string cl_path = cl && *cl ? std::string("'") + cl + "'" : "unset";
  out.push_back({"the environment variable EDM_CL_PATH", cl_path, cl_path});
  std::sort(out.begin(), out.end(), [](const CampaignEntry& a, const CampaignEntry& b) { return a.key < b.key; });
  return out;
}

std::vector<InputFile> input_files(const Campaign& c) {
  std::vector<InputFile> out;
  for (const auto& f : data_files(c)) {
    const FileDigest d = digest_input(f.path, f.series).d;
    out.push_back({f.key, f.path, d.bytes, d.error.empty() ? "fnv1a " + hex(d.hash) : "unreadable (" + d.error + ")"});
  }
  return out;
}

std::string first_difference(const std::vector<CampaignEntry>& root, const std::vector<CampaignEntry>& mine, int rank) {
  const auto say = [rank](const std::string& key, const CampaignEntry* m, const CampaignEntry* r) {
    return key + " is " + (m ? m->shown : std::string("not set")) + " on rank " + std::to_string(rank) + " and " +
           (r ? r->shown : std::string("not set")) + " on rank 0";
  };
  std::map<std::string, const CampaignEntry*> by_key;
  for (const auto& e : mine) by_key[e.key] = &e;
  for (const auto& r : root) {  // in rank 0's order
    const auto it = by_key.find(r.key);
    if (it == by_key.end()) return say(r.key, nullptr, &r);
    if (it->second->value != r.value) return say(r.key, it->second, &r);
    by_key.erase(it);
  }
  for (const auto& e : mine)  // keys rank 0 does not have (a scenario key of another plugin version)
    if (by_key.count(e.key)) return say(e.key, &e, nullptr);
  return "";
}

#ifdef EDM_WITH_MPI
namespace {

// Entries as text: every field length-prefixed, so no value can be mistaken for a separator.
std::string encode(const std::vector<CampaignEntry>& entries) {
  std::string s;
  for (const auto& e : entries)
    for (const std::string* f : {&e.key, &e.value, &e.shown}) s += std::to_string(f->size()) + ":" + *f;
  return s;
}

std::vector<CampaignEntry> decode(const std::string& s) {
  std::vector<CampaignEntry> out;
  std::size_t p = 0;
  const auto field = [&]() {
    const std::size_t colon = s.find(':', p);
    const std::size_t n = std::stoull(s.substr(p, colon - p));
    p = colon + 1 + n;
    return s.substr(colon + 1, n);
  };
  while (p < s.size()) {
    CampaignEntry e;
    e.key = field();
    e.value = field();
    e.shown = field();
    out.push_back(std::move(e));
  }
  return out;
}

// `root`'s text on every rank: the length first, so that every rank sizes its buffer, then the bytes.
void broadcast_text(std::string& text, int root) {
  unsigned long long n = text.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD);
  text.resize(std::size_t(n));
  for (std::size_t off = 0; off < text.size(); off += INT_MAX)
    MPI_Bcast(text.data() + off, int(std::min<std::size_t>(INT_MAX, text.size() - off)), MPI_CHAR, root, MPI_COMM_WORLD);
}

}  // namespace
#endif

#ifdef EDM_WITH_MPI
namespace {

// The record with the command's options after the keys.
std::vector<CampaignEntry> rank_record(const Campaign& campaign, const RankCommand& command) {
  std::vector<CampaignEntry> out = campaign_record(campaign);
  const auto add = [&out](const std::string& key, const std::string& v) { out.push_back({key, v, v}); };
  add("the command (edm run or edm resume)", command.resume ? "edm resume" : "edm run");
  add("the option --dry-run", command.dry_run ? "given" : "not given");
  add("the option --overwrite", command.overwrite ? "given" : "not given");
  add("the option --checkpoint-every", std::to_string(command.checkpoint_every));
  return out;
}

}  // namespace
#endif

void agree_on_campaign(const Ranks& ranks, const Campaign& campaign, const RankCommand& command) {
  if (ranks.size == 1) return;
#ifdef EDM_WITH_MPI
  // Every rank reaches every collective below whatever its verdict: a mismatch on one rank stops all.
  const std::vector<CampaignEntry> mine = rank_record(campaign, command);
  std::string root_text = ranks.rank == 0 ? encode(mine) : std::string();
  broadcast_text(root_text, 0);
  const std::string diff = ranks.rank == 0 ? std::string() : first_difference(decode(root_text), mine, ranks.rank);
  int verdict[2] = {diff.empty() ? ranks.size : ranks.rank, diff.empty() ? 0 : 1}, first = 0, differing = 0;
  MPI_Allreduce(&verdict[0], &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&verdict[1], &differing, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (first == ranks.size) return;
  std::string said = ranks.rank == first ? diff : std::string();
  broadcast_text(said, first);
  throw ConfigError("EDM-RUN-070",
                    "the MPI ranks do not run one campaign: " + said + " (the first key that differs; " +
                        std::to_string(differing) + " of " + std::to_string(ranks.size) + " ranks " +
                        (differing == 1 ? "differs" : "differ") + " from rank 0). Every rank stops before any work (this is rank " +
                        std::to_string(ranks.rank) + "): give every rank the same campaign file, command-line "
                        "options, EDM_* variables and data files");
#else
  (void)campaign;
  (void)command;
#endif
}

// ---- The shared run folder and the rows each rank writes -----------------------------------------

std::string host_name_of_rank() {
  char b[256] = {0};
  if (gethostname(b, sizeof b - 1) != 0) return "(unknown host)";
  return b;
}

void check_ranks_fit_rows(const Ranks& ranks, int ny) {
  if (ranks.size <= ny) return;
  throw ConfigError("EDM-MPI-001", "the screen's rows are shared out among " + std::to_string(ranks.size) +
                                       " MPI ranks, but screen.ny = " + std::to_string(ny) +
                                       " rows: every rank must own at least one row; run with at most " +
                                       std::to_string(ny) + " ranks, or shard the electrons (nothing was computed)");
}

RankShare choose_rank_share(const Ranks& ranks, const std::string& asked, int ny, bool spectra) {
  RankShare r;
  if (ranks.size == 1) {
    r.reason = "one process";
    return r;
  }
  const std::string n = std::to_string(ranks.size) + " MPI ranks";
  if (asked == "electrons") {
    r.reason = n + ", accumulator.sharding = \"electrons\"";
    return r;
  }
  if (asked == "pixels") {
    check_ranks_fit_rows(ranks, ny);
    if (spectra)
      throw ConfigError("EDM-MPI-005", "accumulator.sharding = \"pixels\" over " + n + " with [spectra] enabled: "
                                       "the direct spectra sum every electron over the whole screen, so ranks that "
                                       "each take every electron would count each one " + std::to_string(ranks.size) +
                                       " times; use accumulator.sharding = \"electrons\" or \"auto\" (nothing was computed)");
  } else if (spectra || ranks.size > ny) {
    r.reason = n + ", auto: " + (spectra ? std::string("[spectra] enabled (its sums are per electron)")
                                         : "more ranks than screen rows (" + std::to_string(ny) + ")");
    return r;
  }
  r.pixels = true;
  for (int k = 0, y = 0; k < ranks.size; ++k) {  // near-equal, the first ny mod size one row taller
    const int h = ny / ranks.size + (k < ny % ranks.size ? 1 : 0);
    r.rows.push_back({y, y + h});
    y += h;
  }
  r.reason = n + ", " + (asked == "pixels" ? std::string("accumulator.sharding = \"pixels\"")
                                           : "auto: a tile of rows per rank (memory per rank of its tile, no reduce)");
  return r;
}

namespace detail {

void share_among_ranks(const RunContext& ctx, int ny, std::uint64_t electrons, RunPlan& plan) {
  const Sharding asked = ctx.campaign.accumulator.sharding;
  if (asked == Sharding::Pixels && ctx.campaign.run.mode == Mode::Potential && plan.ranks.size > 1)
    throw ConfigError("EDM-MPI-006", "accumulator.sharding = \"pixels\" over " + std::to_string(plan.ranks.size) +
                                         " MPI ranks with run.mode = \"potential\": the potential's records are "
                                         "written by rank 0 alone, so its ranks shard the electrons; use "
                                         "accumulator.sharding = \"electrons\" or \"auto\" (nothing was computed)");
  // A potential run's ranks shard the electrons (its /A and /A0 records are not handed between ranks).
  const std::string word = ctx.campaign.run.mode == Mode::Potential ? "electrons"
                           : asked == Sharding::Pixels              ? "pixels"
                           : asked == Sharding::Electrons           ? "electrons"
                                                                    : "auto";
  plan.share = choose_rank_share(plan.ranks, word, ny, ctx.campaign.spectra.enabled);
  // Every rank writes its checkpoints (and, by pixels, its rows) into the folder rank 0 holds (rank 0
  // has created it with the lock): a folder some rank cannot see is refused before any work.
  if (!ctx.options.dry_run) check_shared_folder(plan.ranks, ctx.campaign.run.output);
  if (!plan.share.pixels) return;
  plan.first = 0;  // every rank takes every electron, in the one-process order
  plan.end = electrons;
}

Screen rank_screen(const PreparedCell& cell, const RunPlan& plan) {
  if (!plan.share.pixels) return cell.screen();
  const auto [y0, y1] = plan.share.mine(plan.ranks);
  return screen_tile(cell.screen(), y0, y1);
}

}  // namespace detail

#ifdef EDM_WITH_MPI
namespace {

// Rank 0's token: written, flushed and closed, so that a network file system's close-to-open rule
// shows it to the other nodes. "" when written, else why not.
std::string write_token(const std::filesystem::path& token, const std::string& text) {
  std::ofstream out(token, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? std::string() : "cannot write " + token.string();
}

// Whether `token` holds `text` here, asked again for up to 5 s (an NFS client may cache the folder's
// listing from before the file was made for a few seconds).
bool sees_token(const std::filesystem::path& token, const std::string& text) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::ifstream in(token, std::ios::binary);
    std::stringstream got;
    got << in.rdbuf();
    if (in && got.str() == text) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace
#endif

void check_shared_folder(const Ranks& ranks, const std::filesystem::path& folder) {
  if (ranks.size == 1) return;
#ifdef EDM_WITH_MPI
  const auto token = RunFolder(folder).rank_token();
  std::string host0 = ranks.rank == 0 ? host_name_of_rank() : std::string(), text, problem;
  if (ranks.rank == 0) {
    text = "edm: rank 0 on " + host0 + ", pid " + std::to_string(getpid()) + ", at " +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
    problem = write_token(token, text);
  }
  broadcast_text(problem, 0);
  if (!problem.empty())
    throw IoError("EDM-MPI-004", "rank 0 " + problem + ", the file by which the ranks check that they share the run "
                                 "folder " + folder.string() + ": check its permissions and free space");
  broadcast_text(text, 0);
  broadcast_text(host0, 0);
  const bool seen = ranks.rank == 0 || sees_token(token, text);
  int first = seen ? ranks.size : ranks.rank, blind = seen ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &blind, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (ranks.rank == 0) {  // every rank has looked (the allreduce): the token has done its work
    std::error_code ec;
    std::filesystem::remove(token, ec);
  }
  if (first == ranks.size) return;
  std::string host = ranks.rank == first ? host_name_of_rank() : std::string();
  broadcast_text(host, first);
  throw IoError("EDM-MPI-002",
                "the run folder " + folder.string() + " is not on a file system that every MPI rank shares: rank " +
                    std::to_string(first) + " on host " + host + " does not see the file " + token.filename().string() +
                    " that rank 0 on host " + host0 + " wrote there (" + std::to_string(blind) + " of " +
                    std::to_string(ranks.size) + " ranks do not; this is rank " + std::to_string(ranks.rank) +
                    "). Every rank writes its checkpoints and its rows into this folder: give [run] output a folder "
                    "every node mounts at the same path (nothing was computed)");
#else
  (void)folder;
#endif
}

#ifdef EDM_WITH_MPI
namespace {

constexpr int kTurnTag = 7301;

// The turn's verdict from the previous rank ("" when every earlier rank wrote its part).
std::string receive_turn(int from) {
  unsigned long long n = 0;
  MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, from, kTurnTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string text(std::size_t(n), '\0');
  if (n) MPI_Recv(text.data(), int(n), MPI_CHAR, from, kTurnTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

void pass_turn(const std::string& text, int to) {
  unsigned long long n = text.size();
  MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, to, kTurnTag, MPI_COMM_WORLD);
  if (n) MPI_Send(text.data(), int(n), MPI_CHAR, to, kTurnTag, MPI_COMM_WORLD);
}

}  // namespace
#endif

void in_rank_order(const Ranks& ranks, const std::function<void()>& write, const std::string& what) {
  if (ranks.size == 1) return write();
#ifdef EDM_WITH_MPI
  // The turn's text: empty, or a kind ('F' a failure, 'S' a stop request), the id, a newline and the
  // message. A stop is a stop on every rank (exit 130, its own id), not a failed write (exit 4).
  std::string turn = ranks.rank > 0 ? receive_turn(ranks.rank - 1) : std::string();
  if (turn.empty()) {
    const std::string who = "rank " + std::to_string(ranks.rank) + " on host " + host_name_of_rank();
    try {
      write();
    } catch (const Interrupted& e) {
      turn = "S" + e.id() + "\n" + e.what() + " (on " + who + ")";
    } catch (const Error& e) {
      turn = "F" + e.id() + "\n" + who + " (" + e.id() + "): " + e.what();
    } catch (const std::exception& e) {
      turn = "F\n" + who + ": " + e.what();
    }
  }
  if (ranks.rank + 1 < ranks.size) pass_turn(turn, ranks.rank + 1);
  broadcast_text(turn, ranks.size - 1);
  if (turn.empty()) return;
  const std::size_t nl = turn.find('\n');
  const std::string id = turn.substr(1, nl - 1), text = turn.substr(nl + 1);
  const std::string rank = "this is rank " + std::to_string(ranks.rank);
  if (turn[0] == 'S') throw Interrupted(id, text + "; every rank stops (" + rank + ")");
  throw IoError("EDM-MPI-003",
                "writing " + what + " failed on " + text + "; every rank stops (" + rank + "), and no field.h5 is written");
#else
  (void)what;
#endif
}

}  // namespace edm
