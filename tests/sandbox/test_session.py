"""The persistent Python session: state survives between blocks of one session, in both boxes."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from sandbox_support import SMALL, processes_with, wait_for_process

from tomo.sandbox import Sandbox


@pytest.fixture(params=["local", "strict"])
def box(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


async def test_state_survives_between_blocks(box: Sandbox, ws: Path) -> None:
    async with box.session(ws) as py:
        first = await py.run("import math\nx = 41\nprint('set')")
        second = await py.run("x + 1")  # a final expression is echoed, like a notebook
        third = await py.run("print(math.sqrt(x + 8))")
    assert (first.output, second.output, third.output) == ("set\n", "42\n", "7.0\n")
    assert py.starts == 1


async def test_a_new_session_starts_fresh(box: Sandbox, ws: Path) -> None:
    async with box.session(ws) as py:
        await py.run("secret = 1")
    async with box.session(ws) as py:
        result = await py.run("print(secret)")
    assert result.exit_code == 1 and "NameError" in result.output
    assert 'File "<block>"' in result.output and "<string>" not in result.output  # the driver's frames are hidden


async def test_errors_and_exit_codes(box: Sandbox, ws: Path) -> None:
    async with box.session(ws) as py:
        error = await py.run("print('before', end=''); 1 / 0")
        exited = await py.run("import sys; sys.exit(3)")
        still = await py.run("print('alive')")
    assert error.exit_code == 1 and error.output.startswith("before") and "ZeroDivisionError" in error.output
    assert exited.exit_code == 3
    assert still.output == "alive\n" and py.starts == 1


async def test_sys_exit_with_a_message_prints_it_like_python_does(box: Sandbox, ws: Path) -> None:
    """``sys.exit("usage: ...")`` prints the message and exits 1 in a plain run; a session block must do the same."""
    async with box.session(ws) as py:
        said = await py.run("import sys; sys.exit('usage: tool FILE')")
        quiet = await py.run("raise SystemExit")
    plain = await box.run("import sys; sys.exit('usage: tool FILE')", "python", ws)
    assert (said.exit_code, said.output) == (plain.exit_code, plain.output) == (1, "usage: tool FILE\n")
    assert (quiet.exit_code, quiet.output) == (0, "")


async def test_input_cannot_read_the_protocol(box: Sandbox, ws: Path) -> None:
    async with box.session(ws) as py:
        result = await py.run("try:\n    input()\nexcept EOFError:\n    print('eof')")
        after = await py.run("print('next')")
    assert result.output == "eof\n" and after.output == "next\n"


async def test_timeout_kills_the_session_and_the_next_block_starts_fresh(box: Sandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    async with box.session(ws, SMALL.with_(timeout_s=1)) as py:
        await py.run("kept = 1")
        slow = await py.run(f"import subprocess, time\nsubprocess.Popen(['sh', '-c', 'sleep 60; : {marker}'])\n"
                            "time.sleep(60)")
        assert processes_with(marker) == []
        after = await py.run("print('kept' in globals())")
    assert slow.timed_out and slow.exit_code == 124 and "state is lost" in slow.notes[0]
    assert after.output == "False\n" and "fresh one" in after.notes[0]
    assert py.starts == 2


async def test_a_dying_interpreter_is_reported(box: Sandbox, ws: Path) -> None:
    async with box.session(ws) as py:
        died = await py.run("import os; os._exit(9)")
    assert died.exit_code == 9 and "ended during this block" in died.notes[0]


async def test_output_is_capped_per_block(box: Sandbox, ws: Path) -> None:
    async with box.session(ws, SMALL.with_(output_bytes=100)) as py:
        big = await py.run("print('A' * 5000); print('END')")
        small = await py.run("print('ok')")
    assert big.truncated and big.output.startswith("AAAA") and big.output.endswith("END\n")
    assert small.output == "ok\n" and not small.truncated


async def test_closing_leaves_nothing_running(box: Sandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    async with box.session(ws) as py:
        await py.run(f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 60; : {marker}'])")
        assert await wait_for_process(marker)
    assert processes_with(marker) == []
    assert not py.alive


async def test_a_cancelled_block_ends_the_session(box: Sandbox, ws: Path) -> None:
    import asyncio

    marker = f"m{secrets.token_hex(6)}"
    async with box.session(ws) as py:
        code = f"import subprocess, time\nsubprocess.Popen(['sh', '-c', 'sleep 60; : {marker}'])\ntime.sleep(60)"
        task = asyncio.create_task(py.run(code))
        assert await wait_for_process(marker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert processes_with(marker) == []
        after = await py.run("print('clean')")
    assert after.output == "clean\n" and "fresh one" in after.notes[0]
