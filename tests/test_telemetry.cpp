// ctest-label: e2e
// Device telemetry (run.toml [telemetry], core/src/run/telemetry.cpp): nvidia-smi's lines and ptxas's
// resource lines parsed, and whole runs with a fake nvidia-smi first on PATH — one that answers,
// one that prints garbage, one that hangs (with a child of its own) — each run finishing normally
// and saying what it sampled or why not; a hung tool and its children are gone after the run.
#define BOOST_TEST_MODULE telemetry
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <toml++/toml.h>

#include "../core/src/run/telemetry.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

using namespace edm;
namespace fs = std::filesystem;

namespace {

// Writes an executable `nvidia-smi` script into dir.
void fake_tool(const fs::path& dir, const std::string& body) {
  const auto p = test::write_file(dir, "nvidia-smi", "#!/bin/sh\n" + body);
  chmod(p.c_str(), 0755);
}

// Runs the small cell with `bin` first on PATH; returns run.toml's [telemetry].
toml::table run_with_path(const fs::path& dir, const fs::path& bin) {
  const auto campaign = test::write_file(dir, "cell.toml", test::small_cell());
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  const auto r = test::run_command("PATH='" + bin.string() + ":" + path + "' " + test::edm_bin() + " run " +
                                   campaign.string() + " --output " + (dir / "run").string());
  BOOST_TEST_MESSAGE(r.output);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_REQUIRE(fs::exists(dir / "run" / "field.h5"));
  const toml::table m = toml::parse_file((dir / "run" / "run.toml").string());
  BOOST_REQUIRE(m["telemetry"].is_table());
  std::ostringstream os;
  os << *m["telemetry"].as_table();
  BOOST_TEST_MESSAGE("[telemetry]\n" << os.str());
  return *m["telemetry"].as_table();
}

}  // namespace

BOOST_AUTO_TEST_CASE(nvidia_smi_lines_are_parsed) {
  std::vector<detail::TelemetryGpu> g;
  BOOST_TEST(detail::parse_nvidia_smi_line("0, NVIDIA H100 80GB HBM3, 71.50, 1980, 37, 1234", g));
  BOOST_TEST(detail::parse_nvidia_smi_line("1, NVIDIA H100 80GB HBM3, [N/A], 1755, 100, 4000", g));
  BOOST_TEST(detail::parse_nvidia_smi_line("0, NVIDIA H100 80GB HBM3, 300.5, 1500, 99, 1236", g));
  BOOST_TEST(!detail::parse_nvidia_smi_line("garbage", g));
  BOOST_TEST(!detail::parse_nvidia_smi_line("0, x, a, b, c, d", g));        // nothing readable
  BOOST_TEST(!detail::parse_nvidia_smi_line("-1, x, 1, 2, 3, 4", g));       // not an index
  BOOST_TEST(!detail::parse_nvidia_smi_line("0, x, 1, 2, 3, 4, 5", g));     // too many fields
  BOOST_REQUIRE_EQUAL(g.size(), 2u);
  BOOST_TEST(g[0].name == "NVIDIA H100 80GB HBM3");
  BOOST_TEST(g[0].power_w.count == 2u);
  BOOST_TEST(g[0].power_w.min == 71.5);
  BOOST_TEST(g[0].power_w.max == 300.5);
  BOOST_TEST(g[0].power_w.sum == 372.0);
  BOOST_TEST(g[0].memory_used_mib.max == 1236.0);
  BOOST_TEST(g[1].power_w.count == 0u);  // [N/A] is no sample
  BOOST_TEST(g[1].utilization_pct.count == 1u);
}

BOOST_AUTO_TEST_CASE(ptxas_resources_of_the_field_kernel) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'lw_light_front' for 'sm_90'\n"
      "ptxas info    : Function properties for lw_light_front\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, 368 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'lw_accumulate' for 'sm_90'\n"
      "ptxas info    : Function properties for lw_accumulate\n"
      "    40 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 128 registers, 920 bytes cmem[0]\n";
  const toml::table t = detail::kernel_resources_from_log(log, "lw_accumulate");
  BOOST_TEST(t["registers"].value_or(int64_t(0)) == 128);
  BOOST_TEST(t["spill_store_bytes"].value_or(int64_t(0)) == 8);
  BOOST_TEST(t["spill_load_bytes"].value_or(int64_t(0)) == 12);
  BOOST_TEST(t["stack_frame_bytes"].value_or(int64_t(0)) == 40);
  BOOST_TEST(detail::kernel_resources_from_log("", "lw_accumulate").empty());
  BOOST_TEST(detail::kernel_resources_from_log("PoCL: nothing of the kind\n", "lw_accumulate").empty());
}

BOOST_AUTO_TEST_CASE(an_answering_tool_is_sampled) {
  const auto dir = test::temp_dir("telemetry_good");
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  // Prints two GPUs' lines every 50 ms (the real one every second) and records its arguments.
  fake_tool(bin, "echo \"$@\" > '" + (dir / "args").string() +
                     "'\nwhile true; do\n  echo '0, Fake GPU, 71.5, 1980, 37, 1234'\n"
                     "  echo '0, Fake GPU, [N/A], 1500, 50, 1300'\n  echo '1, Other GPU, 20, 300, 0, 0'\n"
                     "  sleep 0.05\ndone\n");
  const toml::table t = run_with_path(dir, bin);
  BOOST_TEST(t["sampled"].value_or(false));
  BOOST_TEST(t["tool"].value_or(std::string()) == "nvidia-smi");
  const std::string args = test::slurp(dir / "args");
  BOOST_TEST(args.find("--query-gpu=index,name,power.draw,clocks.sm,utilization.gpu,memory.used") != std::string::npos);
  BOOST_TEST(args.find("--format=csv,noheader,nounits -lms 1000") != std::string::npos);
  const auto* gpus = t["gpus"].as_array();
  BOOST_REQUIRE(gpus);
  BOOST_REQUIRE_EQUAL(gpus->size(), 2u);
  const toml::table& g0 = *gpus->at(0).as_table();
  BOOST_TEST(g0["name"].value_or(std::string()) == "Fake GPU");
  BOOST_TEST(g0["power_w"]["min"].value_or(0.0) == 71.5);
  BOOST_TEST(g0["power_w"]["max"].value_or(0.0) == 71.5);
  BOOST_TEST(g0["sm_clock_mhz"]["min"].value_or(0.0) == 1500.0);
  BOOST_TEST(g0["sm_clock_mhz"]["max"].value_or(0.0) == 1980.0);
  // Twice as many clock samples as power samples: the [N/A] power is no sample.
  BOOST_TEST(g0["sm_clock_mhz"]["count"].value_or(int64_t(0)) == 2 * g0["power_w"]["count"].value_or(int64_t(0)));
  const double mean = g0["utilization_pct"]["mean"].value_or(0.0);
  BOOST_TEST(mean >= 37.0);
  BOOST_TEST(mean <= 50.0);
  BOOST_TEST(t["kernel"].is_table());
}

BOOST_AUTO_TEST_CASE(a_tool_that_prints_garbage_is_ignored) {
  const auto dir = test::temp_dir("telemetry_garbage");
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  fake_tool(bin, "while true; do echo 'garbage,,'; printf '\\001\\002 not csv\\n'; "
                 "echo '0, GPU, abc, def, ghi, jkl'; sleep 0.05; done\n");
  const toml::table t = run_with_path(dir, bin);
  BOOST_TEST(!t["sampled"].value_or(true));
  const std::string why = t["why"].value_or(std::string());
  BOOST_TEST(why.find("no readable sample") != std::string::npos);
  // Each line was read and none was understood (the tool prints three at once, at the run's start).
  BOOST_TEST(t["lines"].value_or(int64_t(0)) >= 3);
  BOOST_TEST(t["lines_not_understood"].value_or(int64_t(-1)) == t["lines"].value_or(int64_t(0)));
}

BOOST_AUTO_TEST_CASE(a_tool_that_hangs_is_killed_with_its_children) {
  const auto dir = test::temp_dir("telemetry_hang");
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  const auto pid_file = dir / "sleep.pid";
  fake_tool(bin, "sleep 100000 &\necho $! > '" + pid_file.string() + "'\nwait\n");
  const toml::table t = run_with_path(dir, bin);
  BOOST_TEST(!t["sampled"].value_or(true));
  const std::string why = t["why"].value_or(std::string());
  BOOST_TEST(why.find("0 lines") != std::string::npos);
  BOOST_TEST(t["lines"].value_or(int64_t(-1)) == 0);
  const std::string pid_text = test::slurp(pid_file);
  BOOST_REQUIRE(!pid_text.empty());
  const pid_t pid = std::stoi(pid_text);
  // The tool's group was killed and its shell reaped; the orphaned sleep is reaped by init: gone or a
  // zombie for an instant. Either way kill(pid, 0) fails or it is no longer sleeping.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(pid, 0) != 0 && errno == ESRCH;
    const std::string stat = test::slurp("/proc/" + std::to_string(pid) + "/stat");
    if (!gone && stat.find(") Z") != std::string::npos) gone = true;
    if (!gone) usleep(10000);
  }
  BOOST_TEST(gone);
}

// In process, with the silence limit short: a tool that says nothing is killed before the run ends.
BOOST_AUTO_TEST_CASE(a_silent_tool_is_killed_at_the_limit) {
  const auto dir = test::temp_dir("telemetry_silent");
  const auto pid_file = dir / "tool.pid";
  fake_tool(dir, "echo $$ > '" + pid_file.string() + "'\nexec sleep 100000\n");
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  detail::TelemetrySampler sampler(std::chrono::milliseconds(1000), std::chrono::milliseconds(200));
  setenv("PATH", old_path.c_str(), 1);
  // The limit passes while the "run" goes on; the tool is gone before finish() is asked.
  pid_t pid = 0;
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {
    usleep(10000);
    const std::string text = test::slurp(pid_file);
    if (!pid && !text.empty()) pid = std::stoi(text);
    gone = pid && kill(pid, 0) != 0 && errno == ESRCH;
  }
  BOOST_TEST(gone);
  const toml::table t = sampler.finish();
  BOOST_TEST(!t["sampled"].value_or(true));
  const std::string why = t["why"].value_or(std::string());
  BOOST_TEST_MESSAGE(why);
  BOOST_TEST(why.find("printed no line for 0.2 s and was killed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_tool_is_said_so) {
  // Only where this machine has none of the tools (PoCL): then the run says why it sampled nothing.
  for (const char* tool : {"nvidia-smi", "rocm-smi", "xpu-smi"})
    if (test::run_command(std::string("command -v ") + tool).exit_code == 0) {
      BOOST_TEST_MESSAGE(tool << " is on PATH: case skipped");
      return;
    }
  const auto dir = test::temp_dir("telemetry_none");
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  const toml::table t = run_with_path(dir, bin);
  BOOST_TEST(!t["sampled"].value_or(true));
  BOOST_TEST(t["why"].value_or(std::string()).find("no nvidia-smi, rocm-smi or xpu-smi on PATH") != std::string::npos);
  BOOST_TEST(!t["kernel"]["registers_recorded"].value_or(true));  // PoCL's build log has no registers
  // The runtime's own account of the built kernel: its work-group limit and the one launched.
  BOOST_TEST(t["kernel"]["max_work_group"].value_or(int64_t(0)) >= 1);
  BOOST_TEST(t["kernel"]["work_group"].value_or(int64_t(0)) >= 1);
  BOOST_TEST(t["kernel"]["work_group"].value_or(int64_t(0)) <= t["kernel"]["max_work_group"].value_or(int64_t(0)));
}
