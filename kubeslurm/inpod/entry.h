// The in-pod runtime's process entry points, called by the in-pod tool's main()
// (cmd/kubeslurm-inpod; srunMain also by the CLI's): they own the real process state the
// libraries take as parameters (signals, environ, the working directory).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kubeslurm/inpod/srun.h"

namespace kubeslurm::inpod {

// The process's environment (environ) as NAME -> VALUE, as these entry points read it.
std::map<std::string, std::string> processEnvironment();

// `srun [options] command...` (invoked by that name).
int srunMain(const std::vector<std::string>& args);

// For a login host's srun, which waits for its allocation before srun proper starts: blocks the
// signals srun acts on in the calling thread, before any other thread exists, so that every
// thread inherits the block and they wait, pending, for srunThrough (which takes them) or for
// takePendingInterrupt.
void blockSrunSignals();
// Whether SIGINT, SIGTERM, SIGHUP or SIGQUIT is pending (and takes it): the user gave up.
bool takePendingInterrupt();

// srun on a login host, inside an allocation it holds: `environment` is the process's with the
// job's SLURM_* variables, `transport` the operator's step proxy (kubeslurm/cli/login_steps.h).
int srunThrough(const std::vector<std::string>& args,
                std::map<std::string, std::string> environment, StepTransport transport);

// `scontrol ...` (invoked by that name): what needs no controller here (inpod/scontrol.h), the
// rest through the full CLI.
int scontrolMain(const std::vector<std::string>& args);

// `kubeslurm-inpod step-agent [--listen ADDRESS] [--kill-wait SECONDS]`: every rank but 0. Serves
// until SIGTERM (the pod being deleted when rank 0 ends or the job is cancelled).
int stepAgentMain(const std::vector<std::string>& args);

// `kubeslurm-inpod batch-step [--listen ADDRESS] [--kill-wait SECONDS] SCRIPT [ARGS...]`: rank 0.
// Runs the agent and the batch script beside it, forwards signals to the script, ends with the
// script's exit status (128 + signal when one killed it) and kills steps left behind.
int batchStepMain(const std::vector<std::string>& args);

// `kubeslurm-inpod allocation [--listen ADDRESS] [--kill-wait SECONDS]`: rank 0 of an interactive
// allocation (srun or salloc from a login host). Serves rank 0's agent, which the operator's step
// proxy reaches, until the login side releases the allocation (Release: exits with the code it
// gives, the job's exit code) or the pod gets SIGTERM (scancel, the time limit: 128 + 15). Steps
// still running are killed either way; their records become the termination message.
int allocationMain(const std::vector<std::string>& args);

}  // namespace kubeslurm::inpod
