// A run folder and the names of its files (share/docs/outputs.md, share/docs/developing.md "The io
// owners"): the one place where field.h5, run.toml, spectrum.h5, checkpoint.h5 and plots/ are
// spelled, with their staging names, the folder's lock, which products are there, the listing
// edm info shows, and the refusal of what is not a regular file at those names. The readers of the
// files themselves are their owners (RunManifest, FieldFile, SpectrumFile), which take a RunFolder.
// Public, at the io level (share/docs/developing.md, "Levels").
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/run_lock.hpp"

namespace edm {

// The format of the files edm writes into a run folder: run.toml [provenance] format, the root
// attribute edm_format of field.h5 and spectrum.h5. A reader refuses any other version (EDM-IO-160,
// naming both); it changes when a layout changes in a way an older reader would misread.
inline constexpr int kRunFormat = 1;

class RunFolder {
 public:
  explicit RunFolder(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path field() const;       // ROOT/field.h5
  std::filesystem::path manifest() const;    // ROOT/run.toml
  std::filesystem::path spectrum() const;    // ROOT/spectrum.h5
  std::filesystem::path checkpoint() const;  // ROOT/checkpoint.h5
  std::filesystem::path plots() const;       // ROOT/plots/
  // ROOT/.edm.ranks: the token rank 0 of an mpirun job writes and every rank must see before any
  // work (a folder on a file system the ranks do not share is refused, EDM-MPI-002); removed at once.
  std::filesystem::path rank_token() const;
  // The name a file is written under until it is complete and renamed into place: "<file>.partial".
  static std::filesystem::path staging(const std::filesystem::path& file);

  // The lock of the folder (edm/run_lock.hpp): one writer at a time.
  RunFolderLock lock() const { return RunFolderLock::acquire(root_); }

  // Before a file of the folder is read: IoError EDM-IO-142 naming it when it is a FIFO, socket,
  // device or folder (a FIFO would block the open for ever, a folder would read as "not TOML" or
  // "not HDF5"). A missing file is left to the caller's own error.
  static void refuse_special(const std::filesystem::path& file);
  // refuse_special at run.toml, field.h5 and spectrum.h5 (for the commands that hand the folder on).
  void refuse_special_files() const;
  // Before a run writes its field.h5, run.toml and checkpoint.h5 (renamed over these names): IoError
  // EDM-RUN-071 naming the one that is a folder, a symbolic link, a FIFO or anything but a regular
  // file, so that no work is done whose result the rename would then lose.
  void refuse_non_regular_targets() const;

  // `text` as a new regular file `file` (a staging name, renamed into place by the caller): created
  // with O_EXCL | O_NOFOLLOW, so a symbolic link, FIFO or any file already under the name is never
  // opened, let alone written through; checked with fstat after the open; written whole and synced.
  // Returns 0, or the errno of the step that failed (EEXIST: something is under the name; the
  // caller moves it aside or names it); a file it created and could not finish is removed.
  static int write_new_file(const std::filesystem::path& file, const std::string& text);

  // Which products are there (regular files or links to them under their final names; a staging
  // name is not a product).
  bool has_manifest() const;
  bool has_field() const;
  bool has_spectrum() const;
  bool has_checkpoint() const;
  // A complete run: field.h5 and run.toml, the pair the run driver commits last.
  bool complete() const { return has_field() && has_manifest(); }

  // The folder's regular files, recursively (plots/ included), sorted by name. One removed by
  // another process between the listing and its size is listed as vanished, not an error (edm plot
  // replacing plots/ while edm info reads the folder). IoError EDM-IO-150 naming the folder when the
  // listing fails part way, EDM-IO-151 naming a file whose size cannot be read.
  struct Entry {
    std::string name;  // relative to the folder
    std::uintmax_t bytes = 0;
    bool vanished = false;
  };
  std::vector<Entry> listing() const;

 private:
  std::filesystem::path root_;
};

}  // namespace edm
