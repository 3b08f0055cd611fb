// The rows of a field file's slab shared among threads, for the passes over field.h5 (spectrum.cpp,
// twisted_light.cpp): how many rows a slab holds within the read budget, how many threads share
// them, and the loop that hands each row to one thread. Rows write disjoint pixels; what a pass sums
// over the screen it keeps per row and adds in row order after the slab, so that its results are
// bit-identical for every thread count and slab size. Private to analysis/.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace edm::analysis {

struct SlabRows {
  std::size_t rows_per_slab = 1;  // at least one, even when one row is over the budget
  std::size_t threads = 1;        // at most rows_per_slab
};

// row_bytes: one row of every component the pass reads; budget: bytes per slab; threads: 0 = all
// hardware threads.
inline SlabRows plan_slab_rows(std::size_t row_bytes, std::size_t budget, unsigned threads) {
  SlabRows s;
  s.rows_per_slab = std::max<std::size_t>(1, budget / std::max<std::size_t>(1, row_bytes));
  s.threads = std::max<std::size_t>(
      1, std::min<std::size_t>(s.rows_per_slab, threads ? threads : std::thread::hardware_concurrency()));
  return s;
}

// Calls row(iy, scratch) for every iy in [iy0, iy1) on min(threads, iy1 − iy0) threads, this one
// among them, each with its own scratch from make_scratch(). The first exception a thread throws
// stops the others before their next row and is rethrown here once all have joined.
template <class MakeScratch, class Row>
void for_rows_in_parallel(std::size_t iy0, std::size_t iy1, std::size_t threads, MakeScratch make_scratch,
                          Row row) {
  std::atomic<std::size_t> next{iy0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      auto scratch = make_scratch();
      for (std::size_t iy; (iy = next.fetch_add(1)) < iy1;) row(iy, scratch);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = iy1;  // stop the others early
    }
  };
  const std::size_t nt = std::min(threads, iy1 - iy0);
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < nt; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace edm::analysis
