// `srun` inside a kubeslurm job: lays the step out over the job's ranks, has every rank's step
// agent start its tasks, relays their output (with `-l` labels), forwards signals, and exits as
// Slurm's srun does: the largest task exit code, or 128 + the highest signal that killed one
// (src/srun/libsrun/srun_job.c fini_srun; src/plugins/launch/slurm/launch_slurm.c).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "kubeslurm/base/status.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace kubeslurm::step {
struct StepAllocation;
struct StepLayout;
}  // namespace kubeslurm::step

namespace kubeslurm::inpod {

// How srun reaches the agents of the job's ranks. Inside a job: each rank's agent directly, with
// the job's step token. On a login host: the operator's step proxy, with the caller's own
// Kubernetes credentials and the job and rank each call is for (kubeslurm/rpc/step_proxy.h).
struct StepTransport {
  std::function<std::shared_ptr<grpc::Channel>(std::uint32_t rank)> connect;
  // Adds what a call to `rank` carries (credentials, routing).
  std::function<void(grpc::ClientContext& context, std::uint32_t rank)> authorize;
};

struct SrunSettings {
  // How long an agent that does not answer yet is waited for (a rank pod still starting).
  std::chrono::milliseconds connectTimeout{std::chrono::seconds(60)};
  std::string workingDirectory;  // the tasks' (srun's own unless -D)
  std::string umask;             // srun's, "0022": SLURM_UMASK of the tasks ("" leaves it out)
  // srun's stdin, which the tasks that read input get (-i/--input, --pty); -1: none, every task
  // reads /dev/null. With --pty, a terminal here goes raw for the step's life.
  int inputFd = -1;
  // Where --pty reads the window size (srun's stdout, as srun_pty.c set_winsize does); -1 or not
  // a terminal: "Not using a pseudo-terminal, disregarding --pty option".
  int terminalFd = -1;
};

class Srun {
 public:
  Srun(std::map<std::string, std::string> environment, SrunSettings settings, std::ostream& out,
       std::ostream& err);
  ~Srun();
  Srun(const Srun&) = delete;
  Srun& operator=(const Srun&) = delete;

  // Reach the agents through `transport` (a login host's srun) instead of directly. Before run().
  void useTransport(StepTransport transport) { transport_ = std::move(transport); }

  // Runs `srun args...` (without argv[0]) to the end; returns srun's exit status.
  int run(const std::vector<std::string>& args);

  // A signal srun received, handled as srun's signal thread does: SIGINT once prints the
  // step's state, twice within a second kills it; SIGTERM/SIGHUP/SIGQUIT kill it; others are
  // forwarded to the tasks; SIGWINCH sends a --pty step its new window size. Thread-safe; a
  // no-op before the step is launched or after it ends.
  void onSignal(int signal);

 private:
  struct Step;
  void message(const std::string& line);  // "srun: <line>" on err
  StatusOr<StepTransport> directTransport(const step::StepAllocation& allocation,
                                          const step::StepLayout& layout) const;

  std::map<std::string, std::string> environment_;
  SrunSettings settings_;
  StepTransport transport_;
  std::ostream& out_;
  std::ostream& err_;
  std::mutex outputMutex_;
  std::mutex stepMutex_;
  std::shared_ptr<Step> step_;
  std::chrono::steady_clock::time_point lastInterrupt_{};
};

}  // namespace kubeslurm::inpod
