// Shared by the file-reading fuzz targets: the fuzz input written to a temporary file (the readers
// take a path), one per process so that parallel fuzzers and ctest jobs do not collide. The file is
// removed when the process exits normally.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace edm::fuzz {

class InputFile {
 public:
  explicit InputFile(const char* suffix) {
    // TMPDIR if set, else /dev/shm (memory: one write per input, thousands of inputs), else /tmp.
    const char* dir = std::getenv("TMPDIR");
    std::string base = dir && *dir ? dir : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    path_ = base + "/edm-fuzz-" + std::to_string(getpid()) + suffix;
  }
  ~InputFile() { std::remove(path_.c_str()); }
  // Replaces the file's contents with the input; aborts if the file cannot be written, since a
  // harness that silently reads a stale file would fuzz nothing.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(path_.c_str());
      std::abort();
    }
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace edm::fuzz
