# shellcheck shell=sh
# Sourced by the tests of the in-pod runtime.
# inpod_tools TOOL DIR: lays out in DIR what a rank pod's /kubeslurm/bin holds (the tools image's
# /opt/kubeslurm/bin, deploy/docker/tools.Dockerfile): kubeslurm-inpod, and srun and scontrol
# linked to it.
inpod_tools() {
  mkdir -p "$2"
  cp "$1" "$2/kubeslurm-inpod"
  ln -sf kubeslurm-inpod "$2/srun"
  ln -sf kubeslurm-inpod "$2/scontrol"
}
