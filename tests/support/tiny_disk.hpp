// A tmpfs of `bytes` mounted on `dir` for the life of the object (lazily detached at the end:
// nothing holds files open afterwards), for the tests of a full disk. mount(2) needs root or
// CAP_SYS_ADMIN; `mounted` says whether it worked, and a test without it reports itself as
// skipped, never silently passes.
#pragma once
#include <sys/mount.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

namespace edm::test {

struct TinyDisk {
  std::filesystem::path dir;
  bool mounted = false;
  std::string why;
  TinyDisk(std::filesystem::path d, std::uint64_t bytes) : dir(std::move(d)) {
    std::filesystem::create_directories(dir);
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + std::to_string(bytes)).c_str()) == 0;
    if (!mounted) why = std::strerror(errno);
  }
  ~TinyDisk() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
  }
  TinyDisk(const TinyDisk&) = delete;
  TinyDisk& operator=(const TinyDisk&) = delete;
};

}  // namespace edm::test
