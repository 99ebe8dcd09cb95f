// A SlurmJob with every field the codec models set, for the codec's tests and the CRD checks
// in tests/unit/shim.
#pragma once

#include "kubeslurm/api/slurmjob.h"

namespace kubeslurm::api::testing {

inline SlurmJobObject richJob() {
  SlurmJobObject job;
  job.name = "train-abcde";
  job.namespaceName = "ml";
  job.user = "alice";
  slurm::JobRequest& r = job.request;
  r.jobName = "train";
  r.partition = "train";
  r.account = "ml-team";
  r.qos = "normal";
  r.nodes = slurm::NodeRange{2, 8};
  r.ntasks = 16;
  r.ntasksPerNode = 8;
  r.cpusPerTask = 4;
  r.minCpusPerNode = 32;
  r.contiguous = true;
  r.gres = {{"gpu", "a100", 8}};
  r.gpus = {{"gpu", "a100", 16}};
  r.gpusPerNode = {{"gpu", "", 8}};
  r.gpusPerTask = {{"gpu", "", 1}};
  r.memPerNodeMb = 65536;
  r.memPerCpuMb = 1000;
  r.memPerGpuMb = 2097152;
  r.timeLimit = slurm::TimeLimit{7200};
  r.timeMin = slurm::TimeLimit{};
  r.arrayText = "0-7%2";
  r.array = *slurm::parseArraySpec("0-7%2");
  r.dependency = *slurm::parseDependency("afterok:9");
  r.shared = slurm::SharedMode::kExclusive;
  r.requeue = false;
  r.output = "/home/alice/o-%j.out";
  r.error = "/home/alice/e-%j.err";
  r.input = "/dev/null";
  r.workDir = "/home/alice";
  r.exportEnv = "ALL,FOO=1";
  r.environment = {{"FOO", "1"}, {"CUDA_VERSION", "12.0.0"}};
  r.nice = -5;
  r.priority = 100;
  r.nodeList = "gpu-node-[001-002]";
  r.excludeList = "gpu-node-007";
  r.constraint = "a100";
  r.switches = 1;
  r.switchesWaitSeconds = 300;
  r.begin = 1795235712;
  r.deadline = 1795239312;
  r.signal = slurm::SignalSpec{10, 90, true, false};
  r.openMode = slurm::OpenMode::kAppend;
  r.hold = true;
  r.comment = "a comment";
  r.mailType = 0x0003;
  r.mailUser = "alice@example.com";
  r.container = {"nvcr.io#nvidia/pytorch:24.01-py3", {"/data:/data:ro"}, "/ws", {"A"}, "c"};
  job.script = "#!/bin/sh\nhostname\n";
  job.scriptPath = "/home/alice/train.sh";
  job.scriptArgs = {"--lr", "0.1"};
  SlurmJobStatus s;
  s.jobId = 42;
  s.state = "RUNNING";
  s.stateCode = "R";
  s.reason = "None";
  s.nodeList = "gpu-node-[001-002]";
  s.submitTime = 1795235712;
  s.startTime = 1795235713;
  s.exitCode = "0:0";
  s.restarts = 1;
  s.priority = 10853;
  job.status = s;
  return job;
}

}  // namespace kubeslurm::api::testing
