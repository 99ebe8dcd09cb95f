#!/usr/bin/env bash
# The in-pod runtime's scenarios (step_scenarios.sh) on this host, with the tool laid out as a
# rank pod's /kubeslurm/bin holds it: kubeslurm-inpod, and srun and scontrol linked to it.
#
#   step_runtime_test.sh KUBESLURM_INPOD
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=$(realpath "$1")
TOOLS=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-tools.XXXXXX")
trap 'rm -rf "$TOOLS"' EXIT
# shellcheck source=tests/support/inpod_tools.sh
. "$HERE/../support/inpod_tools.sh"
inpod_tools "$TOOL" "$TOOLS"

# shellcheck source=tests/support/free_port.sh
. "$HERE/../support/free_port.sh"
P0=$(free_port)
P1=$(free_port)
while [ "$P1" = "$P0" ]; do P1=$(free_port); done
P0=$P0 P1=$P1 sh "$HERE/step_scenarios.sh" "$TOOLS"
