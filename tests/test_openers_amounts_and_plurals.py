"""Openers that may be a name or a word of the speaker's own language, amounts said before
their direction, remarks after a request, plurals and sound-alikes the grammar read past
(DESIGN §3 coverage, §4 talk addressed to people)."""

from __future__ import annotations

from pathlib import Path

import pytest

import app.language as language
from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


# ---------------------------------------------------------------- openers before a pause
@pytest.mark.parametrize("text, expected", [
    ("Basi, zoom out.", [("AR.ZOOM_OUT", {})]),
    ("Haydi, show the CT.", [("IV.SHOW_MOVE", {})]),
    ("Opa, and the comorbidities also.", [("IR.SHOW", {"fields": ["comorbidities"],
                                                        "op": "add"})]),
])
def test_an_unknown_opener_that_is_no_name_is_set_aside_before_a_whole_command(
        con: Console, text: str, expected: list) -> None:
    assert con.say(text) == expected
    said = con.last.decision.diagnostics
    assert said.get("opener_set_aside") or said.get("foreign_words_set_aside")


@pytest.mark.parametrize("text", [
    "Tom, zoom out.",                      # a given name
    "Anesthesia, can we get the lung down, please?",  # a role called out
    "Gente, olha, look at the screen, that one is the bronchus.",  # a group, in Portuguese
    "Juma, please adjust the light, it is shining to the right side.",  # rest is no command
])
def test_a_name_role_or_group_called_out_is_talk_whatever_follows(con: Console,
                                                                   text: str) -> None:
    before = con.snap
    assert con.say(text) == []
    assert not con.last.valid and con.snap == before


def test_a_hospitals_staff_list_makes_an_opener_a_name(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "given_names.txt").write_text("# our theatre staff\nBasi\n", encoding="utf-8")
    monkeypatch.setenv("VISA_LANGUAGE_DIR", str(tmp_path))
    language.reload()
    try:
        assert "basi" in language.given_names()
        assert Console().say("Basi, zoom out.") == []
    finally:
        monkeypatch.delenv("VISA_LANGUAGE_DIR")
        language.reload()


# ---------------------------------------------------------------- amounts before a direction
@pytest.mark.parametrize("text, expected", [
    ("the sagittal, fifteen to the right", {"sagittal": "+15"}),
    ("axial 20 slices up", {"axial": "+20"}),
    ("coronal, thirty slices forward", {"coronal": "+30"}),
    ("about 40 slices to the right", {"sagittal": "+40"}),
])
def test_an_amount_said_before_its_direction_is_the_step(con: Console, text: str,
                                                         expected: dict) -> None:
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", expected)]


def test_a_direction_word_naming_a_lung_is_no_step_for_the_amount_before_it(
        con: Console) -> None:
    con.say("show the model")
    acts = con.say("rotate 20 to the right lung")
    assert all(a != ("IV.SHOW_MOVE", {"sagittal": "+20"}) for a in acts)


# ---------------------------------------------------------------- remarks after a request
@pytest.mark.parametrize("text, expected", [
    ("take the axial to slice 90, that's roughly the apex of the upper lobe",
     [("IV.SHOW_MOVE", {"axial": 90})]),
    ("zoom in on the nodule, that's the lesion we're taking out",
     [("AR.ZOOM_IN", {"target": "lung_nodules"})]),
    ("put up the lung function too, so she can answer her own question",
     [("IR.SHOW", {"fields": ["pft"], "op": "add"})]),
    ("the left upper lobe on, please, I'd like our trainee to compare the fissures",
     [("AR.SHOW", {"structures": ["left_upper_lobe"], "op": "add"})]),
])
def test_a_remark_after_a_request_that_names_a_thing_is_no_part_of_it(
        con: Console, text: str, expected: list) -> None:
    con.say("show the model")
    assert con.say(text) == expected


@pytest.mark.parametrize("text", ["that's the vein we want to keep", "left, that's the vein"])
def test_a_remark_alone_or_after_a_bare_direction_stays_talk(con: Console, text: str) -> None:
    con.say("show the model")
    before = con.snap
    assert con.say(text) == []
    assert con.snap == before


def test_a_request_frame_written_as_a_template_covers_its_wordings(con: Console) -> None:
    assert "it might be really useful to" in language.words("request_leads")
    con.say("show the ct")
    assert con.say("It'd help to go ten slices up.") == [("IV.SHOW_MOVE", {"axial": "+10"})]


def test_a_template_expands_alternatives_and_optional_words() -> None:
    assert language.expand("it (would|might) [really] help to") == [
        "it would really help to", "it would help to", "it might really help to",
        "it might help to"]
    assert language.expand("plain words") == ["plain words"]
    with pytest.raises(ValueError, match="unclosed"):
        language.expand("it (would help")


# ---------------------------------------------------------------- plurals and sound-alikes
def test_a_plural_of_a_console_word_reads_as_the_word(con: Console) -> None:
    con.say("show the chart")
    assert con.say("hide the charts") == [("IR.HIDE", {})]
    con.say("show the age")
    assert con.say("add the tumor locations") == [
        ("IR.SHOW", {"fields": ["tumor_location"], "op": "add"})]


@pytest.mark.parametrize("text, expected", [
    ("sagittal macs", {"sagittal": "max"}),
    ("sagittal to the mittle", {"sagittal": "middle"}),
])
def test_a_word_the_grammar_read_past_is_read_as_the_console_word_it_sounds_like(
        con: Console, text: str, expected: dict) -> None:
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", expected)]


def test_a_vague_step_and_an_amount_the_same_way_are_one_step(con: Console) -> None:
    con.say("show the ct")
    assert con.say("left a bit, 20 to the left") == [("IV.SHOW_MOVE", {"sagittal": "-20"})]


# ---------------------------------------------------------------- relays, leads, purposes
@pytest.mark.parametrize("before, text, expected", [
    ("show the ct", "the professor asks, could you bring the coronal to 180?",
     [("IV.SHOW_MOVE", {"coronal": 180})]),
    ("show the model", "the professor is asking to add the left lung for comparison",
     [("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})]),
    ("show the chart", "on second thought, remove.", [("IR.HIDE", {})]),
    ("show the chart", "sorry to interrupt, can you show the lung function too?",
     [("IR.SHOW", {"fields": ["pft"], "op": "add"})]),
    ("show the chart", "the chart can go now", [("IR.HIDE", {})]),
    ("show the ct", "would you mind setting the axial to the middle slice and zooming in on it?",
     [("IV.SHOW_MOVE", {"axial": "middle"}), ("IV.ZOOM_IN_MOVE", {"plane": "axial"})]),
])
def test_relays_lead_clauses_and_purposes_leave_the_request(con: Console, before: str,
                                                            text: str, expected: list) -> None:
    con.say(before)
    assert con.say(text) == expected


@pytest.mark.parametrize("text", ["pull up something for comparison",
                                  "excuse me, could you turn around so I can get past?"])
def test_talk_that_only_sounds_like_a_request_stays_talk(con: Console, text: str) -> None:
    con.say("show the model")
    before = con.snap
    assert con.say(text) == []
    assert con.snap == before


def test_a_long_word_heard_without_its_first_sound_is_the_word(con: Console) -> None:
    con.say("show the ct")
    assert con.say("zoom in on this agittal") == [("IV.ZOOM_IN_MOVE", {"plane": "sagittal"})]
    assert con.say("oronal plus 20")[0] == ("IV.SHOW_MOVE", {"coronal": "+20"})


# ---------------------------------------------------------------- other languages' habits
@pytest.mark.parametrize("before, text, expected", [
    ("show the ct", "Open the CT, por favor.", [("IV.SHOW_MOVE", {})]),
    ("show the ct", "Yalla, davinci, open the CT min fadlak.", [("IV.SHOW_MOVE", {})]),
    ("show the ct", "Geu... coronal, fifty plus, please.", [("IV.SHOW_MOVE", {"coronal": "+50"})]),
    ("show the ct", "axial twenty minus", [("IV.SHOW_MOVE", {"axial": "-20"})]),
    ("show the ct", "Coronal view, big, please make.", [("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]),
    ("show the model", "Only nodules, nothing more.", [("AR.SHOW", {"structures": ["lung_nodules"]})]),
    ("show the model", "Hmm, the right upper lobe back on, doch.",
     [("AR.SHOW", {"structures": ["right_upper_lobe"], "op": "add"})]),
    ("show the chart", "The PFT, the function of the lung, show me.", [("IR.SHOW", {"fields": ["pft"]})]),
])
def test_word_order_signs_and_please_of_other_languages(con: Console, before: str, text: str,
                                                        expected: list) -> None:
    con.say(before)
    assert con.say(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("and tier view", [("AR.SHOW", {"view": "anterior"})]),
    ("zoom into the nod yule", [("AR.ZOOM_IN", {"target": "lung_nodules"})]),
])
def test_a_console_term_written_as_two_words_is_read_as_the_term(con: Console, text: str,
                                                                 expected: list) -> None:
    con.say("show the model")
    assert con.say(text) == expected


@pytest.mark.parametrize("text", [
    "Okay everyone, look at the axial view up there, you can see the node right here.",
    "she have which diseases before?",
])
def test_ordinary_words_side_by_side_are_not_joined_into_a_term(text: str) -> None:
    from app.language.soundalike import sound_alike_readings

    assert sound_alike_readings(text) == []


@pytest.mark.parametrize("before, text, expected", [
    ("show the model", "And the inferior view, if that is possible.", [("AR.SHOW", {"view": "inferior"})]),
    ("show the ct", "If it's alright, could the sagittal go left by 15?",
     [("IV.SHOW_MOVE", {"sagittal": "-15"})]),
])
def test_a_condition_of_politeness_around_a_request_is_no_part_of_it(
        con: Console, before: str, text: str, expected: list) -> None:
    con.say(before)
    assert con.say(text) == expected


@pytest.mark.parametrize("before, text, expected", [
    ("show the model", "add rll and lll",
     [("AR.SHOW", {"structures": ["left_lower_lobe", "right_lower_lobe"], "op": "add"})]),
    ("show the model", "tayyib, remove the lobe the lower right.",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "remove"})]),
    ("show the model", "include the lung left.",
     [("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})]),
    ("show the model", "show the tray key a",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "add"})]),
    ("show the model", "turn of the nodules",
     [("AR.SHOW", {"structures": ["lung_nodules"], "op": "remove"})]),
    ("show the chart", "and the diagnostic also.", [("IR.SHOW", {"fields": ["diagnosis"], "op": "add"})]),
    ("show the chart", "show the bodyweight", [("IR.SHOW", {"fields": ["weight"]})]),
])
def test_sides_after_the_noun_abbreviations_and_recogniser_spellings(
        con: Console, before: str, text: str, expected: list) -> None:
    con.say(before)
    assert con.say(text) == expected


def test_a_side_said_by_an_abbreviation_is_not_narrowed_to_the_lung_on_show(con: Console) -> None:
    con.say("show the model")
    assert con.say("add the lower lobe") == [
        ("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]


def test_an_opener_of_another_language_before_again_is_set_aside(con: Console) -> None:
    con.say("show the model")
    con.say("zoom in")
    assert con.say("noch mal, again.") == [("AR.ZOOM_IN", {})]
