// edm._core: the Python module's bridge to libedm (pybind11). The Python package edm (edm/__init__.py)
// is the interface users see; this file only hands it the engine: campaigns read through the same
// loader as `edm run` (edm/launch.hpp), run_campaign with progress to a Python callable, the device,
// plugin and key tables, and every edm::Error as the Python exception class of its family carrying
// the EDM id and the exit code the command line would return.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <sstream>

#include "analysis_options.hpp"
#include "twisted_options.hpp"
#include "edm/device.hpp"
#include "edm/field_file.hpp"
#include "edm/photon_yield.hpp"
#include "edm/run_files.hpp"
#include "edm/run_manifest.hpp"
#include "edm/spectrum_file.hpp"
#include "edm/error.hpp"
#include "edm/launch.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/schema.hpp"
#include "edm/sweep.hpp"

namespace py = pybind11;

namespace {

// The Python classes edm/__init__.py defines (Error, ConfigError, …, Interrupted), by family.
// Held for the life of the process and never destroyed: a py::dict destroyed by C++ static
// destruction would release its reference after the interpreter has finalised.
py::dict& g_error_classes = *new py::dict();

void raise_python(const edm::Error& e) {
  const char* family = "Error";
  if (dynamic_cast<const edm::Interrupted*>(&e)) family = "Interrupted";
  else if (dynamic_cast<const edm::CellsFailed*>(&e)) family = "CellsFailed";
  else if (dynamic_cast<const edm::ConfigError*>(&e)) family = "ConfigError";
  else if (dynamic_cast<const edm::DeviceError*>(&e)) family = "DeviceError";
  else if (dynamic_cast<const edm::IoError*>(&e)) family = "IoError";
  else if (dynamic_cast<const edm::PluginError*>(&e)) family = "PluginError";
  else if (dynamic_cast<const edm::PhysicsError*>(&e)) family = "PhysicsError";
  py::object cls = g_error_classes.contains(family) ? g_error_classes[family] : py::object(py::module_::import("builtins").attr("RuntimeError"));
  py::object exc = cls(std::string(e.what()), e.id(), e.exit_code());
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

std::vector<edm::Override> to_overrides(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<edm::Override> out;
  for (const auto& [k, v] : pairs) out.push_back({k, v, edm::Origin::CommandLine});
  return out;
}

// A loaded campaign (the campaign and its scenario's plugin), shared with the runs made of it.
struct PyCampaign {
  std::shared_ptr<edm::LoadedCampaign> loaded;
  std::string effective_toml() const {
    std::ostringstream os;
    os << loaded->campaign.to_toml();
    return os.str();
  }
  py::dict origins() const {
    py::dict d;
    for (const auto& [k, o] : loaded->campaign.origins) d[py::str(k)] = edm::origin_name(o);
    return d;
  }
  std::vector<std::string> skipped() const {
    std::vector<std::string> out;
    for (const auto& f : loaded->skipped) out.push_back(f.path.string() + ": " + f.reason);
    return out;
  }
};

// Progress, phases and warnings go to Python callables, called with the GIL held from the run's
// thread. A progress callable gets a dict per report and per phase of the run ("phase": the stage
// the run is in, e.g. "download" while field.h5.partial is written); one that raises
// KeyboardInterrupt stops the run as Ctrl-C does (the stop flag, at once: the run's thread raised it,
// so no signal has to reach the waiting thread first), which makes "stopped during the write" a
// point a script (and the tests) can reach for certain.
struct PyObserver : edm::RunObserver {
  py::object on_progress, on_warning;
  std::atomic<bool>* stop = nullptr;
  py::dict last;  // the last progress report, repeated with each phase
  std::string current_phase, cell;
  PyObserver() {
    last["done"] = 0;
    last["total"] = 0;
    last["resumed"] = 0;
    last["elapsed"] = 0.0;
    last["eta"] = std::nan("");
    last["spectra_behind"] = 0;
  }
  void report() {
    if (on_progress.is_none()) return;
    py::dict d;
    for (auto item : last) d[item.first] = item.second;
    d["phase"] = current_phase;
    if (!cell.empty()) d["cell"] = cell;
    try {
      on_progress(d);
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt) && stop) {
        *stop = true;
        return;
      }
      e.discard_as_unraisable("edm progress callback");  // a broken callback never breaks the run
    }
  }
  void phase(const std::string& name, const std::string& detail) override {
    if (on_progress.is_none()) return;
    py::gil_scoped_acquire gil;
    if (name == "cell") {  // a sweep's next cell: its own count of electrons starts
      cell = detail.substr(0, detail.find(' '));
      last["done"] = 0;
      last["total"] = 0;
    }
    current_phase = name;
    report();
  }
  void progress(const edm::RunProgress& p) override {
    if (on_progress.is_none()) return;
    py::gil_scoped_acquire gil;
    last["done"] = p.done;
    last["total"] = p.total;
    last["resumed"] = p.resumed;
    last["elapsed"] = p.elapsed;
    last["eta"] = p.eta;
    last["spectra_behind"] = p.spectra_behind;
    if (current_phase.empty() || current_phase == "cell") current_phase = "batches";
    report();
  }
  void warning(const std::string& message) override {
    if (on_warning.is_none()) return;
    py::gil_scoped_acquire gil;
    try {
      on_warning(message);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("edm warning callback");
    }
  }
};

py::dict summary_dict(const edm::RunSummary& s) {
  py::dict d;
  d["folder"] = s.folder;
  d["field_file"] = s.field_file;
  d["manifest_file"] = s.manifest_file;
  d["run_id"] = s.run_id;
  d["electrons"] = s.electrons;
  d["batches"] = s.batches;
  d["resumed_from"] = s.resumed_from;
  d["seconds"] = s.timing.total;
  d["warnings"] = s.warnings;
  d["devices"] = s.devices;
  return d;
}

// `work` on a thread of its own while this (the Python) thread waits without the GIL and looks for
// signals every 0.1 s: Ctrl-C (KeyboardInterrupt) sets the stop flag, exactly as SIGINT does for
// `edm run` and `edm sweep`, so the run writes its checkpoint and ends with Interrupted
// (edm.Interrupted, a KeyboardInterrupt), and `edm.resume` (or the same edm.sweep) continues it.
template <class Work>
auto with_interrupts(std::atomic<bool>& stop, Work work) {
  auto job = std::async(std::launch::async, std::move(work));
  for (;;) {
    std::future_status st;
    {
      py::gil_scoped_release nogil;
      st = job.wait_for(std::chrono::milliseconds(100));
    }
    if (st == std::future_status::ready) break;
    if (PyErr_CheckSignals() != 0) {  // the handler raised (KeyboardInterrupt): ask the run to stop
      PyErr_Clear();
      stop = true;
    }
  }
  return job.get();  // rethrows the work's edm::Error (Interrupted after a stop)
}

edm::RunSummary run_with_interrupts(const edm::LoadedCampaign& l, edm::RunOptions ro, PyObserver& obs) {
  std::atomic<bool> stop{false};
  ro.stop = &stop;
  obs.stop = &stop;
  return with_interrupts(stop, [&] { return edm::run_campaign(l.campaign, l.plugins, ro, obs); });
}

py::dict run(const PyCampaign& c, bool overwrite, bool dry_run, std::int64_t checkpoint_every, py::object progress,
             py::object warning) {
  edm::set_command_name("edm.run (Python)");
  edm::RunOptions ro;
  ro.overwrite = overwrite;
  ro.dry_run = dry_run;
  ro.checkpoint_every = checkpoint_every;
  PyObserver obs;
  obs.on_progress = std::move(progress);
  obs.on_warning = std::move(warning);
  return summary_dict(run_with_interrupts(*c.loaded, ro, obs));
}

py::dict resume(const std::filesystem::path& folder, py::object progress, py::object warning) {
  edm::set_command_name("edm.resume (Python)");
  auto l = std::make_shared<edm::LoadedCampaign>(edm::load_campaign_to_resume(folder));
  edm::RunOptions ro;
  ro.resume = true;
  ro.checkpoint_every = l->checkpoint_every;  // the cadence the run was started with, as edm resume
  PyObserver obs;
  obs.on_progress = std::move(progress);
  obs.on_warning = std::move(warning);
  return summary_dict(run_with_interrupts(*l, ro, obs));
}

// A campaign file's sweep read and checked (edm/sweep.hpp load_sweep: what `edm sweep` reads), with
// the overrides of every cell.
struct PySweep {
  std::shared_ptr<edm::PluginRegistry> plugins;
  std::shared_ptr<edm::LoadedSweep> sweep;
  std::vector<edm::Override> base;
};

PySweep load_sweep(const std::filesystem::path& file, const std::vector<std::pair<std::string, std::string>>& o,
                   bool allow_large) {
  PySweep s;
  s.plugins = std::make_shared<edm::PluginRegistry>(edm::PluginRegistry::discover());
  s.base = to_overrides(o);
  s.sweep = std::make_shared<edm::LoadedSweep>(edm::load_sweep(file, s.base, *s.plugins, allow_large));
  return s;
}

// The cells in turn, as `edm sweep` without --parallel-devices or --slurm runs them: the same
// campaign folder checks, the same executor (run_cells_in_turn) and the same end (Interrupted
// EDM-SWP-026 after Ctrl-C, CellsFailed EDM-SWP-020 when cells failed). on_cell(label, outcome,
// error) is told of each cell tried.
void run_sweep(const PySweep& s, bool retry_failed, std::int64_t checkpoint_every, std::int64_t only,
               py::object progress, py::object warning, py::object on_cell) {
  edm::set_command_name("edm.sweep (Python)");
  const edm::LoadedSweep& w = *s.sweep;
  if (only >= 0 && std::size_t(only) >= w.cells.size())
    throw edm::ConfigError("EDM-PY-003", "edm.sweep(cell=" + std::to_string(only) + "): the campaign has " +
                                             std::to_string(w.cells.size()) + " cells (0 to " +
                                             std::to_string(w.cells.size() - 1) + ")");
  edm::open_campaign_folder(w.output, w.spec, w.cells, edm::campaign_fingerprint(w.spec, w.cells, s.base, *s.plugins));
  std::atomic<bool> stop{false};
  PyObserver obs;
  obs.on_progress = std::move(progress);
  obs.on_warning = std::move(warning);
  obs.stop = &stop;
  const edm::CellRunOptions opt{&stop, checkpoint_every, retry_failed};
  const bool stopped = with_interrupts(stop, [&] {
    return edm::run_cells_in_turn(w, s.base, *s.plugins, opt, only, obs,
                                  [&](const edm::SweepCell& c, edm::CellOutcome out, const std::string& err) {
                                    if (on_cell.is_none()) return;
                                    static const char* names[] = {"skipped", "busy", "done", "failed", "stopped"};
                                    py::gil_scoped_acquire gil;
                                    on_cell(c.label, names[int(out)], err);
                                  });
  });
  edm::throw_sweep_outcome(edm::tally_cells(w.cells, w.output, only), w.output, stopped);
}

// The campaign table (OUTPUT/campaign.toml merged with the cells' state files, as `edm campaign
// status` reads it): one dict per cell.
py::list read_table(const std::filesystem::path& output) {
  py::list rows;
  for (const edm::CellRecord& r : edm::read_campaign_table(output).cells) {
    py::dict d;
    d["label"] = r.label;
    d["state"] = edm::cell_state_word(r);
    d["overrides"] = r.overrides;
    d["results"] = r.results;
    d["wall_s"] = r.wall_s ? py::object(py::float_(*r.wall_s)) : py::object(py::none());
    d["error"] = r.error;
    d["host"] = r.host;
    d["verdicts"] = r.verdicts;
    d["suspect"] = r.suspect;
    d["warnings"] = r.warnings;
    rows.append(d);
  }
  return rows;
}

py::dict key_dict(const edm::KeySpec& k) {
  py::dict d;
  d["key"] = k.section + "." + k.key;
  d["type"] = k.type;
  d["unit"] = k.unit;
  d["default"] = k.default_value;
  d["meaning"] = k.meaning;
  d["choices"] = k.choices;
  d["rule"] = k.constraint;
  d["environment"] = k.environment;
  return d;
}

// field.h5 through its owner, opened once per Run and kept open (rows are read on demand).
struct PyFieldFile {
  std::shared_ptr<edm::FieldFile> f;
  py::dict geometry() const {
    const edm::FieldGeometry& g = f->geometry();
    py::dict d;
    d["nx"] = g.nx;
    d["ny"] = g.ny;
    d["samples"] = g.samples;
    d["t"] = g.t;
    d["x"] = g.x;
    d["y"] = g.y;
    d["dt"] = g.dt;
    d["nyquist_omega"] = g.nyquist_omega;
    d["screen_z"] = g.screen_z;
    d["angular"] = g.angular;
    d["far_field"] = g.far_field;
    d["split"] = g.split;
    d["buckets"] = f->summary().buckets;
    return d;
  }
  // "E/x" → its rows [iy0, iy1) as an array (iy1 − iy0, nx, samples).
  py::array_t<double> read_rows(const std::string& name, std::size_t iy0, std::size_t iy1) const {
    static const std::map<std::string, int> buckets = {
        {"E", edm::kBucketE}, {"B", edm::kBucketB}, {"E_far", edm::kBucketEFar}, {"B_far", edm::kBucketBFar}};
    const auto slash = name.find('/');
    const std::string b = name.substr(0, slash), c = slash == std::string::npos ? "" : name.substr(slash + 1);
    const auto it = buckets.find(b);
    const auto& present = f->summary().buckets;
    if (it == buckets.end() || (c != "x" && c != "y" && c != "z") ||
        std::find(present.begin(), present.end(), b) == present.end())
      throw edm::ConfigError("EDM-PY-002", f->path().string() + " has no component '" + name +
                                               "' (E/x … B/z, and E_far, B_far in split mode)");
    const edm::FieldGeometry& g = f->geometry();
    if (iy0 > iy1 || iy1 > g.ny) throw py::index_error("rows " + std::to_string(iy0) + ".." + std::to_string(iy1));
    std::vector<double> rows;
    f->read_rows(it->second, c[0] - 'x', iy0, iy1, rows);
    py::array_t<double> out({iy1 - iy0, g.nx, g.samples});
    std::copy(rows.begin(), rows.end(), out.mutable_data());
    return out;
  }
};

// One part of spectrum.h5 as a dict of arrays (complex ones as complex128), with each unit.
py::dict read_spectrum(const std::string& folder, const std::string& part) {
  const edm::RunFolder run(folder);
  py::dict out, units;
  if (!run.has_spectrum()) return out;
  const edm::SpectrumFile f = edm::SpectrumFile::open(run.spectrum());
  for (const auto& d : f.datasets(part == "direct" ? edm::SpectrumPart::Direct : edm::SpectrumPart::Analysis)) {
    std::vector<py::ssize_t> shape(d.shape.begin(), d.shape.end());
    if (d.complex) {
      py::array_t<std::complex<double>> a(shape);
      for (std::size_t k = 0; k < d.real.size(); ++k) a.mutable_data()[k] = {d.real[k], d.imag[k]};
      out[py::str(d.name)] = a;
    } else {
      py::array_t<double> a(shape);
      std::copy(d.real.begin(), d.real.end(), a.mutable_data());
      out[py::str(d.name)] = a;
    }
    units[py::str(d.name)] = d.unit;
  }
  out["units"] = units;
  return out;
}

// What `edm spectrum RUN` computes and writes (apps/twisted_options.cpp analyse_run: the same
// function), and its headline numbers.
py::dict analyse(const std::string& folder, const std::string& window, const std::vector<int>& harmonics,
                 const std::string& of, double band, double gamma, double a0) {
  edm::app::AnalysisArgs a;
  a.window = window;
  for (std::size_t i = 0; i < harmonics.size(); ++i) a.harmonics += (i ? "," : "") + std::to_string(harmonics[i]);
  a.of = of;
  a.band = band;
  a.gamma = gamma;
  a.a0 = a0;
  edm::app::AnalysisProducts p;
  {
    py::gil_scoped_release nogil;
    p = edm::app::analyse_run(folder, a, edm::app::TwistedArgs{});
  }
  const edm::SpectrumResult& r = p.spectrum;
  const edm::LineYield y = edm::on_axis_line_yield(r, p.physics);
  py::dict d;
  d["laser_omega"] = r.laser_omega;
  d["peak_omega_on_axis"] = r.peak_omega_on_axis;
  d["line_omega"] = r.line_omega;
  d["line_photons_per_bw"] = y.known ? y.photons_per_bw : std::nan("");
  d["total_energy"] = r.total_energy;
  d["nyquist_omega"] = r.nyquist_omega;
  d["window"] = edm::window_name(r.window);
  d["spectrum_file"] = p.spectrum_file;
  return d;
}

// edm.Campaign's part of the module: a campaign loaded from a file or from text, with overrides.
void def_campaign(py::module_& m) {
  py::class_<PyCampaign>(m, "_Campaign")
      .def_property_readonly("effective_toml", &PyCampaign::effective_toml)
      .def_property_readonly("origins", &PyCampaign::origins)
      .def_property_readonly("skipped_plugins", &PyCampaign::skipped)
      .def_property_readonly("source", [](const PyCampaign& c) { return c.loaded->source; })
      .def_property_readonly("scenario", [](const PyCampaign& c) { return c.loaded->campaign.run.scenario; });
  m.def("load_file", [](const std::filesystem::path& file, const std::vector<std::pair<std::string, std::string>>& o) {
    return PyCampaign{std::make_shared<edm::LoadedCampaign>(edm::load_campaign_for_run(file, to_overrides(o)))};
  });
  m.def("parse_text", [](const std::string& text, const std::string& name,
                         const std::vector<std::pair<std::string, std::string>>& o) {
    return PyCampaign{std::make_shared<edm::LoadedCampaign>(edm::parse_campaign_for_run(text, name, to_overrides(o)))};
  });
}

// edm.sweep's part of the module: the loaded sweep, its run and the campaign table.
void def_sweep(py::module_& m) {
  py::class_<PySweep>(m, "_Sweep")
      .def_property_readonly("output", [](const PySweep& s) { return s.sweep->output; })
      .def_property_readonly("labels", [](const PySweep& s) {
        std::vector<std::string> out;
        for (const auto& c : s.sweep->cells) out.push_back(c.label);
        return out;
      });
  m.def("load_sweep", &load_sweep);
  m.def("run_sweep", &run_sweep, py::arg("sweep"), py::arg("retry_failed"), py::arg("checkpoint_every"),
        py::arg("cell"), py::arg("progress"), py::arg("warning"), py::arg("on_cell"));
  m.def("read_table", &read_table);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "libedm for the Python package edm (edm/__init__.py is the interface)";
  m.def("_set_error_classes", [](py::dict d) { g_error_classes = std::move(d); });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const edm::Error& e) {
      raise_python(e);
    }
  });

  def_campaign(m);
  m.def("run", &run, py::arg("campaign"), py::arg("overwrite"), py::arg("dry_run"), py::arg("checkpoint_every"),
        py::arg("progress"), py::arg("warning"));
  m.def("resume", &resume, py::arg("folder"), py::arg("progress"), py::arg("warning"));
  def_sweep(m);
  py::class_<PyFieldFile>(m, "_FieldFile")
      .def_property_readonly("geometry", &PyFieldFile::geometry)
      .def("read_rows", &PyFieldFile::read_rows);
  m.def("open_field", [](const std::string& folder) {
    return PyFieldFile{std::make_shared<edm::FieldFile>(edm::FieldFile::open(edm::RunFolder(folder).field()))};
  });
  m.def("read_manifest", [](const std::string& folder) {
    std::ostringstream os;
    os << edm::RunManifest::read(edm::RunFolder(folder)).table();
    return os.str();
  });
  m.def("read_spectrum", &read_spectrum);
  m.def("analyse", &analyse);
  m.def("devices", [] {
    py::list out;
    for (const edm::DeviceInfo& d : edm::list_devices()) {
      py::dict x;
      x["index"] = d.index;
      x["name"] = d.name;
      x["platform"] = d.platform;
      x["type"] = d.type;
      x["fp64"] = d.fp64;
      x["compute_units"] = d.compute_units;
      x["global_memory"] = d.global_memory;
      out.append(x);
    }
    return out;
  });
  m.def("plugins", [] {
    const edm::PluginRegistry r = edm::PluginRegistry::discover();
    py::list out;
    for (const auto& p : r.plugins()) {
      py::dict x;
      x["name"] = p->name();
      x["version"] = std::string(p->descriptor().version ? p->descriptor().version : "");
      x["description"] = std::string(p->descriptor().description ? p->descriptor().description : "");
      x["models"] = p->models();
      x["path"] = p->path();
      out.append(x);
    }
    return out;
  });
  m.def("schema", [](const std::string& scenario) {
    py::list out;
    if (scenario.empty()) {
      for (const edm::KeySpec& k : edm::core_schema()) out.append(key_dict(k));
    } else {
      const edm::PluginRegistry r = edm::PluginRegistry::discover(scenario);
      for (const edm::KeySpec& k : r.get(scenario).keys()) out.append(key_dict(k));
    }
    return out;
  });
}
