// edm sweep CAMPAIGN.toml: the cells of the campaign's [sweep] table (share/docs/sweeps.md), each a
// normal run folder OUTPUT/<label>/, with the table OUTPUT/campaign.toml. Three executors: the cells
// in turn in this process (default), one child process per device (--parallel-devices), or a SLURM
// job array whose tasks run `edm sweep CAMPAIGN.toml --cell K` (--slurm). Done cells are skipped,
// checkpointed ones resumed, failed ones rerun with --retry-failed.
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <deque>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/sweep.hpp"

#ifdef EDM_WITH_MPI
#include <mpi.h>
#endif

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace edm::app {
namespace {

struct SweepArgs {
  std::string file;
  std::vector<Override> base;
  std::vector<std::string> sets;  // as given, forwarded to children and SLURM tasks
  bool dry_run = false, yes = false, retry_failed = false, quiet = false;
  std::int64_t cell = -1, checkpoint_every = 0;  // cell: -1 for every cell (--cell not given)
  bool cell_given = false;
  bool parallel = false, slurm = false, print_only = false;
  std::string partition, time;
  int gpus_per_cell = 0, array_limit = 0;
  int ranks_per_cell = 1;  // MPI ranks of each cell's run (> 1: started under mpirun)
};

struct Log : RunObserver {
  bool quiet;
  explicit Log(bool q) : quiet(q) {}
  void phase(const std::string& n, const std::string& d) override {
    if (!quiet) std::cerr << "[" << n << "] " << d << "\n";
  }
  void warning(const std::string& m) override { std::cerr << "warning: " << m << "\n"; }
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("edm") : p.string();
}

// The arguments a child or a SLURM task repeats: the campaign and every override, as --set.
std::vector<std::string> forwarded(const SweepArgs& a) {
  std::vector<std::string> out{"sweep", fs::absolute(a.file).string()};
  for (const auto& o : a.base) {
    out.push_back("--set");
    out.push_back(o.key + "=" + o.value);
  }
  if (a.yes) out.push_back("--yes");
  if (a.retry_failed) out.push_back("--retry-failed");
  if (a.checkpoint_every) {
    out.push_back("--checkpoint-every");
    out.push_back(std::to_string(a.checkpoint_every));
  }
  if (a.ranks_per_cell > 1) {
    out.push_back("--ranks-per-cell");
    out.push_back(std::to_string(a.ranks_per_cell));
  }
  out.push_back("--quiet");
  return out;
}

std::string human_bytes(double b) {
  char buf[32];
  if (b >= 1073741824.0)
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  return buf;
}

bool runnable(const CellRecord& r, bool retry_failed) {
  return r.state != CellState::Done && (r.state != CellState::Failed || retry_failed);
}

int dry_run(const SweepArgs& a, const SweepSpec& spec, const SweepCells& cells, const fs::path& output,
            const PluginRegistry& plugins) {
  std::cout << "dry run of " << a.file << ": " << cells.size() << " cells (" << sweep_mode_name(spec.mode)
            << ") into " << output.string() << "/<label>/ (nothing is run or written)\n\n";
  double total_time = 0;
  bool time_known = true;
  for (const auto& c : cells) {
    const CellRecord r = cell_record(output, c);
    // A pending cell whose folder already holds a run is not what the table suggests (hostile review).
    std::string plan;
    if (runnable(r, a.retry_failed)) {
      try {
        plan = cell_folder_plan(spec, c, a.base, output, plugins);
      } catch (const Error& e) {
        plan = std::string("its folder cannot be read: ") + e.id() + ": " + e.what();
      }
    }
    const std::string plan_line = plan.empty() ? "" : "    note: " + plan + "\n";
    RunSummary s;
    try {
      s = estimate_cell(spec, c, a.base, output, plugins);
    } catch (const Error& e) {  // one cell that cannot run does not hide the others
      std::cout << "cell " << c.index << "  " << c.label << "  [" << cell_state_name(r.state) << "]\n    refused: "
                << e.id() << ": " << e.what() << "\n" << plan_line;
      time_known = false;
      continue;
    }
    std::cout << "cell " << c.index << "  " << c.label << "  [" << cell_state_name(r.state) << "]\n   ";
    for (const auto& o : c.overrides) std::cout << " " << o.key << "=" << o.value;
    std::cout << "\n    " << s.electrons << " electrons x " << s.screen.nx << " x " << s.screen.ny << " x "
              << s.screen.samples << " samples; device " << human_bytes(double(s.device_buffer_bytes))
              << ", host ≈ " << human_bytes(s.host_estimate_bytes) << "; time ";
    if (s.time_estimate > 0)
      std::cout << "≈ " << s.time_estimate << " s of field kernels\n";
    else
      std::cout << "unknown (run `edm bench` once on this device)\n";
    std::cout << plan_line;
    total_time += s.time_estimate;
    time_known = time_known && s.time_estimate > 0;
  }
  if (time_known) std::cout << "\ntotal:   ≈ " << total_time << " s of field kernels\n";
  return 0;
}

// --partition and --time go into the job script's #SBATCH lines: a partition is a comma-separated
// list of names (letters, digits, _ . -), a time one of SLURM's forms (minutes, minutes:seconds,
// hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED /
// INFINITE). A newline in a partition became a shell command in the script, and `--time abc` was
// accepted (found by a tester): anything else is refused naming the option (EDM-SWP-041).
void check_slurm_words(const SweepArgs& a) {
  static const std::regex partition(R"([A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*)");
  static const std::regex time(R"(UNLIMITED|INFINITE|\d+(:\d+){0,2}|\d+-\d+(:\d+){0,2})");
  if (!a.partition.empty() && !std::regex_match(a.partition, partition))
    throw ConfigError("EDM-SWP-041", "edm sweep --partition '" + a.partition +
                                         "': a partition is a comma-separated list of names of letters, digits, "
                                         "'_', '.' and '-'");
  if (!a.time.empty() && !std::regex_match(a.time, time))
    throw ConfigError("EDM-SWP-041", "edm sweep --time '" + a.time +
                                         "': give minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
                                         "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED");
}

// A file edm writes in the campaign folder (the job script, a cell's log) is written only where the
// path is absent or a regular file: a symbolic link was written through into the user's file, and a
// FIFO as a cell log hung the sweep (found by a tester). Refused by what it is (EDM-SWP-042).
void refuse_special_file(const fs::path& p, const char* what) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  const char* kind = S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISDIR(st.st_mode) ? "a folder" : "not a regular file";
  throw IoError("EDM-SWP-042", p.string() + " (" + what + ") is " + kind +
                                   ": edm sweep writes it only as a regular file of its own; move it away");
}

// The job script, whole or not at all: written under a temporary name created with O_EXCL (never
// through a link), then renamed over sweep.sbatch.
void write_job_script(const fs::path& script, const std::string& text) {
  refuse_special_file(script, "the job script");
  const fs::path tmp = script.string() + ".partial";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    if (ok) done += std::size_t(n);
  }
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), script.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw IoError("EDM-SWP-013", script.string() + ": cannot write the job script");
  }
}

// The job array: one task per cell still to run, each `edm sweep CAMPAIGN --cell K`.
std::string sbatch_script(const SweepArgs& a, const std::vector<std::size_t>& pending, const fs::path& output) {
  std::ostringstream s;
  std::string indices;
  for (std::size_t k : pending) indices += (indices.empty() ? "" : ",") + std::to_string(k);
  const fs::path out = fs::absolute(output);
  s << "#!/bin/bash\n# edm sweep: a SLURM job array, one task per cell still to run (share/docs/sweeps.md).\n"
    << "#SBATCH --job-name=edm-sweep\n#SBATCH --array=" << indices
    << (a.array_limit > 0 ? "%" + std::to_string(a.array_limit) : "") << "\n"
    << "#SBATCH --ntasks=" << a.ranks_per_cell << "\n#SBATCH --output=" << (out / ".cells" / "slurm-%A_%a.log").string() << "\n";
  if (!a.partition.empty()) s << "#SBATCH --partition=" << a.partition << "\n";
  if (a.gpus_per_cell > 0) s << "#SBATCH --gres=gpu:" << a.gpus_per_cell << "\n";
  if (!a.time.empty()) s << "#SBATCH --time=" << a.time << "\n";
  s << "cd " << quote(fs::current_path().string()) << " || exit 1\nexec " << quote(self_exe());
  for (const auto& w : forwarded(a)) s << " " << quote(w);
  s << " --cell \"$SLURM_ARRAY_TASK_ID\"\n";
  return s.str();
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// The output of a command (stdout, stderr dropped) and its exit status; -1 when it cannot start.
int command_output(const std::string& cmd, std::string& out) {
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  return ::pclose(p);
}

// The CPUs the job's partition offers (sinfo: --partition's first name, else the default one marked
// '*'), or -1 where sinfo cannot tell (none on PATH with --print-only): the whole partition, since
// SLURM places a task's ranks on any of its nodes.
long partition_cpus(const SweepArgs& a, std::string& name) {
  const std::string sinfo = find_on_path("sinfo");
  std::string out;
  if (sinfo.empty() || command_output(quote(sinfo) + " -h -o '%P %C'", out) != 0) return -1;
  const std::string wanted = a.partition.substr(0, a.partition.find(','));
  std::istringstream lines(out);
  std::string part, cpus;
  while (lines >> part >> cpus) {  // "edm* 0/2/0/2": allocated/idle/other/total
    const bool dflt = !part.empty() && part.back() == '*';
    if (dflt) part.pop_back();
    if (wanted.empty() ? !dflt : part != wanted) continue;
    name = part;
    const auto slash = cpus.rfind('/');
    return std::strtol(cpus.c_str() + (slash == std::string::npos ? 0 : slash + 1), nullptr, 10);
  }
  name = wanted.empty() ? "(default)" : wanted;
  return 0;
}

// --ranks-per-cell K asks SLURM for K tasks per array task: more than the partition's CPUs would
// leave every task pending for ever (SLURM queues what no node set can hold), so it is refused
// naming the option and the partition (EDM-SWP-044).
void check_ranks_per_cell(const SweepArgs& a) {
  if (a.ranks_per_cell <= 1) return;
  std::string name;
  const long cpus = partition_cpus(a, name);
  if (cpus < 0 || a.ranks_per_cell <= cpus) return;
  throw ConfigError("EDM-SWP-044", "edm sweep --ranks-per-cell " + std::to_string(a.ranks_per_cell) +
                                       ": the SLURM partition " + name + " offers " + std::to_string(cpus) +
                                       " CPUs (sinfo), fewer than the ranks of one cell; give --ranks-per-cell " +
                                       "at most " + std::to_string(cpus) + " or another --partition");
}

int submit_slurm(const SweepArgs& a, const SweepCells& cells, const fs::path& output) {
  std::vector<std::size_t> pending;
  for (const auto& c : cells)
    if (runnable(cell_record(output, c), a.retry_failed)) pending.push_back(c.index);
  if (pending.empty()) {
    std::cout << "edm sweep: every cell is done (or failed: --retry-failed reruns those); nothing to submit\n";
    return 0;
  }
  const std::string sbatch = a.print_only ? "" : find_on_path("sbatch");
  if (!a.print_only && sbatch.empty())
    throw ConfigError("EDM-SWP-021", "edm sweep --slurm: no sbatch on PATH (pass --print-only to print the script)");
  const fs::path script = output / "sweep.sbatch";
  const std::string text = sbatch_script(a, pending, output);
  write_job_script(script, text);
  if (a.print_only) {
    std::cout << text;
    return 0;
  }
  const std::string cmd = quote(sbatch) + " --parsable " + quote(script.string()) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string reply;
  char buf[512];
  while (p && std::fgets(buf, sizeof buf, p)) reply += buf;
  const int rc = p ? ::pclose(p) : -1;
  while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r')) reply.pop_back();
  if (rc != 0) throw Error("EDM-SWP-023", "sbatch " + script.string() + " failed: " + reply);
  std::cout << "submitted job array " << reply << ": " << pending.size() << " cells (" << script.string()
            << "); edm campaign status " << output.string() << "\n";
  return 0;
}

// The words of a cell's run under --ranks-per-cell K: `mpirun -n K edm run FILE --set … --quiet`, or
// `edm resume FOLDER` for a cell with a checkpoint (the campaign the checkpoint stores, as in-process).
std::vector<std::string> mpi_cell_words(const SweepArgs& a, const std::string& mpirun, const fs::path& file,
                                        const std::vector<Override>& overrides, const fs::path& folder,
                                        const RunOptions& ro) {
  std::vector<std::string> w{mpirun, "-n", std::to_string(a.ranks_per_cell), self_exe()};
  if (ro.resume) {
    w.insert(w.end(), {"resume", folder.string()});
  } else {
    w.insert(w.end(), {"run", file.string(), "--sweep-cell"});  // as given: mpirun keeps the folder
    for (const auto& o : overrides) w.insert(w.end(), {"--set", o.key + "=" + o.value});
    if (ro.overwrite) w.push_back("--overwrite");
  }
  if (ro.checkpoint_every) w.insert(w.end(), {"--checkpoint-every", std::to_string(ro.checkpoint_every)});
  w.push_back("--quiet");
  return w;
}

// Runs `words` with its output (stdout and stderr) copied to this process's stderr, line by line;
// returns its exit status (128 + N for signal N) and its last error line ("edm: … [EDM-…]: …").
int run_copying_output(std::vector<std::string> words, std::string& error_line) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("EDM-SWP-047", "pipe failed: cannot start a cell's mpirun");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw Error("EDM-SWP-047", "fork failed: cannot start a cell's mpirun");
  }
  FILE* in = ::fdopen(fds[0], "r");
  char buf[4096];
  while (in && std::fgets(buf, sizeof buf, in)) {
    std::cerr << buf;
    if (std::strstr(buf, "[EDM-")) error_line = buf;
  }
  if (in) std::fclose(in);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// --ranks-per-cell K: each cell's run is started as `mpirun -n K edm run …`, its K ranks in one
// MPI_COMM_WORLD (under SLURM, mpirun takes the K tasks of the array task: #SBATCH --ntasks=K). This
// process stays one: it claims the cell and records its row, as for a run in-process. The run's
// error, read from its error line, is the cell's: stopped (an id of exit code 130) leaves the cell
// pending with its checkpoint, anything else fails it with the run's id.
CellRunner mpi_cell_runner(const SweepArgs& a) {
  return [a](const fs::path& file, const std::vector<Override>& overrides, const fs::path& folder,
             const RunOptions& ro) {
    const std::string mpirun = find_on_path("mpirun");
    if (mpirun.empty())
      throw ConfigError("EDM-SWP-045", "edm sweep --ranks-per-cell " + std::to_string(a.ranks_per_cell) +
                                           ": no mpirun on PATH (each cell's run is started as mpirun -n " +
                                           std::to_string(a.ranks_per_cell) + " edm run …)");
    std::string line;
    const int rc = run_copying_output(mpi_cell_words(a, mpirun, file, overrides, folder, ro), line);
    if (rc == 0) return;
    static const std::regex id_and_message(R"(\[(EDM-[A-Z0-9]+-[0-9]+)\]: ([^\n]*))");
    std::smatch m;
    const std::string where = " (the cell's run under mpirun -n " + std::to_string(a.ranks_per_cell) + ")";
    const bool has_line = std::regex_search(line, m, id_and_message);
    // Ctrl-C reaches mpirun too, which ends its ranks (SIGTERM, then SIGKILL) and exits 1, often
    // before they print their stop: this sweep knows it was stopped, so the cell is stopped, not
    // failed (it was recorded failed with EDM-SWP-046 about one run in two). Its checkpoint, if one
    // was committed, is whole: a commit is a rename (run_cell says whether one was kept).
    if (!has_line && ro.stop && ro.stop->load())
      throw Interrupted("EDM-SWP-048", "mpirun -n " + std::to_string(a.ranks_per_cell) + " ended the cell's run "
                                       "when the sweep was stopped (exit " + std::to_string(rc) + ")");
    if (!has_line)
      throw Error("EDM-SWP-046", "mpirun -n " + std::to_string(a.ranks_per_cell) + " " + self_exe() +
                                     (ro.resume ? " resume " : " run ") + "exited with " + std::to_string(rc) +
                                     " and no edm error line; its output is in this cell's log");
    // Stopped: a rank under mpirun ends with MPI_Abort, whose code is not 130, so the run's id says it
    // (its registered exit code; found by stopping a 2-rank cell, which was recorded failed).
    const ErrorIdInfo* info = find_error_id(m[1].str());
    if (rc == 130 || (info && info->exit_code == 130)) throw Interrupted(m[1].str(), m[2].str() + where);
    throw Error(m[1].str(), m[2].str() + where);
  };
}

// Children: one `edm sweep --cell K --device D` per device at a time, each logging to its cell's log.
void run_parallel(const SweepArgs& a, const SweepCells& cells, const fs::path& output,
                  const std::atomic<bool>* stop) {
  const Campaign base = load_campaign(a.file, a.base, PluginRegistry::discover().get(peek_scenario(a.file, a.base)).keys(),
                                      true, true);
  const std::string spec = base.accumulator.devices == "auto" ? "all" : base.accumulator.devices;
  const std::vector<DeviceInfo> devices = select_devices(spec, value_origin(base, "accumulator.devices"));
  if (devices.empty()) throw ConfigError("EDM-SWP-024", "edm sweep --parallel-devices: no device for '" + spec + "'");
  std::deque<std::size_t> pending;
  for (const auto& c : cells)
    if (runnable(cell_record(output, c), a.retry_failed)) pending.push_back(c.index);
  std::map<pid_t, int> running;  // pid → device index
  std::vector<int> free;
  for (const auto& d : devices) free.push_back(d.index);
  bool signalled = false;
  while (!pending.empty() || !running.empty()) {
    const bool stopping = stop && stop->load();
    if (stopping && !signalled) {
      for (const auto& [pid, dev] : running) ::kill(pid, SIGTERM);  // each writes its checkpoint
      signalled = true;
    }
    while (!stopping && !pending.empty() && !free.empty()) {
      const std::size_t k = pending.front();
      pending.pop_front();
      const int dev = free.back();
      free.pop_back();
      std::vector<std::string> words = forwarded(a);
      words.insert(words.end(), {"--set", "accumulator.devices=\"" + std::to_string(dev) + "\"", "--cell", std::to_string(k)});
      const fs::path log = output / ".cells" / (cells[k].label + ".log");
      refuse_special_file(log, "a cell's log");
      const pid_t pid = ::fork();
      if (pid == 0) {
        // Its own process group: a terminal's Ctrl-C reaches only this parent, which asks each child
        // once (a second signal would kill a child before its checkpoint).
        ::setpgid(0, 0);
        // Never through a link, never blocking on a FIFO put there since the check.
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd >= 0) {
          ::dup2(fd, 1);
          ::dup2(fd, 2);
        }
        std::vector<char*> argv;
        const std::string exe = self_exe();
        argv.push_back(const_cast<char*>(exe.c_str()));
        for (auto& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        ::execv(exe.c_str(), argv.data());
        ::_exit(127);
      }
      if (pid < 0) throw Error("EDM-SWP-016", "fork failed: cannot start a cell process");
      running[pid] = dev;
      if (!a.quiet) std::cerr << "[cell] " << cells[k].label << " on device " << dev << " (log " << log.string() << ")\n";
    }
    if (stopping && pending.size()) pending.clear();
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0 && running.count(done)) {
      free.push_back(running[done]);
      running.erase(done);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

// The end of a sweep: the counts, and an error when cells failed or the campaign was stopped.
int finish(const SweepArgs& a, const SweepCells& cells, const fs::path& output, bool stopped) {
  const SweepTally t = tally_cells(cells, output, a.cell);
  std::string suspect;  // the done cells whose run says their field is wrong
  for (const auto& l : t.suspect) suspect += (suspect.empty() ? "" : ", ") + l;
  if (!a.quiet)
    std::cout << "edm sweep " << output.string() << ": " << t.done << " done"
              << (t.suspect.empty() ? "" : " (" + std::to_string(t.suspect.size()) + " suspect: " + suspect +
                                               "; edm campaign status)")
              << ", " << t.failed << " failed, " << t.other << " not run; table " << table_path(output).string()
              << "\n";
  throw_sweep_outcome(t, output, stopped);
  return 0;
}

// A count option of --slurm below its least value: --array-limit -3 and --gpus-per-cell -1 used to
// be dropped from the script without a word, so the job ran unlimited or without GPUs.
void check_slurm_count(const po::variables_map& vm, const char* name, int value, int least, const char* meaning) {
  if (!vm.count(name) || value >= least) return;
  throw ConfigError("EDM-SWP-032", std::string("edm sweep --") + name + " " + std::to_string(value) + ": give N >= " +
                                       std::to_string(least) + " (" + meaning + ")");
}

SweepArgs parse(const Args& args, bool& help) {
  po::options_description desc("edm sweep CAMPAIGN.toml [options]");
  SweepArgs a;
  desc.add_options()("help,h", "this help")(
      "set", po::value(&a.sets)->composing(), "override a key of every cell: section.key=value (repeatable)");
  add_key_flags(desc);
  desc.add_options()("dry-run", "list the cells with their overrides and estimates; run nothing")(
      "yes", "run a grid larger than [sweep] max_cells")("retry-failed", "run the failed cells again")(
      "cell", po::value(&a.cell), "run only cell K (its index in the expansion; SLURM tasks use this)")(
      "parallel-devices", "run cells concurrently, one per device")(
      "checkpoint-every", po::value(&a.checkpoint_every), "checkpoint every K batches (as edm run: 0 automatic, -1 never)")(
      "slurm", "write a SLURM job array script (OUTPUT/sweep.sbatch) and submit it with sbatch")(
      "partition", po::value(&a.partition), "SLURM partition")(
      "gpus-per-cell", po::value(&a.gpus_per_cell), "GPUs per array task (--gres=gpu:N)")(
      "time", po::value(&a.time), "SLURM time limit per task (e.g. 02:00:00)")(
      "array-limit", po::value(&a.array_limit), "at most N array tasks at once (%N)")(
      "ranks-per-cell", po::value(&a.ranks_per_cell),
      "MPI ranks of each cell's run (mpirun -n K; with --slurm, K tasks per array task)")(
      "print-only", "with --slurm: print the script, submit nothing")("quiet,q", "no progress output");
  po::variables_map vm;
  help = !parse_command(args, desc, "campaign", a.file, vm);
  if (help) return a;
  if (a.file.empty()) throw ConfigError("EDM-CLI-002", "edm sweep: no campaign file given");
  check_checkpoint_every("sweep", a.checkpoint_every);
  a.cell_given = vm.count("cell") > 0;  // checked against the cells once they are known (EDM-SWP-022)
  check_slurm_count(vm, "array-limit", a.array_limit, 1, "at most N array tasks at once");
  check_slurm_count(vm, "gpus-per-cell", a.gpus_per_cell, 0, "GPUs per array task; 0 asks for none");
  check_slurm_count(vm, "ranks-per-cell", a.ranks_per_cell, 1, "MPI ranks of each cell's run");
  check_slurm_words(a);
  if (!fs::exists(a.file)) throw ConfigError("EDM-CFG-002", a.file + ": no such campaign file");
  a.base = parse_set_options(a.sets);
  for (auto& o : key_flag_overrides(vm)) a.base.push_back(std::move(o));
  a.dry_run = vm.count("dry-run");
  a.yes = vm.count("yes");
  a.retry_failed = vm.count("retry-failed");
  a.parallel = vm.count("parallel-devices");
#ifndef EDM_WITH_MPI
  if (a.ranks_per_cell > 1)
    throw ConfigError("EDM-SWP-044", "edm sweep --ranks-per-cell " + std::to_string(a.ranks_per_cell) +
                                         ": this edm was built without MPI (cmake -DEDM_WITH_MPI=ON), so a run "
                                         "cannot share its cell among ranks");
#endif
  if (a.parallel && a.ranks_per_cell > 1)
    throw ConfigError("EDM-SWP-044", "edm sweep --ranks-per-cell " + std::to_string(a.ranks_per_cell) +
                                         " with --parallel-devices: a cell of several ranks takes more than one "
                                         "device's slot; give one of the two");
  a.slurm = vm.count("slurm");
  a.print_only = vm.count("print-only");
  a.quiet = vm.count("quiet");
  return a;
}

}  // namespace

namespace {

// Under mpirun every rank would run the same cells into one campaign folder, racing for their
// state files and writing one cell's field from two processes. A sweep is parallel by cell (one
// process per cell: --parallel-devices, --slurm), so more than one rank is refused, on every rank
// (each reads the world size itself: no collective is needed to agree).
void refuse_mpi_ranks() {
#ifdef EDM_WITH_MPI
  int initialized = 0, finalized = 0, size = 1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1)
    throw ConfigError("EDM-SWP-040", "edm sweep under mpirun with " + std::to_string(size) +
                                         " ranks (MPI world size " + std::to_string(size) +
                                         "): every rank would run the same cells into one campaign folder. A sweep "
                                         "runs one process per cell: start edm sweep without mpirun, with "
                                         "--parallel-devices (one cell per device at a time) or --slurm (one job "
                                         "array task per cell); mpirun is for one large cell (edm run)");
#endif
}

}  // namespace

int cmd_sweep(const Args& args) {
  bool help = false;
  const SweepArgs a = parse(args, help);
  if (help) return 0;
  refuse_mpi_ranks();
  const PluginRegistry plugins = PluginRegistry::discover();
  const LoadedSweep sweep = load_sweep(a.file, a.base, plugins, a.yes);
  const SweepCells& cells = sweep.cells;
  // --cell -1 used to mean every cell (the default's value): a negative K names no cell.
  if (a.cell_given && (a.cell < 0 || std::size_t(a.cell) >= cells.size()))
    throw ConfigError("EDM-SWP-022", "edm sweep --cell " + std::to_string(a.cell) + ": the campaign has " +
                                         std::to_string(cells.size()) + " cells (0 to " +
                                         std::to_string(cells.size() - 1) + ")");
  const fs::path& output = sweep.output;
  if (a.dry_run) return dry_run(a, sweep.spec, cells, output, plugins);
  if (a.slurm) check_ranks_per_cell(a);  // before the folder is made: a refusal writes nothing
  open_campaign_folder(output, sweep.spec, cells, campaign_fingerprint(sweep.spec, cells, a.base, plugins));
  if (a.slurm) return submit_slurm(a, cells, output);
  const std::atomic<bool>* stop = install_stop_handlers();
  if (a.parallel && a.cell < 0) {
    run_parallel(a, cells, output, stop);
    return finish(a, cells, output, stop->load());
  }
  Log log(a.quiet);
  // The cells in turn: the same executor edm.sweep runs from Python (edm/sweep.hpp).
  const bool stopped = run_cells_in_turn(
      sweep, a.base, plugins,
      CellRunOptions{stop, a.checkpoint_every, a.retry_failed,
                     a.ranks_per_cell > 1 ? mpi_cell_runner(a) : CellRunner()},
      a.cell, log,
      [&](const SweepCell& c, CellOutcome out, const std::string& err) {
        if (out == CellOutcome::Failed) std::cerr << "edm sweep: cell " << c.label << " failed: " << err << "\n";
        if (out == CellOutcome::Busy && !a.quiet)
          std::cerr << "[cell] " << c.label << " is running elsewhere: skipped\n";
      });
  return finish(a, cells, output, stopped);
}

}  // namespace edm::app
