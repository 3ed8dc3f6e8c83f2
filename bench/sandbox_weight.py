"""A lowered job beside a busy one: how much CPU the busy one keeps when the lowered job runs sandboxed commands.

The setting of issue 27's lab: a model server at full weight, and beside it a job lowered as a whole (its session's
autogroup nice set to 19) that runs commands in sandboxes. Under Linux's autogroup scheduling each session gets an
equal share whatever its processes' nice, and every sandboxed command starts a session, so the lowered job's
commands used to take half the CPU. Here two CPU burners stand for the server (each in a session of its own, at
nice 0) and the lowered job runs two burners, either through bare bubblewrap (`bwrap --new-session`, the peer) or
tomo's local and strict boxes; the table gives the share of the CPU the server's burners got. Run with nothing else
busy: `python bench/sandbox_weight.py` (Linux with autogroup; bubblewrap for the strict rows).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._report import table, write_section

WINDOW_S = 10.0
BURN = "while True: pass"
LOWERED_JOB = """
import asyncio, subprocess, sys
with open('/proc/self/autogroup', 'w') as handle:
    handle.write('19')
how, seconds = sys.argv[1], float(sys.argv[2])
burn = [sys.executable, '-c', 'while True: pass']
if how == 'bwrap':  # the peer: bare bubblewrap, as a tool that sandboxes each command starts it
    box = ['bwrap', '--unshare-all', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev',
           '--proc', '/proc', '--']
    procs = [subprocess.Popen(['timeout', str(seconds), *box, *burn]) for _ in range(2)]
    for p in procs:
        p.wait()
else:
    from tomo.sandbox import BubblewrapSandbox, Limits, LocalSandbox
    sandbox = BubblewrapSandbox() if how == 'strict' else LocalSandbox()
    async def main():
        limits = Limits(timeout_s=seconds, cpu_s=int(seconds) * 4)
        await asyncio.gather(*[sandbox.run(burn, 'argv', '/tmp', limits) for _ in range(2)])
    asyncio.run(main())
"""


def kept_share(how: str) -> float:
    """The share of two cores the two full-weight burners got over ``WINDOW_S`` beside the lowered job."""
    job = subprocess.Popen([sys.executable, "-c", LOWERED_JOB, how, str(WINDOW_S + 3)], start_new_session=True)
    time.sleep(1.5)  # the job's boxes are running
    busy = [subprocess.Popen([sys.executable, "-c", BURN], start_new_session=True) for _ in range(2)]
    time.sleep(WINDOW_S)
    ticks = os.sysconf("SC_CLK_TCK")
    used = sum(sum(int(x) for x in Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
               for p in busy) / ticks
    for p in busy:
        p.kill()
        p.wait()
    job.wait()
    return used / (2 * WINDOW_S)


def main() -> None:
    if not Path("/proc/self/autogroup").exists():
        sys.exit("this kernel has no autogroup scheduling: sessions are not weighed, nothing to measure")
    hows = [("bare bwrap --new-session (peer)", "bwrap"), ("tomo local box", "local"),
            ("tomo strict box", "strict")]
    if shutil.which("bwrap") is None:
        hows = [h for h in hows if h[1] == "local"]
    rows = []
    for label, how in hows:
        share = kept_share(how)
        rows.append([label, f"{share:.0%}"])
        print(f"{label}: the full-weight job kept {share:.0%} of the CPU", flush=True)
    body = ("Two CPU burners at full weight (a model server's place) beside a job lowered as a whole "
            "(`echo 19 > /proc/self/autogroup`) that runs two burners in sandboxes, each the leader of a session "
            f"of its own; over {WINDOW_S:.0f} s, the share of two cores the full-weight burners got (an even split "
            "is 50%; the lowered job's fair share at nice 19 is about 1.5%).\n\n"
            + table(["the lowered job's commands run in", "full-weight job's share"], rows))
    write_section("sandbox-weight", "Sandbox: a lowered job stays lowered", "python bench/sandbox_weight.py", body)


if __name__ == "__main__":
    main()
