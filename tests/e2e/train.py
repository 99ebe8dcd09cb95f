# The training script, reduced to what proves the rendezvous: every worker joins the
# gloo process group torchrun set up and all_reduces its rank + 1; each prints the sum, which
# for 2 nodes x 2 workers is 1 + 2 + 3 + 4 = 10.
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
world = dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
# One write(2) per line: the node's two workers share torchrun's stdout, and print() may write
# the text and its newline separately, which interleaves their lines.
line = (
    f"rank {rank} of {world} (node {os.environ['SLURM_NODEID']}, "
    f"local {os.environ['LOCAL_RANK']}): all_reduce={value.item():g}\n"
)
os.write(1, line.encode())
dist.destroy_process_group()
