// The run-folder lock and move_aside (io/run_lock.hpp).
#include "io/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <string>
#include <utility>

#include "edm/error.hpp"

namespace edm {
namespace {

std::string this_host() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string utc_stamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// The command of this process (set_command_name), as the lock records it and its refusals name it.
std::string& command_name() {
  static std::string name = "a program using libedm";
  return name;
}

// " by edm spectrum" closes the record of an edm that records its command; older records end at
// the start time.
constexpr const char* kBy = " by ";

std::string holder_command(const std::string& record) {
  const auto by = record.rfind(kBy);
  return by == std::string::npos ? std::string("another edm process") : record.substr(by + std::strlen(kBy));
}

std::string read_record(int fd) {
  std::string text;
  char buf[512];
  ssize_t n;
  if (lseek(fd, 0, SEEK_SET) < 0) return text;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, std::size_t(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

[[noreturn]] void lock_fail(const std::string& what, const std::filesystem::path& path, int err) {
  throw IoError("EDM-RUN-041", what + " " + path.string() + ": " + std::strerror(err));
}

// The kind of a non-file under the lock's name, for the refusal.
[[noreturn]] void refuse_not_a_file(const std::filesystem::path& path, mode_t mode) {
  const char* kind = S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a folder" : S_ISSOCK(mode) ? "a socket"
                     : (S_ISCHR(mode) || S_ISBLK(mode)) ? "a device" : "not a regular file";
  throw IoError("EDM-RUN-041", "cannot lock the run folder: " + path.string() + " is " + kind +
                                   ", where edm keeps the folder's lock file (it is left as it is; move it "
                                   "away, then run the command again)");
}

// The holder as the message names it, "edm spectrum (pid … on host … since …)"; the pid is checked
// when the holder is on this host, because a flock is also held by a child that inherited the
// descriptor after its parent died.
std::string describe_holder(const std::string& record) {
  if (record.empty()) return "another process (its record is not written yet)";
  long pid = 0;
  char host[256] = {};
  const auto by = record.rfind(kBy);
  std::string text = holder_command(record) + " (" + record.substr(0, by) + ")";
  if (std::sscanf(record.c_str(), "pid %ld on host %255s", &pid, host) == 2 && host == this_host() && pid > 0 &&
      ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
    text += " (that process is gone, but a process it started still holds the lock)";
  return text;
}

// The refusal names both commands: the lock is taken by edm run, resume and sweep (field.h5) and
// by edm spectrum and plot (spectrum.h5), and the message used to say "choose another [run] output"
// to an analysis, which has none (share/docs/errors.md, "Busy run folders").
[[noreturn]] void refuse_busy(const std::filesystem::path& folder, const std::filesystem::path& path,
                              const std::string& record) {
  const std::string me = command_name();
  throw ConfigError("EDM-RUN-040", "run folder " + folder.string() + " is in use by " + describe_holder(record) +
                                       ", which holds its lock " + path.string() + ": " + me +
                                       " was refused, so that two processes never write the folder at once; "
                                       "wait for " + holder_command(record) + " to finish, then run " + me +
                                       " again");
}

// The folders whose lock this process holds, by identity (device, inode: the same folder under
// two spellings is one), with the thread that took it: a second acquire of one of them in that
// thread is nested (edm/run_lock.hpp).
std::mutex& held_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::pair<dev_t, ino_t>, std::thread::id>& held_folders() {
  static std::map<std::pair<dev_t, ino_t>, std::thread::id> held;
  return held;
}

}  // namespace

void set_command_name(std::string name) { command_name() = std::move(name); }

std::string RunFolderLock::command_in(const std::string& record) { return holder_command(record); }

RunFolderLock RunFolderLock::acquire(const std::filesystem::path& folder) {
  RunFolderLock lock;
  lock.folder_ = folder;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    std::filesystem::create_directories(folder, ec);
    if (ec) throw IoError("EDM-RUN-041", "cannot create the run folder " + folder.string() + ": " + ec.message());
    lock.created_folder_ = true;
  }
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0) lock_fail("cannot look up the run folder", folder, errno);
  {
    const std::lock_guard<std::mutex> guard(held_mutex());
    // Nested only within the thread that holds the folder (edm plot, then the spectrum writer it
    // calls): another thread of the process is refused like another process.
    const auto it = held_folders().find({dir.st_dev, dir.st_ino});
    if (it != held_folders().end() && it->second == std::this_thread::get_id()) {
      lock.nested_ = true;
      return lock;
    }
  }
  const auto path = path_in(folder);
  // A previous holder removes the file while it still holds it; a lock taken on that removed file
  // would lock nothing, so the inode is compared with the name's after locking, and taken again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    // O_NOFOLLOW: a symbolic link under the lock's name made edm truncate and write the file it
    // points to (found by tests/test_hostile: a user's file replaced by "pid … on host …").
    // Something other than a file under the lock's name (a FIFO, a device, a folder) is refused by
    // what it is: flock on a FIFO said only "Invalid argument" (hostile review). Looked at before the
    // open (opening a device may do something) and after it (O_NONBLOCK: a FIFO never blocks).
    struct stat before {};
    if (::lstat(path.c_str(), &before) == 0 && !S_ISREG(before.st_mode) && !S_ISLNK(before.st_mode))
      refuse_not_a_file(path, before.st_mode);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd >= 0) {
      struct stat opened {};
      if (::fstat(fd, &opened) == 0 && !S_ISREG(opened.st_mode)) {
        ::close(fd);
        refuse_not_a_file(path, opened.st_mode);
      }
    }
    if (fd < 0 && errno == ELOOP)
      throw IoError("EDM-RUN-041", "cannot create the lock file " + path.string() +
                                       ": it is a symbolic link, and edm never writes through one (the file it "
                                       "points to is left as it is; remove the link)");
    if (fd < 0) lock_fail("cannot create the lock file", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string record = read_record(fd);
      ::close(fd);
      if (err != EWOULDBLOCK) lock_fail("cannot lock", path, err);
      refuse_busy(folder, path, record);
    }
    struct stat by_fd {}, by_name {};
    if (::fstat(fd, &by_fd) != 0 || ::stat(path.c_str(), &by_name) != 0 || by_fd.st_ino != by_name.st_ino ||
        by_fd.st_dev != by_name.st_dev) {
      ::close(fd);
      continue;
    }
    lock.stale_ = read_record(fd);  // the lock was free: whatever is recorded is a dead holder's
    const std::string record =
        "pid " + std::to_string(::getpid()) + " on host " + this_host() + " since " + utc_stamp() + kBy +
        command_name() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, record.data(), record.size(), 0) != ssize_t(record.size())) {
      const int err = errno;
      ::unlink(path.c_str());
      ::close(fd);
      lock_fail("cannot write the lock file", path, err);
    }
    lock.fd_ = fd;
    lock.dev_ = dir.st_dev;
    lock.ino_ = dir.st_ino;
    const std::lock_guard<std::mutex> guard(held_mutex());
    held_folders()[{dir.st_dev, dir.st_ino}] = std::this_thread::get_id();
    return lock;
  }
  throw IoError("EDM-RUN-041", "cannot lock " + path.string() + ": it is removed and made again faster than it can be taken");
}

RunFolderLock::RunFolderLock(RunFolderLock&& o) noexcept
    : fd_(o.fd_), nested_(o.nested_), dev_(o.dev_), ino_(o.ino_), folder_(std::move(o.folder_)),
      created_folder_(o.created_folder_), stale_(std::move(o.stale_)) {
  o.fd_ = -1;
  o.nested_ = false;
}

RunFolderLock& RunFolderLock::operator=(RunFolderLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    nested_ = o.nested_;
    dev_ = o.dev_;
    ino_ = o.ino_;
    folder_ = std::move(o.folder_);
    created_folder_ = o.created_folder_;
    stale_ = std::move(o.stale_);
    o.fd_ = -1;
    o.nested_ = false;
  }
  return *this;
}

RunFolderLock::~RunFolderLock() { release(); }

void RunFolderLock::share_with_children() {
  if (fd_ < 0) return;
  const int flags = ::fcntl(fd_, F_GETFD);
  if (flags < 0 || ::fcntl(fd_, F_SETFD, flags & ~FD_CLOEXEC) < 0)
    lock_fail("cannot share with child processes the lock", path_in(folder_), errno);
}

void RunFolderLock::release() noexcept {
  nested_ = false;
  if (fd_ < 0) return;
  {
    const std::lock_guard<std::mutex> guard(held_mutex());
    held_folders().erase({dev_, ino_});
  }
  ::unlink(path_in(folder_).c_str());
  ::close(fd_);
  fd_ = -1;
  if (created_folder_) {
    std::error_code ec;
    std::filesystem::remove(folder_, ec);  // only when empty: a failed run leaves nothing behind
  }
}

std::optional<std::filesystem::path> move_aside(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return std::nullopt;
  const std::string base = file.string() + "." + utc_stamp();
  std::filesystem::path target = base;
  for (int n = 1; std::filesystem::exists(std::filesystem::symlink_status(target, ec)); ++n)
    target = base + "-" + std::to_string(n);
  std::filesystem::rename(file, target, ec);
  if (ec)
    throw IoError("EDM-RUN-044", "cannot move " + file.string() + " aside to " + target.string() + ": " +
                                     ec.message() + " (it is kept where it is; nothing was written over it)");
  return target;
}

}  // namespace edm
