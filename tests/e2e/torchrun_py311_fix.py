#!/usr/bin/python3
# torchrun, with one fix: Debian 12's python3-torch (1.13.1) runs on Python 3.11, where iterating
# an IntFlag no longer yields its zero member, so torchrun's Std.from_str("0") -- the default of
# --redirects and --tee -- returns None and every launch dies in to_map() ("'NoneType' object has
# no attribute 'get'"). PyTorch 2.x builds the member from the value instead; so does this.
import re
import sys

from torch.distributed.elastic.multiprocessing import api


def _from_str(vm):
    if re.match(api._VALUE_REGEX, vm):
        return api.Std(int(vm))
    if re.match(api._MAPPING_REGEX, vm):
        return {int(i): api.Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")


api.Std.from_str = staticmethod(_from_str)

from torch.distributed.run import main  # noqa: E402  (after the fix, on purpose)

sys.exit(main())
