// MPI ranks for the run driver (internal). Without EDM_WITH_MPI, or when edm was not started by
// mpirun, there is one rank and every function here is a no-op. Ranks shard the ensemble in
// contiguous blocks; each slab of the cube is reduced to rank 0 (MPI_Reduce, MPI_SUM), and the
// host-side products (γ trace, coverage records, per-rank timings) are gathered there exactly.
// Before any of that, the ranks agree that they run one campaign (agree_on_campaign).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/manifest.hpp"
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

// One entry of the campaign the ranks must share: `value` is compared, `shown` is what a message
// prints (a data file: its path, size and digest; the digest alone is compared, so a node-local copy
// of one file at another path is the same input).
struct CampaignEntry {
  std::string key, value, shown;
};
// The effective campaign as the ranks compare it, in key order: every key of to_toml() (the file,
// the environment and the command line applied) except accumulator.devices (ranks of several nodes
// may each pick their own device; run.toml names each rank's), the content of every data file the
// campaign reads (electrons.file for distribution = list, trajectory.file for tracks and every file
// of an openPMD series) and EDM_CL_PATH (another kernel source). Never throws for an unreadable
// file: it records why, and the stage that reads the file reports it.
std::vector<CampaignEntry> campaign_record(const Campaign& campaign);
// The data files of campaign_record (the same digests), for run.toml's [inputs] and the replay
// check (edm/launch.hpp). An unreadable file's digest is "unreadable (why)".
std::vector<InputFile> input_files(const Campaign& campaign);
// The first entry of rank 0's record (in its order) that `mine` lacks or holds with another value, or
// else the first that only `mine` has, as "KEY is A on rank R and B on rank 0"; empty when they agree.
std::string first_difference(const std::vector<CampaignEntry>& root, const std::vector<CampaignEntry>& mine, int rank);
// The options of the command that decide which collectives a rank reaches (a dry run returns before
// the batch loop, a checkpoint cadence sets where the ranks meet), compared like keys.
struct RankCommand {
  bool dry_run = false, overwrite = false, resume = false;
  std::int64_t checkpoint_every = 0;
};
// A collective, before any device time: rank 0 broadcasts its record and command (length, then
// bytes), every rank compares its own, and an allreduce of the verdicts tells every rank which is the
// first that differs; that rank broadcasts its difference, and every rank throws ConfigError
// EDM-RUN-070 with it. No-op with one rank.
void agree_on_campaign(const Ranks& ranks, const Campaign& campaign, const RankCommand& command);

}  // namespace edm
