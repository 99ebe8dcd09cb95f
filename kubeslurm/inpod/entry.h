// The in-pod runtime's process entry points, called by the in-pod tool's main()
// (cmd/kubeslurm-inpod; srunMain also by the CLI's): they own the real process state the
// libraries take as parameters (signals, environ, the working directory).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kubeslurm::inpod {

// The process's environment (environ) as NAME -> VALUE, as these entry points read it.
std::map<std::string, std::string> processEnvironment();

// `srun [options] command...` (invoked by that name).
int srunMain(const std::vector<std::string>& args);

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

}  // namespace kubeslurm::inpod
