"""Words of the speaker's own language at the edges of a request (DESIGN §3 coverage, §4 talk
addressed to people): set aside when the rest is a confident command by itself; a name, a
console word or a sound-alike of one keeps the edge."""

from __future__ import annotations

import pytest

from app.language.known_words import foreign_edges, known_words
from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


@pytest.mark.parametrize("text, rest", [
    ("Toda. Clear it", "Clear it"),
    ("Troppo, troppo. The other way, per favore", "The other way, per favore"),
    ("Khob, only the medical history, merci", "only the medical history"),
    ("Mm goi, hide the chart", "hide the chart"),
    ("Davinci, lotfan, the patient information show", "the patient information show"),
    ("Other way ka", "Other way"),
    ("Hát, the other way.", "the other way"),   # accents: no recogniser's English slip
    ("No niin. CT on.", "CT on"),                # a short word's sound key alone is coarse
    ("3D model, only the RUL and lesion, b'vakasha", "3D model, only the RUL and lesion"),
])
def test_foreign_words_at_the_edges_are_found(text: str, rest: str) -> None:
    assert foreign_edges(text) == rest


@pytest.mark.parametrize("text", [
    "Tom, zoom out.",            # a given name called out: talk, decided elsewhere
    "Corneal, plus twenty",      # sounds like a console term: a recogniser's slip
    "Fife, coronal up",          # a number word within one letter
    "coronal plus ate",          # where an amount goes: a number misheard, maybe
    "zoom in, slowly",           # English of the console's own data
    "coronal plus fifty",        # nothing at the edges
    "Suction, zoom out",         # theatre talk the exemplars know
    "rotate left, please",
])
def test_names_console_words_and_sound_alikes_keep_the_edge(text: str) -> None:
    assert foreign_edges(text) is None


def test_the_known_words_hold_the_language_data() -> None:
    known = known_words()
    assert {"coronal", "again", "please", "slowly", "suction"} <= known
    assert not {"lotfan", "toda", "troppo"} & known


@pytest.mark.parametrize("before, text, expected", [
    (["show the chart"], "Toda. Clear it", [("IR.HIDE", {})]),
    (["show the model", "rotate left"], "Other way ka", [("AR.ROTATE", {"direction": "right"})]),
    ([], "Khob, only the medical history, merci", [("IR.SHOW", {"fields": ["comorbidities"]})]),
    (["show the model"], "Trachea on dong",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "add"})]),
])
def test_the_rest_is_acted_on_when_it_is_a_confident_command(
        con: Console, before: list[str], text: str, expected: list) -> None:
    assert con.say_after(before, text) == expected
    assert con.last.decision.diagnostics.get("foreign_words_set_aside") == text


def test_a_rest_that_is_no_command_is_not_acted_on(con: Console) -> None:
    assert con.say("Toda. The weather is lovely") == []


@pytest.mark.parametrize("before, text, expected", [
    (["show the model", "add the left lung", "left lung hide"], "Lesion also turn off",
     [("AR.SHOW", {"structures": ["lung_nodules"], "op": "remove"})]),
    (["show the model"], "Can show right lung all lobe",
     [("AR.SHOW", {"structures": ["right_lower_lobe", "right_middle_lobe", "right_upper_lobe"],
                   "op": "add"})]),
    (["show the model", "add the left lung"], "Hide left lower lobe alone, keep others",
     [("AR.SHOW", {"structures": ["left_lower_lobe"], "op": "remove"})]),
    (["show the CT", "axial up 10"], "again, once more", [("IV.SHOW_MOVE", {"axial": "+10"})]),
])
def test_verb_last_also_lung_lobes_kept_others_and_a_repeat_said_twice(
        con: Console, before: list[str], text: str, expected: list) -> None:
    assert con.say_after(before, text) == expected


def test_even_before_an_undo_is_a_filler(con: Console) -> None:
    con.say_after(["show the CT", "axial up 20"], "Can you even go back to where we were?")
    assert con.last.decision.undo
    assert con.snap["iv"]["pos"]["axial"] == 64


@pytest.mark.parametrize("text, expected", [
    ("Show the diagnosis and add the comorbidities.",
     [("IR.SHOW", {"fields": ["diagnosis"]}),
      ("IR.SHOW", {"fields": ["comorbidities"], "op": "add"})]),
    ("Show the tumour location, then add the op name.",
     [("IR.SHOW", {"fields": ["tumor_location"]}),
      ("IR.SHOW", {"fields": ["operation_name"], "op": "add"})]),
])
def test_show_then_add_sets_the_box_to_both_parts(con: Console, text: str,
                                                  expected: list) -> None:
    con.say("show the age")
    assert con.say(text) == expected
    assert con.snap["ir"]["fields"] == sorted(f for _, p in expected for f in p["fields"])


def test_a_list_of_displays_written_without_commas_hides_each(con: Console) -> None:
    assert con.say_after(["show the CT", "show the model", "show the chart"],
                         "hide the ct the patient info and the model") == [
        ("IV.REMOVE", {}), ("IR.HIDE", {}), ("AR.REMOVE", {})]


def test_no_before_the_other_way_without_a_pause_still_reverses(con: Console) -> None:
    assert con.say_after(["show the CT", "axial up 10"], "no the other way") == [
        ("IV.SHOW_MOVE", {"axial": "-10"})]


@pytest.mark.parametrize("text", ["she has a small chest", "shes got a really small chest huh"])
def test_a_remark_about_the_patient_with_a_size_word_is_no_zoom(con: Console,
                                                                text: str) -> None:
    con.say("show the CT")
    assert con.say(text) == []
    assert con.snap["iv"]["mode"] == "small_views"


def test_a_hospitals_own_words_are_known_after_reload(tmp_path, monkeypatch) -> None:
    import app.language as language

    (tmp_path / "words.toml").write_text('[command_fillers]\nwords = ["toda"]\n',
                                         encoding="utf-8")
    monkeypatch.setenv("VISA_LANGUAGE_DIR", str(tmp_path))
    language.reload()
    try:
        assert "toda" in known_words()
        assert foreign_edges("Toda. Clear it") is None  # a filler of theirs, not foreign
    finally:
        monkeypatch.delenv("VISA_LANGUAGE_DIR")
        language.reload()
    assert "toda" not in known_words()


def test_an_opener_and_more_words_of_ones_own_language_are_set_aside(con: Console) -> None:
    assert con.say("Bine, deci... give me the 3D model.") == [("AR.SHOW", {})]
    assert con.last.decision.diagnostics.get("opener_set_aside") == "Bine, deci... "


@pytest.mark.parametrize("text", ["Tom, deci... zoom in", "Gauze, Pieter. Back a little."])
def test_a_name_called_out_beside_them_is_still_talk(con: Console, text: str) -> None:
    assert con.say(text) == []
    assert con.last.reason.startswith("Out of scope")
