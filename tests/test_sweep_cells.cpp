// ctest-label: unit
// The lazy cells of a sweep (issue 30: 10⁶ cells were expanded at once, about 1 GB) and the table
// written row by row: a cell formed from its index is the cell of the full expansion, computed here
// from the axes by brute force (every label kept, as edm did before); the first clash of labels
// (EDM-SWP-009) names the same two cells the brute force finds; the table's bytes are what toml++
// gives the whole table formatted at once (the format before the change, which readers rely on).
#define BOOST_TEST_MODULE sweep_cells
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include "campaign_support.hpp"
#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

fs::path write(const std::string& sweep, const std::string& tag) {
  const fs::path dir = test::temp_dir("sweep_cells_" + tag);
  const fs::path p = dir / "c.toml";
  std::ofstream(p) << "[run]\nscenario = \"inverse_thomson\"\n[screen]\nnx = 4\nny = 4\n[sweep]\n" << sweep;
  return p;
}

// The cells by brute force: every combination in order (last axis fastest; zip pairs), each label
// made with cell_label and kept, the first repeat reported as "cells A and B".
struct Brute {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> values;
  std::string clash;  // "cells A and B" or ""
};

Brute brute(const SweepSpec& s) {
  Brute b;
  std::size_t n = s.mode == SweepMode::Zip ? s.axes[0].values.size() : 1;
  if (s.mode == SweepMode::Grid)
    for (const auto& a : s.axes) n *= a.values.size();
  std::map<std::string, std::size_t> seen;
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<std::string> v(s.axes.size());
    std::size_t rest = c;
    for (std::size_t i = s.axes.size(); i-- > 0;) {
      const auto& vs = s.axes[i].values;
      v[i] = s.mode == SweepMode::Zip ? vs[c] : vs[rest % vs.size()];
      rest /= s.mode == SweepMode::Zip ? 1 : vs.size();
    }
    const std::string label = cell_label(s.axes, v);
    const auto [it, fresh] = seen.emplace(label, c);
    if (!fresh && b.clash.empty()) b.clash = "cells " + std::to_string(it->second) + " and " + std::to_string(c) + " ";
    b.labels.push_back(label);
    b.values.push_back(v);
  }
  return b;
}

std::string message_of(const SweepSpec& s) {
  try {
    (void)sweep_cells(s, true);
  } catch (const Error& e) {
    return std::string(e.id()) + " " + e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_cell_formed_from_its_index_is_the_expanded_cell) {
  for (const char* axes : {"electrons.gamma = [2.0, 5.0, 7.5]\nlaser.a0 = [0.1, 0.5]\nscreen.nx = [4, 6, 8, 10]\n",
                           "mode = \"zip\"\nlaser.a0 = [0.1, 0.2, 0.3]\nlaser.polarization = [\"linear\", "
                           "\"circular_plus\", \"circular_minus\"]\n",
                           "laser.waist = [1e-5, 2e-5]\nlaser.duration = [1e-14]\n"}) {
    const SweepSpec s = read_sweep(write(axes, "index"), "inverse_thomson", {});
    const Brute b = brute(s);
    const SweepCells cells = sweep_cells(s);
    BOOST_REQUIRE_EQUAL(cells.size(), b.labels.size());
    std::size_t k = 0;
    for (const SweepCell& c : cells) {  // iteration and indexing agree with the brute force
      BOOST_TEST(c.index == k);
      BOOST_TEST(c.label == b.labels[k]);
      BOOST_TEST(cells.label(k) == b.labels[k]);
      BOOST_TEST(cells[k].label == b.labels[k]);
      BOOST_REQUIRE_EQUAL(c.overrides.size(), s.axes.size());
      for (std::size_t i = 0; i < s.axes.size(); ++i) {
        BOOST_TEST(c.overrides[i].key == s.axes[i].key);
        BOOST_TEST(c.overrides[i].value == b.values[k][i]);
      }
      ++k;
    }
    BOOST_TEST(k == b.labels.size());
  }
}

// A repeated label is found without keeping every label: in a grid from the axes' parts, in zip by
// a hash. The cells named are the brute force's first repeat.
BOOST_AUTO_TEST_CASE(the_first_clash_names_the_cells_the_full_expansion_names) {
  for (const char* axes : {"laser.a0 = [0.1, 0.2, 0.1]\nelectrons.gamma = [2.0, 3.0]\n",
                           "laser.a0 = [0.1, 0.2]\nelectrons.gamma = [2.0, 3.0, 4.0, 3.0]\n",
                           "laser.a0 = [0.1, 0.2, 0.3, 0.2]\nelectrons.gamma = [2.0, 3.0, 2.0]\n",
                           "laser.a0 = [0.001, 1e-3]\nscreen.nx = [4, 6, 4]\nelectrons.gamma = [2.0]\n",
                           "mode = \"zip\"\nlaser.a0 = [0.1, 0.2, 0.1, 0.2]\nelectrons.gamma = [2.0, 3.0, 4.0, 3.0]\n",
                           "mode = \"zip\"\nlaser.a0 = [0.1, 0.1, 0.1]\nelectrons.gamma = [2.0, 3.0, 4.0]\n"}) {
    const SweepSpec s = read_sweep(write(axes, "clash"), "inverse_thomson", {});
    const Brute b = brute(s);
    const std::string m = message_of(s);
    BOOST_TEST_INFO(axes);
    if (b.clash.empty()) {
      BOOST_TEST(m.empty(), m);
    } else {
      BOOST_TEST(m.rfind("EDM-SWP-009", 0) == 0u, m);
      BOOST_TEST(m.find(b.clash) != std::string::npos, m << " (expected " << b.clash << ")");
    }
  }
}

// The table, written row by row, is byte for byte the whole table as toml++ formats it at once
// (with edm's two comment lines first), after rows with every kind of field were recorded.
BOOST_AUTO_TEST_CASE(the_streamed_table_is_the_whole_table_formatted_at_once) {
  const fs::path p = write("laser.a0 = [0.1, 0.2, 0.3]\nlaser.polarization = [\"linear\", \"circular_plus\"]\n", "table");
  const auto plugins = PluginRegistry::discover();
  const SweepSpec s = read_sweep(p, "inverse_thomson", plugins.get("inverse_thomson").keys());
  const SweepCells cells = sweep_cells(s);
  const fs::path out = p.parent_path() / "out";
  open_campaign_folder(out, s, cells, campaign_fingerprint(s, cells, {}, plugins));
  CellRecord r = cell_record(out, cells[1]);
  r.state = CellState::Done;
  r.results = {{"energy", 1.25e-9}, {"line_omega", 3.1e16}};
  r.verdicts = {{"covered", true}, {"roots_converged", false}};
  r.suspect = {"roots not converged"};
  r.warnings = {"a warning", "another, with \"quotes\""};
  r.wall_s = 2.5;
  r.host = "node1";
  record_cell(out, r);
  CellRecord f = cell_record(out, cells[4]);
  f.state = CellState::Failed;
  f.error = "EDM-RUN-010: stopped";
  record_cell(out, f);

  std::ifstream in(table_path(out), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const toml::table whole = toml::parse(text.str());
  std::ostringstream expected;
  expected << "# The campaign table of edm sweep (share/docs/sweeps.md); rewritten after every cell.\n"
           << "# Each cell's own state is OUTPUT/.cells/<label>.toml; edm campaign status OUTPUT prints this.\n\n"
           << toml::toml_formatter(whole) << "\n";
  BOOST_TEST(text.str() == expected.str());
  const CampaignTable t = read_campaign_table(out);
  BOOST_REQUIRE_EQUAL(t.cells.size(), 6u);
  BOOST_TEST(cell_state_word(t.cells[1]) == "done (suspect)");
  BOOST_TEST(t.cells[1].results.at("energy") == 1.25e-9);
  BOOST_TEST(t.cells[1].warnings.size() == 2u);
  BOOST_TEST(t.cells[4].state == CellState::Failed);
  BOOST_TEST(t.cells[5].label == cells.label(5));
  BOOST_TEST(t.meta.at("axes") == "laser.a0,laser.polarization");
}
