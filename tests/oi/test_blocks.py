"""Which fenced blocks run: CommonMark fences, aliases, nesting, order, and what the model is told otherwise."""

from __future__ import annotations

from tomo.oi.blocks import extract

F3, F4 = "```", "````"


def test_several_blocks_run_in_order_with_aliases():
    text = (f"first\n{F3}py\nprint(1)\n{F3}\nthen\n{F3}sh\nls\n{F3}\n{F3}Python3\nprint(2)\n{F3}\n"
            f"{F3}shell\necho 3\n{F3}\n{F3}bash title=x\necho 4\n{F3}\n")
    runnable = extract(text).runnable
    assert [(b.runner, b.code) for b in runnable] == [
        ("python", "print(1)\n"), ("shell", "ls\n"), ("python", "print(2)\n"), ("shell", "echo 3\n"),
        ("shell", "echo 4\n"),
    ]
    assert [b.line for b in runnable] == [2, 6, 9, 12, 15]


def test_tilde_fences():
    found = extract("~~~python\nx = '```'\n~~~\n~~~~bash\necho ~~~\n~~~\n~~~~\n")
    assert [(b.runner, b.code) for b in found.runnable] == [("python", "x = '```'\n"), ("shell", "echo ~~~\n~~~\n")]


def test_a_longer_fence_holds_shorter_ones():
    text = f"{F4}python\nreadme = '''\n{F3}bash\nrm -rf /\n{F3}\n'''\n{F4}\n"
    found = extract(text)
    assert len(found.blocks) == 1
    assert found.runnable[0].code == f"readme = '''\n{F3}bash\nrm -rf /\n{F3}\n'''\n"


def test_a_fence_with_an_info_string_does_not_close_a_block():
    text = f"{F3}python\ns = 1\n{F3}bash\nnot a new block\n{F3}\n"
    found = extract(text)
    assert len(found.blocks) == 1 and found.blocks[0].runner == "python"
    assert "not a new block" in found.blocks[0].code


def test_other_languages_and_unlabeled_blocks_do_not_run_and_the_model_is_told():
    found = extract(f"{F3}diff\n-a\n+b\n{F3}\n{F3}json\n{{}}\n{F3}\n{F3}\nplain\n{F3}\n")
    assert found.runnable == [] and len(found.skipped) == 3
    note = found.skipped_note()
    assert "Nothing was run" in note and "'diff'" in note and "'json'" in note and "unlabeled" in note


def test_no_blocks_is_the_end_of_the_turn_and_says_nothing():
    found = extract("All done: the tests pass.")
    assert found.blocks == [] and found.skipped_note() == ""


def test_an_unclosed_block_does_not_run():
    found = extract(f"{F3}bash\nrm -rf build\n# the reply was cut off here")
    assert found.runnable == [] and found.blocks[0].closed is False
    assert "never closed" in found.skipped_note()


def test_indented_fences_lose_their_indent_and_four_spaces_is_not_a_fence():
    found = extract(f"  {F3}python\n  x = 1\n    y = 2\n  {F3}\n    {F3}python\n    z = 3\n    {F3}\n")
    assert [b.code for b in found.runnable] == ["x = 1\n  y = 2\n"]


def test_a_runnable_block_next_to_a_diff_runs_alone_and_nothing_is_said():
    found = extract(f"{F3}diff\n-a\n{F3}\n{F3}python\nprint(1)\n{F3}\n")
    assert len(found.runnable) == 1 and found.skipped_note() == ""


def test_an_empty_block_is_still_a_block():
    found = extract(f"{F3}bash\n{F3}\n")
    assert found.runnable[0].code == ""
