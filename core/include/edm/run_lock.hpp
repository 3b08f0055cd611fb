// One writer per run folder (share/docs/outputs.md, "One run per folder"): an exclusive flock on
// RUN/.edm.lock, which records the holder's pid, host, start time and command, held by `edm run`,
// `edm resume` and `edm sweep` from the folder's first check to the last rename, by `edm spectrum`
// while it writes spectrum.h5, and by `edm plot` from its first look at the folder until its
// plots are in place. A second writer of the folder is refused at once naming the holder. A lock
// left by a dead process is no lock: the kernel releases a flock when its holder exits, however it
// exits (SIGKILL included), so the next writer takes it over and reports the stale record.
// Public (apps/ take it for edm plot), at the io level (share/docs/developing.md, "Levels").
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace edm {

class RunFolderLock {
 public:
  RunFolderLock() = default;
  // Creates the folder when it is missing (remembered: release removes it again if it is left
  // empty), then takes the lock without waiting. ConfigError EDM-RUN-040 naming the holder when
  // another process holds it; IoError EDM-RUN-041 naming the path when it cannot be made.
  // The thread that holds the folder's lock already gets a nested lock, which holds nothing of its
  // own (held() is true; release does nothing): edm plot holds the folder while the spectrum it
  // computes is written under the spectrum writer's own acquire, which would otherwise refuse its
  // own process. Another thread of the same process is refused (EDM-RUN-040) as another process is.
  static RunFolderLock acquire(const std::filesystem::path& folder);
  RunFolderLock(RunFolderLock&& other) noexcept;
  RunFolderLock& operator=(RunFolderLock&& other) noexcept;
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;
  ~RunFolderLock();  // release()

  // Removes the lock file (while still holding it, so no waiter takes a lock on a removed file),
  // closes it, and removes the folder if this lock created it and nothing else is in it.
  void release() noexcept;
  bool held() const { return fd_ >= 0 || nested_; }
  // The record of a previous holder that exited without releasing (empty: none). For a warning.
  const std::string& stale_record() const { return stale_; }

  // Lets the processes this one starts from now on share the lock (the flock belongs to the open
  // file, which they inherit): a child that outlives this process (edm plot killed while its
  // script writes plots/) still holds the folder until it exits. Nothing for a nested lock (the
  // outer one decides).
  void share_with_children();

  // The command a lock record names ("edm spectrum"; "another edm process" for a record of an edm
  // that did not record it).
  static std::string command_in(const std::string& record);

  static std::filesystem::path path_in(const std::filesystem::path& folder) { return folder / ".edm.lock"; }

 private:
  int fd_ = -1;
  bool nested_ = false;
  dev_t dev_ = 0;  // the folder's identity while this lock holds it (the process-wide record)
  ino_t ino_ = 0;
  std::filesystem::path folder_;
  bool created_folder_ = false;
  std::string stale_;
};

}  // namespace edm
