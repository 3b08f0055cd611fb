// MPI glue for the run driver (see ranks.hpp). Compiled with and without MPI.
#include "run/ranks.hpp"

#include <algorithm>
#include <cmath>

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
RankTimings gather_timings(const Ranks& ranks, RunSummary& s) {
  RankTimings t;
  const MPI_Comm w = MPI_COMM_WORLD;
  const bool root = ranks.rank == 0;
  double mine[4] = {s.timing.trajectories, s.timing.field, s.timing.kernel, double(s.coverage.records.size())};
  std::vector<double> all(root ? 4 * std::size_t(ranks.size) : 0);
  MPI_Gather(mine, 4, MPI_DOUBLE, root ? all.data() : nullptr, 4, MPI_DOUBLE, 0, w);
  if (root)
    for (int r = 0; r < ranks.size; ++r) {
      t.trajectories.push_back(all[4 * r]);
      t.field.push_back(all[4 * r + 1]);
      t.kernel.push_back(all[4 * r + 2]);
      t.electrons.push_back(all[4 * r + 3]);
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

RankTimings gather_rank_results(const Ranks& ranks, GammaTrace& gamma, RunSummary& s) {
  RankTimings t;
  if (ranks.size == 1) {
    t.trajectories = {s.timing.trajectories};
    t.field = {s.timing.field};
    t.kernel = {s.timing.kernel};
    return t;
  }
#ifdef EDM_WITH_MPI
  t = gather_timings(ranks, s);
  gather_coverage(ranks, s);
  gather_gamma(ranks, gamma);
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

}  // namespace edm
