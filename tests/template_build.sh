#!/usr/bin/env bash
# e2e: the out-of-tree plugin template (share/plugin_template) builds against an *installed* edm,
# and against the build tree with CMAKE_PREFIX_PATH=<build> (no install) —
# install the build tree into a temporary prefix, then configure and build the template there with
# find_package(edm) only. Checks the export (targets, dependencies, edm_add_plugin), that the
# installed, relocated `edm` finds its libedm and lists the new plugin, and that it runs a campaign
# of it.
# usage: template_build.sh <edm build dir> <edm source dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/edm-template-XXXXXX")
if [[ "${EDM_KEEP_TMP:-0}" != 1 ]]; then trap 'rm -rf "$tmp"' EXIT; fi

echo "== install $build into $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

# Build the template as installed (share/edm/plugin_template): what a user copies.
tpl="$tmp/prefix/share/edm/plugin_template"
[[ -f "$tpl/CMakeLists.txt" ]] || { echo "template not installed at $tpl"; exit 1; }
cp -r "$tpl" "$tmp/template"
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi
echo "== configure the template against the installed edm"
cmake -S "$tmp/template" -B "$tmp/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release
echo "== build"
cmake --build "$tmp/build" -j 2

plugin="$tmp/build/plugins/head_on/libedm_head_on.edmplugin"
[[ -f "$plugin" ]] || { echo "FAIL: no plugin at $plugin"; exit 1; }
# Hidden visibility: the entry symbol is the only thing the plugin exports besides runtime glue.
nm -D --defined-only "$plugin" | grep -q ' T edm_plugin_query$' || { echo "FAIL: edm_plugin_query not exported"; exit 1; }

echo "== installed edm lists it"
out=$(EDM_PLUGIN_PATH="$tmp/build/plugins" "$tmp/prefix/bin/edm" plugins)
echo "$out"
# grep -c, not -q: -q stops reading at the first match, nm then dies of SIGPIPE and pipefail turned
# the match into a failure, so this branch never ran.
if nm -D --defined-only "$tmp/prefix/lib/libedm.so" | grep -c make_laser >/dev/null; then
  grep -q '^  head_on  0.1.0$' <<<"$out" || { echo "FAIL: head_on did not load"; exit 1; }
  EDM_PLUGIN_PATH="$tmp/build/plugins" "$tmp/prefix/bin/edm" schema head_on | grep -q 'head_on.gamma' ||
    { echo "FAIL: edm schema head_on does not print its section"; exit 1; }
  # A run through the plugin boundary (ABI 2: the campaign crosses as C data and the SDK rebuilds
  # it inside the plugin), and its manifest records the beam the plugin made: the expected line of
  # `edm spectrum --of line` comes from there for out-of-tree scenarios too.
  printf '[run]\nscenario = "head_on"\noutput = "%s"\n[screen]\nnx = 3\nny = 3\nsamples = 64\n[head_on]\ncount = 2\ngamma = 4.0\n' \
    "$tmp/run" >"$tmp/head_on.toml"
  EDM_PLUGIN_PATH="$tmp/build/plugins" "$tmp/prefix/bin/edm" run "$tmp/head_on.toml" --quiet ||
    { echo "FAIL: edm run of a head_on campaign"; exit 1; }
  grep -qx 'gamma_mean = 4.0' "$tmp/run/run.toml" ||
    { echo "FAIL: run.toml [kinematics] does not record the head_on beam (gamma_mean = 4.0)"; exit 1; }
else
  # Until the physics module (make_laser, lorentz_rhs) is merged the plugin links but cannot load.
  echo "NOTE: this libedm has no make_laser yet: the template compiled and linked, loading is not checked"
  grep -q 'libedm_head_on.edmplugin' <<<"$out" || { echo "FAIL: edm plugins did not see the template plugin"; exit 1; }
fi
# The build tree is an SDK as well (cmake/EdmInstall.cmake exports edmTargets.cmake there): the
# template configures and builds against it with no install, and the build's own edm loads it.
echo "== configure and build the template against the build tree"
cmake -S "$tmp/template" -B "$tmp/build_tree" "${gen[@]}" -DCMAKE_PREFIX_PATH="$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$tmp/build_tree" -j 2
out=$(EDM_PLUGIN_PATH="$tmp/build_tree/plugins" "$build/apps/edm" plugins)
grep -q '^  head_on  0.1.0$' <<<"$out" || { echo "FAIL: the plugin built against the build tree did not load"; exit 1; }
echo "PASS"
