# The training script, reduced to what proves the rendezvous: every worker joins the
# gloo process group torchrun set up and all_reduces its rank + 1; each prints the sum, which
# for 2 nodes x 2 workers is 1 + 2 + 3 + 4 = 10.
#
# With TRAIN_BACKEND=nccl (torchrun_test.sh --backend nccl, on a GPU machine) each worker then
# all_reduces rank + 1 on a GPU through NCCL, whose unique id travels through the same store. NCCL
# refuses two ranks of one communicator on one GPU, so with fewer GPUs than workers each worker's
# NCCL group is itself.
import os

import torch
import torch.distributed as dist


def say(line):
    # One write(2) per line: the node's workers share torchrun's stdout, and print() may write
    # the text and its newline separately, which interleaves their lines.
    os.write(1, (line + "\n").encode())


nccl = os.environ.get("TRAIN_BACKEND") == "nccl"
dist.init_process_group("cpu:gloo,cuda:nccl" if nccl else "gloo")
rank = dist.get_rank()
world = dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
say(
    f"rank {rank} of {world} (node {os.environ['SLURM_NODEID']}, "
    f"local {os.environ['LOCAL_RANK']}): all_reduce={value.item():g}"
)
if nccl:
    shared = torch.cuda.device_count() < world
    device = 0 if shared else rank
    torch.cuda.set_device(device)
    # new_group is collective: every rank creates every group, in the same order.
    groups = [dist.new_group([r], backend="nccl") for r in range(world)] if shared else None
    gpu_value = torch.tensor([float(rank + 1)], device="cuda")
    dist.all_reduce(gpu_value, group=groups[rank] if shared else None)
    torch.cuda.synchronize()
    alone = " alone" if shared else ""
    say(
        f"rank {rank} nccl all_reduce={gpu_value.item():g}{alone} on {torch.cuda.get_device_name(device)}"
        f" (NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, CUDA_VISIBLE_DEVICES="
        f"{os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')})"
    )
dist.destroy_process_group()
