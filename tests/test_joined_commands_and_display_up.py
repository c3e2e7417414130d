"""Rules generalised from the eleventh phrasing probe (pd11): "as well as" and "plus" join
commands; a verbless "<display> up" puts that display on screen; a patient question naming no
field only leads in to one that does; "what is it called" after the operation asks its name;
the semantic tier keeps the scope rules. Phrasings are our own (pd11-like ones marked); DESIGN
§4 is the spec."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console

AR_SHOW = "AR.SHOW"
AR_HIDE = "AR.REMOVE"


@pytest.fixture
def con() -> Console:
    return Console()


# ------------------------------------------------------------------ joiners
@pytest.mark.parametrize("text, want", [
    ("Clear the CT as well as the patient box.", ["IV.REMOVE", "IR.HIDE"]),  # pd11-like
    ("take the model away as well as the CT", [AR_HIDE, "IV.REMOVE"]),
    ("show the model as well as the scan", [AR_SHOW, "IV.SHOW_MOVE"]),
])
def test_as_well_as_joins_two_commands(con: Console, text: str, want: list[str]) -> None:
    acts = con.say_after(["show the CT", "show the model", "show the patient info"], text)
    assert [a for a, _ in acts] == want, acts


def test_closing_as_well_still_adds(con: Console) -> None:
    acts = con.say_after(["show the model"], "show the left lung as well")
    assert acts[0][1].get("op") == "add", acts


def test_plus_joins_commands_but_not_steps(con: Console) -> None:
    acts = con.say_after(["show the CT", "show the model", "zoom in on the axial"],
                         "Back to the small views plus a close-up of the nodule on the model.")
    assert [a for a, _ in acts] == ["IV.ZOOM_OUT", "AR.ZOOM_IN"], acts  # pd11-like
    acts = con.say_after(["show the CT"], "hide the CT plus the model")
    assert [a for a, _ in acts] == ["IV.REMOVE", AR_HIDE], acts
    assert con.say("coronal plus 40") == [("IV.SHOW_MOVE", {"coronal": "+40"})]
    assert con.say("axial plus twenty") == [("IV.SHOW_MOVE", {"axial": "+20"})]
    acts = con.say("show her age plus her weight")
    assert acts == [("IR.SHOW", {"fields": ["age", "sex", "weight"]})], acts


# ------------------------------------------------------------------ "<display> up"
@pytest.mark.parametrize("text, want", [
    ("Scan up, please.", "IV.SHOW_MOVE"),  # pd11-like
    ("model up", AR_SHOW),
    ("the 3D model up please", AR_SHOW),
    ("CT up", "IV.SHOW_MOVE"),
])
def test_verbless_display_up_shows_it(con: Console, text: str, want: str) -> None:
    assert con.say(text) == [(want, {})]


def test_display_up_in_a_composite(con: Console) -> None:
    acts = con.say_after(["show the CT", "zoom in on the axial"], "Zoom out and model up.")
    assert [a for a, _ in acts] == ["IV.ZOOM_OUT", AR_SHOW], acts  # pd11-like


@pytest.mark.parametrize("text, want", [
    ("axial up", ("IV.SHOW_MOVE", {"axial": "+10"})),
    ("move up", ("IV.SHOW_MOVE", {"axial": "+10"})),
    ("the CT up 20", ("IV.SHOW_MOVE", {"axial": "+20"})),
    ("rotate the model up", ("AR.ROTATE", {"direction": "up"})),
])
def test_moves_with_up_stay_moves(con: Console, text: str, want: tuple) -> None:
    assert con.say_after(["show the CT", "show the model"], text) == [want]


# ------------------------------------------------------------------ patient questions
@pytest.mark.parametrize("text, fields", [
    ("Who are we operating on today — what's the patient's sex and age?",  # pd11-like
     ["age", "sex"]),
    ("who is this lady, what does she weigh", ["weight"]),
    ("what is her background, what was the diagnosis", ["diagnosis"]),
])
def test_named_fields_win_over_a_vague_lead_in(con: Console, text: str,
                                               fields: list[str]) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": fields})]


def test_everything_with_a_field_still_shows_everything(con: Console) -> None:
    con.say("show all patient fields and the operation date")
    assert "operation_date" in con.snap["ir"]["fields"] and "pft" in con.snap["ir"]["fields"]


@pytest.mark.parametrize("text", [
    "What day is the operation and what's it called?",  # pd11-like
    "when is the surgery, and what is it called",
    "when's the procedure and what's its name",
])
def test_what_is_it_called_after_the_operation(con: Console, text: str) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": ["operation_date", "operation_name"]})]


# ------------------------------------------------------------------ views asked about
@pytest.mark.parametrize("text, view", [
    ("What does the back of the lungs look like?", "posterior"),  # pd11-like
    ("show me the front of the model", "anterior"),
    ("what does the top of the 3D look like", "superior"),
    ("What does it look like from the patient's right side?", "right"),  # pd11-like
    ("how does it look from her left", "left"),
    ("Can we view it the way the surgeon sees it?", "surgical"),  # pd11-like
    ("show it how the surgeon would see it", "surgical"),
])
def test_views_asked_about(con: Console, text: str, view: str) -> None:
    acts = con.say_after(["show the CT", "show the model"], text)
    assert acts == [(AR_SHOW, {"view": view})], acts


def test_the_back_of_one_lung_still_names_it(con: Console) -> None:
    acts = con.say_after(["show the model"], "show the back of the left lung")
    assert acts[0][1]["view"] == "posterior" and "left_upper_lobe" in acts[0][1]["structures"]


# ------------------------------------------------------------------ questions and wishes
@pytest.mark.parametrize("text, fields", [
    ("What's she being treated for?", ["diagnosis"]),  # pd11-like
    ("what was he admitted for", ["diagnosis"]),
    ("According to her notes, where does the tumour sit?", ["tumor_location"]),  # pd11-like
    ("going by the chart, how old is she", ["age", "sex"]),
    ("as per the records, where does the lesion lie", ["tumor_location"]),
])
def test_patient_questions_without_a_console_word(con: Console, text: str,
                                                  fields: list[str]) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": fields})]


@pytest.mark.parametrize("text, want", [
    ("I'd love the sagittal on slice 180.", ("IV.SHOW_MOVE", {"sagittal": 180})),  # pd11-like
    ("we would love the coronal at 300", ("IV.SHOW_MOVE", {"coronal": 300})),
    ("What's above this on the axial — can you go up 20?",  # pd11-like
     ("IV.SHOW_MOVE", {"axial": "+20"})),
    ("what is below here, take the coronal down 15", ("IV.SHOW_MOVE", {"coronal": "-15"})),
])
def test_ct_wishes_and_lead_in_questions(con: Console, text: str, want: tuple) -> None:
    assert con.say_after(["show the CT"], text) == [want]


def test_a_ct_question_alone_is_not_dropped(con: Console) -> None:
    acts = con.say_after(["show the CT"], "what is above this on the axial")
    assert acts, "a lone question is still read"


# ------------------------------------------------------------------ scope (semantic tier)
def test_semantic_tier_keeps_the_scope_rules() -> None:
    from app.agents.decision import Memory
    from app.agents.semantic import SemanticTier
    from app.core.state import CaseContext, ConsoleState
    from tests.test_lexicon import SIZE

    tier = SemanticTier(background=False)
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE, tumor_lobes=("right_upper_lobe",)))
    for text in ("what time did we make the incision", "rotate the wrist to the left"):
        d = tier._out_of_scope(text)  # checked before any embedding is needed
        assert d is not None and not d.valid and d.reason.startswith("Out of scope"), text
    assert tier._out_of_scope("what is the operation date") is None
    assert tier._out_of_scope("give it a twirl") is None  # unfamiliar, not out of scope
    if tier.ready():
        d = tier.decide("what time did we make the incision", state, Memory())
        assert d is not None and not d.valid


def test_a_wish_for_something_else_is_not_a_command(con: Console) -> None:
    con.say("show the model")
    con.say("I'd love a 3D printer for these models")
    assert con.last is not None and not con.last.valid


# ------------------------------------------------------------------ lexicon-alone misses
def test_a_comma_list_before_up_is_the_object(con: Console) -> None:
    acts = con.say("Put the diagnosis, the comorbidities and the operation name up.")  # pd11-like
    assert acts == [("IR.SHOW", {"fields": ["comorbidities", "diagnosis", "operation_name"]})]
    acts = con.say("bring her weight, height and BMI up please")
    assert acts == [("IR.SHOW", {"fields": ["bmi", "height", "weight"]})], acts


def test_we_are_done_before_a_request_is_an_aside(con: Console) -> None:
    acts = con.say_after(["show the model", "show the patient info"],
                         "Great, we're done, close everything: the model and the patient box.")
    assert [a for a, _ in acts] == [AR_HIDE, "IR.HIDE"], acts  # pd11-like
    acts = con.say_after(["show the CT"], "ok we are finished, take the CT off")
    assert [a for a, _ in acts] == ["IV.REMOVE"], acts


@pytest.mark.parametrize("text", [
    "Okay team, we're starting the right upper lobectomy.",  # pd11-like
    "let's begin the left lower lobectomy",
    "proceeding with the wedge resection and segmentectomy",
])
def test_starting_the_operation_is_out_of_scope(con: Console, text: str) -> None:
    con.say(text)
    assert con.last is not None and not con.last.valid and "Out of scope" in con.last.reason
