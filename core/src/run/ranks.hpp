// MPI ranks for the run driver (internal). Without EDM_WITH_MPI, or when edm was not started by
// mpirun, there is one rank and every function here is a no-op. Ranks shard the ensemble in
// contiguous blocks; each slab of the cube is reduced to rank 0 (MPI_Reduce, MPI_SUM), and the
// host-side products (γ trace, coverage records, per-rank timings) are gathered there exactly.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "edm/run_summary.hpp"
#include "edm/trajectory.hpp"

namespace edm {

struct Ranks {
  int rank = 0, size = 1;
};

Ranks current_ranks();
// Sums n doubles of every rank into `out` on rank 0 (out is ignored elsewhere).
void reduce_slab_to_root(const double* in, double* out, std::size_t n);
// Folds γ traces and coverage into rank 0's, maxes the peak RSS, and gathers per-rank timings.
RankTimings gather_rank_results(const Ranks& ranks, GammaTrace& gamma, RunSummary& summary);
// Every rank's flags[i] becomes the largest over the ranks (a collective: every rank calls it at
// the same point). With one rank it leaves the flags as they are.
void agree_max(const Ranks& ranks, int* flags, int n);
// Every rank's doubles, concatenated in rank order on rank 0 (empty on the others; with one rank,
// `mine`). A collective: the fixed order makes sums folded from it deterministic.
std::vector<double> gather_to_root(const Ranks& ranks, const std::vector<double>& mine);
// Every rank's string, in rank order on rank 0 (empty on the others; with one rank, {mine}). A collective.
std::vector<std::string> gather_strings(const Ranks& ranks, const std::string& mine);
// Waits until every rank has arrived (no-op with one rank).
void barrier(const Ranks& ranks);

}  // namespace edm
