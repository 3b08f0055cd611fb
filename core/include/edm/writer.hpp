// field.h5: the HDF5 output of a run (share/docs/outputs.md). One float64 dataset per component
// shaped (Ny, Nx, N_samples), C order, time fastest: /E/x … /B/z (+ /E_far/*, /B_far/* in split
// mode), axes /axes/x, /axes/y, /axes/t in SI, the γ(τ) trace in /gamma. The file is valid openPMD
// 1.1.0: the field groups are openPMD mesh records under /data/0/meshes/, and /E, /B, … are hard
// links to them. Written slab by slab under a temporary name in the run folder and renamed when
// complete, so a crash, a full disk or an error never leaves a field.h5 that looks finished. The root
// attribute edm_format (kRunFormat) is what FieldFile (field_file.hpp) checks before reading.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "edm/field_file.hpp"  // the reader of what this writes
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"
#include "edm/units.hpp"

namespace edm {

struct FieldFileInfo {
  std::string run_id, edm_version, scenario;
  std::uint64_t electrons = 0;
  Mode mode = Mode::Total;
  // openPMD's author, date ("YYYY-MM-DD HH:mm:ss tz") and machine; empty: EDM_AUTHOR or
  // login@host, the time the file is created (UTC), the host name.
  std::string author, date, machine;
};

class FieldWriter {
 public:
  // Creates `<final_path>.partial` (removing a stale one). Throws IoError naming the path.
  FieldWriter(std::filesystem::path final_path, const Screen& screen, const Normalization& units,
              const FieldFileInfo& info);
  ~FieldWriter();  // an unfinished writer removes its partial file
  FieldWriter(const FieldWriter&) = delete;
  FieldWriter& operator=(const FieldWriter&) = delete;

  // One slab from the accumulator (normalised units; scaled to SI here). Rows [iy0, iy1).
  void write_slab(int bucket, int comp, int iy0, int iy1, const double* data);
  void write_gamma_trace(const GammaTrace& trace, const Normalization& units);
  // Extra root attributes (window margins, …) as doubles.
  void set_attribute(const std::string& name, double value);
  // Flushes, closes and renames to the final name. Throws IoError (disk full, …).
  void commit();
  std::uint64_t bytes_written() const { return bytes_; }

  // Rows written by several processes in turn (pixel sharding over MPI ranks, share/docs/design.md
  // "MPI ranks"): serial HDF5 lets one process at a time hold the file open for writing, so no rank
  // holds a full cube and no library beyond serial HDF5 is needed. The owner (the constructor above)
  // writes its rows and hands the file over with close_for_others() (flushed and closed, still under
  // the staging name); each other process opens it with the joining constructor below, writes its rows
  // and release()s it; the owner then reopen()s it for the γ trace, the attributes and commit().
  void close_for_others();
  void reopen();
  // Opens `<final_path>.partial`, created by the owner, for writing rows [iy0, iy1) of `screen` in
  // the layout of `mode`. A joined writer never creates, removes or renames the file. Throws IoError
  // naming the file when it is missing or is not the field file of this screen and mode.
  struct Join {};
  FieldWriter(Join, std::filesystem::path final_path, const Screen& screen, const Normalization& units, Mode mode);
  // A joined writer's end: flushes and closes (IoError when the data cannot be made durable).
  void release();

  // A screen run in passes and stopped in a later pass (share/docs/design.md, "Screens larger than
  // the devices"): field.h5.partial holds the rows of the passes before the checkpoint's pass.
  // keep_partial(): this writer, if it ends uncommitted, leaves the file (closed) for edm resume.
  // The resuming constructor takes the file over as its owner (it writes the remaining passes and
  // commits); IoError naming the file when it is missing (EDM-CKP-088) or was written by a run other
  // than `run_id` (EDM-CKP-089), EDM-IO-* when it is not the field file of this screen and mode.
  void keep_partial();
  struct Resume {};
  FieldWriter(Resume, std::filesystem::path final_path, const Screen& screen, const Normalization& units, Mode mode,
              const std::string& run_id);

  struct Impl;  // opaque (writer.cpp)

 private:
  std::unique_ptr<Impl> impl_;
  std::uint64_t bytes_ = 0;
};

}  // namespace edm
