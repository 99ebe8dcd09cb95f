// A self-signed certificate for localhost and 127.0.0.1, made once per test suite with openssl,
// for the query server's tests (TLS only).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

namespace kubeslurm::rpc::testing {

class TestCertificate {
 public:
  // In a directory of its own under the temporary directory, named after `prefix` and the pid.
  void make(const std::string& prefix) {
    dir_ = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string command =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
        "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
        (dir_ / "tls.key").string() + " -out " + (dir_ / "tls.crt").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);  // NOLINT(concurrency-mt-unsafe)
  }
  void remove() const { std::filesystem::remove_all(dir_); }

  std::string certificatePem() const { return read(dir_ / "tls.crt"); }
  std::string privateKeyPem() const { return read(dir_ / "tls.key"); }
  const std::filesystem::path& dir() const { return dir_; }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace kubeslurm::rpc::testing
