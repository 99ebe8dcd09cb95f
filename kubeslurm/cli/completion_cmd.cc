// `kubeslurm completion bash`: a bash completion script for kubeslurm and the Slurm-named
// symlinks (kubectl's convention: `source <(kubeslurm completion bash)`).
//
// It completes command names, each command's options, and the values users type most: job ids
// (scancel, scontrol, squeue -j, sacct -j, sprio -j) from `kubeslurm squeue`, partitions from
// `kubeslurm sinfo`, job states, and files for sbatch's script. sbatch's options come from its
// own option table, so the script cannot drift from the parser. Dynamic lists ask the cluster
// through the same binary, with a short timeout so that a slow cluster never blocks the shell.
#include <ostream>
#include <string>

#include "kubeslurm/cli/cli.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::cli {
namespace {

std::string sbatchOptions() {
  std::string words;
  for (std::string_view name : slurm::sbatchLongOptionNames()) {
    if (!words.empty()) words += ' ';
    words += "--";
    words += name;
  }
  // Ours (docs/cli.md): the query API and client-side dry runs (the cluster flags are added to
  // every command's list by the script).
  words += " --submit-timeout --dry-run --scheduler --scheduler-ca --scheduler-server-name";
  return words;
}

constexpr std::string_view kScriptHead =
    R"bash(# bash completion for kubeslurm (kubeslurm completion bash)
_kubeslurm_bin() {
  local word=${COMP_WORDS[0]}
  if [[ $word == */* ]]; then echo "${word%/*}/kubeslurm"; else echo kubeslurm; fi
}
_kubeslurm_ask() { timeout 5 "$(_kubeslurm_bin)" "$@" 2>/dev/null; }
_kubeslurm_jobs() { _kubeslurm_ask squeue -h -t all -o %i | sort -u; }
_kubeslurm_partitions() { _kubeslurm_ask sinfo -h -o %R | sort -u; }
_kubeslurm_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd=${COMP_WORDS[0]##*/} first=1
  COMPREPLY=()
  if [[ $cmd == kubeslurm ]]; then
    if ((COMP_CWORD == 1)); then
      mapfile -t COMPREPLY < <(compgen -W "$_kubeslurm_commands" -- "$cur")
      return
    fi
    cmd=${COMP_WORDS[1]}
    first=2
  fi
  local states="PENDING RUNNING SUSPENDED COMPLETED CANCELLED FAILED TIMEOUT NODE_FAIL PREEMPTED REQUEUED PD R S CD CA F TO NF PR all"
  case $prev in
    -p|--partition|--partitions)
      mapfile -t COMPREPLY < <(compgen -W "$(_kubeslurm_partitions)" -- "$cur"); return ;;
    -j|--jobs|--jobid)
      if [[ $cmd != sbatch ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_kubeslurm_jobs)" -- "$cur"); return
      fi ;;
    -t|--states|--state|-s)
      if [[ $cmd == squeue || $cmd == sacct || $cmd == scancel ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$states" -- "$cur"); return
      fi ;;
    --kubeconfig|--scheduler-ca|-o|--output|-e|--error|--chdir|-D)
      if [[ $cmd == sbatch || $prev == --kubeconfig || $prev == --scheduler-ca ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return
      fi ;;
  esac
  local options=""
  case $cmd in
    sbatch) options=$_kubeslurm_sbatch_options ;;
    squeue) options="--account --all-namespaces --array --format --Format --iterate --jobs --long --me --name --nodelist --noheader --partition --qos --sort --start --states --user --version --scheduler" ;;
    scancel) options="--account --batch --full --interactive --name --partition --qos --quiet --signal --state --user --verbose" ;;
    sinfo) options="--all --dead --exact --format --long --Node --noheader --partition --responding --list-reasons --summarize --states --sort" ;;
    sacct) options="--allocations --allusers --accounts --brief --endtime --format --jobs --long --name --noheader --parsable --parsable2 --partition --starttime --state --user" ;;
    sreport)
      if [[ $cur != -* ]]; then
        local sub=${COMP_WORDS[first]:-}
        if ((COMP_CWORD == first)); then
          mapfile -t COMPREPLY < <(compgen -W "user cluster" -- "$cur")
        elif [[ $sub == user && COMP_CWORD -eq $((first + 1)) ]]; then
          mapfile -t COMPREPLY < <(compgen -W "TopUsage" -- "$cur")
        elif [[ $sub == cluster && COMP_CWORD -eq $((first + 1)) ]]; then
          mapfile -t COMPREPLY < <(compgen -W "AccountUtilizationByUser UserUtilizationByAccount" -- "$cur")
        elif [[ $sub == user ]]; then
          mapfile -t COMPREPLY < <(compgen -W "Start= End= Users= Accounts= TopCount= Format= Group" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        elif [[ $sub == cluster ]]; then
          mapfile -t COMPREPLY < <(compgen -W "Start= End= Users= Accounts= Format= Tree" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        fi
        return
      fi
      options="--noheader --parsable --parsable2 --quiet --sort --tres --version --scheduler --scheduler-ca --scheduler-server-name" ;;
    sacctmgr)
      if [[ $cur != -* ]]; then
        local verb=${COMP_WORDS[first]:-}
        if ((COMP_CWORD == first)); then
          mapfile -t COMPREPLY < <(compgen -W "show list add modify delete" -- "$cur")
        elif ((COMP_CWORD == first + 1)); then
          local entities="account association"
          [[ $verb == add ]] && entities="account user"
          [[ $verb == modify || $verb == delete ]] && entities="account"
          mapfile -t COMPREPLY < <(compgen -W "$entities" -- "$cur")
        elif [[ $verb == add || $verb == modify ]]; then
          mapfile -t COMPREPLY < <(compgen -W "Account= Description= Organization= Parent= Fairshare= GrpJobs= GrpTRES= MaxJobs= MaxNodes= MaxSubmitJobs= MaxTRES= MaxWall= QOS= DefaultQOS= where set" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        elif [[ ${COMP_WORDS[first + 1]:-} == a[cC]* ]]; then
          mapfile -t COMPREPLY < <(compgen -W "Names= Descriptions= Organizations= Parents= Users= Format= WithAssoc" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        else
          mapfile -t COMPREPLY < <(compgen -W "Accounts= Users= Parents= Clusters= Format= Tree" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        fi
        return
      fi
      options="--associations --help --immediate --noheader --parsable --parsable2 --quiet --version" ;;
    sprio) options="--format --jobs --long --norm --noheader --partition --sort --user --weights --scheduler --scheduler-ca --scheduler-server-name" ;;
    sshare) options="--accounts --all --format --long --noheader --parsable --parsable2 --users --Users --scheduler --scheduler-ca --scheduler-server-name" ;;
    sdiag) options="--all --reset --sort-by-id --sort-by-time --sort-by-time2 --usage --version --scheduler --scheduler-ca --scheduler-server-name" ;;
    scontrol)
      if [[ $cur != -* ]]; then
        local sub=${COMP_WORDS[first]:-}
        if ((COMP_CWORD == first)); then
          mapfile -t COMPREPLY < <(compgen -W "show hold release requeue requeuehold update version help" -- "$cur")
        elif [[ $sub == show && COMP_CWORD -eq $((first + 1)) ]]; then
          mapfile -t COMPREPLY < <(compgen -W "job partition node hostnames hostlist hostlistsorted" -- "$cur")
        elif [[ $sub == show && ${COMP_WORDS[first+1]} == job ]] || [[ $sub == hold || $sub == release || $sub == requeue || $sub == requeuehold ]]; then
          mapfile -t COMPREPLY < <(compgen -W "$(_kubeslurm_jobs)" -- "$cur")
        elif [[ $sub == show && ${COMP_WORDS[first+1]} == partition ]]; then
          mapfile -t COMPREPLY < <(compgen -W "$(_kubeslurm_partitions)" -- "$cur")
        elif [[ $sub == update ]]; then
          mapfile -t COMPREPLY < <(compgen -W "JobId= TimeLimit= Nice= Comment=" -- "$cur")
          compopt -o nospace 2>/dev/null || true
        fi
        return
      fi
      options="--details --oneliner --quiet --verbose --version --help" ;;
    srun | salloc)
      options="--account --chdir --constraint --cpus-per-task --exclude --exclusive --export --gpus --gpus-per-node --gres --immediate --job-name --mem --nodelist --nodes --ntasks --ntasks-per-node --partition --qos --time"
      [[ $cmd == srun ]] && options+=" --input --jobid --kill-on-bad-exit --label --overlap --pty --test-only"
      [[ $cmd == salloc ]] && options+=" --bell --kill-command --no-bell --no-shell" ;;
    sattach)
      if [[ $cur != -* ]]; then
        # A step: the job's id and a dot, its step number to type.
        mapfile -t COMPREPLY < <(compgen -S . -W "$(_kubeslurm_jobs)" -- "$cur")
        compopt -o nospace 2>/dev/null || true
        return
      fi
      options="--error-filter --input-filter --label --layout --output-filter --quiet --usage --verbose --version" ;;
    completion) mapfile -t COMPREPLY < <(compgen -W "bash" -- "$cur"); return ;;
    *) return ;;
  esac
  options+=" --kubeconfig --context --namespace --help"
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
  elif [[ $cmd == sbatch ]]; then
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  elif [[ $cmd == scancel ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_kubeslurm_jobs)" -- "$cur")
  fi
}
)bash";

}  // namespace

int runCompletion(const std::vector<std::string>& args, CliIo& io) {
  if (args.size() != 1 || args[0] != "bash") {
    io.err << "Usage: kubeslurm completion bash\n"
              "Prints a bash completion script: source <(kubeslurm completion bash)\n";
    return args.size() == 1 && (args[0] == "--help" || args[0] == "-h") ? 0 : 2;
  }
  io.out << kScriptHead;
  io.out << "_kubeslurm_commands='";
  bool firstName = true;
  for (std::string_view name : slurmCommandNames()) {
    io.out << (firstName ? "" : " ") << name;
    firstName = false;
  }
  io.out << "'\n";
  io.out << "_kubeslurm_sbatch_options='" << sbatchOptions() << "'\n";
  io.out << "complete -F _kubeslurm_complete kubeslurm sbatch squeue scancel sinfo sacct sacctmgr "
            "sreport scontrol sprio sshare sdiag srun salloc sattach\n";
  return 0;
}

}  // namespace kubeslurm::cli
