// While a StdoutToStderr lives, file descriptor 1 is the process's stderr: what a plugin prints on
// stdout while it is loaded or creates its scenario goes to stderr, never into edm's own output on
// stdout (a table, a job script, `--dry-run` settings or `--json` that a script parses; issue 30).
#pragma once
#include <unistd.h>

#include <cstdio>

namespace edm::detail {

class StdoutToStderr {
 public:
  StdoutToStderr() {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    if (saved_ >= 0) dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutToStderr() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
    }
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace edm::detail
