"""Runs a program on a terminal of its own (a pty), so that under Wine it has a
console: waits for PROMPT in what it shows, types LINE and Enter, and prints all it
showed, without the terminal's escape sequences. Exits with the program's status.

    console.py PROMPT LINE -- PROGRAM [ARGS...]
"""
import os
import pty
import re
import select
import sys
import time
import tty

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
# Wine's console draws a space as "move right" (CSI n C): put the spaces back.
FORWARD = re.compile(rb"\x1b\[K\x1b\[([0-9]*)C")


def plain(shown: bytes) -> bytes:
    shown = FORWARD.sub(lambda m: b" " * int(m.group(1) or b"1"), shown)
    return ESCAPES.sub(b"", shown)


def main() -> int:
    prompt, line = sys.argv[1].encode(), sys.argv[2].encode()
    argv = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        # Raw from the start, as Wine's console sets it: what is typed before the
        # program reads is not cooked by the terminal (Enter stays a carriage return).
        tty.setraw(0)
        os.execvp(argv[0], argv)
    shown, typed = b"", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # the program ended: the pty is closed
            break
        if not data:
            break
        shown += data
        if not typed and prompt in plain(shown):
            os.write(fd, line + b"\r")
            typed = True
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(plain(shown).decode("utf-8", "replace"))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
