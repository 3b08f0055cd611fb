// Shared test helpers: named tolerances (one place, so that a loosened one is a visible, reviewed change), paths, running the edm binary.
#pragma once
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace edm::test {

// Named tolerances. Each test states which it uses; loosening one is a reviewed change.
namespace tol {
inline constexpr double trajectory_exact = 1e-9;   // solver vs exact plane-wave trajectory
inline constexpr double invariant = 1e-10;         // u·u = 1
inline constexpr double drift = 1e-6;              // figure-8 drift velocity
inline constexpr double lg_vs_gaussian = 1e-12;    // LG(0,0) vs gaussian
inline constexpr double lg_closed_form = 1e-13;    // LG_p^m field vs its closed form written literally (integer powers vs std::pow, atan)
inline constexpr double kernel_vs_host = 1e-9;     // kernel vs host reference, rel. L2 per bucket
inline constexpr double field_vs_exact = 1e-7;     // one electron vs exact trajectory + brute root
inline constexpr double chunks = 1e-12;            // C = 1 vs C > 1
inline constexpr double newton = 1e-10;            // newton_iters 2 vs 4
inline constexpr double sharded = 1e-12;           // multi-device / MPI vs one device
inline constexpr double ll_closed_form = 0.05;     // Landau–Lifshitz light-front loss
inline constexpr double spectrum_peak = 0.01;      // harmonic position
inline constexpr double energy_balance = 1e-4;     // Poynting through the screen vs Larmor–Liénard (T/64 sampling)
inline constexpr double distance_scaling = 1e-5;   // far·R, near·R² at Z vs 2Z (O(|x|/Z) geometry)
}  // namespace tol

// Analysis tools (edm spectrum), kept in their own block so the list above can grow without conflicts.
namespace tol {
inline constexpr double parseval = 1e-12;          // Σ spectrum Δω vs Σ |E|² dt (window none)
inline constexpr double energy_screen = 1e-9;      // Σ ∫S·n dt dA vs the analytic pulse energy
inline constexpr double spectrum_norm = 1e-9;      // d²I/dωdΩ of a Gaussian pulse vs its analytic transform
inline constexpr double weak_field_estimate = 0.03; // quickstart on-axis dW/dΩ vs linear theory (O(a0²) terms)
inline constexpr double far_field_flux = 1e-6;     // Σ∫S·n dt dA vs ∫dI/dω dω on the quickstart screen (8.6e-9)
inline constexpr double line_forms = 1e-13;        // ω h²/(1+u⊥²+a0²/2) vs γ²(1+β)²/(1+a0²/2): one line, two roundings
}  // namespace tol

// Twisted light (complex harmonic maps, OAM, angular momentum: issue 14), in their own block too.
namespace tol {
inline constexpr double interpolation_exact = 1e-12;  // bicubic on quadratics, bilinear on bilinears
inline constexpr double winding_fit = 0.01;           // fitted ℓ vs the integer the physics predicts
inline constexpr double lg_photon_j = 5e-3;           // paraxial LG pulse: ωL_z/W vs −(m + σ) (3e-3: O(1/(ωτ0)²))
inline constexpr double lg_pulse_energy = 1e-4;       // paraxial LG pulse: W through a far plane vs U (2e-6)
inline constexpr double mirror = 1e-9;                // circular_plus vs circular_minus: the mirror image
inline constexpr double on_axis_null = 1e-6;          // even harmonic of linear polarisation on the axis / its peak (4e-7)
inline constexpr double dipole_lz = 1e-2;             // a0 = 0.05 helix: ωL_z/W vs the exact rotating dipole (1.2e-3)
}  // namespace tol

// Macro-particles and the Gaussian form factor (issue 15, beams), their own block (the openPMD particle
// input's tolerance is in tests/python/test_openpmd_particles.py).
namespace tol {
inline constexpr double weight_scaling = 1e-15;       // field of weight w vs w × field of weight 1, rel. L2 (B = n̂ × wE
                                                      // rounds once more than w·(n̂ × E): ≤ 2 ulps per slot)
inline constexpr double form_factor_sampled = 4.5;    // |⟨cos ωΔφ⟩ over M sampled electrons − F| in units of its
                                                      // Monte-Carlo standard error (1 − F²)/√(2M) (a Gaussian
                                                      // phase: Var cos = (1 − F²)²/2): a 4.5σ bound
}  // namespace tol

std::filesystem::path source_dir();   // EDM_SOURCE_DIR
std::filesystem::path build_dir();    // EDM_BUILD_DIR
std::filesystem::path edm_binary();   // the built `edm`
// A fresh empty temporary folder (removed at exit of the test process unless EDM_KEEP_TMP=1).
std::filesystem::path temp_dir(const std::string& tag);

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs a shell command line, capturing output.
CommandResult run_command(const std::string& command_line);
// Whether `edm plot` can run here: a python3 (or /usr/bin/python3) that imports numpy, h5py and
// matplotlib (the GPU machine has none; the tests that plot skip there).
bool have_plotting_python();

// Relative L2 distance ‖a − b‖ / ‖b‖ (‖b‖ = 0: returns ‖a‖).
double relative_l2(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace edm::test
