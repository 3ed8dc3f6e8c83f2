from tomo import __version__


def test_version_runs_as_a_module(run_tomo) -> None:
    out = run_tomo("version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == __version__


def test_unknown_command_is_an_error(run_tomo) -> None:
    out = run_tomo("frobnicate")
    assert out.returncode != 0
    assert "frobnicate" in out.stderr
