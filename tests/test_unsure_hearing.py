"""A spoken command the recogniser doubted and that is mostly not console words is refused
(asked again), never acted on; typed commands and confident hearings are unaffected."""

from __future__ import annotations

import os

import pytest

from app.agents.orchestrator import UNSURE_LOGPROB, Orchestrator
from app.core.registry import CommandRegistry
from app.core.state import ConsoleState
from app.eval.harness import default_case


@pytest.fixture()
def orch() -> Orchestrator:
    os.environ.setdefault("VISA_TIERS", "lexicon,semantic")
    ctx, _ = default_case()
    state = ConsoleState()
    state.set_case(ctx)
    return Orchestrator(CommandRegistry(state), strategy="fast")


# heard at 10 dB for "how many mL of bupivacaine did we give?" (dev split, espeak voice); the
# lexicon alone reads "man" as a question about the patient's sex
GARBLED = "How many a man love you be making did we give?"


def test_garbled_doubtful_hearing_is_asked_again(orch: Orchestrator) -> None:
    before = orch.state.snapshot()
    rec = orch.handle_text(GARBLED, stt={"text": GARBLED, "ms": 400, "logprob": -1.2})
    assert rec["reply"]["ok"] is False and "say it again" in rec["reply"]["text"]
    assert rec["stages"]["correct"]["valid"] is False
    assert rec["diagnostics"]["unsure_hearing"]["logprob"] == -1.2
    assert rec["stages"]["stt"]["logprob"] == -1.2  # the trace keeps the recogniser's doubt
    assert rec["state"] == before  # nothing changed


def test_confident_or_typed_commands_still_act(orch: Orchestrator) -> None:
    # the same words heard confidently, or typed, are taken as they are
    # (whatever the interpreter then makes of them: the check itself stays out of the way)
    rec = orch.handle_text(GARBLED, stt={"text": GARBLED, "ms": 400, "logprob": -0.2})
    assert "unsure" not in rec["stages"]["correct"]
    orch.reset(default_case()[0])
    assert "unsure" not in orch.handle_text(GARBLED)["stages"]["correct"]
    # a doubtful hearing that is plainly a console command is not refused
    rec = orch.handle_text("Show the CT.", stt={"text": "Show the CT.", "ms": 400,
                                                "logprob": UNSURE_LOGPROB - 1})
    assert rec["reply"]["ok"] is True and rec["state"]["iv"]["mode"] != "none"


def test_transcript_logprob_is_the_chosen_hypothesis() -> None:
    from app.voice.stt import Segment, Transcript

    tr = Transcript("Zoom in.", 10.0, alternatives=[("Two men.", -0.3, 0.5),
                                                    ("Zoom in.", -0.9, 1.0)], chosen=1)
    assert tr.logprob == -0.9
    segs = [Segment(" a", 0, 1, -0.4, 0.1, 1.0), Segment(" b", 1, 2, -1.5, 0.1, 1.0, "loop")]
    assert Transcript("a", 1.0, segments=segs).logprob == -0.4  # dropped segments ignored
    assert Transcript("", 1.0).logprob is None
