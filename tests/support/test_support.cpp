// Shared test helpers (see test_support.hpp).
#include "test_support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sys/wait.h>

namespace edm::test {

static std::filesystem::path env_path(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? std::filesystem::path(v) : std::filesystem::path(fallback);
}

std::filesystem::path source_dir() { return env_path("EDM_SOURCE_DIR", "."); }
std::filesystem::path build_dir() { return env_path("EDM_BUILD_DIR", "."); }
// EDM_TEST_BINARY: the edm to test where the build tree's path does not exist (a bundle on another
// machine: share/docs/developing.md, the GPU machine).
std::filesystem::path edm_binary() { return env_path("EDM_TEST_BINARY", EDM_BINARY); }

namespace {
struct TempDirs {
  std::vector<std::filesystem::path> dirs;
  ~TempDirs() {
    const char* keep = std::getenv("EDM_KEEP_TMP");
    if (keep && std::string(keep) == "1") return;
    std::error_code ec;
    for (auto& d : dirs) std::filesystem::remove_all(d, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}
}  // namespace

std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto p = base / ("edm-test-" + tag + "-" + std::to_string(rd()));
    if (std::filesystem::create_directories(p)) {
      temp_dirs().dirs.push_back(p);
      return p;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

CommandResult run_command(const std::string& command_line) {
  CommandResult r;
  std::string cmd = command_line + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.output.append(buf.data(), n);
  int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  long double num = 0, den = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    long double d = (long double)a[i] - b[i];
    num += d * d;
    den += (long double)b[i] * b[i];
  }
  if (a.size() != b.size()) return INFINITY;
  return den > 0 ? double(std::sqrt(num / den)) : double(std::sqrt(num));
}

bool have_plotting_python() {
  static const bool have = run_command("python3 -c 'import numpy, h5py, matplotlib'").exit_code == 0 ||
                           run_command("/usr/bin/python3 -c 'import numpy, h5py, matplotlib'").exit_code == 0;
  return have;
}

}  // namespace edm::test
