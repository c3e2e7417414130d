"""The command language as data (app/language): loading, querying, and a hospital's own
words taking effect without Python (DESIGN §3 "data, not code")."""

from __future__ import annotations

from pathlib import Path

import pytest

import app.language as language
from app.language.normalize import normalize
from tests.test_lexicon import Console


@pytest.fixture
def hospital_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VISA_LANGUAGE_DIR", str(tmp_path))
    language.reload()
    yield tmp_path
    monkeypatch.delenv("VISA_LANGUAGE_DIR")
    language.reload()


def test_every_word_class_loads_and_is_lower_case() -> None:
    names = list(language.class_names())
    assert {"polarity_show", "polarity_hide", "structure_only", "undo_phrases"} <= set(names)
    for name in names:
        entries = language.words(name)
        assert entries and all(e == e.lower().strip() for e in entries), name


def test_a_phrase_of_one_class_hides_the_word_of_another_inside_it() -> None:
    assert language.which_of(["bring", "down", "the", "model"],
                             ("polarity_show", "polarity_hide")) == {"polarity_hide"}
    assert language.which_of(["no", "need", "for", "the", "box"],
                             ("polarity_show", "polarity_hide")) == {"polarity_hide"}
    assert language.which_of(["bring", "the", "model", "back"],
                             ("polarity_show", "polarity_hide")) == {"polarity_show"}


def test_spelled_letters_join_but_lone_words_stay() -> None:
    assert normalize("show the f v c") == "show the fvc"
    assert normalize("r l l on") == "rll on"
    assert normalize("just a trachea") == "just a trachea"
    assert normalize("so if i go") == "so if i go"


def test_display_names_and_sound_alikes_are_rewritten_from_the_data() -> None:
    assert normalize("get the lungs model up") == "get the 3d model up"
    assert normalize("posterior few") == "posterior view"
    assert normalize("the vinci see tea").endswith("ct")


def test_a_hospital_adds_a_display_name_without_python(hospital_words: Path) -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.snap["ar"]["visible"]
    con.say("hide the 3d model")
    con.say("show the wibble")  # a name nobody taught the console: nothing is shown
    assert not con.snap["ar"]["visible"]
    (hospital_words / "phrases.toml").write_text(
        '[[rewrite]]\nfrom = "the wibble"\nto = "the 3d model"\n', encoding="utf-8")
    language.reload()
    con.say("show the wibble")
    assert con.snap["ar"]["visible"]


def test_a_hospital_adds_an_undo_phrase_without_python(hospital_words: Path) -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal plus 40")
    assert con.snap["iv"]["pos"]["coronal"] == 296
    (hospital_words / "words.toml").write_text(
        '[undo_phrases]\nwords = ["as you were"]\n', encoding="utf-8")
    language.reload()
    con.say("as you were")
    assert con.snap["iv"]["pos"]["coronal"] == 256


def test_a_broken_hospital_file_says_which_and_why_and_the_console_keeps_working(
        hospital_words: Path) -> None:
    (hospital_words / "words.toml").write_text('[oops]\nwords = "not a list"\n',
                                               encoding="utf-8")
    (hospital_words / "phrases.toml").write_text("[[rewrite]]\nfrom = 3\n", encoding="utf-8")
    language.reload()
    assert "hide" in language.words("polarity_hide")  # our own words still load
    found = language.problems()
    assert len(found) == 2 and "oops" in found[0] and "rewrite 1" in found[1]
    con = Console()
    con.say("show the ct")
    assert con.snap["iv"]["mode"] == "small_views"
    with pytest.raises(language.LanguageError, match="no word class"):
        language.words("no_such_class")


def test_a_hospital_adds_a_semantic_phrasing_without_python(hospital_words: Path) -> None:
    from app.language.exemplars import exemplar_records

    ours = {r.key: r for r in exemplar_records()}
    assert "pop the scan up" not in ours["iv.show"].phrases
    (hospital_words / "exemplars.toml").write_text(
        '[[intent]]\nkey = "iv.show"\nphrases = ["pop the scan up"]\n\n'
        '[[intent]]\nkey = "oos.suction"\nagent = "OOS"\nkind = "oos"\n'
        'phrases = ["suction here please"]\n', encoding="utf-8")
    language.reload()
    theirs = {r.key: r for r in exemplar_records()}
    assert theirs["iv.show"].phrases[-1] == "pop the scan up"
    assert theirs["iv.show"].phrases[:-1] == ours["iv.show"].phrases
    assert theirs["oos.suction"].agent == "OOS"
    assert language.problems() == []


def test_a_broken_hospital_exemplar_file_is_left_out_with_the_reason(
        hospital_words: Path) -> None:
    from app.language.exemplars import exemplar_records

    (hospital_words / "exemplars.toml").write_text(
        '[[intent]]\nkey = "brand.new"\nphrases = ["do the thing"]\n', encoding="utf-8")
    language.reload()
    keys = {r.key for r in exemplar_records()}
    assert "brand.new" not in keys and "iv.show" in keys
    found = language.problems()
    assert len(found) == 1 and "brand.new" in found[0] and "kind" in found[0]


def test_a_hospital_adds_an_out_of_scope_class_without_python(hospital_words: Path) -> None:
    con = Console()
    con.say("show the ct")
    said = "turn the cell saver up"
    assert "out of scope" not in con.interp.interpret(said, con.state, con.memory).reason.lower()
    (hospital_words / "out_of_scope.toml").write_text(
        '[[class]]\nwhy = "the cell saver is not controlled here"\n'
        "patterns = ['cell saver']\n", encoding="utf-8")
    language.reload()
    it = con.interp.interpret(said, con.state, con.memory)
    assert not it.valid and "cell saver is not controlled here" in it.reason
    assert language.problems() == []


def test_a_hospital_out_of_scope_pattern_that_is_not_valid_is_left_out(
        hospital_words: Path) -> None:
    (hospital_words / "out_of_scope.toml").write_text(
        "[[class]]\nwhy = \"x\"\npatterns = ['(unclosed']\n", encoding="utf-8")
    language.reload()
    found = language.problems()
    assert len(found) == 1 and "(unclosed" in found[0] and "not valid" in found[0]
    con = Console()
    con.say("show the ct")
    assert con.snap["iv"]["mode"] == "small_views"
    assert not con.interp.interpret("pass me the stapler", con.state, con.memory).valid
