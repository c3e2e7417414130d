"""Rules generalised from the tenth phrasing probe (pd10): naming one plane while a plane is
enlarged makes it the main view; "everything about the patient, including X" is every field and
X. Phrasings are our own (pd10-like ones marked); DESIGN §4 is the spec."""

from __future__ import annotations

import pytest

from app.core.vocab import IR_ALL_FIELDS
from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


@pytest.mark.parametrize("text, plane", [
    ("Now the coronal.", "coronal"),  # pd10-like
    ("the sagittal please", "sagittal"),
    ("ok, coronal now", "coronal"),
])
def test_naming_a_plane_while_zoomed_makes_it_the_main_view(con: Console, text: str,
                                                           plane: str) -> None:
    acts = con.say_after(["show the CT", "zoom in on the axial"], text)
    assert acts == [("IV.ZOOM_IN_MOVE", {"plane": plane})], acts
    assert con.snap["iv"]["main"] == plane and con.snap["iv"]["mode"] == "zoom_view"


def test_naming_a_plane_in_small_views_does_not_zoom(con: Console) -> None:
    acts = con.say_after(["show the CT"], "now the coronal")
    assert all(a != "IV.ZOOM_IN_MOVE" for a, _ in acts), acts
    assert con.snap["iv"]["mode"] == "small_views"
    # and a move while zoomed is still a move (of that plane, now the main view)
    acts = con.say_after(["zoom in on the axial"], "coronal plus 10")
    assert con.snap["iv"]["main"] == "coronal", acts


@pytest.mark.parametrize("text", [
    "Show everything about the patient, including the date of surgery.",  # pd10-like
    "tell me all about her, operation date included",
    "everything on this patient and when the operation is",
])
def test_everything_about_the_patient_and_the_date(con: Console, text: str) -> None:
    con.say(text)
    shown = set(con.snap["ir"]["fields"])
    assert shown == {*IR_ALL_FIELDS, "operation_date"}, shown


def test_spelled_rul_heard_as_are_you_ill(con: Console) -> None:
    # heard on the dev audio for a spelled "zoom R U L"; "are you ill?" alone stays talk
    acts = con.say_after(["show the model"], "Zoom, are you ill?")
    assert acts and acts[0][0] == "AR.ZOOM_IN", acts
    from app.language.correction import correct
    from app.language.normalize import normalize

    assert correct(normalize("are you ill?")).text == "are you ill"
