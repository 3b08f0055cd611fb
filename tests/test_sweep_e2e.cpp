// ctest-label: e2e
// edm sweep and edm campaign through the binary (share/docs/sweeps.md): cells into normal run
// folders that edm info accepts, the table with states and results, a failing cell recorded while
// the campaign goes on, done cells never rerun, failed ones only with --retry-failed, edm run
// refusing a [sweep], a folder of another campaign refused, and SIGTERM stopping a campaign with the
// running cell's checkpoint kept and resumed by the next sweep; `edm plot` of the campaign putting
// each PNG in place whole.
#define BOOST_TEST_MODULE sweep_e2e
#include <boost/test/unit_test.hpp>

#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "campaign_support.hpp"
#include "edm/sweep.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

const char* kBase = R"(
[run]
scenario = "inverse_thomson"
mode = "total"
[laser]
a0 = 0.3
duration = 10.7e-15
waist = 10e-6
[electrons]
count = 4
radius = 3e-6
gamma = 3.0
[screen]
distance = 0.02
half_width = 5e-5
nx = 6
ny = 6
samples = 256
samples_per_period = 128
t_start = 1.0
[accumulator]
devices = "0"
)";

using test::run_edm;

fs::path write(const fs::path& dir, const std::string& sweep, const std::string& name = "c.toml") {
  const fs::path p = dir / name;
  std::ofstream(p) << kBase << "[sweep]\n" << sweep;
  return p;
}

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

using test::slurp;

// `edm plot OUTPUT` of a campaign: each PNG put in place whole (share/plot/plotsave.py). savefig
// straight onto the name wrote through a symbolic link into the file it points to, and a plot cut
// short left half a PNG where the previous one was; a refused plot leaves the previous PNG as it was.
void campaign_plot_replaces_whole_pngs(const fs::path& out, const fs::path& dir) {
  if (!test::have_plotting_python()) {
    BOOST_TEST_MESSAGE("skipping edm plot of the campaign: no python3 with numpy, h5py and matplotlib");
    return;
  }
  const fs::path png = out / "plots" / "energy_vs_laser.a0.png";
  auto r = run_edm("plot " + out.string() + " --result energy");
  BOOST_TEST_INFO(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  BOOST_TEST(slurp(png).rfind("\x89PNG", 0) == 0u);
  const fs::path keep = dir / "keep.txt";
  std::ofstream(keep) << "the user's file\n";
  fs::remove(png);
  fs::create_symlink(keep, png);
  r = run_edm("plot " + out.string() + " --result energy");
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(slurp(keep) == "the user's file\n", "the plot wrote through a symbolic link");
  BOOST_TEST(!fs::is_symlink(png));
  const std::string before = slurp(png);
  BOOST_TEST(before.rfind("\x89PNG", 0) == 0u);
  r = run_edm("plot " + out.string() + " --result nosuch");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.output, "EDM-SWP-025"));
  BOOST_TEST(slurp(png) == before);
  for (const auto& e : fs::directory_iterator(out / "plots"))
    BOOST_TEST(e.path().extension() != ".partial", "left behind: " << e.path());
}

}  // namespace

BOOST_AUTO_TEST_CASE(cells_table_failures_and_reruns) {
  const fs::path dir = test::temp_dir("sweep_e2e");
  // The explicit window at t = 1 s sees none of the light: that cell fails at run time.
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2]\nscreen.window = [\"auto\", \"explicit\"]\n");
  const fs::path out = dir / "out";
  const std::string base = c.string() + " -o " + out.string();

  auto r = run_edm("run " + c.string());
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.output, "EDM-SWP-012"));
  BOOST_TEST(has(r.output, "edm sweep"));

  r = run_edm("sweep " + base + " --dry-run");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "4 cells"));
  BOOST_TEST(has(r.output, "a0=0.2,window=explicit"));
  BOOST_TEST(has(r.output, "device "));
  BOOST_TEST(!fs::exists(out));  // a dry run writes nothing

  r = run_edm("sweep " + base + " --cell 4");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.output, "EDM-SWP-022"));

  r = run_edm("sweep " + base + " --quiet");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 7);  // two cells failed, the other two ran (EDM-SWP-020)
  BOOST_TEST(has(r.output, "EDM-SWP-020"));
  auto t = read_campaign_table(out);
  BOOST_REQUIRE_EQUAL(t.cells.size(), 4u);
  for (const auto& cell : t.cells) {
    const bool expl = has(cell.label, "explicit");
    BOOST_TEST_INFO(cell.label << " " << cell_state_name(cell.state) << " " << cell.error);
    BOOST_TEST((cell.state == (expl ? CellState::Failed : CellState::Done)));
    BOOST_TEST(cell.wall_s.has_value());
    if (expl) {
      BOOST_TEST(has(cell.error, "EDM-"));
      continue;
    }
    BOOST_TEST(cell.results.count("energy") == 1u);
    BOOST_TEST(cell.results.at("energy") > 0);
    BOOST_TEST(cell.results.at("peak_omega_on_axis") > 0);
    BOOST_TEST(fs::exists(out / cell.label / "field.h5"));
    auto info = run_edm("info " + (out / cell.label).string());
    BOOST_TEST_INFO(info.output);
    BOOST_TEST(info.exit_code == 0);
  }
  BOOST_TEST(t.meta.at("axes") == "laser.a0,screen.window");

  // A second sweep: done cells untouched, failed cells not rerun.
  const fs::path done = out / t.cells[0].label / "field.h5";
  const auto mtime = fs::last_write_time(done);
  r = run_edm("sweep " + base + " --quiet");
  BOOST_TEST(r.exit_code == 7);
  BOOST_TEST((fs::last_write_time(done) == mtime));
  r = run_edm("sweep " + base + " --retry-failed");
  BOOST_TEST(r.exit_code == 7);  // they fail again, and are rerun to say so
  BOOST_TEST(has(r.output, "window=explicit"));
  BOOST_TEST((fs::last_write_time(done) == mtime));
  BOOST_TEST(read_campaign_table(out).cells[0].state == CellState::Done);

  r = run_edm("campaign status " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "2 done"));
  BOOST_TEST(has(r.output, "2 failed"));
  r = run_edm("campaign collect " + out.string());
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(fs::exists(out / "campaign.h5"));
  campaign_plot_replaces_whole_pngs(out, dir);
  r = run_edm("campaign status " + (dir / "nowhere").string());
  BOOST_TEST(r.exit_code == 4);
  BOOST_TEST(has(r.output, "EDM-SWP-011"));

  // Another campaign into this folder is refused; the cells stay.
  const fs::path other = write(dir, "laser.a0 = [0.7]\n", "other.toml");
  r = run_edm("sweep " + other.string() + " -o " + out.string());
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.output, "EDM-SWP-010"));
  BOOST_TEST(read_campaign_table(out).cells[0].state == CellState::Done);
  BOOST_TEST((fs::last_write_time(done) == mtime));
}

// Options and ranges out of range are refused at once, naming what is wrong, with nothing written:
// --cell -1 ran every cell, --array-limit -3 and --gpus-per-cell -1 were dropped from the script, a
// range of count = 1e11 grew --dry-run's memory without bound, a NaN end (or listed value) was a
// repeated label.
BOOST_AUTO_TEST_CASE(out_of_range_options_and_ranges_are_refused_at_once) {
  const fs::path dir = test::temp_dir("sweep_refuse");
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2, 0.3]\n");
  const fs::path out = dir / "out";
  const std::string base = c.string() + " -o " + out.string();
  auto r = run_edm("sweep " + base + " --cell -1");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.output, "EDM-SWP-022"));
  BOOST_TEST(has(r.output, "--cell -1"));
  for (const std::string opt : {"--array-limit -3", "--array-limit 0", "--gpus-per-cell -1"}) {
    r = run_edm("sweep " + base + " --slurm --print-only " + opt);
    BOOST_TEST_INFO(opt << ": " << r.output);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(has(r.output, "EDM-SWP-032"));
    BOOST_TEST(has(r.output, opt));
  }
  r = run_edm("sweep " + base + " --slurm --print-only --array-limit 2 --gpus-per-cell 0");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "#SBATCH --array=0,1,2%2"));
  BOOST_TEST(!has(r.output, "--gres"));
  fs::remove_all(out);
  // A sweep whose range is refused before any cell is made: exit 2, the id and the words named.
  const auto refused_range = [&](const std::string& range, const std::string& name, const std::string& id,
                                 const std::string& words) {
    const fs::path file = write(dir, "laser.a0 = " + range + "\n", name);
    const auto rr = run_edm("sweep " + file.string() + " -o " + out.string() + " --dry-run");
    BOOST_TEST_INFO(rr.output);
    BOOST_TEST(rr.exit_code == 2);
    BOOST_TEST(has(rr.output, id));
    BOOST_TEST(has(rr.output, words));
  };
  refused_range("{ from = 0.1, to = 0.2, count = 100000000000 }", "huge.toml", "EDM-SWP-008", "100000000000 values");
  refused_range("{ from = 0.1, to = nan, count = 2 }", "nan.toml", "EDM-SWP-031", "laser.a0");
  // A list: [nan, nan] was refused as one label repeated (EDM-SWP-009), a lone nan or inf ran as a cell.
  refused_range("[nan, nan]", "nans.toml", "EDM-SWP-031", "the list of 'laser.a0' holds nan");
  refused_range("[0.1, -inf]", "inf.toml", "EDM-SWP-031", "holds -inf, not a finite number");
  BOOST_TEST(!fs::exists(out));
}

namespace {

// A campaign of two cells stopped by SIGTERM during its first cell (many batches, a checkpoint
// after each), as the first half of the two tests below leave it; `sets` are its overrides.
struct StoppedCampaign {
  fs::path c, out;
  std::string sets = " --set electrons.count=64 --set 'screen.window=\"auto\"' --set accumulator.electron_batch=1";
};

StoppedCampaign stop_a_campaign(const std::string& tag) {
  const fs::path dir = test::temp_dir(tag);
  StoppedCampaign s{write(dir, "laser.a0 = [0.1, 0.2]\n"), dir / "out"};
  const fs::path& c = s.c;
  const fs::path& out = s.out;
  const pid_t pid = test::spawn_edm({"sweep", c.string(), "-o", out.string(), "--set", "electrons.count=64",
                                     "--set", "screen.window=\"auto\"", "--set",
                                     "accumulator.electron_batch=1", "--checkpoint-every", "1", "--quiet"});
  const fs::path ckpt = out / "a0=0.1" / "checkpoint.h5";
  const auto waited = test::wait_until(
      pid, [&] { return fs::exists(ckpt); }, std::chrono::milliseconds(20));
  BOOST_REQUIRE(fs::exists(ckpt));
  BOOST_REQUIRE(waited == test::Waited::Ready);  // still running: the signal is the sweep's
  ::kill(pid, SIGTERM);
  const int st = test::wait_status(pid);
  BOOST_REQUIRE(WIFEXITED(st));
  BOOST_TEST(WEXITSTATUS(st) == 130);
  auto t = read_campaign_table(out);
  BOOST_TEST_INFO(t.cells[0].error);
  BOOST_TEST(t.cells[0].state == CellState::Pending);
  BOOST_TEST(has(t.cells[0].error, "checkpoint kept"));
  BOOST_TEST(t.cells[1].state == CellState::Pending);  // no further cell started
  BOOST_TEST(fs::exists(ckpt));
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sigterm_keeps_the_checkpoint_and_the_next_sweep_resumes) {
  const StoppedCampaign s = stop_a_campaign("sweep_stop");
  const fs::path& out = s.out;
  auto r = run_edm("sweep " + s.c.string() + " -o " + out.string() + s.sets);
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "resumed from its checkpoint"));
  const auto t = read_campaign_table(out);
  BOOST_TEST(t.cells[0].state == CellState::Done);
  BOOST_TEST(t.cells[1].state == CellState::Done);
}

// A stopped cell finished by hand with `edm resume` (which sweeps.md allows): the next sweep saw a
// pending row, ran the cell afresh with --overwrite and replaced the resumed result. The folder's
// run.toml holds this cell's campaign, so the cell is adopted: done with its results, field.h5 and
// run.toml not touched.
BOOST_AUTO_TEST_CASE(a_cell_resumed_by_hand_is_adopted_not_run_again) {
  const StoppedCampaign s = stop_a_campaign("sweep_adopt");
  const fs::path cell = s.out / "a0=0.1";
  auto r = run_edm("resume " + cell.string() + " --quiet");
  BOOST_TEST_INFO(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  const std::string field = slurp(cell / "field.h5"), manifest = slurp(cell / "run.toml");
  r = run_edm("sweep " + s.c.string() + " -o " + s.out.string() + s.sets);
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "a0=0.1 (its folder holds this cell's complete run: adopted"));
  BOOST_TEST(!has(r.output, "a0=0.1 (resumed"));
  BOOST_TEST((slurp(cell / "field.h5") == field), "the resumed field.h5 was replaced");
  BOOST_TEST((slurp(cell / "run.toml") == manifest), "the resumed run.toml was replaced");
  const auto t = read_campaign_table(s.out);
  BOOST_TEST(t.cells[0].state == CellState::Done);
  BOOST_TEST(t.cells[0].results.count("energy") == 1u);
  BOOST_TEST(t.cells[0].wall_s.has_value());
  BOOST_TEST(fs::exists(cell / "spectrum.h5"));
  BOOST_TEST(t.cells[1].state == CellState::Done);
}

// A complete run that is not the cell's is never replaced: a user's run in a pending cell's folder
// was overwritten with exit 0 and "3 done". It is kept byte for byte, the cell fails with
// EDM-SWP-033 naming the folder and the first key that differs, and the other cells run. A done row
// edited back to pending by hand adopts its folder instead of running it again; once the foreign
// run is moved away and the cell's own campaign run there, --retry-failed adopts that one.
BOOST_AUTO_TEST_CASE(a_complete_run_in_a_cells_folder_is_never_replaced) {
  const fs::path dir = test::temp_dir("sweep_foreign");
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2, 0.3]\n");
  const fs::path single = dir / "q.toml";
  std::ofstream(single) << kBase;
  const fs::path out = dir / "out";
  const std::string sweep = "sweep " + c.string() + " -o " + out.string();
  auto r = run_edm(sweep + " --cell 0 --quiet");
  BOOST_TEST_INFO(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  const fs::path theirs = out / "a0=0.2";
  r = run_edm("run " + single.string() + " -o " + theirs.string() + " --set laser.a0=0.9 --quiet");
  BOOST_REQUIRE(r.exit_code == 0);
  const std::string field = slurp(theirs / "field.h5"), manifest = slurp(theirs / "run.toml");

  // --dry-run says so before anything runs (it listed the cell as plainly pending).
  r = run_edm(sweep + " --dry-run");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "note: its folder holds a complete run that is not this cell's (laser.a0 = 0.9 in its "
                           "run.toml, 0.2 in this cell): the cell would fail with EDM-SWP-033"));
  BOOST_TEST(!has(r.output, "adopted"));  // cell 0 is done: nothing to say of its folder

  r = run_edm(sweep);
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 7);
  BOOST_TEST(has(r.output, "EDM-SWP-020"));
  BOOST_TEST((slurp(theirs / "field.h5") == field), "the user's field.h5 was replaced");
  BOOST_TEST((slurp(theirs / "run.toml") == manifest), "the user's run.toml was replaced");
  BOOST_TEST(!fs::exists(theirs / "spectrum.h5"));
  auto t = read_campaign_table(out);
  BOOST_TEST_INFO(t.cells[1].error);
  BOOST_TEST(t.cells[1].state == CellState::Failed);
  BOOST_TEST(has(t.cells[1].error, "EDM-SWP-033"));
  BOOST_TEST(has(t.cells[1].error, theirs.string()));
  BOOST_TEST(has(t.cells[1].error, "laser.a0 = 0.9 in its run.toml, 0.2 in this cell"));
  BOOST_TEST(has(t.cells[1].error, "move the folder away"));
  BOOST_TEST(t.cells[0].state == CellState::Done);
  BOOST_TEST(t.cells[2].state == CellState::Done);  // the campaign went on

  // A done row edited back to pending by hand: adopted, its folder not touched.
  const fs::path state = cell_state_path(out, "a0=0.1");
  std::string row = slurp(state);
  const auto at = row.find("state = 'done'");
  BOOST_REQUIRE(at != std::string::npos);
  row.replace(at, 14, "state = 'pending'");
  std::ofstream(state, std::ios::trunc) << row;
  BOOST_REQUIRE(read_campaign_table(out).cells[0].state == CellState::Pending);
  const std::string done_field = slurp(out / "a0=0.1" / "field.h5");
  r = run_edm(sweep + " --dry-run");
  BOOST_TEST(has(r.output, "note: its folder holds this cell's complete run: adopted as done"));
  r = run_edm(sweep);
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 7);  // a0=0.2 stays failed without --retry-failed
  BOOST_TEST(has(r.output, "a0=0.1 (its folder holds this cell's complete run: adopted"));
  BOOST_TEST((slurp(out / "a0=0.1" / "field.h5") == done_field));
  t = read_campaign_table(out);
  BOOST_TEST(t.cells[0].state == CellState::Done);
  BOOST_TEST(t.cells[0].results.count("energy") == 1u);

  // Still refused with --retry-failed while the foreign run is there; adopted once it is replaced
  // by a run of the cell's own campaign.
  r = run_edm(sweep + " --retry-failed");
  BOOST_TEST(r.exit_code == 7);
  BOOST_TEST((slurp(theirs / "field.h5") == field));
  fs::rename(theirs, dir / "moved");
  r = run_edm("run " + single.string() + " -o " + theirs.string() + " --set laser.a0=0.2 --quiet");
  BOOST_REQUIRE(r.exit_code == 0);
  const std::string own = slurp(theirs / "field.h5");
  r = run_edm(sweep + " --retry-failed");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "a0=0.2 (its folder holds this cell's complete run: adopted"));
  BOOST_TEST((slurp(theirs / "field.h5") == own));
  t = read_campaign_table(out);
  BOOST_TEST(t.cells[1].state == CellState::Done);
  BOOST_TEST(t.cells[1].error.empty());
}

// A cell whose process was killed (SIGKILL, a lost node) stays "running" in its state file, and
// `edm campaign status` showed it so for ever (found by a hostile tester). Its claim (an flock on
// .cells/<label>.lock) went with the process: status now marks a running cell whose claim nobody
// holds as stale, and one whose claim is held as plainly running.
BOOST_AUTO_TEST_CASE(status_marks_a_running_cell_nobody_holds_as_stale) {
  const fs::path dir = test::temp_dir("sweep_stale");
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2]\n");
  const fs::path out = dir / "out";
  auto r = run_edm("sweep " + c.string() + " -o " + out.string() + " --cell 0 --quiet");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const fs::path state = out / ".cells" / "a0=0.1.toml";
  std::string text = slurp(state);
  const auto at = text.find("state = 'done'");
  BOOST_REQUIRE(at != std::string::npos);
  std::ofstream(state) << text.replace(at, 14, "state = 'running'");
  r = run_edm("campaign status " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "a0=0.1  running (stale"));
  {
    const CellClaim held(out, "a0=0.1");  // as the cell's own process holds it
    BOOST_REQUIRE(held.held());
    r = run_edm("campaign status " + out.string());
    BOOST_TEST(has(r.output, "a0=0.1  running"));
    BOOST_TEST(!has(r.output, "(stale"), r.output);
  }
}

namespace {

// One electron (γ = 5) head-on into a plane wave, seen on a small angular screen at infinity at
// T/256: at a0 = 1 the retarded-time roots do not converge in accumulator.newton_iters = 2 steps
// (run.toml [window] roots_converged = false, the run warns "the field is then wrong"); at a0 = 0
// (no laser: a straight line) they do. test_root_sampling measures the thresholds.
std::string roots_campaign(bool strict) {
  return std::string("[run]\nscenario = \"inverse_thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\n"
                     "a0 = 0.5\nduration = 10.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\n"
                     "radius = 0.0\ngamma = 5.0\n[trajectory]\nknots_per_period = 128\n[screen]\ntype = \"angular\"\n"
                     "distance = \"infinity\"\nangles = \"xy\"\ntheta_x_min = -0.1\ntheta_x_max = 0.1\n"
                     "theta_y_min = -0.1\ntheta_y_max = 0.1\nnx = 3\nny = 2\nsamples = 384\nsamples_per_period = 256\n"
                     "strict = ") +
         (strict ? "true" : "false") + "\n[accumulator]\ndevices = \"0\"\n[sweep]\nlaser.a0 = [0.0, 1.0]\n";
}

const toml::table* row_of(const toml::table& t, const std::string& label) {
  for (auto&& r : *t["cell"].as_array())
    if (r.as_table() && (*r.as_table())["label"].value_or(std::string()) == label) return r.as_table();
  return nullptr;
}

// A column of the collected table, read here with the HDF5 C API (strings: variable length).
std::vector<std::string> h5_strings(hid_t f, const char* name) {
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d), type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  std::vector<char*> buf(std::size_t(H5Sget_simple_extent_npoints(space)));
  const herr_t rc = H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  std::vector<std::string> out;
  for (char* s : buf) {
    out.emplace_back(s ? s : "");
    std::free(s);
  }
  H5Tclose(type), H5Sclose(space), H5Dclose(d);
  BOOST_REQUIRE(rc >= 0);
  return out;
}

std::vector<double> h5_doubles(hid_t f, const char* name) {
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<double> out(std::size_t(H5Sget_simple_extent_npoints(space)));
  const herr_t rc = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  H5Sclose(space), H5Dclose(d);
  BOOST_REQUIRE(rc >= 0);
  return out;
}

}  // namespace

// Issue 29: a sweep recorded a cell whose run warned "the field is then wrong" as done, with nothing
// in campaign.toml, campaign.h5 or edm campaign status to say so.
BOOST_AUTO_TEST_CASE(a_cell_whose_run_says_its_field_is_wrong_is_done_suspect) {
  const fs::path dir = test::temp_dir("sweep_suspect");
  const fs::path c = test::write_file(dir, "c.toml", roots_campaign(false));
  const fs::path out = dir / "out";
  auto r = run_edm("sweep " + c.string() + " -o " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_REQUIRE(r.exit_code == 0);  // suspect cells completed: no failure
  BOOST_TEST(has(r.output, "2 done (1 suspect: a0=1.0"));

  // run.toml keeps what the run warned, and its verdict.
  const toml::table m = toml::parse_file((out / "a0=1.0" / "run.toml").string());
  BOOST_TEST(m["window"]["roots_converged"].value_or(true) == false);
  BOOST_TEST(m["warnings"]["count"].value_or(0) == 1);
  BOOST_TEST(m["warnings"]["messages"][0].value_or(std::string()).find("accumulator.newton_iters = 2") !=
             std::string::npos);
  BOOST_TEST(toml::parse_file((out / "a0=0.0" / "run.toml").string())["warnings"]["count"].value_or(-1) == 0);

  // campaign.toml: the state, the reason, the verdicts and the warning's text.
  const toml::table t = toml::parse_file((out / "campaign.toml").string());
  const toml::table* bad = row_of(t, "a0=1.0");
  const toml::table* good = row_of(t, "a0=0.0");
  BOOST_REQUIRE(bad);
  BOOST_REQUIRE(good);
  BOOST_TEST((*bad)["state"].value_or(std::string()) == "done (suspect)");
  BOOST_TEST((*bad)["suspect"][0].value_or(std::string()).find("roots not converged") != std::string::npos);
  BOOST_TEST((*bad)["verdicts"]["roots_converged"].value_or(true) == false);
  BOOST_TEST((*bad)["verdicts"]["burst_in_window"].value_or(false) == true);
  BOOST_TEST((*bad)["warnings"][0].value_or(std::string()).find("the field is then wrong") != std::string::npos);
  BOOST_TEST((*good)["state"].value_or(std::string()) == "done");
  BOOST_TEST(!good->contains("suspect"));
  BOOST_TEST((*good)["verdicts"]["roots_converged"].value_or(false) == true);

  // The line is the run's own expected line: head-on, on axis ω1 = γ²(1+β)² ω_L / (1 + a0²/2), a
  // closed form written here (λ = 800 nm, the default).
  const double omega_l = 2 * M_PI * 299792458.0 / 800e-9, g = 5.0, beta = std::sqrt(1 - 1 / (g * g));
  for (const double a0 : {0.0, 1.0}) {
    const toml::table* row = a0 == 0 ? good : bad;
    const double want = g * g * (1 + beta) * (1 + beta) * omega_l / (1 + a0 * a0 / 2);
    const double got = (*row)["results"]["line_omega"].value_or(0.0);
    BOOST_TEST(std::abs(got - want) <= 1e-9 * want, "a0 = " << a0 << ": line " << got << ", closed form " << want);
    BOOST_TEST((*row)["results"]["laser_omega"].value_or(0.0) == omega_l, boost::test_tools::tolerance(1e-12));
    BOOST_TEST((*row)["results"]["line_photons"].value_or(-1.0) >= 0.0);
  }

  // The library reads it back as done, suspect: a plain edm sweep does not run it again.
  const CampaignTable table = read_campaign_table(out);
  BOOST_TEST(table.cells[1].state == CellState::Done);
  BOOST_TEST(cell_state_word(table.cells[1]) == "done (suspect)");
  const auto mtime = fs::last_write_time(out / "a0=1.0" / "field.h5");
  r = run_edm("sweep " + c.string() + " -o " + out.string());
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "1 suspect: a0=1.0"));
  BOOST_TEST((fs::last_write_time(out / "a0=1.0" / "field.h5") == mtime));

  r = run_edm("campaign status " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "a0=1.0  done (suspect)"));
  BOOST_TEST(has(r.output, "suspect: retarded-time roots not converged"));
  BOOST_TEST(has(r.output, "1 done 1 done (suspect)"));

  r = run_edm("campaign collect " + out.string());
  BOOST_REQUIRE(r.exit_code == 0);
  {
    const hid_t f = H5Fopen((out / "campaign.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    BOOST_REQUIRE(f >= 0);
    const auto states = h5_strings(f, "/cells/state"), why = h5_strings(f, "/cells/suspect");
    BOOST_TEST((states == std::vector<std::string>{"done", "done (suspect)"}));
    BOOST_TEST(why[0].empty());
    BOOST_TEST(why[1].find("roots not converged") != std::string::npos);
    BOOST_TEST((h5_doubles(f, "/verdicts/roots_converged") == std::vector<double>{1.0, 0.0}));
    BOOST_TEST((h5_doubles(f, "/cells/warning_count") == std::vector<double>{0.0, 1.0}));
    BOOST_TEST(h5_strings(f, "/cells/warnings")[1].find("newton_iters") != std::string::npos);
    H5Fclose(f);
  }

  if (!test::have_plotting_python()) {
    BOOST_TEST_MESSAGE("skipping edm plot and edmio: no python3 with numpy, h5py and matplotlib");
    return;
  }
  // The plot, with every Python warning an error (numpy's, matplotlib's: a missing glyph, an
  // all-NaN reduction), and edmio's load_campaign reading the new columns.
  r = test::run_command("PYTHONWARNINGS=error " + test::edm_bin() + " plot " + out.string() + " --against laser.a0");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(!has(r.output, "Warning"));
  for (const char* png : {"peak_omega_on_axis", "energy", "line_photons"})
    BOOST_TEST(slurp(out / "plots" / (std::string(png) + "_vs_laser.a0.png")).rfind("\x89PNG", 0) == 0u, png);
  // The interpreter test::have_plotting_python found (python3 on the PATH, else /usr/bin/python3).
  const std::string py =
      test::run_command("python3 -c 'import numpy, h5py, matplotlib'").exit_code == 0 ? "python3" : "/usr/bin/python3";
  r = test::run_command(py + " -W error -c \"import sys; sys.path.insert(0, '" +
                        (test::source_dir() / "share" / "python").string() +
                        "'); import edmio; c = edmio.load_campaign('" + out.string() +
                        "'); b = c['a0=1.0']; print(c['a0=0.0'].state, '|', b.state, '|', b.suspect[0], '|', "
                        "b.verdicts['roots_converged'], '|', len(b.warnings))\"");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(has(r.output, "done | done (suspect) | retarded-time roots not converged"));
  BOOST_TEST(has(r.output, "| False | 1"));
}

// Under screen.strict = true the run itself refuses the unconverged roots (EDM-WIN-020): the cell
// fails, leaves no field, and the other cell is done.
BOOST_AUTO_TEST_CASE(under_screen_strict_the_wrong_field_cell_fails) {
  const fs::path dir = test::temp_dir("sweep_suspect_strict");
  const fs::path c = test::write_file(dir, "c.toml", roots_campaign(true));
  const fs::path out = dir / "out";
  auto r = run_edm("sweep " + c.string() + " -o " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code != 0);
  BOOST_TEST(has(r.output, "EDM-SWP-020"));
  const CampaignTable table = read_campaign_table(out);
  BOOST_TEST(cell_state_word(table.cells[0]) == "done");
  BOOST_TEST(cell_state_word(table.cells[1]) == "failed");
  BOOST_TEST(has(table.cells[1].error, "EDM-WIN-020"));
  BOOST_TEST(!fs::exists(out / "a0=1.0" / "field.h5"));
  r = run_edm("campaign status " + out.string());
  BOOST_TEST(has(r.output, "1 done 0 done (suspect) 0 running 0 pending 1 failed"));
}

// A completed run that still says its field is wrong under screen.strict (a clipped window, which
// allow_clipping lets through and strict does not refuse) fails its cell with EDM-SWP-034. Its
// run.toml is edited here to say so, and the cell adopted from its folder (the run is the cell's).
BOOST_AUTO_TEST_CASE(a_completed_wrong_field_under_strict_fails_with_its_id) {
  const fs::path dir = test::temp_dir("sweep_suspect_adopted");
  std::string text = roots_campaign(true);
  text.replace(text.find("[0.0, 1.0]"), 10, "[0.0]");
  const fs::path c = test::write_file(dir, "c.toml", text);
  const fs::path out = dir / "out";
  auto r = run_edm("sweep " + c.string() + " -o " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  const fs::path manifest = out / "a0=0.0" / "run.toml";
  std::string m = slurp(manifest);
  const auto at = m.find("covered = true");
  BOOST_REQUIRE(at != std::string::npos);
  m.replace(at, 14, "covered = false");
  std::ofstream(manifest, std::ios::trunc) << m;
  fs::remove(cell_state_path(out, "a0=0.0"));  // pending again: the next sweep adopts the folder
  r = run_edm("sweep " + c.string() + " -o " + out.string());
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code != 0);
  const CampaignTable table = read_campaign_table(out);
  BOOST_TEST(cell_state_word(table.cells[0]) == "failed");
  BOOST_TEST(has(table.cells[0].error, "EDM-SWP-034"));
  BOOST_TEST(has(table.cells[0].error, "window clipped"));
  BOOST_TEST(has(table.cells[0].error, "screen.strict = true"));
}

// SLURM options go into the job script's #SBATCH lines: a partition with a newline became a shell
// command there and `--time abc` was accepted. Refused naming the option (EDM-SWP-041), nothing
// written; SLURM's own forms pass.
BOOST_AUTO_TEST_CASE(slurm_options_are_checked_before_they_reach_the_script) {
  const fs::path dir = test::temp_dir("sweep_slurm_words");
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2]\n");
  const fs::path out = dir / "out";
  const std::string base = "sweep " + c.string() + " -o " + out.string() + " --slurm --print-only ";
  for (const std::string opt : {"--partition 'gpu\ntouch /tmp/x'", "--partition 'a b'", "--partition ';rm'",
                                "--time abc", "--time 1:2:3:4", "--time '10\n#SBATCH --x'"}) {
    const auto r = run_edm(base + opt);
    BOOST_TEST_INFO(opt << ": " << r.output);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(has(r.output, "EDM-SWP-041"));
    BOOST_TEST(!fs::exists(out / "sweep.sbatch"));
  }
  const auto ok = run_edm(base + "--partition gpu,debug --time 1-02:30:00");
  BOOST_TEST_INFO(ok.output);
  BOOST_TEST(ok.exit_code == 0);
  BOOST_TEST(has(ok.output, "#SBATCH --partition=gpu,debug\n"));
  BOOST_TEST(has(ok.output, "#SBATCH --time=1-02:30:00\n"));
}

// The files edm sweep writes in the campaign folder are never written through a link, and a FIFO as a
// cell's log is refused instead of hanging the sweep (EDM-SWP-042); the user's file stays as it was.
BOOST_AUTO_TEST_CASE(the_job_script_and_a_cells_log_are_never_written_through_a_link) {
  const fs::path dir = test::temp_dir("sweep_links");
  const fs::path c = write(dir, "laser.a0 = [0.1, 0.2]\n");
  const fs::path out = dir / "out";
  // The campaign's folder as a first --print-only leaves it (table, state files, sweep.sbatch).
  auto r = run_edm("sweep " + c.string() + " -o " + out.string() + " --slurm --print-only");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const fs::path mine = dir / "mine.txt";
  std::ofstream(mine) << "my notes\n";
  fs::remove(out / "sweep.sbatch");
  fs::create_symlink(mine, out / "sweep.sbatch");
  r = run_edm("sweep " + c.string() + " -o " + out.string() + " --slurm --print-only");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 4);
  BOOST_TEST(has(r.output, "EDM-SWP-042"));
  BOOST_TEST(has(r.output, "symbolic link"));
  BOOST_TEST(test::slurp(mine) == "my notes\n");
  fs::remove(out / "sweep.sbatch");
  BOOST_REQUIRE(::mkfifo((out / ".cells" / "a0=0.1.log").c_str(), 0644) == 0);
  r = run_edm("sweep " + c.string() + " -o " + out.string() + " --parallel-devices -q");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 4);
  BOOST_TEST(has(r.output, "EDM-SWP-042"));
  BOOST_TEST(has(r.output, "FIFO"));
}
