"""Benchmark DICOM series loading: time and peak memory for a synthetic 512×512×400 CT.

Writes an uncompressed int16 series with shuffled file names into a temporary folder, then, in a
fresh child process (so the memory numbers are not polluted by the writer), loads it with
``load_dicom_series`` several times and prints one JSON object:

    .venv/bin/python scripts/bench_dicom_load.py [--slices 400] [--size 512] [--runs 3]

Numbers are with a warm page cache (the files were just written).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_series(folder: Path, n_slices: int, size: int, seed: int = 0) -> int:
    """Write a CT-like series; returns the bytes of pixel data written."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

    rng = random.Random(seed)
    names = [f"{rng.getrandbits(64):016x}.dcm" for _ in range(n_slices)]
    rng.shuffle(names)
    series_uid, study_uid, frame_uid = generate_uid(), generate_uid(), generate_uid()
    yy, xx = np.mgrid[:size, :size]
    body = ((yy - size / 2) ** 2 + (xx - size / 2) ** 2) < (0.42 * size) ** 2
    for k, name in enumerate(names):
        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID = CTImageStorage
        meta.MediaStorageSOPInstanceUID = generate_uid()
        meta.TransferSyntaxUID = ExplicitVRLittleEndian
        ds = Dataset()
        ds.file_meta = meta
        ds.SOPClassUID = CTImageStorage
        ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
        ds.Modality = "CT"
        ds.PatientID = "BENCH"
        ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.FrameOfReferenceUID = study_uid, series_uid, frame_uid
        ds.SeriesDescription = "bench"
        ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
        ds.InstanceNumber = k + 1
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.ImagePositionPatient = [-250.0, -250.0, -400.0 + 1.25 * k]
        ds.PixelSpacing = [0.9765625, 0.9765625]
        ds.SliceThickness = 1.25
        ds.Rows = ds.Columns = size
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated = ds.BitsStored = 16
        ds.HighBit = 15
        ds.PixelRepresentation = 1
        ds.RescaleIntercept = -1024
        ds.RescaleSlope = 1
        img = np.where(body, 1024 + 40 + (k % 50), 0).astype(np.int16)
        ds.PixelData = img.tobytes()
        ds.save_as(folder / name, enforce_file_format=True)
    return n_slices * size * size * 2


def _child(folder: Path, runs: int) -> None:
    import gc

    import psutil

    from app.data.dicom import load_dicom_series, scan_dicom_folder

    proc = psutil.Process()
    base_rss = proc.memory_info().rss
    times: list[float] = []
    nbytes = 0
    shape: tuple[int, ...] = ()
    for _ in range(runs):
        t = time.perf_counter()
        vol = load_dicom_series(folder)
        times.append(time.perf_counter() - t)
        nbytes, shape = vol.data.nbytes, vol.shape
        del vol
        gc.collect()
    t = time.perf_counter()
    scan_dicom_folder(folder)
    scan_s = time.perf_counter() - t
    # VmHWM is this process image's own peak; ru_maxrss also counts the parent's peak when
    # the child was spawned from a big process (Linux keeps it across vfork + exec).
    status = Path("/proc/self/status")
    hwm = [ln for ln in status.read_text().splitlines() if ln.startswith("VmHWM:")] \
        if status.is_file() else []
    peak_rss = (int(hwm[0].split()[1]) if hwm else
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux: KiB
    print(json.dumps({
        "shape": list(shape), "array_mb": round(nbytes / 2**20, 1),
        "runs_s": [round(x, 3) for x in times], "median_s": round(statistics.median(times), 3),
        "scan_headers_s": round(scan_s, 3),
        "peak_rss_increase_mb": round((peak_rss - base_rss) / 2**20, 1),
        "peak_rss_over_array": round((peak_rss - base_rss) / nbytes, 2) if nbytes else None,
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slices", type=int, default=400)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.runs)
        return
    with tempfile.TemporaryDirectory(prefix="visa-bench-") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        written = write_series(folder, args.slices, args.size)
        write_s = time.perf_counter() - t
        out = subprocess.run([sys.executable, __file__, "--child", str(folder), "--runs",
                              str(args.runs)], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit(out.returncode)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result.update({"slices": args.slices, "size": args.size,
                       "written_mb": round(written / 2**20, 1), "write_s": round(write_s, 2),
                       "goal_s": 5.0, "page_cache": "warm"})
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
