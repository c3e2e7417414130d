"""Video probing and playback on real files written with PyAV, plus capture-device failure."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import av
import numpy as np
import pytest

from app.data import video as video_mod
from app.data.problems import LoadError
from app.data.video import VideoInfo, VideoSource, probe_video

W, H, FPS, N = 64, 48, 10, 12

# (encoder, container suffix, pix_fmt, codec name a decoder reports)
ENCODERS = [
    ("libx264", "mp4", "yuv420p", "h264"),
    ("mpeg4", "mp4", "yuv420p", "mpeg4"),
    ("libvpx-vp9", "webm", "yuv420p", "vp9"),
    ("mjpeg", "avi", "yuvj420p", "mjpeg"),
]


def _frame(i: int) -> np.ndarray:
    """Frame i is a flat grey of level 20*i, so a decoded frame says which one it was."""
    return np.full((H, W, 3), (20 * i) % 250, np.uint8)


def make_video(path: Path, codec: str, pix_fmt: str = "yuv420p", n: int = N) -> Path:
    with av.open(str(path), "w") as out:
        stream = out.add_stream(codec, rate=FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, pix_fmt
        for i in range(n):
            for packet in stream.encode(av.VideoFrame.from_ndarray(_frame(i), format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def _encoder_works(codec: str) -> bool:
    try:
        av.codec.Codec(codec, "w")
    except Exception:
        return False
    return True


@pytest.fixture(scope="module")
def encoder() -> tuple[str, str, str, str]:
    """The first encoder of ENCODERS this PyAV build has (libx264 here)."""
    for spec in ENCODERS:
        if _encoder_works(spec[0]):
            return spec
    pytest.skip("no usable video encoder in this PyAV build")


@pytest.fixture
def clip(tmp_path: Path, encoder, record_property) -> Path:
    name, suffix, pix_fmt, _ = encoder
    record_property("encoder", name)  # which encoder made the test video (junit report)
    return make_video(tmp_path / f"clip.{suffix}", name, pix_fmt)


@pytest.mark.parametrize("spec", ENCODERS, ids=[e[0] for e in ENCODERS])
def test_each_available_encoder_roundtrips(tmp_path: Path, spec, record_property) -> None:
    name, suffix, pix_fmt, decoded_as = spec
    if not _encoder_works(name):
        pytest.skip(f"encoder {name} not in this PyAV build")
    record_property("encoder", name)
    info = probe_video(make_video(tmp_path / f"v.{suffix}", name, pix_fmt))
    assert (info.codec, info.width, info.height, info.fps) == (decoded_as, W, H, FPS)


def test_probe_reports_codec_size_fps_and_length(clip: Path, encoder) -> None:
    info = probe_video(clip)
    assert isinstance(info, VideoInfo)
    assert info.codec == encoder[3]
    assert (info.width, info.height) == (W, H)
    assert info.fps == pytest.approx(FPS)
    assert info.frame_count in (None, N)
    assert info.duration_s == pytest.approx(N / FPS, abs=0.15)
    assert info.pix_fmt and info.pix_fmt.startswith("yuv")
    assert info.path == str(clip) and not info.is_device


def test_reading_past_the_end_loops_to_the_start(clip: Path) -> None:
    src = VideoSource(clip)
    assert src.open() and src.status == "playing"
    assert src.fps == pytest.approx(FPS)
    frames = [src.read() for _ in range(2 * N + 5)]
    assert all(f is not None for f in frames)
    f0 = frames[0]
    assert f0.shape == (H, W, 3) and f0.dtype == np.uint8 and f0.flags.c_contiguous
    assert src.loops == 2 and src.frame_index == 2 * N + 5
    # After the wrap the first frame comes back (lossy codecs: compare grey levels loosely).
    levels = [float(f.mean()) for f in frames]
    assert levels[N] == pytest.approx(levels[0], abs=6)
    assert levels[2 * N] == pytest.approx(levels[0], abs=6)
    assert levels[N - 1] > levels[0] + 150
    src.close()
    assert src.status == "closed" and src.read() is None


def test_no_loop_ends_and_output_size_scales(clip: Path) -> None:
    with VideoSource(clip, loop=False, output_size=(32, 24)) as src:
        frames = [src.read() for _ in range(N)]
        assert all(f is not None and f.shape == (24, 32, 3) for f in frames)
        assert src.read() is None and src.status == "ended"


def test_read_opens_lazily(clip: Path) -> None:
    src = VideoSource(clip)
    assert src.read() is not None and src.status == "playing"
    src.close()


@pytest.mark.parametrize("content", [b"", b"this is not a video" * 100, bytes(range(256)) * 64],
                         ids=["empty", "text", "binary"])
def test_garbage_file_gives_a_clear_message(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "video.mp4"
    bad.write_bytes(content)
    with pytest.raises(LoadError) as err:
        probe_video(bad)
    assert err.value.part == "video"
    assert "video.mp4 could not be opened as a video" in err.value.message
    src = VideoSource(bad)
    assert src.open() is False and src.read() is None
    assert src.status == "error" and "could not be opened as a video" in (src.last_error or "")


def test_truncated_mp4_gives_a_clear_message(tmp_path: Path) -> None:
    full = make_video(tmp_path / "full.mp4", "mpeg4")  # mp4: the index (moov) is written last
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(LoadError, match="cut.mp4 could not be opened as a video: it is damaged"):
        probe_video(cut)
    src = VideoSource(cut)
    assert not src.open() and src.read() is None and src.last_error


def test_truncated_streamable_file_plays_its_readable_part(tmp_path: Path) -> None:
    full = make_video(tmp_path / "full.avi", "mjpeg", "yuvj420p", n=40)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    assert probe_video(cut).codec == "mjpeg"  # the start is fine
    src = VideoSource(cut)
    assert src.open()
    frames = [src.read() for _ in range(60)]
    assert all(f is not None for f in frames), src.last_error
    assert src.loops >= 1 and src.status == "playing"  # partial playback, looping


def test_damage_in_the_middle_is_skipped(tmp_path: Path) -> None:
    # libx264 packets hit by garbage make the decoder raise; playback must carry on past them.
    rng = np.random.default_rng(0)
    path = tmp_path / "noisy.mp4"
    n = 40
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264" if _encoder_works("libx264") else "mpeg4", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        for _ in range(n):  # noise frames: big packets, so the damage lands inside frame data
            img = rng.integers(0, 255, (H, W, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    data = bytearray(path.read_bytes())
    size = len(data)
    data[size // 3: size // 3 + size // 6] = rng.integers(0, 255, size // 6, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    src = VideoSource(path)
    assert src.open()
    frames = [src.read() for _ in range(2 * n)]
    assert all(f is not None and f.shape == (H, W, 3) for f in frames)
    assert src.loops >= 1 and src.status == "playing"
    if _encoder_works("libx264"):  # with this seed the H.264 decoder raises on the damage
        assert src.last_error == "The video noisy.mp4 is damaged in places; damaged frames are skipped."


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="The video file nope.mp4 was not found"):
        probe_video(tmp_path / "nope.mp4")
    with pytest.raises(LoadError, match="is a folder, not a video file"):
        probe_video(tmp_path)
    src = VideoSource(tmp_path / "nope.mp4")
    assert src.read() is None and src.status == "error"
    assert src.last_error == "The video file nope.mp4 was not found."


def test_audio_only_file_has_no_video(tmp_path: Path) -> None:
    path = tmp_path / "sound.wav"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
        frame.sample_rate = 8000
        for packet in [*stream.encode(frame), *stream.encode()]:
            out.mux(packet)
    with pytest.raises(LoadError, match="sound.wav has no video picture"):
        probe_video(path)


def _header_only(path: Path, codec: str = "mpeg4") -> Path:
    """A container with a declared video stream and not one frame."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream(codec, rate=FPS)
        stream.width, stream.height = W, H
        out.start_encoding()  # writes the header; no packets follow
    return path


def test_video_stream_without_frames(tmp_path: Path) -> None:
    path = _header_only(tmp_path / "empty.avi")
    with pytest.raises(LoadError, match="empty.avi contains no video frames"):
        probe_video(path)
    src = VideoSource(path)
    assert src.read() is None and src.status == "error"
    assert src.last_error == "The video empty.avi cannot be played: it has no frames that can be shown."


def test_header_only_mkv_is_reported_as_incomplete(tmp_path: Path) -> None:
    path = _header_only(tmp_path / "empty.mkv")
    with pytest.raises(LoadError, match="ends before any video data"):
        probe_video(path)


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize("device", [57, "57", "/dev/video57"])
def test_absent_capture_device_is_reported_not_raised(device) -> None:
    clock = _Clock()
    src = VideoSource(device, clock=clock)
    assert src.is_live and src.open() is False
    for _ in range(500):  # a UI timer hammering read() must not hammer the device
        assert src.read() is None
    assert src.status == "disconnected"
    assert src.last_error and "No video capture device" in src.last_error and "57" in src.last_error
    assert src.open_attempts == 1
    clock.t += 0.6  # past the first back-off: one more try, then a longer wait
    assert src.read() is None and src.open_attempts == 2
    clock.t += 0.6
    assert src.read() is None and src.open_attempts == 2
    clock.t += 0.5
    assert src.read() is None and src.open_attempts == 3


def test_opencv_refusing_a_device_is_reported(monkeypatch) -> None:
    pytest.importorskip("cv2")
    monkeypatch.setattr(video_mod, "_device_node_missing", lambda device: False)
    src = VideoSource(57)  # real OpenCV, no such device
    assert src.open() is False and src.read() is None
    assert src.status == "disconnected" and "could not be opened" in (src.last_error or "")


class _FakeCapture:
    """Stands in for cv2.VideoCapture: delivers `good` frames, then fails like an unplugged cable."""

    opened: list[_FakeCapture] = []
    good = 3

    def __init__(self, device, api) -> None:
        self.device, self.reads = device, 0
        _FakeCapture.opened.append(self)

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return True

    def get(self, prop: int) -> float:
        return {5: 25.0, 3: 8.0, 4: 6.0}.get(prop, 0.0)

    def read(self):
        self.reads += 1
        if self.reads > self.good:
            return False, None
        bgr = np.zeros((6, 8, 3), np.uint8)
        bgr[..., 0] = 255  # blue in BGR
        return True, bgr

    def release(self) -> None:
        pass


def test_live_device_disconnects_and_reconnects_with_backoff(monkeypatch) -> None:
    fake = types.SimpleNamespace(
        VideoCapture=_FakeCapture, CAP_V4L2=200, CAP_ANY=0, CAP_PROP_FPS=5,
        CAP_PROP_FRAME_WIDTH=3, CAP_PROP_FRAME_HEIGHT=4, COLOR_BGR2RGB=4, INTER_AREA=3,
        cvtColor=lambda img, code: img[..., ::-1].copy(), resize=lambda img, size, interpolation: img)
    monkeypatch.setitem(sys.modules, "cv2", fake)
    monkeypatch.setattr(video_mod, "_device_node_missing", lambda device: False)
    _FakeCapture.opened = []
    clock = _Clock()
    src = VideoSource("/dev/video3", clock=clock)
    assert src.open() and src.fps == 25.0 and src.info and src.info.is_device
    frame = src.read()
    assert frame is not None and frame.shape == (6, 8, 3) and frame[0, 0].tolist() == [0, 0, 255]
    assert src.read() is not None and src.read() is not None
    assert src.read() is None and src.status == "disconnected"
    assert "stopped" in (src.last_error or "")
    assert src.read() is None and len(_FakeCapture.opened) == 1  # waits before retrying
    clock.t += 0.6
    assert src.read() is not None and src.status == "playing" and src.last_error is None
    assert len(_FakeCapture.opened) == 2
    assert src.reconnect(force=True) and len(_FakeCapture.opened) == 3
