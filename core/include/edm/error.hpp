// One exception hierarchy with context (STYLE 10–11). Core never prints and never exits: it throws
// these; apps/ chooses messages and exit codes. Every user-facing error carries a short stable id
// (EDM-CFG-012) that people can search for.
#pragma once
#include <stdexcept>
#include <string>

namespace edm {

class Error : public std::runtime_error {
 public:
  Error(std::string id, const std::string& what) : std::runtime_error(what), id_(std::move(id)) {}
  const std::string& id() const { return id_; }
  // Exit code the app uses for this family (2 = user input, 3 = device, 4 = I/O, 5 = plugin, 1 = other).
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

}  // namespace edm
