"""Regional and casual English reaches the same command as plain English (DESIGN §3, §4):
dialect words and dropped letters are language data; thinking aloud, a greeting before the
wake word and a remark before the request are no part of the request."""

from __future__ import annotations

from tests.test_lexicon import Console


def test_dialect_words_are_read_as_their_plain_forms() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Take the airway aff")
    assert "trachea_bronchia" not in con.snap["ar"]["structures"]
    con.say("Aye, stick the right middle, naw, the right lower lobe on as well")
    assert "right_lower_lobe" in con.snap["ar"]["structures"]
    assert "right_middle_lobe" not in con.snap["ar"]["structures"]


def test_a_closing_courtesy_in_casual_words_is_no_part_of_the_request() -> None:
    con = Console()
    con.say("show the age")
    con.say("And her spirometry too, if ya don't mind")
    assert con.snap["ir"]["fields"] == ["age", "pft", "sex"]


def test_a_dropped_g_and_a_greeting_before_the_wake_word() -> None:
    con = Console()
    con.say("Well, good mornin', davinci, would you go on and pull up that patient chart "
            "for me, darlin'")
    assert con.snap["ir"]["visible"]


def test_a_remark_with_a_negation_before_the_request_is_set_aside() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("show the inferior view")
    con.say("Well shoot, that ain't right, give me the regular surgical view")
    assert con.snap["ar"]["view"] == "surgical"


def test_a_repeated_step_after_thinking_aloud_counts_every_time() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagittal 200")
    con.say("Hmm, is too far. Left, left")
    assert con.snap["iv"]["pos"]["sagittal"] == 180


def test_an_interjection_before_the_other_way_reverses_the_last_move() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Sagittal minus 56")
    con.say("Mmm... and now the other way")
    assert con.snap["iv"]["pos"]["sagittal"] == 256


def test_a_request_lead_of_indian_english_is_a_frame() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Please do the needful and make axial view bigger")
    assert con.snap["iv"]["mode"] == "zoom_view" and con.snap["iv"]["main"] == "axial"


def test_the_scanner_is_the_ct() -> None:
    con = Console()
    con.say("davinci, I would like to see the scanner, please")
    assert con.snap["iv"]["mode"] == "small_views"


def test_a_comparison_after_a_remark_is_no_request() -> None:
    con = Console()
    con.say("show the ct")
    it = con.interp.interpret("Nice, that's a big nodule, bigger than I thought.", con.state,
                              con.memory)
    assert not (it.valid and it.decision.confidence >= 0.75 and it.decision.steps)


def test_a_dialect_interjection_is_not_a_name_called_out() -> None:
    con = Console()
    con.say("Abeg, show the CT scan.")
    assert con.snap["iv"]["mode"] == "small_views"
    con.say("Oya, scan left, left.")
    assert con.snap["iv"]["pos"]["sagittal"] == 236
    con.say("Naw, naw, back tae where we were.")
    assert con.snap["iv"]["pos"]["sagittal"] == 256


def test_scots_and_caribbean_function_words_are_read_as_plain_english() -> None:
    con = Console()
    con.say("Right, pit the CT oan the screen, wid ye.")
    con.say("davinci, axial doon twenty.")
    assert con.snap["iv"]["pos"]["axial"] == 44
    con.say("Sagittal lef' forty.")
    assert con.snap["iv"]["pos"]["sagittal"] == 216


def test_a_term_of_address_after_a_pause_is_no_part_of_the_request() -> None:
    con = Console()
    con.say("Howay, davinci, put the CT on, pet.")
    assert con.snap["iv"]["mode"] == "small_views"
    con.say("show the 3d model")
    con.say("Gis the left side view now, pet.")
    assert con.snap["ar"]["view"] == "left"


def test_the_pet_scan_named_as_such_stays_out_of_scope() -> None:
    con = Console()
    con.say("show the ct")
    before = con.snap
    assert con.say("show the CT and the PET") == []
    assert con.say("show me the PET scan, the fused one") == []
    assert con.snap == before
