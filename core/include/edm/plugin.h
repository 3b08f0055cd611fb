/* The scenario plugin ABI: plain C, versioned. A plugin is a shared library that exports one symbol,
 *   const edm_plugin_v1* edm_plugin_query(void);
 * The host checks struct_size and abi_version before calling anything (STYLE 12). No C++ types
 * and no exceptions cross this boundary; plugins may use libedm's C++ API inside (they link it).
 * plugin_sdk.hpp turns a C++ class into this table. */
#ifndef EDM_PLUGIN_H
#define EDM_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EDM_PLUGIN_ABI_VERSION 1u
#define EDM_PLUGIN_ENTRY "edm_plugin_query"

/* One key of the plugin's own campaign section [<name>]. */
typedef struct edm_key_spec {
  const char* key;
  const char* type;          /* "int" | "float" | "string" | "bool" */
  const char* unit;          /* "" if none */
  const char* default_value; /* as TOML text */
  const char* meaning;
} edm_key_spec;

/* An externally computed trajectory (model "tracks"), normalised units, arbitrary times. */
typedef struct edm_track {
  uint64_t n;
  const double* t; const double* x; const double* y; const double* z;
  const double* ux; const double* uy; const double* uz;
} edm_track;

/* A created scenario: the ensemble, the laser and the trajectory model of one campaign.
 * All functions are called concurrently from several threads and must not mutate `self`.
 * Units are normalised (edm/units.hpp). Return 0 on success; on failure write a message to err. */
typedef struct edm_scenario_v1 {
  void* self;
  void (*destroy)(void* self);
  uint64_t (*electron_count)(const void* self);
  /* State y = (t, x, y, z, γ, ux, uy, uz) of electron i where its integration starts (τ = 0):
   * before the pulse reaches it. */
  int (*initial_state)(const void* self, uint64_t i, double y[8], char* err, size_t err_len);
  /* Equations of motion dy/dτ of the model (NULL for "tracks"). */
  int (*rhs)(const void* self, double tau, const double y[8], double dydtau[8]);
  /* Laser field at event x4 = (t, x, y, z). */
  void (*laser_field)(const void* self, const double x4[4], double E[3], double B[3]);
  /* Tabulated trajectory of electron i (model "tracks"; NULL otherwise). The arrays stay valid
   * until destroy. */
  int (*track)(const void* self, uint64_t i, edm_track* out, char* err, size_t err_len);
  int laser_direction;   /* s = ±1 */
  double xi_end;         /* integrate at least until ξ = t − s z exceeds this (pulse passed) */
  double tau_max;        /* hard cap on proper time per electron (runaway guard) */
} edm_scenario_v1;

struct edm_campaign; /* opaque: a const edm::Campaign* on the C++ side */

typedef struct edm_plugin_v1 {
  uint32_t struct_size;   /* sizeof(edm_plugin_v1) as the plugin was built */
  uint32_t abi_version;   /* EDM_PLUGIN_ABI_VERSION */
  const char* name;       /* scenario name, = [run] scenario and the plugin's section name */
  const char* version;
  const char* description;
  const char* const* models;   /* NULL-terminated: "lorentz", "landau_lifshitz", "tracks" */
  const edm_key_spec* keys;    /* the plugin's section keys */
  uint32_t n_keys;
  /* Creates the scenario for a validated campaign. Returns 0 and fills *out, or non-zero with err. */
  int (*create)(const struct edm_campaign* campaign, edm_scenario_v1* out, char* err, size_t err_len);
} edm_plugin_v1;

typedef const edm_plugin_v1* (*edm_plugin_query_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
