"""Random word salad from the console's own vocabulary, in sessions: the interpreter never
raises (no recursion through context rules, no index errors), every decision it carries out
applies through the registry, and an invalid one leaves the state as it was."""

from __future__ import annotations

import random

from app.agents.decision import Memory
from app.agents.interpreter import FastInterpreter, apply
from app.core.registry import Actor, CommandRegistry
from app.core.state import CaseContext, ConsoleState

WORDS = ["no", "sorry", ",", "i", "mean", "meant", "or", "rather", "make", "it", "that", "the", "a", "and", "then", "also", "too", "show", "hide", "remove", "zoom", "in", "out", "rotate", "swing", "left", "right", "up", "down", "axial", "coronal", "sagittal", "ct", "model", "3d", "lobe", "lung", "upper", "lower", "middle", "rul", "lll", "rml", "nodules", "airway", "bmi", "age", "sex", "weight", "pft", "diagnosis", "1", "20", "250", "oh", "one", "five", "dozen", "half", "couple", "more", "again", "once", "other", "way", "side", "on", "that", "same", "only", "just", "all", "fields", "except", "but", "not", "it", "them", "small", "big", "way", "is", "are", "was", "her", "she", "tiny", "flip", "to", "ant", "post", "cor", "by", "through", "volume", "table", "map", "camera", "eye", "view", "good", "morning", "before", "we", "dock", "?", ".", ";", "blow", "take", "off", "away", "put", "back", "reset", "clear", "everything", "closer", "further", "stop"]


def test_word_salad_sessions_never_break_the_interpreter() -> None:
    rnd = random.Random(20261130)
    interp = FastInterpreter()
    for _session in range(40):
        state = ConsoleState()
        state.set_case(CaseContext(iv_size=(("axial", 128), ("coronal", 512),
                                            ("sagittal", 512)),
                                   tumor_lobes=("right_upper_lobe",)))
        registry = CommandRegistry(state)
        memory = Memory()
        for _ in range(40):
            text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 8)))
            before = state.snapshot()
            it = interp.interpret(text, state, memory)
            result = apply(it, registry, Actor(source="voice"), memory)
            if it.valid and it.decision.steps:
                assert result is not None and result.ok, (text, result)
            elif not it.empty:
                assert state.snapshot() == before, text
