// The progress `edm run` and `edm resume` print: live on a terminal (one line, rewritten), one line
// per report in logs, nothing with --quiet. Progress counts finished device work (RunProgress).
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "edm/run.hpp"

namespace edm::app {

class ConsoleObserver : public RunObserver {
 public:
  ConsoleObserver(bool quiet, bool verbose) : quiet_(quiet), verbose_(verbose), tty_(isatty(2)) {}
  void phase(const std::string& name, const std::string& detail) override {
    if (quiet_ || (!verbose_ && name == "trajectories" && tty_)) return;
    end_line();
    std::cerr << "[" << name << "] " << detail << "\n";
  }
  void progress(const RunProgress& p) override {
    if (quiet_) return;
    std::cerr << (tty_ ? "\r" : "[batch] ") << format(p) << (tty_ ? "\x1b[K" : "\n") << std::flush;
    open_ = tty_;
  }
  void warning(const std::string& m) override {
    end_line();
    std::cerr << "warning: " << m << "\n";
  }
  void end_line() {
    if (open_) std::cerr << "\n";
    open_ = false;
  }
  // "electrons 12/40 (4 resumed)  3.1 e/s  elapsed 5.0 s  ETA 9.0 s": finished on the device; the rate
  // is this process's; the ETA "--" until it has finished any.
  static std::string format(const RunProgress& p) {
    const double own = double(p.done - p.resumed);
    char eta[32] = "--";
    if (std::isfinite(p.eta)) std::snprintf(eta, sizeof eta, "%.1f s", p.eta);
    char resumed[48] = "";
    if (p.resumed) std::snprintf(resumed, sizeof resumed, " (%llu resumed)", (unsigned long long)p.resumed);
    char buf[240];
    std::snprintf(buf, sizeof buf, "electrons %llu/%llu%s  %.1f e/s  elapsed %.1f s  ETA %s",
                  (unsigned long long)p.done, (unsigned long long)p.total, resumed,
                  p.elapsed > 0 ? own / p.elapsed : 0.0, p.elapsed, eta);
    std::string line = buf;
    // [spectra]: electrons whose field is done and whose direct spectra still compute.
    if (p.spectra_behind) line += "  (spectra " + std::to_string(p.spectra_behind) + " behind)";
    return line;
  }

 private:
  bool quiet_, verbose_, tty_, open_ = false;
};

}  // namespace edm::app
