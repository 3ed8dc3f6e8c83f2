"""Packaged local models: the parts found in installed packages, assembled once, checked, never half-written.

The packages here are real ones made in a temporary directory on ``sys.path`` (a package directory holding
``data/partNN.bin``, the layout of the model part packages); the real models' own parts are exercised by the live
tier (tests/live), which serves them.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path

import pytest

from tomo.errors import ConfigError, ModelUnavailable
from tomo.models.local import MODELS, PackagedModel, cache_dir, gguf_path, model_file, packaged, statuses

ROOT = Path(__file__).resolve().parents[2]
PARTS = [b"GGUF" + b"a" * 1000, b"b" * 1024, b"c" * 17]


def make_parts(where: Path, prefix: str, contents: list[bytes]) -> None:
    for n, content in enumerate(contents, 1):
        data = where / f"{prefix}{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{n:02d}.bin").write_bytes(content)


def split_model(prefix: str, contents: list[bytes], *, size: int | None = None,
                sha: str | None = None) -> PackagedModel:
    whole = b"".join(contents)
    return PackagedModel(
        name=f"{prefix}-model", title="a test model", licence="MIT", size=len(whole) if size is None else size,
        sha256=sha or hashlib.sha256(whole).hexdigest(),
        requirements=tuple(f"{prefix.replace('_', '-')}{n}==1.0" for n in range(1, len(contents) + 1)),
        parts=tuple((f"{prefix}{n}", f"data/part{n:02d}.bin") for n in range(1, len(contents) + 1)),
        chat_format=None, notes="")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "site"
    where.mkdir()
    monkeypatch.syspath_prepend(str(where))
    return where


def test_the_parts_are_assembled_in_order_once_and_reused(site: Path, tmp_path: Path) -> None:
    make_parts(site, "tomotest_ok_part", PARTS)
    model = split_model("tomotest_ok_part", PARTS)
    env = {"TOMO_CACHE": str(tmp_path / "cache")}
    path = model_file(model, env=env)
    assert path == tmp_path / "cache" / "models" / "tomotest_ok_part-model.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert os.listdir(path.parent) == [path.name]  # no temporary file left beside it
    assert path.stat().st_mode & 0o777 == 0o644
    before = path.stat()
    assert model_file(model, env=env) == path and path.stat().st_ino == before.st_ino  # reused, not rewritten


def test_a_cached_file_of_the_wrong_size_is_replaced_whole(site: Path, tmp_path: Path) -> None:
    make_parts(site, "tomotest_stale_part", PARTS)
    model = split_model("tomotest_stale_part", PARTS)
    env = {"TOMO_CACHE": str(tmp_path)}
    stale = tmp_path / "models" / "tomotest_stale_part-model.gguf"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"GGUF half of it")  # what a copy killed half-way would leave with a plain write
    assert model_file(model, env=env).read_bytes() == b"".join(PARTS)


def test_damaged_parts_leave_nothing_behind_and_say_what_to_reinstall(site: Path, tmp_path: Path) -> None:
    make_parts(site, "tomotest_bad_part", PARTS)
    env = {"TOMO_CACHE": str(tmp_path / "cache")}
    tampered = split_model("tomotest_bad_part", PARTS, sha="0" * 64)  # same size, other bytes
    with pytest.raises(ModelUnavailable, match=r"assembled to 2,045 bytes with SHA-256 .*not 2,045 bytes") as info:
        model_file(tampered, env=env)
    assert "--force-reinstall" in info.value.hint and "'tomotest-bad-part1==1.0'" in info.value.hint
    assert list((tmp_path / "cache" / "models").iterdir()) == []  # neither the target nor the temporary file
    short = split_model("tomotest_bad_part", PARTS, size=4096)
    with pytest.raises(ModelUnavailable, match=r"the 3 parts of tomotest_bad_part-model add up to 2,045 bytes, not "
                                                r"4,096"):
        model_file(short, env=env)


def test_a_missing_part_names_its_package_and_the_pip_command(site: Path, tmp_path: Path) -> None:
    make_parts(site, "tomotest_gap_part", PARTS)
    model = split_model("tomotest_gap_part", [*PARTS, b"d"])  # a fourth part no package holds
    with pytest.raises(ModelUnavailable, match=r"tomotest_gap_part-model is not installed: 1 of its 4 package\(s\) "
                                                r"missing \(tomotest-gap-part4==1.0\)") as info:
        model_file(model, env={"TOMO_CACHE": str(tmp_path)})
    assert info.value.hint.startswith("pip install 'tomotest-gap-part4==1.0'")
    assert not (tmp_path / "models").exists()


def test_unknown_names_and_the_cache_directory() -> None:
    with pytest.raises(ConfigError, match="no packaged model is named 'qwen'") as info:
        gguf_path("qwen")
    assert "qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, smollm2-135m" in info.value.hint
    assert packaged("smollm2-135m").chat_format == "chatml-function-calling"
    assert cache_dir({"TOMO_CACHE": "/c"}) == Path("/c/models")
    assert cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/tomo/models")
    assert cache_dir({}) == Path.home() / ".cache" / "tomo" / "models"


def test_the_table_and_the_local_extra_name_the_same_packages() -> None:
    """pip install 'tomo[local]' must bring exactly what the table looks for, pinned as the table pins it."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = {r for m in MODELS.values() for r in m.requirements}
    assert wanted <= set(extras["local"])
    assert "tomo[local]" in extras["live"]
    split = [m for m in MODELS.values() if len(m.parts) > 1]
    assert [(m.name, len(m.parts), m.size) for m in split] == [("qwen2.5-coder-1.5b", 22, 1_117_320_768),
                                                              ("qwen2.5-coder-0.5b", 6, 491_400_064)]
    assert all("==" in r for m in split for r in m.requirements)  # exact pins: the sizes and hashes are theirs


def test_statuses_say_what_is_missing_without_assembling(tmp_path: Path) -> None:
    rows = {s.model.name: s.to_dict() for s in statuses({"TOMO_CACHE": str(tmp_path)})}
    assert set(rows) == set(MODELS)
    for row in rows.values():
        assert row["installed"] == (row["missing"] == []) and (row["install"] is None) == row["installed"]
        if row["parts"] > 1:
            assert row["assembled"] is False  # nothing assembled in an empty cache, and asking assembles nothing
    assert not (tmp_path / "models").exists()
