// A libFuzzer-free driver for the fuzz targets, so that ctest (g++ build, no libFuzzer) runs their
// logic on every build: each corpus file once, then a FIXED number of deterministic mutations
// (seeded PRNG: byte flips, truncations, deletions, duplications, splices, interesting tokens).
//   usage: <target>_standalone CORPUS_DIR [iterations=2000] [seed=1]
// A failing input (escaped exception, trap, signal) is saved as ./standalone-crash-<target>-<iter>
// so that it can be replayed with the libFuzzer binary or added to the corpus.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// The input being run, for the crash handlers (plain globals: read from a signal handler).
const std::uint8_t* g_data = nullptr;
std::size_t g_size = 0;
char g_crash_name[256] = "standalone-crash";

void save_input() {
  // Async-signal-safe: open/write/close only.
  const int fd = ::open(g_crash_name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (g_size) (void)!::write(fd, g_data, g_size);
    ::close(fd);
  }
  const char msg[] = "standalone fuzz driver: failing input saved as ";
  (void)!::write(2, msg, sizeof msg - 1);
  (void)!::write(2, g_crash_name, std::strlen(g_crash_name));
  (void)!::write(2, "\n", 1);
}

void on_signal(int sig) {
  save_input();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void on_terminate() {
  save_input();
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      std::fprintf(stderr, "uncaught exception: %s\n", x.what());
    } catch (...) {
      std::fprintf(stderr, "uncaught exception of unknown type\n");
    }
  }
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

// splitmix64: tiny, portable, deterministic across platforms and standard libraries.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n ? std::size_t(next() % n) : 0; }
};

// Tokens that parsers of numbers, TOML, CSV and sizes tend to get wrong.
const char* const kTokens[] = {"nan", "inf", "-inf", "-1", "0", "1e400", "-1e400", "1e-400", "1e300",
                               "4e-324", "1000000000", "2147483648", "9223372036854775807",
                               "18446744073709551616", "\"", "[", "]", "[[", "=", ",", "\n", "#", "'",
                               "\"\"\"", "{", "}", "\\u0000", "\\", ".", "0x7fffffff", "+", "e",
                               "\xff\xfe", "[screen]\nnx = ", "[electrons]\n", "\r\n"};

void mutate(std::vector<std::uint8_t>& d, const std::vector<std::vector<std::uint8_t>>& corpus, Rng& rng) {
  switch (rng.below(8)) {
    case 0:  // flip one bit
      if (!d.empty()) d[rng.below(d.size())] ^= std::uint8_t(1u << rng.below(8));
      break;
    case 1:  // random byte
      if (!d.empty()) d[rng.below(d.size())] = std::uint8_t(rng.next());
      break;
    case 2:  // truncate
      d.resize(rng.below(d.size() + 1));
      break;
    case 3: {  // delete a range
      if (d.empty()) break;
      const std::size_t a = rng.below(d.size()), n = 1 + rng.below(std::min<std::size_t>(16, d.size() - a));
      d.erase(d.begin() + a, d.begin() + a + n);
      break;
    }
    case 4: {  // duplicate a range (repeated tables, keys, lines)
      if (d.empty()) break;
      const std::size_t a = rng.below(d.size()), n = 1 + rng.below(std::min<std::size_t>(64, d.size() - a));
      std::vector<std::uint8_t> piece(d.begin() + a, d.begin() + a + n);
      d.insert(d.begin() + rng.below(d.size() + 1), piece.begin(), piece.end());
      break;
    }
    case 5: {  // splice with another corpus file
      const auto& o = corpus[rng.below(corpus.size())];
      const std::size_t cut = rng.below(d.size() + 1), from = rng.below(o.size() + 1);
      d.resize(cut);
      d.insert(d.end(), o.begin() + from, o.end());
      break;
    }
    case 6: {  // overwrite a 4- or 8-byte word with an extreme value (sizes in binary files)
      if (d.size() < 8) break;
      const std::uint64_t extremes[] = {0, 1, 0xff, 0xffffffffull, 0x7fffffffull, ~0ull, 1ull << 40};
      const std::uint64_t v = extremes[rng.below(std::size(extremes))];
      std::memcpy(&d[rng.below(d.size() - 7)], &v, rng.below(2) ? 4 : 8);
      break;
    }
    default: {  // insert or overwrite with an interesting token
      const char* t = kTokens[rng.below(std::size(kTokens))];
      const std::size_t at = rng.below(d.size() + 1), len = std::strlen(t);
      if (rng.below(2) && at + len <= d.size())
        std::memcpy(&d[at], t, len);
      else
        d.insert(d.begin() + at, t, t + len);
    }
  }
}

void run_one(const std::vector<std::uint8_t>& d) {
  g_data = d.data();
  g_size = d.size();
  LLVMFuzzerTestOneInput(d.data(), d.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [iterations] [seed]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const unsigned long iterations = argc > 2 ? std::stoul(argv[2]) : 2000;
  const std::uint64_t seed = argc > 3 ? std::stoull(argv[3]) : 1;
  const std::string target = std::filesystem::path(argv[0]).filename().string();

  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // directory order is not deterministic
  std::vector<std::vector<std::uint8_t>> corpus;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    // An empty corpus would make this test pass while testing nothing.
    std::fprintf(stderr, "%s: no corpus files in %s\n", target.c_str(), dir.c_str());
    return 2;
  }
  std::printf("%s: %zu corpus files, %lu mutations, seed %llu\n", target.c_str(), corpus.size(), iterations,
              (unsigned long long)seed);
  std::fflush(stdout);

  std::set_terminate(on_terminate);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_signal);

  for (std::size_t i = 0; i < corpus.size(); ++i) {
    std::snprintf(g_crash_name, sizeof g_crash_name, "standalone-crash-%s-corpus-%s", target.c_str(),
                  files[i].filename().c_str());
    run_one(corpus[i]);
  }
  Rng rng{seed};
  for (unsigned long it = 0; it < iterations; ++it) {
    std::snprintf(g_crash_name, sizeof g_crash_name, "standalone-crash-%s-%lu", target.c_str(), it);
    std::vector<std::uint8_t> d = corpus[rng.below(corpus.size())];
    const std::size_t rounds = 1 + rng.below(4);
    for (std::size_t r = 0; r < rounds; ++r) mutate(d, corpus, rng);
    run_one(d);
  }
  std::printf("%s: ok\n", target.c_str());
  return 0;
}
