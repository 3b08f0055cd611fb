// edm resume RUN: continues a run from RUN/checkpoint.h5 (written every K batches, and on
// SIGINT/SIGTERM) with the campaign stored in the checkpoint; on one device the result is
// bit-identical to an uninterrupted run. A run of mpirun -n N is resumed with mpirun -n N edm resume
// (every rank reads its own checkpoint file), bit-identical to an uninterrupted mpirun -n N run.
// A screen run in passes of rows resumes in the pass it was stopped in: the finished passes' rows are
// in RUN/field.h5.partial, which the resume takes over (share/docs/design.md, "Screens larger than the
// devices"). A folder whose last rename failed (EDM-IO-163) gets its kept field and run.toml put in place.
#include <cstdlib>
#include <iostream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "console_observer.hpp"
#include "options.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/launch.hpp"
#include "edm/run.hpp"

namespace po = boost::program_options;

namespace edm::app {

namespace {

// A folder whose final rename failed (EDM-IO-163) holds the finished field.h5.partial and its
// run.toml.partial: they are put in place, nothing computed again and no checkpoint needed
// (edm/launch.hpp adopt_kept_field). Returns whether it did.
bool adopt_kept_run(const std::string& folder, bool quiet) {
  // Under mpirun every rank would race for the same two renames: the ranks resume the checkpoint as
  // before (the adoption is one process's work: `edm resume RUN` without mpirun).
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!size) size = std::getenv("PMI_SIZE");
  if (size && std::string(size) != "1") return false;
  if (!adopt_kept_field(folder)) return false;
  if (!quiet)
    std::cout << "edm resume " << folder << ": the complete field kept after a failed rename is in place "
              << "(field.h5 and run.toml; nothing computed again)\n";
  return true;
}

}  // namespace

int cmd_resume(const Args& args) {
  po::options_description desc("edm resume RUN [options]");
  std::string folder;
  std::int64_t checkpoint_every = 0;
  desc.add_options()("help,h", "this help")("checkpoint-every", po::value(&checkpoint_every),
                                             "checkpoint every K batches (default: as the run was started; 0 automatic, -1 never)")(
      "quiet,q", "no progress output")("verbose,v", "more progress output");
  po::variables_map vm;
  if (!parse_command(args, desc, "run", folder, vm)) return 0;  // --help
  if (folder.empty()) throw ConfigError("EDM-CLI-002", "edm resume: no run folder given");
  check_checkpoint_every("resume", checkpoint_every);
  if (adopt_kept_run(folder, vm.count("quiet") > 0)) return 0;
  // The campaign the checkpoint stores, with its scenario's plugin (edm/launch.hpp: the same steps as
  // edm.resume in Python).
  const LoadedCampaign l = load_campaign_to_resume(folder);
  RunOptions ro;
  ro.resume = true;
  // The checkpoint cadence the run was started with, unless given again here.
  ro.checkpoint_every = vm.count("checkpoint-every") ? checkpoint_every : l.checkpoint_every;
  ro.stop = install_stop_handlers();
  // Under mpirun (a checkpoint of an mpirun run is resumed with as many ranks) only rank 0 reports.
  const char* mpi_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!mpi_rank) mpi_rank = std::getenv("PMI_RANK");
  const bool other_rank = mpi_rank && std::string(mpi_rank) != "0";
  // The same progress as edm run: finished device work, the resumed electrons counted apart.
  ConsoleObserver log(vm.count("quiet") > 0 || other_rank, vm.count("verbose") > 0);
  const RunSummary s = run_campaign(l.campaign, l.plugins, ro, log);
  log.end_line();
  if (!vm.count("quiet") && s.rank == 0)
    std::cout << "edm resume " << s.run_id << ": " << s.electrons << " electrons (" << s.resumed_from
              << " from the checkpoint), field " << s.field_file.string() << "\n";
  return 0;
}

}  // namespace edm::app
