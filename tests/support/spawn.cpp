// Child processes and small files for the end-to-end tests (see spawn.hpp).
#include "spawn.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "edm/device.hpp"

extern char** environ;

namespace edm::test {

CommandResult run_edm(const std::string& args) { return run_command(edm_bin() + " " + args); }

std::string edm_bin() { return edm_binary().string(); }

namespace {
pid_t spawn_argv(std::vector<std::string> all) {
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  BOOST_REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  return pid;
}
}  // namespace

pid_t spawn_edm(const std::vector<std::string>& args) {
  std::vector<std::string> all = {edm_bin()};
  all.insert(all.end(), args.begin(), args.end());
  return spawn_argv(std::move(all));
}

pid_t spawn_shell(const std::string& line) { return spawn_argv({"/bin/sh", "-c", line}); }

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

int wait_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

int wait_exit(pid_t pid) { return exit_code(wait_status(pid)); }

Waited wait_until(pid_t pid, const std::function<bool()>& ready, std::chrono::milliseconds poll,
                  std::chrono::seconds timeout, int* code) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return Waited::Ready;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (code) *code = exit_code(status);
      return Waited::Exited;
    }
    std::this_thread::sleep_for(poll);
  }
  return Waited::TimedOut;
}

int signal_when(pid_t pid, int sig, const std::function<bool()>& ready, double* seconds_after,
                std::chrono::milliseconds poll) {
  if (wait_until(pid, ready, poll) == Waited::Exited) return -1;
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, sig);
  const int code = wait_exit(pid);
  if (seconds_after)
    *seconds_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return code;
}

std::filesystem::path write_file(const std::filesystem::path& dir, const std::string& name,
                                 const std::string& text) {
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string small_cell(const SmallCell& cell) {
  std::string t = "[run]\nscenario = \"inverse_thomson\"\nmode = \"" + cell.mode + "\"\n";
  t += "[laser]\nprofile = \"gaussian\"\na0 = 0.3\nduration = 10.7e-15\nwaist = 10e-6\n";
  t += "[electrons]\ndistribution = \"sunflower\"\ncount = " + std::to_string(cell.electrons) +
       "\nradius = 3e-6\ngamma = 3.0\n";
  t += "[screen]\ndistance = 0.02\n" + cell.screen + "samples_per_period = 128\n";
  if (!cell.electron_batch.empty() || !cell.devices.empty() || !cell.accumulator_lines.empty()) {
    t += "[accumulator]\n";
    if (!cell.electron_batch.empty()) t += "electron_batch = " + cell.electron_batch + "\n";
    if (!cell.devices.empty()) t += "devices = \"" + cell.devices + "\"\n";
    t += cell.accumulator_lines;
  }
  if (!cell.trajectory_lines.empty()) t += "[trajectory]\n" + cell.trajectory_lines;
  return t;
}

BusyLaunch busy_launch(int cpu_nx, int gpu_nx) {
  BusyLaunch b;
  b.gpu = select_devices("0").front().type == "GPU";
  b.nx = b.gpu ? gpu_nx : cpu_nx;
  b.newton_iters = b.gpu ? 64 : 0;
  b.accumulator_lines = "electron_group = 1\n";
  if (b.newton_iters) b.accumulator_lines += "newton_iters = " + std::to_string(b.newton_iters) + "\n";
  return b;
}

std::string small_far_cell(SmallCell cell) {
  cell.screen = "type = \"angular\"\nnx = 3\nny = 3\ntheta_x_min = -0.05\ntheta_x_max = 0.05\n"
                "theta_y_min = -0.05\ntheta_y_max = 0.05\nsamples = 256\n";
  std::string t = small_cell(cell);
  return t.replace(t.find("distance = 0.02\n"), 16, "distance = \"infinity\"\n");
}

std::string small_far_spectra(const std::string& method, int count) {
  return "[spectra]\nenabled = true\n" + (method.empty() ? std::string() : "method = \"" + method + "\"\n") +
         "omega_min = 20\nomega_max = 45\ncount = " + std::to_string(count) + "\n";
}

}  // namespace edm::test
