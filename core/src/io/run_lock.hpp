// One writer per run folder (share/docs/outputs.md, "One run per folder"): an exclusive flock on
// RUN/.edm.lock, which records the holder's pid, host, start time and command, held by `edm run`,
// `edm resume` and `edm sweep` from the folder's first check to the last rename, and by `edm
// spectrum` and `edm plot` while they write spectrum.h5. A second run into the folder is
// refused at once naming the holder. A lock left by a dead process is no lock: the kernel releases
// a flock when its holder exits, however it exits (SIGKILL included), so the next run takes it
// over and reports the stale record. And the rule that goes with it: edm never deletes or
// overwrites a file it did not create in this run, so leftovers under edm's temporary names are
// moved aside with a timestamp (move_aside), never removed.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace edm {

class RunFolderLock {
 public:
  RunFolderLock() = default;
  // Creates the folder when it is missing (remembered: release removes it again if it is left
  // empty), then takes the lock without waiting. ConfigError EDM-RUN-040 naming the holder when
  // another process holds it; IoError EDM-RUN-041 naming the path when it cannot be made.
  static RunFolderLock acquire(const std::filesystem::path& folder);
  RunFolderLock(RunFolderLock&& other) noexcept;
  RunFolderLock& operator=(RunFolderLock&& other) noexcept;
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;
  ~RunFolderLock();  // release()

  // Removes the lock file (while still holding it, so no waiter takes a lock on a removed file),
  // closes it, and removes the folder if this lock created it and nothing else is in it.
  void release() noexcept;
  bool held() const { return fd_ >= 0; }
  // The record of a previous holder that exited without releasing (empty: none). For a warning.
  const std::string& stale_record() const { return stale_; }

  // The command a lock record names ("edm spectrum"; "another edm process" for a record of an edm
  // that did not record it).
  static std::string command_in(const std::string& record);

  static std::filesystem::path path_in(const std::filesystem::path& folder) { return folder / ".edm.lock"; }

 private:
  int fd_ = -1;
  std::filesystem::path folder_;
  bool created_folder_ = false;
  std::string stale_;
};

// The command of this process, as the lock records it ("pid … on host … since … by edm spectrum")
// and as a refusal names it; declared for the app in edm/run.hpp (set_command_name).
void set_command_name(std::string name);

// If `file` exists, renames it to "<file>.<UTC yyyymmddThhmmssZ>" (with a counter if that name is
// taken too) and returns the new name; nothing when there was no file. IoError EDM-RUN-044 when the
// rename fails: the file is then left where it was, and the caller must not write over it.
std::optional<std::filesystem::path> move_aside(const std::filesystem::path& file);

}  // namespace edm
