"""A closing particle said between two pauses in the middle of a request ("now the CT, per
favore, and zoom in the coronal") is no part of it; "the model 3D" (the adjective after the
noun, as in Romance languages) is the 3D model, not the lungs."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console


@pytest.mark.parametrize("particle", ["per favore", "la", "bitte"])
def test_a_particle_between_pauses_mid_request_is_set_aside(particle: str) -> None:
    con = Console()
    acts = con.say(f"now the ct, {particle}, and zoom in the coronal")
    assert acts == [("IV.SHOW_MOVE", {}), ("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]


def test_the_model_3d_of_the_lungs_is_the_3d_model() -> None:
    con = Console()
    assert con.say("bueno, the model 3d of the lungs, put it") == [("AR.SHOW", {})]
    assert con.snap["ar"]["structures"] == ["lung_nodules", "right_upper_lobe",
                                            "trachea_bronchia"]
