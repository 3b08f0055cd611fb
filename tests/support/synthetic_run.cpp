// make_synthetic_run (synthetic_run.hpp): the field sampled on the screen grid, one row per slab.
#include "synthetic_run.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <vector>

#include "edm/run_files.hpp"
#include "edm/units.hpp"
#include "edm/writer.hpp"
#include "test_support.hpp"

namespace edm::test {

std::filesystem::path make_synthetic_run(const std::string& tag, const SyntheticRun& s,
                                         const SyntheticField& f) {
  const auto dir = temp_dir(tag);
  const Normalization u = Normalization::from_wavelength(s.wavelength);
  const double T = u.time(), L = u.length();
  Screen sc;
  sc.nx = s.nx;
  sc.ny = s.ny;
  sc.samples = s.samples;
  sc.half_x = sc.half_y = s.half_width / L;
  sc.z = s.z / L;
  sc.dt = 2 * std::numbers::pi / s.samples_per_period;
  sc.t0_rel = s.t_start / T;
  FieldFileInfo info{"synthetic-" + tag, "test", s.scenario, 1, s.mode};
  {
    FieldWriter w(dir / "field.h5", sc, u, info);
    const std::size_t row = std::size_t(s.nx) * s.samples;
    std::vector<double> fields(6 * row), slab(row);  // [E x y z, B x y z][ix][k] of one row
    for (int iy = 0; iy < s.ny; ++iy) {
      for (int ix = 0; ix < s.nx; ++ix)
        for (int k = 0; k < s.samples; ++k) {
          double E[3], B[3];
          // The writer's absolute time: (t_rel + |z|)·T.
          f(sc.pixel_x(ix) * L, sc.pixel_y(iy) * L, (sc.t_rel(k) + std::abs(sc.z)) * T, E, B);
          for (int c = 0; c < 3; ++c) {
            fields[c * row + std::size_t(ix) * s.samples + k] = E[c];
            fields[(3 + c) * row + std::size_t(ix) * s.samples + k] = B[c];
          }
        }
      for (int b = 0; b < bucket_count(s.mode); ++b)
        for (int comp = 0; comp < 3; ++comp) {
          // The writer multiplies by the Liénard–Wiechert scale of the bucket.
          const double scale = (b % 2 == 0) ? u.lw_efield() : u.lw_bfield();
          const double* src = fields.data() + ((b % 2 == 0 ? 0 : 3) + comp) * row;
          for (std::size_t i = 0; i < row; ++i) slab[i] = src[i] / scale;
          w.write_slab(b, comp, iy, iy + 1, slab.data());
        }
    }
    w.commit();
  }
  std::ofstream m(dir / "run.toml");
  // The keys a format-1 run.toml has that the readers take (edm/run_manifest.hpp); knots_per_period
  // = 0: no trajectories made this field.
  m << "[provenance]\nrun_id = \"synthetic-" << tag << "\"\nformat = " << kRunFormat
    << "\nedm_version = \"test\"\n"
    << "[config]\nscenario = \"" << s.scenario << "\"\nknots_per_period = 0\n"
    << "[laser]\nwavelength = " << std::setprecision(17) << s.wavelength << "\nomega = " << u.omega
    << "\na0 = " << s.a0 << "\n"
    << "[screen]\ntype = \"flat\"\ndistance = " << s.z << "\n"
    << "[window]\ncovered = true\n"
    << "[field_file]\nname = \"field.h5\"\nrun_id = \"synthetic-" << tag << "\"\nbytes = "
    << std::filesystem::file_size(dir / "field.h5") << "\n";
  return dir;
}

}  // namespace edm::test
