// A RunObserver that keeps every progress report and, given a flag, requests a stop once `stop_at`
// electrons are done: how the in-process tests stop a run at a chosen point of its progress.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "edm/run.hpp"

namespace edm::test {

struct ProgressRecorder : RunObserver {
  std::vector<RunProgress> reports;
  std::atomic<bool>* stop = nullptr;  // set once `stop_at` electrons are done
  std::uint64_t stop_at = 0;
  void progress(const RunProgress& p) override {
    reports.push_back(p);
    if (stop && p.done >= stop_at) stop->store(true);
  }
};

}  // namespace edm::test
