// One exception hierarchy with context. Core never prints and never exits: it throws these; apps/
// chooses messages and exit codes. Every error carries a short stable id (EDM-CFG-012) that people
// can search for; each id is registered once, with its exit code, meaning and what to do, in
// core/src/error/ids.def (`edm explain ID`, share/docs/errors.md).
#pragma once
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace edm {

class Error : public std::runtime_error {
 public:
  Error(std::string id, const std::string& what) : std::runtime_error(what), id_(std::move(id)) {}
  const std::string& id() const { return id_; }
  // Exit code the app uses for this family (2 = user input, 3 = device, 4 = I/O, 5 = plugin,
  // 6 = physics, 130 = stopped, 1 = other).
  virtual int exit_code() const { return 1; }

 private:
  std::string id_;
};

// Campaign and command-line problems: message names file:line:col or the key.
class ConfigError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// OpenCL: carries the cl_int and the call text.
class DeviceError : public Error {
 public:
  DeviceError(std::string id, const std::string& what, int cl_status = 0)
      : Error(std::move(id), what), cl_status_(cl_status) {}
  int cl_status() const { return cl_status_; }
  int exit_code() const override { return 3; }

 private:
  int cl_status_;
};

// Kernel compilation: carries the build log and options.
class BuildError : public DeviceError {
 public:
  BuildError(const std::string& what, std::string log, std::string options)
      : DeviceError("EDM-CL-010", what), log_(std::move(log)), options_(std::move(options)) {}
  const std::string& log() const { return log_; }
  const std::string& options() const { return options_; }

 private:
  std::string log_, options_;
};

class IoError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 4; }
};

class PluginError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 5; }
};

// Physics/numerics that cannot go on (an integrator failure, a window not covered).
class PhysicsError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 6; }
};

// A run stopped on request (SIGINT/SIGTERM) after writing a checkpoint; `edm resume` continues it.
class Interrupted : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 130; }
};

// Decoded name of an OpenCL status code (CL_OUT_OF_RESOURCES, …).
const char* cl_status_name(int status);

// One registered error id. The exit code is the one edm returns for it, which is the exit code of
// the family thrown at its sites (tests/test_error_ids.cpp checks every site against this table).
struct ErrorIdInfo {
  std::string_view id;       // "EDM-CFG-006"
  int exit_code;             // 1 other, 2 input, 3 device, 4 I/O, 5 plugin, 6 physics, 130 stopped
  bool shared;               // the same problem, detected at several throw sites on purpose
  std::string_view meaning;  // one line: what went wrong
  std::string_view action;   // one line: what the user should do about it
};

// Every registered id, in the registry's order (grouped by prefix, numbers ascending).
std::span<const ErrorIdInfo> error_ids();
// The entry of `id`, or nullptr when it is not registered (ids from out-of-tree plugins).
const ErrorIdInfo* find_error_id(std::string_view id);
// What an exit code stands for, in a few words ("campaign or command-line input").
std::string_view exit_code_meaning(int exit_code);

}  // namespace edm
