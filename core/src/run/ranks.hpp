// MPI ranks for the run driver (internal). Without EDM_WITH_MPI, or when edm was not started by
// mpirun, there is one rank and every function here is a no-op. Ranks shard the screen's pixel rows
// (choose_rank_share: each rank a tile and every electron; each writes its own rows of field.h5 in
// turn, in_rank_order) or the ensemble in contiguous blocks (each slab of the cube reduced to rank 0,
// MPI_Reduce, MPI_SUM); the host-side products (γ trace, coverage records, per-rank timings) are
// gathered on rank 0 exactly. Before any of that, the ranks agree that they run one campaign
// (agree_on_campaign) and that they share the run folder (check_shared_folder).
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
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
// Folds γ traces and coverage into rank 0's, maxes the peak RSS, and gathers per-rank timings and
// peak RSS. `every_electron_on_each` (pixel sharding): every rank solved every electron, so rank 0's
// γ trace, coverage, knots and batches are already the run's and are kept as they are.
RankTimings gather_rank_results(const Ranks& ranks, GammaTrace& gamma, RunSummary& summary,
                                bool every_electron_on_each = false);
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

// ---- Ranks that share the run folder and write their own rows (share/docs/design.md "MPI ranks") ----

// This process's host name (for messages that name a rank's host).
std::string host_name_of_rank();
// A collective, before any device time, once rank 0 has created `folder`: rank 0 writes
// RunFolder::rank_token() there with a text of its own (its host, pid and clock), and every rank must
// read that text there within a few seconds (a network file system may show a new file late). The
// checkpoints and, under pixel sharding, field.h5 are written by every rank into this folder, so a
// node-local folder would scatter them: the first rank that does not see the token is named with its
// host in IoError EDM-MPI-002 on every rank (EDM-MPI-004 when rank 0 cannot write the token). Rank 0
// removes the token either way. No-op with one rank.
void check_shared_folder(const Ranks& ranks, const std::filesystem::path& folder);
// Pixel sharding over ranks gives every rank at least one row of the screen: ConfigError EDM-MPI-001
// naming the rank count and ny when there are more ranks than rows (before any work).
void check_ranks_fit_rows(const Ranks& ranks, int ny);

// How the ranks of an mpirun job share the work. By pixels: every rank owns a tile of screen rows
// (rows[r], contiguous, in rank order, near-equal: the first ny mod size one row taller) and takes
// every electron, so each slot sees the electrons in the one-process order (bit-identical to one
// process), no rank holds more than its tile and no cube is reduced. By electrons: every rank a block
// of the ensemble, a full cube each, reduced slab by slab to rank 0.
struct RankShare {
  bool pixels = false;
  std::vector<std::pair<int, int>> rows;  // by pixels: every rank's rows [first, second) of the screen
  std::string reason;                     // why (run.toml [ranks] sharding_reason)
  std::pair<int, int> mine(const Ranks& ranks) const { return rows.at(std::size_t(ranks.rank)); }
};
// accumulator.sharding for the ranks ("pixels", "electrons" or "auto"). Auto takes pixels (a rank's
// memory is its tile's, and no cube crosses the network) unless there are more ranks than rows or
// the run computes the direct spectra (whose sums are per electron, not per pixel: each rank would
// sum every electron). "pixels" with more ranks than rows: EDM-MPI-001; with [spectra] enabled:
// ConfigError EDM-MPI-005. With one rank: electrons ("one process"), whatever was asked.
RankShare choose_rank_share(const Ranks& ranks, const std::string& asked, int ny, bool spectra);
// Runs `write` on every rank in rank order, one rank at a time (serial HDF5: one process holds
// field.h5.partial open for writing at a time; rank r starts when rank r − 1 has ended its turn). A
// collective. An error thrown by `write` on one rank is caught there, the later ranks skip their
// turn, and every rank throws IoError EDM-MPI-003 naming that rank, its host, `what` it was writing
// and the error; a stop request (Interrupted, e.g. EDM-RUN-043 during the download) is thrown as
// that Interrupted on every rank instead (exit 130). With one rank, `write` runs and its error
// propagates as it is.
void in_rank_order(const Ranks& ranks, const std::function<void()>& write, const std::string& what);

}  // namespace edm
