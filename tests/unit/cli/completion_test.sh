#!/usr/bin/env bash
# `kubeslurm completion bash`: the generated script is valid bash and completes commands,
# options, job ids, partitions and states. Job ids and partitions come from the binary beside
# the completed command; here a stand-in `kubeslurm` answers for the cluster.
# Usage: completion_test.sh PATH/TO/kubeslurm
set -euo pipefail
real=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$real" completion bash >"$work/completion.bash"
bash -n "$work/completion.bash"

cat >"$work/kubeslurm" <<'STUB'
#!/bin/sh
case "$*" in
  "squeue -h -t all -o %i") printf '12\n13\n7_1\n' ;;
  "sinfo -h -o %R") printf 'batch\ndebug\n' ;;
esac
STUB
chmod +x "$work/kubeslurm"
# shellcheck source=/dev/null
source "$work/completion.bash"

fails=0
check() { # check "WORDS..." EXPECTED: completes the last word of WORDS
  local words=$1 want=$2
  read -r -a COMP_WORDS <<<"$words"
  [[ $words == *" " ]] && COMP_WORDS+=("")
  COMP_WORDS[0]="$work/${COMP_WORDS[0]}"
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _kubeslurm_complete
  local got="${COMPREPLY[*]}"
  if [[ $got != "$want" ]]; then
    echo "FAIL: '$words' -> '$got', expected '$want'"
    fails=$((fails + 1))
  fi
}

check "kubeslurm sq" "squeue"
check "kubeslurm s" "sbatch squeue scancel sinfo sacct sreport sacctmgr scontrol sprio sshare sdiag simulate"
check "sacctmgr " "show list add modify delete"
check "sacctmgr add u" "user"
check "sacctmgr modify account team set Grp" "GrpJobs= GrpTRES="
check "sacctmgr show as" "association"
check "sacctmgr show assoc Tr" "Tree"
check "sacctmgr show account W" "WithAssoc"
check "sreport " "user cluster"
check "sreport cluster A" "AccountUtilizationByUser"
check "sreport user T" "TopUsage"
check "kubeslurm sd" "sdiag"
check "sbatch --gres" "--gres --gres-flags"
check "sbatch --kubec" "--kubeconfig"
check "scancel " "12 13 7_1"
check "scancel 1" "12 13"
check "kubeslurm scancel -p " "batch debug"
check "squeue -t P" "PENDING PREEMPTED PD PR"
check "squeue -j " "12 13 7_1"
check "scontrol " "show hold release requeue requeuehold update version help"
check "scontrol requeueh" "requeuehold"
check "scontrol requeuehold 1" "12 13"
check "srun --pt" "--pty"
check "srun --jobid " "12 13 7_1"
check "salloc --gre" "--gres"
check "salloc --pt" ""
check "sattach --l" "--label --layout"
check "sattach 1" "12. 13."
check "scontrol show " "job partition node hostnames hostlist hostlistsorted"
check "scontrol show job 1" "12 13"
check "kubeslurm scontrol hold " "12 13 7_1"
check "scontrol show partition d" "debug"
check "sprio --w" "--weights"
check "squeue --m" "--me"
check "squeue --no" "--nodelist --noheader"
check "squeue --it" "--iterate"
check "sdiag -" "--all --reset --sort-by-id --sort-by-time --sort-by-time2 --usage --version --scheduler --scheduler-ca --scheduler-server-name --kubeconfig --context --namespace --help"
check "kubeslurm sdiag --sort" "--sort-by-id --sort-by-time --sort-by-time2"
check "sshare -" "--accounts --all --format --long --noheader --parsable --parsable2 --users --Users --scheduler --scheduler-ca --scheduler-server-name --kubeconfig --context --namespace --help"
check "kubeslurm completion " "bash"

if ((fails > 0)); then
  echo "$fails completion check(s) failed"
  exit 1
fi
echo "PASS: bash completion"
