// Shared by the file-reading fuzz targets: the fuzz input written to a temporary file (the readers
// take a path), one per process so that parallel fuzzers and ctest jobs do not collide. The file is
// removed when the process exits normally. A name given (run.toml) puts the file under that name in
// a folder of its own, for readers that take a run folder.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace edm::fuzz {

class InputFile {
 public:
  explicit InputFile(const char* suffix, const char* name = nullptr) {
    // TMPDIR if set, else /dev/shm (memory: one write per input, thousands of inputs), else /tmp.
    const char* dir = std::getenv("TMPDIR");
    std::string base = dir && *dir ? dir : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    path_ = base + "/edm-fuzz-" + std::to_string(getpid()) + suffix;
    if (name) {
      folder_ = path_;
      if (mkdir(folder_.c_str(), 0700) != 0 && errno != EEXIST) {
        std::perror(folder_.c_str());
        std::abort();
      }
      path_ = folder_ + "/" + name;
    }
  }
  ~InputFile() {
    std::remove(path_.c_str());
    if (!folder_.empty()) rmdir(folder_.c_str());
  }
  const std::string& folder() const { return folder_; }
  const std::string& path() const { return path_; }
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
  std::string path_, folder_;
};

}  // namespace edm::fuzz
