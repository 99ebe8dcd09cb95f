#!/usr/bin/env python3
"""Drives `srun --pty` through a real pseudo-terminal, as a researcher's terminal would.

    pty_session.py [--keystrokes N] -- COMMAND...     (e.g. srun -N1 --pty bash --norc)

The command runs on the slave side of a pty this script holds the master of. The script types
into it as a user would and checks, in this order:
  1. the shell answers (`echo READY-$((1+1))` prints READY-2: arithmetic done remotely);
  2. N keystrokes, one at a time, each timed from the write until its echo comes back from the
     task's terminal (the keystroke round trip through srun, the operator's step proxy and the
     step agent), each echoed exactly once, in lines of 40 dropped with Ctrl-U;
  3. a window-size change (TIOCSWINSZ on the master: the kernel sends srun SIGWINCH) reaches the
     task's terminal: `stty size` prints the new size;
  4. `echo nodes=$SLURM_JOB_NUM_NODES; exit 3` prints the job's node count and srun exits 3.
It prints one line of JSON with the keystroke figures and exits 0, or says what failed and
exits 1. Everything the terminal showed is written to stderr at the end.
"""

import argparse
import fcntl
import json
import os
import pty
import select
import struct
import sys
import termios
import time


class Terminal:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        self.seen = bytearray()  # everything the terminal showed
        self.unread = 0  # where the next expect() starts looking

    def resize(self, rows, columns):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    def type(self, text):
        os.write(self.fd, text)

    def _read(self, deadline):
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the command ended and closed the slave
            return False
        self.seen += data
        return bool(data)

    def expect(self, pattern, seconds):
        """Waits for `pattern` past what earlier calls consumed; True when it came."""
        deadline = time.monotonic() + seconds
        while True:
            at = self.seen.find(pattern, self.unread)
            if at >= 0:
                self.unread = at + len(pattern)
                return True
            if time.monotonic() >= deadline or not self._read(deadline):
                return False

    def wait(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return os.waitstatus_to_exitcode(status)
            self._read(min(deadline, time.monotonic() + 0.1))
        return None


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keystrokes", type=int, default=200)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    terminal = Terminal(args.command)
    terminal.resize(24, 80)

    def fail(what):
        print(f"pty_session: {what}", file=sys.stderr)
        print("--- the terminal showed:", file=sys.stderr)
        print(terminal.seen.decode(errors="replace"), file=sys.stderr)
        try:
            os.kill(terminal.pid, 9)
        except ProcessLookupError:
            pass
        sys.exit(1)

    # Typed before srun makes the terminal raw, this waits in the local line discipline.
    terminal.type(b"echo READY-$((1+1))\n")
    if not terminal.expect(b"READY-2", 120):
        fail("the shell never answered")

    # In lines of at most 40 keystrokes, each dropped with Ctrl-U, so that none wraps (a shell
    # redraws a wrapped line).
    samples = []
    while len(samples) < args.keystrokes:
        line = min(40, args.keystrokes - len(samples))
        typed_from = len(terminal.seen)
        for _ in range(line):
            started = time.monotonic()
            terminal.type(b"x")
            if not terminal.expect(b"x", 5):
                fail("a keystroke was not echoed within 5 s")
            samples.append((time.monotonic() - started) * 1000)
        # Each keystroke echoed once, by the task's terminal: srun's own terminal is raw (a
        # second echo would be its line discipline's, and the figures a local round trip).
        terminal.expect(b"never shown", 0.3)
        echoes = terminal.seen.count(b"x", typed_from)
        if echoes != line:
            fail(f"{line} keystrokes came back as {echoes} echoes")
        terminal.type(b"\x15")  # Ctrl-U: the typed line is dropped
        terminal.expect(b"never shown", 0.1)
        terminal.unread = len(terminal.seen)

    terminal.resize(50, 132)
    for _ in range(5):
        terminal.type(b"stty size\n")
        if terminal.expect(b"50 132", 2):
            break
    else:
        fail("the new window size never reached the task's terminal")

    terminal.type(b"echo nodes=$SLURM_JOB_NUM_NODES; exit 3\n")
    if not terminal.expect(b"nodes=1", 10):
        fail("the job's variables are not the shell's")
    code = terminal.wait(30)
    if code != 3:
        fail(f"srun exited {code}, not the shell's 3")
    print(terminal.seen.decode(errors="replace"), file=sys.stderr)
    print(json.dumps({
        "keystrokes": len(samples),
        "keystroke_p50_ms": round(percentile(samples, 0.50), 2),
        "keystroke_p99_ms": round(percentile(samples, 0.99), 2),
        "keystroke_max_ms": round(max(samples), 2),
    }))


if __name__ == "__main__":
    main()
