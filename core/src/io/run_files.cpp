// The run folder's names, refusals and listing (edm/run_files.hpp).
#include "edm/run_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>

#include "edm/error.hpp"

namespace edm {

namespace fs = std::filesystem;

fs::path RunFolder::field() const { return root_ / "field.h5"; }
fs::path RunFolder::manifest() const { return root_ / "run.toml"; }
fs::path RunFolder::spectrum() const { return root_ / "spectrum.h5"; }
fs::path RunFolder::checkpoint() const { return root_ / "checkpoint.h5"; }
fs::path RunFolder::plots() const { return root_ / "plots"; }
fs::path RunFolder::rank_token() const { return root_ / ".edm.ranks"; }

fs::path RunFolder::staging(const fs::path& file) {
  fs::path p = file;
  p += ".partial";
  return p;
}

void RunFolder::refuse_special(const fs::path& file) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return;
  const char* kind = fs::is_directory(st) ? "a folder" : fs::is_fifo(st) ? "a FIFO" : fs::is_socket(st) ? "a socket"
                                                                                                         : "a device";
  throw IoError("EDM-IO-142", file.string() + ": is not a regular file (" + kind +
                                  "); edm reads only the regular file it wrote under this name, and would wait for "
                                  "ever on a FIFO");
}

void RunFolder::refuse_special_files() const {
  for (const auto& p : {manifest(), field(), spectrum()}) refuse_special(p);
}

void RunFolder::refuse_non_regular_targets() const {
  // The run's own files are written under staging names and renamed over these: a folder, link or
  // FIFO there is refused before any work. Under --overwrite a folder named field.h5 let the whole
  // run compute and then lose the finished field at the rename (found by a tester). checkpoint.h5 is
  // renamed over the same way at every checkpoint: a folder there failed the first one mid-run.
  for (const auto& p : {field(), manifest(), checkpoint()}) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || S_ISREG(st.st_mode)) continue;
    const char* kind = S_ISDIR(st.st_mode) ? "a folder" : S_ISLNK(st.st_mode) ? "a symbolic link"
                       : S_ISFIFO(st.st_mode)  ? "a FIFO" : "not a regular file";
    throw IoError("EDM-RUN-071", p.string() + " is " + kind + ": edm writes its run's files only as regular "
                                              "files of its own; move it away (nothing was computed)");
  }
}

int RunFolder::write_new_file(const fs::path& file, const std::string& text) {
  // 0666 less the umask: the mode a plain open gave run.toml and the sweep table before.
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  int err = 0;
  struct stat st {};
  // O_EXCL already refuses whatever is there; the fstat says so of the file actually opened.
  if (::fstat(fd, &st) != 0) err = errno;
  else if (!S_ISREG(st.st_mode)) err = EINVAL;
  for (std::size_t done = 0; !err && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = n < 0 ? errno : EIO;
    else done += std::size_t(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) ::unlink(file.c_str());  // this call created it: no half-written file stays
  return err;
}

namespace {
bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}
}  // namespace

bool RunFolder::has_manifest() const { return present(manifest()); }
bool RunFolder::has_field() const { return present(field()); }
bool RunFolder::has_spectrum() const { return present(spectrum()); }
bool RunFolder::has_checkpoint() const { return present(checkpoint()); }

std::vector<RunFolder::Entry> RunFolder::listing() const {
  std::vector<Entry> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::error_code size_ec;
    // lexically: fs::relative resolves the path on disk, which fails too once the file is gone.
    Entry f{e.path().lexically_relative(root_).string(), 0, false};
    const bool regular = e.is_regular_file(size_ec);
    if (!size_ec && !regular) continue;
    if (!size_ec) f.bytes = e.file_size(size_ec);
    if (size_ec && size_ec != std::errc::no_such_file_or_directory)
      throw IoError("EDM-IO-151", e.path().string() + ": cannot read its size: " + size_ec.message());
    f.vanished = bool(size_ec);
    files.push_back(std::move(f));
  }
  if (ec)
    throw IoError("EDM-IO-150", root_.string() + ": listing the run folder failed part way (" + ec.message() +
                                    "): another process changed it while it was read; run edm info again");
  std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return files;
}

}  // namespace edm
