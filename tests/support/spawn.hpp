// Child processes and small files for the end-to-end tests: `edm` started without waiting for it,
// its exit status, a signal sent once the child has reached a state (a file appears, a lock names
// it), the campaign texts those tests write and the files they read back. The small inverse-Thomson
// cell most of them run is small_cell() below, so that its physics is written once.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace edm::test {

// `edm` (the built binary) with these arguments, the output captured (run_command).
CommandResult run_edm(const std::string& args);
// The built `edm` binary as a string, for command lines.
std::string edm_bin();

// Starts the built `edm` with these arguments, without a shell and with this process's
// environment; the test fails at once if it cannot be started.
pid_t spawn_edm(const std::vector<std::string>& args);
// Starts `/bin/sh -c line` (for command lines with redirections or mpirun).
pid_t spawn_shell(const std::string& line);
// Waits for the child; its raw waitpid status, or its exit code (128 + the signal that ended it).
int wait_status(pid_t pid);
int wait_exit(pid_t pid);
int exit_code(int status);

// Polls `ready` every `poll` until it holds, the child exits or `timeout` passes. An exited child
// is reaped and its exit code (as exit_code) goes to *code when given.
enum class Waited { Ready, Exited, TimedOut };
Waited wait_until(pid_t pid, const std::function<bool()>& ready,
                  std::chrono::milliseconds poll = std::chrono::milliseconds(2),
                  std::chrono::seconds timeout = std::chrono::seconds(120), int* code = nullptr);
// Sends `sig` once `ready` holds (polled as wait_until does, or after the timeout), waits for the
// child and returns its exit code, and the seconds from the signal to the exit in *seconds_after;
// -1 when the child exited before the signal could be sent.
int signal_when(pid_t pid, int sig, const std::function<bool()>& ready, double* seconds_after = nullptr,
                std::chrono::milliseconds poll = std::chrono::milliseconds(2));

// Writes `text` to dir/name and returns that path.
std::filesystem::path write_file(const std::filesystem::path& dir, const std::string& name,
                                 const std::string& text);
// The whole file (bytes as they are; "" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

// The small inverse-Thomson cell of the e2e tests: a gaussian pulse (a0 = 0.3, 10.7 fs, 10 µm
// waist) on a sunflower of electrons (radius 3 µm, γ = 3), a screen 2 cm downstream at T/128
// sampling. The members are what the tests vary: `screen` and `trajectory_lines` are whole TOML
// lines of their section; an empty electron_batch or devices leaves that key out (and [accumulator]
// when all three are), an empty trajectory_lines the [trajectory] section.
struct SmallCell {
  std::string mode = "total";
  int electrons = 16;
  std::string screen = "half_width = 5e-5\nnx = 10\nny = 8\nsamples = 384\n";  // besides distance and T/128
  std::string electron_batch = "1";                                            // [accumulator]
  std::string devices = "0";                                                   // [accumulator]
  std::string trajectory_lines;                                                // [trajectory]
  std::string accumulator_lines;                                               // more [accumulator] lines
};
std::string small_cell(const SmallCell& cell = {});
// Launches that keep device 0 (the small cell's) busy for the tests that stop or watch a run while
// its kernels go on (one launch per electron): on a CPU (PoCL) `cpu_nx` pixels a side with the
// default Newton steps; a GPU does such a launch in microseconds, so there `gpu_nx` pixels a side
// and 64 Newton steps per sample (the same code path, about 15 times the work per slot of the
// default 2), which keeps field.h5 small. accumulator_lines: electron_group = 1 and the steps.
struct BusyLaunch {
  bool gpu = false;
  int nx = 0, newton_iters = 0;  // newton_iters 0: the default
  std::string accumulator_lines;
};
BusyLaunch busy_launch(int cpu_nx, int gpu_nx);
// small_cell() on an angular screen at infinity: 3 × 3 directions within ±0.05 rad, 256 samples
// (cell.screen is replaced).
std::string small_far_cell(SmallCell cell);
// The [spectra] section of the far cell's tests: 6 frequencies (or `count`) over 20–45 ω_L around
// the backscatter line (γ = 3: about 36 ω_L, below the Nyquist frequency 64 ω_L of T/128
// sampling); `method` empty leaves the key out.
std::string small_far_spectra(const std::string& method = "", int count = 6);

}  // namespace edm::test
