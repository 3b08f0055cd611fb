/* The scenario plugin ABI: plain C, versioned. A plugin is a shared library that exports one symbol,
 *   const edm_plugin_v2* edm_plugin_query(void);
 * The host checks abi_version and struct_size before calling anything else. Only C types cross this
 * boundary, in both directions: the campaign reaches the plugin as an edm_campaign_v2 (TOML text and
 * typed accessors), the scenario comes back as an edm_scenario_v1 table of function pointers, and
 * errors come back as text. Plugins may use libedm's C++ API inside (they link it); no C++ object
 * and no exception crosses. plugin_sdk.hpp turns a C++ class into this table.
 *
 * ABI history: 1 passed the campaign as a pointer to the host's C++ edm::Campaign (an "opaque"
 * handle whose strings, maps and TOML table plugins read); a plugin built for it is refused with
 * "wrong ABI version 1". 2 passes edm_campaign_v2. */
#ifndef EDM_PLUGIN_H
#define EDM_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EDM_PLUGIN_ABI_VERSION 2u
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
 * Units are normalised (edm/units.hpp). Return 0 on success; on failure write a message to err.
 * (Version 1 of this table; ABI 2 left it as it was.) */
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
  /* Appended after ABI 2's first release (write it only when edm_campaign_v2::scenario_size says
   * the host's table has it): the macro-particle weight of electron i, finite and >= 0; NULL = every
   * weight is 1. The field is summed coherently with these weights (share/docs/ensembles.md). */
  double (*weight)(const void* self, uint64_t i);
} edm_scenario_v1;

/* Return codes of the campaign accessors. */
#define EDM_KEY_OK 0
#define EDM_KEY_UNKNOWN 1          /* the effective campaign has no such key */
#define EDM_KEY_WRONG_TYPE 2       /* the key holds a value of another type (nothing is written) */
#define EDM_KEY_BUFFER_TOO_SHORT 3 /* get_string: *needed says how many bytes the value takes */
#define EDM_KEY_BAD_ARGUMENT 4     /* a NULL key or output pointer */

/* The validated, effective campaign a plugin is created for: defaults < file < environment <
 * command line already merged, every core key present, the plugin's own section complete (keys the
 * file left out hold the plugin's declared defaults), SI units as the user writes them.
 *
 * Keys are "section.key": "laser.a0", "screen.nx" for core keys (`edm schema` lists them) and
 * "<scenario>.key" for the plugin's own section. Each accessor returns an EDM_KEY_* code and
 * writes its output only on EDM_KEY_OK. get_double also reads an integer key (as a double);
 * get_int reads integers only; get_bool writes 0 or 1. get_string writes the value and its NUL into
 * buf when len is large enough, and always sets *needed (when not NULL) to strlen(value) + 1; with a
 * buffer too short it returns EDM_KEY_BUFFER_TOO_SHORT and leaves buf empty (buf[0] = 0 if len > 0).
 * The one key whose type depends on its value: accumulator.electron_batch is the string "auto" or
 * an integer. laser.direction is absent (EDM_KEY_UNKNOWN) when the campaign leaves the direction to
 * the scenario.
 *
 * Everything here is owned by the host and valid only during the create call: copy what you keep.
 * Fields are only ever appended; check struct_size before reading one added later. */
typedef struct edm_campaign_v2 {
  uint32_t struct_size;      /* sizeof(edm_campaign_v2) as the host was built */
  uint32_t reserved;         /* 0 */
  const void* ctx;           /* the host's; pass it back to the accessors */
  const char* scenario;      /* [run] scenario: the name of the plugin's own section */
  const char* campaign_file; /* the campaign file the host read ("" when built in code); relative
                                data paths in it are already resolved to absolute ones */
  const char* toml;          /* the same effective campaign as TOML text (every key) */
  int (*get_double)(const void* ctx, const char* key, double* out);
  int (*get_int)(const void* ctx, const char* key, int64_t* out);
  int (*get_bool)(const void* ctx, const char* key, int* out);
  int (*get_string)(const void* ctx, const char* key, char* buf, size_t len, size_t* needed);
  /* Appended: sizeof(edm_scenario_v1) as the host was built. A plugin fills a field appended to that
   * table (weight) only when it lies within this size; the host zeroes the table before create, so
   * a field a plugin leaves alone is NULL. */
  size_t scenario_size;
} edm_campaign_v2;

typedef struct edm_plugin_v2 {
  uint32_t struct_size;   /* sizeof(edm_plugin_v2) as the plugin was built */
  uint32_t abi_version;   /* EDM_PLUGIN_ABI_VERSION; these two fields stay first in every version */
  const char* name;       /* scenario name, = [run] scenario and the plugin's section name */
  const char* version;
  const char* description;
  const char* const* models;   /* NULL-terminated: "lorentz", "landau_lifshitz", "tracks" */
  const edm_key_spec* keys;    /* the plugin's section keys */
  uint32_t n_keys;
  /* Creates the scenario for a validated campaign. Returns 0 and fills *out, or non-zero with err. */
  int (*create)(const edm_campaign_v2* campaign, edm_scenario_v1* out, char* err, size_t err_len);
} edm_plugin_v2;

typedef const edm_plugin_v2* (*edm_plugin_query_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
