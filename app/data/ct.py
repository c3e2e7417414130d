"""Load a CT from whatever the user brings: a DICOM folder, one DICOM file, NIfTI, NRRD or
MetaImage (no Qt).

Every loader returns a canonical :class:`~app.data.volume.Volume` whose affine maps canonical
indices to patient LPS millimetres. Values are kept as stored (HU for CT); NIfTI scaling
(scl_slope/scl_inter) is applied, staying int16 whenever the result fits. Uncompressed files are
memory-mapped rather than read.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from app.data.dicom import is_dicom_file, load_dicom_series
from app.data.problems import LoadError, Problem, ProblemList
from app.data.volume import Volume, canonicalize

PART = "ct"
Progress = Callable[[int, int], None]

_INT16 = np.iinfo(np.int16)
_LPS_FROM_RAS = np.diag([-1.0, -1.0, 1.0, 1.0])

# NRRD "space" → sign flips that take its axes to LPS.
_NRRD_SPACES: dict[str, tuple[float, float, float]] = {
    "left-posterior-superior": (1, 1, 1), "lps": (1, 1, 1),
    "right-anterior-superior": (-1, -1, 1), "ras": (-1, -1, 1),
    "left-anterior-superior": (1, -1, 1), "las": (1, -1, 1),
}
_NRRD_TYPES: dict[str, str] = {}
for _names, _code in (
    (("signed char", "int8", "int8_t"), "i1"),
    (("uchar", "unsigned char", "uint8", "uint8_t"), "u1"),
    (("short", "short int", "signed short", "signed short int", "int16", "int16_t"), "i2"),
    (("ushort", "unsigned short", "unsigned short int", "uint16", "uint16_t"), "u2"),
    (("int", "signed int", "int32", "int32_t"), "i4"),
    (("uint", "unsigned int", "uint32", "uint32_t"), "u4"),
    (("longlong", "long long", "long long int", "signed long long", "signed long long int",
      "int64", "int64_t"), "i8"),
    (("ulonglong", "unsigned long long", "unsigned long long int", "uint64", "uint64_t"), "u8"),
    (("float",), "f4"),
    (("double",), "f8"),
):
    for _n in _names:
        _NRRD_TYPES[_n] = _code

_MET_TYPES = {
    "MET_CHAR": "i1", "MET_UCHAR": "u1", "MET_SHORT": "i2", "MET_USHORT": "u2",
    "MET_INT": "i4", "MET_UINT": "u4", "MET_LONG": "i4", "MET_ULONG": "u4",
    "MET_LONG_LONG": "i8", "MET_ULONG_LONG": "u8", "MET_FLOAT": "f4", "MET_DOUBLE": "f8",
}

_VOLUME_SUFFIXES = (".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((s for s in _VOLUME_SUFFIXES if name.endswith(s)), path.suffix.lower())


def load_ct(path: Path | str, progress: Progress | None = None) -> Volume:
    """Load the CT at ``path``: a folder (DICOM series, or one volume file), or a single file.

    Raises ``LoadError`` with a plain-words message when nothing can be loaded.
    """
    path = Path(path)
    if not path.exists():
        raise LoadError(PART, f"The CT file or folder {path} does not exist.")
    if path.is_dir():
        return _load_dir(path, progress)
    suffix = _suffix(path)
    loaders: dict[str, Callable[[Path], Volume]] = {
        ".nii": _load_nifti, ".nii.gz": _load_nifti, ".nrrd": _load_nrrd, ".nhdr": _load_nrrd,
        ".mha": _load_metaimage, ".mhd": _load_metaimage,
    }
    if suffix in loaders:
        if progress:
            progress(0, 1)
        vol = loaders[suffix](path)
        if progress:
            progress(1, 1)
        return vol
    if is_dicom_file(path):
        return load_dicom_series(path, progress)
    raise LoadError(PART, f"{path.name} is not a CT format the console reads (a DICOM folder, "
                          "NIfTI .nii/.nii.gz, NRRD .nrrd/.nhdr or MetaImage .mha/.mhd).")


def _load_dir(path: Path, progress: Progress | None) -> Volume:
    """A ct/ folder: a DICOM series, or (DESIGN §5.5) a single volume file such as ct.nii.gz."""
    entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    volumes = sorted(p for p in entries if p.is_file() and _suffix(p) in _VOLUME_SUFFIXES
                     and not p.name.lower().endswith(".raw"))
    if not volumes:
        return load_dicom_series(path, progress)
    others = [p for p in entries if p not in volumes and not _is_data_file_of(p, volumes)]
    if others:
        try:
            vol = load_dicom_series(path, progress)
        except LoadError:
            pass  # no DICOM series here: fall back to the volume file
        else:
            vol.problems.append(_info(f"Also found {volumes[0].name}; the DICOM series was used."))
            return vol
    chosen = _pick_volume(volumes, path)
    vol = load_ct(chosen, progress)
    if len(volumes) > 1:
        rest = ", ".join(v.name for v in volumes if v != chosen)
        vol.problems.append(_info(f"Loaded {chosen.name} as the CT; also in the folder: {rest}."))
    return vol


def _is_data_file_of(p: Path, volumes: list[Path]) -> bool:
    """The .raw/.zraw payload of a .mhd/.nhdr header."""
    return p.suffix.lower() in (".raw", ".zraw", ".gz", ".img") and any(
        v.stem == p.stem or v.name.split(".")[0] == p.name.split(".")[0] for v in volumes)


def _pick_volume(volumes: list[Path], folder: Path) -> Path:
    if len(volumes) == 1:
        return volumes[0]
    # Label maps live next to CTs in many exports; prefer what is named like an image.
    preferred = [v for v in volumes if v.name.lower().startswith(("ct", "image", "img", "volume"))]
    not_labels = [v for v in volumes if not any(w in v.name.lower() for w in
                                                 ("seg", "label", "mask", "lm-", "lm_"))]
    for group in (preferred, not_labels):
        if len(group) == 1:
            return group[0]
    names = ", ".join(v.name for v in volumes)
    raise LoadError(PART, f"The CT folder {folder} holds several volume files ({names}); name the "
                          "CT file in case.toml.")


def _info(message: str) -> Problem:
    return Problem("info", PART, message)


def _damaged(path: Path, fmt: str, exc: BaseException) -> LoadError:
    return LoadError(PART, f"The CT file {path.name} could not be read: it is damaged or not a "
                           f"valid {fmt} file.", f"{type(exc).__name__}: {exc}")


# ----------------------------------------------------------------------------------------------
# Value handling shared by the file formats
# ----------------------------------------------------------------------------------------------


def _squeeze3d(data: np.ndarray, path: Path) -> np.ndarray:
    while data.ndim > 3 and data.shape[-1] == 1:
        data = data[..., 0]
    if data.ndim != 3:
        raise LoadError(PART, f"The CT file {path.name} holds a {data.ndim}D image of shape "
                              f"{tuple(data.shape)}, not a 3D volume.")
    return data


def _narrow(data: np.ndarray) -> np.ndarray:
    """int16 when an integer volume fits in it (half the memory of int32), float64 → float32."""
    if data.dtype.kind in "iu" and data.dtype != np.int16 and data.dtype.itemsize >= 2 and data.size:
        lo, hi = int(data.min()), int(data.max())
        if lo >= _INT16.min and hi <= _INT16.max:
            return data.astype(np.int16, order="K")
    if data.dtype == np.float64:
        return data.astype(np.float32, order="K")
    return data


def _rescale(raw: np.ndarray, slope: float, inter: float) -> np.ndarray:
    """``raw * slope + inter`` slab by slab (last axis), int16 when integral and in range."""
    integral = raw.dtype.kind in "iu" and float(slope).is_integer() and float(inter).is_integer()
    dtype: type[np.generic] = np.float32
    if integral and raw.size:
        ends = (int(raw.min()) * slope + inter, int(raw.max()) * slope + inter)
        if min(ends) >= _INT16.min and max(ends) <= _INT16.max:
            dtype = np.int16
    out = np.empty(raw.shape, dtype=dtype, order="F" if raw.flags.f_contiguous else "C")
    a, b = (int(slope), int(inter)) if dtype is np.int16 else (np.float32(slope), np.float32(inter))
    for k in range(raw.shape[-1]):
        slab = raw[..., k].astype(np.int64 if dtype is np.int16 else np.float32)
        slab *= a
        slab += b
        out[..., k] = slab
    return out


# ----------------------------------------------------------------------------------------------
# NIfTI
# ----------------------------------------------------------------------------------------------


def _load_nifti(path: Path) -> Volume:
    import nibabel as nib

    problems = ProblemList()
    try:
        img = nib.load(str(path), mmap=True)
        proxy = img.dataobj
        raw = np.asanyarray(proxy.get_unscaled()) if hasattr(proxy, "get_unscaled") \
            else np.asanyarray(proxy)
        slope = float(getattr(proxy, "slope", 1.0) or 1.0)
        inter = float(getattr(proxy, "inter", 0.0) or 0.0)
        affine = np.asarray(img.affine, dtype=float)
        hdr = img.header
    except LoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - nibabel raises many kinds on damaged files
        raise _damaged(path, "NIfTI", exc) from exc
    raw = _squeeze3d(raw, path)
    data = _narrow(raw) if (slope, inter) == (1.0, 0.0) else _rescale(raw, slope, inter)
    codes = [int(hdr[k]) for k in ("sform_code", "qform_code") if k in hdr]
    if codes and not any(codes):
        problems.warning(PART, f"{path.name} does not say how it is oriented in the patient; the "
                               "standard orientation was assumed, so left and right may be wrong.")
    meta = {
        "format": "nifti", "modality": "CT", "source_order": "file", "dtype": str(data.dtype),
        "stored_dtype": str(raw.dtype), "scl_slope": slope, "scl_inter": inter,
        "series_description": _nifti_descrip(hdr),
    }
    # NIfTI world coordinates are RAS; the console works in LPS.
    return Volume(*canonicalize(data, _LPS_FROM_RAS @ affine), source=str(path), meta=meta,
                  problems=list(problems.items))


def _nifti_descrip(hdr: Any) -> str:
    try:
        raw = hdr["descrip"]
        text = raw.item() if hasattr(raw, "item") else raw
        return (text.decode("latin-1") if isinstance(text, bytes) else str(text)).strip("\x00 ")
    except (KeyError, ValueError, AttributeError):
        return ""


# ----------------------------------------------------------------------------------------------
# NRRD
# ----------------------------------------------------------------------------------------------


def _nrrd_dtype(header: dict[str, Any]) -> np.dtype:
    code = _NRRD_TYPES.get(str(header.get("type", "")).strip().lower())
    if code is None:
        raise ValueError(f"unknown NRRD type {header.get('type')!r}")
    order = ">" if str(header.get("endian", "little")).lower() == "big" else "<"
    return np.dtype(order + code if code[1] != "1" else code)


def _load_nrrd(path: Path) -> Volume:
    import nrrd

    problems = ProblemList()
    try:
        with path.open("rb") as fh:
            header = nrrd.read_header(fh)
            data_start = fh.tell()
        data = _nrrd_memmap(path, header, data_start)
        if data is None:
            data, header = nrrd.read(str(path))
    except LoadError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _damaged(path, "NRRD", exc) from exc
    data = _squeeze3d(np.asarray(data) if not isinstance(data, np.memmap) else data, path)
    affine = _nrrd_affine(header, path, problems)
    meta = {"format": "nrrd", "modality": "CT", "source_order": "file", "dtype": str(data.dtype),
            "nrrd_space": str(header.get("space", ""))}
    return Volume(*canonicalize(data, affine), source=str(path), meta=meta,
                  problems=list(problems.items))


def _nrrd_memmap(path: Path, header: dict[str, Any], data_start: int) -> np.ndarray | None:
    """Map raw-encoded NRRD data straight from disk; None when it must be decoded instead."""
    if str(header.get("encoding", "")).lower() != "raw":
        return None
    if int(header.get("line skip", header.get("lineskip", 0)) or 0):
        return None
    data_file = header.get("data file", header.get("datafile"))
    if data_file is not None and (not isinstance(data_file, str) or data_file.upper().startswith("LIST")
                                  or " " in data_file.strip()):
        return None  # multi-file data: let pynrrd assemble it
    target = path if data_file is None else (path.parent / data_file)
    offset = data_start if data_file is None else 0
    dtype = _nrrd_dtype(header)
    sizes = tuple(int(s) for s in header["sizes"])
    nbytes = int(np.prod(sizes, dtype=np.int64)) * dtype.itemsize
    skip = int(header.get("byte skip", header.get("byteskip", 0)) or 0)
    size = target.stat().st_size
    offset = size - nbytes if skip == -1 else offset + skip
    if offset < 0 or offset + nbytes > size:
        raise ValueError(f"data ends early: needs {nbytes} bytes at offset {offset}, file has {size}")
    # NRRD lists the fastest axis first, i.e. Fortran order.
    return np.memmap(target, dtype=dtype, mode="r", offset=offset, shape=sizes, order="F")


def _nrrd_affine(header: dict[str, Any], path: Path, problems: ProblemList) -> np.ndarray:
    affine = np.eye(4)
    space = str(header.get("space", "")).strip().lower()
    space = {"lpst": "lps", "rast": "ras", "last": "las"}.get(space, space.removesuffix("-time"))
    dirs = header.get("space directions")
    if dirs is None:
        spacings = header.get("spacings")
        sp = [float(s) if s is not None and np.isfinite(s) else 1.0
              for s in (spacings if spacings is not None else [1.0, 1.0, 1.0])][:3]
        affine[:3, :3] = np.diag(sp + [1.0] * (3 - len(sp)))
        problems.warning(PART, f"{path.name} does not say how it is oriented in the patient; the "
                               "standard orientation was assumed, so left and right may be wrong.")
        return affine
    rows = [np.asarray(r, dtype=float) for r in dirs]
    rows = [r for r in rows if r.shape == (3,) and np.all(np.isfinite(r))]
    if len(rows) != 3:
        raise LoadError(PART, f"{path.name} does not describe three spatial axes; it is not a 3D "
                              "CT volume.")
    signs = _NRRD_SPACES.get(space)
    if signs is None:
        signs = (1.0, 1.0, 1.0)
        problems.warning(PART, f"{path.name} uses the coordinate space '{header.get('space', '')}', "
                               "which is not tied to the patient; left-posterior-superior was "
                               "assumed, so left and right may be wrong.")
    flip = np.asarray(signs, dtype=float)
    affine[:3, :3] = flip[:, None] * np.stack(rows, axis=1)  # column i = direction of axis i
    origin = header.get("space origin")
    if origin is not None and np.all(np.isfinite(np.asarray(origin, dtype=float))):
        affine[:3, 3] = flip * np.asarray(origin, dtype=float)
    return affine


# ----------------------------------------------------------------------------------------------
# MetaImage (.mha / .mhd), as written by ITK / SimpleITK (physical space = LPS)
# ----------------------------------------------------------------------------------------------


def _read_met_header(path: Path) -> tuple[dict[str, str], int]:
    fields: dict[str, str] = {}
    with path.open("rb") as f:
        while True:
            line = f.readline()
            if not line:
                break
            text = line.decode("latin-1").strip()
            if not text or "=" not in text:
                if len(fields) == 0 and text:
                    raise ValueError("not a MetaImage header")
                continue
            key, value = (s.strip() for s in text.split("=", 1))
            fields[key] = value
            if key == "ElementDataFile":
                return fields, f.tell()
            if len(fields) > 200:
                break
    raise ValueError("no ElementDataFile line in the MetaImage header")


def _load_metaimage(path: Path) -> Volume:
    problems = ProblemList()
    try:
        fields, data_start = _read_met_header(path)
        dims = [int(v) for v in fields["DimSize"].split()]
        code = _MET_TYPES[fields["ElementType"].upper()]
        channels = int(fields.get("ElementNumberOfChannels", "1"))
        msb = fields.get("ElementByteOrderMSB", fields.get("BinaryDataByteOrderMSB", "False"))
        dtype = np.dtype((">" if msb.lower() == "true" else "<") + code if code[1] != "1" else code)
        shape = tuple(dims) if channels == 1 else (channels, *dims)
        count = int(np.prod(shape, dtype=np.int64))
        source = fields["ElementDataFile"]
        if source.upper() in ("LIST",) or "%" in source:
            raise LoadError(PART, f"{path.name} spreads its data over several files, which the "
                                  "console does not read; save it as one .mha file.")
        target = path if source.upper() == "LOCAL" else path.parent / source
        offset = data_start if source.upper() == "LOCAL" else 0
        header_size = int(fields.get("HeaderSize", "0"))
        if header_size > 0:
            offset += header_size
        if fields.get("CompressedData", "False").lower() == "true":
            with target.open("rb") as f:
                f.seek(offset)
                buf = zlib.decompress(f.read())
            data = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape, order="F")
        else:
            size = target.stat().st_size
            if header_size == -1:
                offset = size - count * dtype.itemsize
            if offset + count * dtype.itemsize > size:
                raise ValueError("the image data ends early")
            data = np.memmap(target, dtype=dtype, mode="r", offset=offset, shape=shape, order="F")
    except LoadError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _damaged(path, "MetaImage", exc) from exc
    if channels != 1 or len(dims) != 3:
        raise LoadError(PART, f"{path.name} is not a 3D single-channel volume (size {dims}, "
                              f"{channels} channels).")
    spacing = [float(v) for v in fields.get("ElementSpacing", fields.get("ElementSize", "1 1 1")).split()]
    origin = next((fields[k] for k in ("Offset", "Origin", "Position") if k in fields), "0 0 0")
    matrix = next((fields[k] for k in ("TransformMatrix", "Rotation", "Orientation") if k in fields),
                  None)
    affine = np.eye(4)
    # MetaIO writes the direction of axis i as row i of TransformMatrix.
    dirs = np.eye(3) if matrix is None else np.array([float(v) for v in matrix.split()]).reshape(3, 3)
    affine[:3, :3] = dirs.T * np.asarray(spacing[:3])[None, :]
    affine[:3, 3] = [float(v) for v in origin.split()][:3]
    data = _narrow(data)
    meta = {"format": "metaimage", "modality": "CT", "source_order": "file",
            "dtype": str(data.dtype)}
    return Volume(*canonicalize(data, affine), source=str(path), meta=meta,
                  problems=list(problems.items))
