"""Multi-word expressions the grammar reads as one word, and ``canonical`` (the text with
them joined and verb forms read as the verb).
"""

from __future__ import annotations

import re

from app.language.vocabulary import (
    AR_VIEW_WORDS,
    DIRECTIONS,
    FIELD_WORDS,
    HIDE_VERBS,
    MOVE_VERBS,
    NAMED_POS,
    PLANE_WORDS,
    RESET_VERBS,
    ROTATE_VERBS,
    SHOW_VERBS,
    STRUCT_WORDS,
    verb_lemmas,
)

# Multi-word expressions read as one word before anything else (longest first).
_CANON: list[tuple[re.Pattern[str], str]] = [(re.compile(p), r) for p, r in (
    (r"\bbody mass index\b|\bbody mass\b", "bmi"),
    (r"\bfull screen\b|\bfull size\b|\bwhole screen\b", "fullscreen"),
    (r"\bblow (it |this |that )?up\b", "enlarge"),
    (r"\bclose up\b|\bcloser look\b", "closer"),
    # camera talk: "tighter" is closer; "fully out" / "step back out" zoom out
    (r"^(a bit |a little |go |get )?tighter\b", "zoom in"),
    (r"\b(get|go|come|move) (a bit |a little )?nearer( to)?\b|\bnearer to\b", "zoom in on"),
    (r"^(all the way|fully|completely) out\b", "zoom out fully"),
    (r"\bstep (back )?out\b", "zoom out"),
    # "that's enough spinning": stop turning; "kind enough to" is only politeness
    (r"\b(that is|that's|thats|ok|okay) enough (spinning|rotating|rotation|turning|of that "
     r"spinning|of the spinning)\b|\benough (spinning|rotating|rotation|turning)\b",
     "stop rotating"),
    (r"\b(kind|good) enough to\b", "please"),
    # "could it go round once": one full turn
    (r"\b(it|model) (go|spin|swing) (all the way )?(a)?round( once| one time| fully)?\b"
     r"(?! (vertically|horizontally|up|down|left|right|to))", "\\1 rotate horizontally"),
    # "restore that lobe": put back the lobe just taken away
    (r"\brestore (that|this|the last) (lobe|structure)\b", "readd it"),
    # "what are we taking out today": the operation
    (r"\bwhat (are|is) (we|she|he) (taking out|removing|doing|having( done)?|operating on)"
     r"( today| here| now)?\b", "what is the operation name"),
    (r"\bwhat('s| has| is|s) (she|he|the patient) got\b", "what is the diagnosis"),
    # "heart or lung history": her medical history, not the 3D model's heart
    (r"\b(heart|cardiac|lung|pulmonary|cardiopulmonary)( or (heart|lung|cardiac|pulmonary))? "
     r"(history|problems|disease|conditions)\b", "medical history"),
    # "the slice above": the next slice up (axial)
    (r"\b(the )?(slice|one|image) above( that| it| this)?\b", "up"),
    (r"\b(the )?(slice|one|image) below( that| it| this)?\b", "down"),
    # the three-view layout in any display noun ("the three small pictures", "3 panes")
    (r"\b(all )?(the )?(3|three) (small |little |smaller )?(views|panels|images|pictures|panes|"
     r"tiles|windows|frames|boxes|screens)\b(?! (to|at) )", "small views"),
    (r"\b(all )?(the )?(3|three) planes\b(?= (to|at|on|onto|by|up|down|left|right|forward|back|"
     r"middle|center|[+-]?\d))", "all planes"),
    # "middle slice on all three planes": that position on every plane
    (r"\b(middle|center|centre|mid|max|maximum|min|minimum|top|bottom)( slice| slices| position)? "
     r"(on|of|in|for|across) (all|every|each)( the)?( 3| three)? (planes|views|slices)\b",
     "all planes to the \\1"),
    # "center all three planes", "the middle slices": every plane to its middle slice
    (r"\b(center|centre|middle) (all|every|each)( the)?( 3| three)? (planes|views|slices)\b",
     "all planes to the middle"),
    (r"\b(the )?(middle|center|centre|mid) slices\b(?! (of|on|in|for) )", "all planes to the middle"),
    (r"\b(all )?(3|three) (small )?planes\b", "small views"),
    (r"\b(one|1|a single) (step|notch|level|click|more time)\b", "once"),
    (r"\b(\d+) (steps|levels|notches|clicks)\b(?! (up|down|left|right|forward|back))",
     "\\1 times"),
    (r"\bmake it stop\b|\bstop it\b", "stop"),
    (r"\b(back to|as) (how it was|it was|before|the original|the start)\b", "reset"),
    # "the lobe the lower right", "the lobe lower right": the side and level said after "lobe"
    (r"\b(?:the )?lobe (?:the )?(upper|middle|lower) (left|right)\b", "the \\2 \\1 lobe"),
    (r"\b(?:the )?lobe (?:the )?(left|right) (upper|middle|lower)\b", "the \\1 \\2 lobe"),
    # "include the lung left": the side after "lung" (not "turn the lung left": a rotation)
    (r"\b(add|include|show|hide|remove|display|put|bring|readd) (the )?lung (left|right)\b",
     "\\1 the \\3 lung"),
    # "coronal, fifty plus": the sign said after the amount
    (r"(?<!\bto )(?<!\bslice )\b(\d+) (plus|minus)\b(?! \d)", "\\2 \\1"),
    # "only the nodules, nothing more": only those
    (r"^(.+?),? nothing (more|else)( please)?$", "only \\1"),
    # "the right upper lobe back on": that structure shown again
    # ("turn the trachea back on": with the verb said first)
    (r"^(?:(?:turn|switch|flip|put|bring) )?(the )?((?:right |left )?(?:upper |middle |lower )?"
     r"(?:lobe|lobes|lung|lungs|nodules?|"
     r"airway|trachea|rul|rml|rll|lul|lll)) back (on|in)\b(?! (?:its|it|her|his|the)\b)",
     "readd \\1\\2"),
    # "coronal view, big, please make": the verb said last
    (r"\b(big|bigger|large|larger|small|smaller),? (please )?make( it)?$", "make it \\1"),
    # "twenty down" / "axial, 20 down": the step said before its direction
    # ("40 slices to the right", "twenty slices upward": the unit and "to the" go with it)
    (r"(?<!\bto )(?<!\bslice )\b((?:about|around|roughly|approximately|some|maybe|like) )?"
     r"(\d+) (?:(?:more )?(?:slices|slice|steps|images) )?"
     r"(?:(?:to|towards|toward) (?:the )?)?(down|up|left|right|forwards?|backwards?|back|"
     r"upwards?|downwards?)\b(?! \d| (?:lung|lobe|lobes|upper|lower|middle|side)\b)",
     "\\3 \\1\\2"),
    # "her FEV1 before surgery": when it was measured, not the operation field
    (r"\b(before|prior to|ahead of|pre) (the |her |his |this )?(surgery|operation|procedure|op)\b"
     r"(?= *[?.!,]?$)", ""),
    # "show nothing but the airway": only the airway
    (r"\bnothing (but|except|other than|apart from|besides)\b", "only"),
    # "the 3D model of the lungs": the model is of the lungs; no structure is picked out
    (r"\b(3d |lung )?(model|reconstruction|rendering) of (the |her |his )?(lungs?|chest|thorax)\b",
     "\\1\\2"),
    # "back to the middle": a return to the middle slice, not a step backward (coronal)
    (r"\b(go |move )?back to (the )?(middle|centre|center)\b", "to the middle"),
    (r"\b(disappear|vanish)\b", "hide"),
    # "make the model go away", "make it vanish": hide (not "go away" = zoom out)
    (r"\bmake ((the |it |them |that |this |those )?(\w+ ){0,3})(go away|disappear|vanish)\b",
     "hide \\1"),
    (r"\b(pull|go|come|zoom|back) ?(all the way|right) (back )?out\b|"
     r"\bback out (all the way|fully|completely)\b|^all the way (back )?out\b", "zoom out fully"),
    (r"\b(further|farther|move|go|step) away\b|\bback out\b|\bzoom back( out)?\b|"
     r"\b(back|ease|pull) off\b|\bease (it )?back\b", "zoom out"),
    (r"\b(bring|put|add|get) back\b", "readd"),
    (r"\b(put|bring|get|pop|stick|slot) ((the |them |it |that |those |all )?(\w+ ){0,4})back\b"
     r"(?! to)",
     "readd \\2"),
    # "I want the nodules back", "can I have her BMI back": wanting a thing back re-adds it
    # ("move the coronal back 10" is a direction: a step or a target follows)
    (r"\b(want|need|have|give me|show me|show|display|restore) ((?:it |them |that |those |"
     r"everything |(?:(?:the|her|his|all|all the|those|these) )?(?:(?!(?:to|see|look|at|the|a|an|"
     r"me|us|from|of)\b)\w+ ){1,3}))back\b(?! (of|to|by|\d|a |up|down|slightly|further|more))",
     "readd \\2"),
    # "start the CT over", "begin it again": reset that thing
    (r"\b(start|begin) ((the |it |them |that |this )?((?!(rotat|spin|turn|swing|mov|scroll)\w*)"
     r"\w+ ){0,2})(over|again|afresh)\b", "reset \\2"),
    (r"\b(back )?(the way|how) (it|they|things|everything) (was|were|started|began|looked)"
     r"( at the start| originally| before| at first)?\b", "reset"),
    (r"\boperat(ed|ing|e) (on (her|him|them|the patient|this patient) )?for\b", "diagnosis"),
    (r"\b(3|three) ?dimensional\b|\b3 dimension\b", "3d"),
    (r"\btowards? the (head|top)\b|\bcranially\b", "up"),
    (r"\btowards? the (feet|foot|legs|bottom)\b|\bcaudally\b", "down"),
    (r"\b(done|finished) with\b", "hide"),
    (r"\bhold (it |that |this )?(there|still|steady|in place)\b|\bkeep it still\b", "stop"),
    (r"\bnot so close\b|\btoo close\b|\bpull (it )?back\b|\bpull out\b", "zoom out"),
    (r"\breset the zoom\b|\bzoom (all the way|completely|fully) out\b|"
     r"\bzoom out (all the way|completely|fully)\b|\bno zoom\b", "zoom out fully"),
    (r"\b(a )?(few|couple of|couple|several) (more )?(slices|steps)\b", "slices"),
    (r"\bdate of birth\b|\bdob\b|\bbirth date\b", "birthday"),
    (r"\bpage (up|down)\b", "scroll \\1"),
    (r"\bbirds? s? ?eye( view)?\b", "top view"),
    (r"\bfrontal view\b|\bfrontal perspective\b", "anterior view"),
    (r"\bdefault view\b|\bnormal view\b|\bstandard view\b|\bhome view\b",
     "surgical view"),
    (r"\boperated (for|on for)\b", "diagnosis"),
    (r"\bwhat is wrong with (the patient|her|him|them)\b|\bwhy (is|are|does|do|were|was) (she|he|the patient|they|we)\b[^,]*\b"
     r"(surgery|operation|procedure|operated|operating|operate|here|having)\b", "diagnosis"),
    # "return the model to the beginning": put it back there
    (r"\breturn\b((?: \w+){0,3}) to (?=(normal|default|defaults|the default|the beginning|"
     r"start|the start|original)\b)", "put\\1 back to "),
    (r"\bback to (normal|default|defaults|the default|the beginning|start|original)\b|"
     r"\bstart over\b|\bfrom scratch\b", "reset"),
    (r"\bupside down\b|\bflip(?!( it| the model| this)?( over| around)? (to|so)\b)"
     r"( it| the model| this)?( over| around)?\b|"
     r"\bhead over heels\b", "rotate vertically"),
    (r"\bpoint out\b|\bhighlight\b|\bindicate\b|\bmark\b", "readd"),
    (r"\b(other|underlying|chronic|past|previous|existing|coexisting|associated|accompanying|"
     r"concomitant|concurrent) "
     r"(medical |health )?(diseases?|conditions?|illness(es)?|problems?|issues?)\b",
     "comorbidities"),
    (r"\b(what|which) ((kind|type|sort) of )?(disease|illness|condition|cancer|tumor|lesion)\b",
     "diagnosis"),
    (r"\bhow big is (she|he|the patient)\b|\b(body )?measurements\b", "physical"),
    (r"^(everything|all of it|all of them|the lot|all)$", "show everything"),
    (r"\b(the )?other way( around| round)?\b|\b(the )?(opposite|other) (way|direction)\b|"
     r"\breverse (it|that|direction)\b", "opposite"),
    (r"\blung (model|anatomy|3d|reconstruction|rendering)\b", "model"),
    # the lobe holding the tumour (from the clinical data)
    (r"\b(tumor|tumors|affected|diseased|target|involved|cancer|tumor bearing) (lobe|lobes)\b|"
     r"(?<!upper )(?<!lower )(?<!middle )\b(lobe|lobes) (with|containing|that has|holding|of) "
     r"the (tumor|nodule|lesion|cancer)\b",
     "tumorlobe"),
    (r"\b3d lungs?\b", "3d"),
    # a bare "in"/"out" after zooming ("and out again", "in a bit more") zooms
    (r"^((and|now|then|okay|ok|so) )*(in|out)\b(?=(( again| a bit| a little| more| further|"
     r"| please| then| once more))*$)", "zoom \\3"),
    # a sweep from one side to the other is the full turn on that axis
    (r"\b(spin|rotate|turn|swing|twirl|roll|rock|tip|swivel|spinning|rotating)\b(.*?)\b(from )?"
     r"(left to right|right to left|side to side)\b", "\\1\\2 horizontally"),
    (r"\b(spin|rotate|turn|swing|twirl|roll|rock|tip|swivel|spinning|rotating|flip)\b(.*?)"
     r"\b(from )?(top to bottom|bottom to top|up and down|head to toe|end over end)\b",
     "\\1\\2 vertically"),
    (r"\bwould (love|like) to\b", "want to"),
    (r"\b(turn|spin|swing|rotate|swivel|twirl|whirl)( it| them| the model| that| this)? round\b",
     "\\1\\2 around"),
    # "what's she in for?": why she is here is her diagnosis
    (r"\bwhat (is|are) (she|he|they|the patient|the pt) (here |in )for\b", "diagnosis"),
    # "what's she being treated for?", "what was he admitted for": the reason is the diagnosis
    (r"\bwhat (is|are|was|were|has|have) (she|he|they|the patient|the pt) (being |been )?"
     r"(treated|admitted|seen|followed|managed|referred|listed|scheduled) for\b", "diagnosis"),
    # "according to her notes, ...": where to look, not a request of its own
    (r"\b(according to|going by|as per|per) (her|his|the|our|their)( patient| clinical| "
     r"medical| case)? (notes|chart|charts|records?|file|sheet|paperwork|history)\b ?,?", ""),
    # "I'd love the sagittal on 180": a wish like "I'd like" when a display or view follows
    # ("I'd love a 3D printer" is talk)
    (r"\b(i|we) (would|d) (really )?love(?= (the|to see|to have|to get|to look at) )",
     "\\1 would like"),
    # an intensifier before a named position adds nothing ("bang in the middle", "dead centre")
    (r"\b(bang|slap|smack|dead|spot|smack bang|right|exactly|precisely) (in |on |at )?(the )?"
     r"(middle|centre|center|midline)\b(?! (lobe|lobes)\b)(?! (and|or|plus) (upper|lower)\b)",
     "to the \\4"),
    # degree nouns are "a bit" ("up a touch", "a tad to the left", "down a notch"); an
    # intensifier before a comparative or direction, or "still" after one, adds nothing
    (r"\ba (touch|tad|smidge|smidgen|hair|fraction|notch|wee bit|little bit|tiny bit)\b",
     "a bit"),
    (r"\b(a lot|lots|much|(?<!the )way|loads|a good bit|a fair bit) (?=(further|farther|more|higher|"
     r"lower|closer|bigger|smaller|larger|up|down|left|right|back|forward|in|out)\b)", ""),
    (r"\b(closer|further|farther|higher|lower|bigger|smaller|larger|more) still\b", "\\1"),
    # "breathing tests", "respiratory numbers": the PFT, named without a console word
    (r"\b(breathing|respiratory|spirometric|ventilatory) (function )?(tests?|testing|"
     r"values?|results?|numbers?|measurements?|stud(y|ies)|figures?|scores?|readings?|"
     r"parameters?|data)\b", "pft"),
    # "close" after a degree word or "in" is the adjective ("get in close", "really close
    # on the nodule"), not the verb that hides; "close in on" zooms
    (r"\bclose in (on|to|toward|towards)\b", "zoom in \\1"),
    (r"\b(in|very|real|really|nice|right|up) close\b", "\\1 closer"),
    (r"\b(get|come|go|move) close (to|on)\b", "\\1 closer \\2"),
    # chart shorthand after a plane ("cor post 20", "ax sup 10")
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? ant\b", "\\1\\2 anterior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? post\b",
     "\\1\\2 posterior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? sup\b", "\\1\\2 superior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? inf\b", "\\1\\2 inferior"),
    (r"\bflip (over |across |round |around )?to\b", "switch to"),
    (r"\bget rid of\b", "remove"),
    (r"\b(bin|ditch|scrap) the\b", "remove the"),
    # slang for putting something on screen ("chuck the scan up", "whack the 3D model up")
    (r"\b(chuck|whack|slap|bung|shove)\b(?=.*\b(up|on)\b)", "bring"),
    (r"\bsm views\b|\bsml views\b", "small views"), (r"\brot\b", "rotate"),
    # "RML off, LUL on": a structure or field switched off or on; "left lung off", "the right
    # lower lobe on"
    (r"\b((?:(?:left|right|both) )?(?:(?:upper|middle|lower) )?(?:lung|lungs|lobe|lobes)) off\b",
     "remove \\1"),
    (r"\b((?:(?:left|right|both) )?(?:(?:upper|middle|lower) )?(?:lung|lungs|lobe|lobes)) on\b"
     r"(?= ?(,|$|please|too|again|now|as well))", "add \\1"),
    (r"\b(rul|rml|rll|lul|lll|nodules|nodule|airway|airways|trachea|bmi|pft|weight|height|age|"
     r"diagnosis|dx|comorbidities) off\b", "remove \\1"),
    (r"\b(rul|rml|rll|lul|lll|nodules|nodule|airway|airways|trachea|bmi|pft|weight|height|age|"
     r"diagnosis|dx|comorbidities) on\b(?= ?(,|$|please|too|again|now|as well))", "add \\1"),
    # a request passed on for someone else ("the doctor would like the airways hidden")
    (r"\b(the )?(doctor|surgeon|consultant|professor|attending|boss|dr \w+) (would like|wants|"
     r"asks for|needs|asked for|would want)\b", "i would like"),
    # non-native order: object first ("the airway also you add", "the coronal you move back")
    (r"(^|, )(?!(?:could|can|would|will|do|did|are|if|when|so|and|thank|as|have|should|may|"
     r"might|please|what|how|why|where|who|i|we|let|okay|ok|now)\b)"
     r"(the |her |his )?([a-z0-9 ]{2,40}?) (also )?you (add|show|remove|hide|move|rotate|"
     r"turn|zoom|put|take|bring|make|enlarge)\b", "\\1\\5 \\4\\2\\3"),
    (r"\bevery (structure|structures|part|thing on the model)\b", "all structures"),
    # "turn to the left side view": a viewpoint, not a swing
    (r"\b(turn|rotate|swing|spin|move|go)( it| the model)? (over )?to the (\w+)( side| lateral)? "
     r"(view|aspect|perspective)\b", "switch to the \\4\\5 view"),
    # "drop the axial by a hundred": the slice goes down
    (r"\b(drop|lower|bring down) (the )?(axial|coronal|sagittal)( slice| plane| view)? by\b",
     "\\3 down by"),
    # "what's the operation and when is it": the date of the operation
    (r"\b(operation|surgery|procedure|op)\b(.*) and when (is|was|will) (it|that)( be)?\b",
     "\\1\\2 and the operation date"),
    # "scroll the volume": the CT volume
    (r"\b(scroll|page|move|go|step|flick)( back| forward| up| down)? (through )?(the )?volume\b",
     "\\1\\2 \\3the ct"),
    (r"\bblow (it |that |this |them |the \w+ |the \w+ \w+ )?up\b", "enlarge \\1"),
    (r"\bcamera ?eye view\b|\bcamera s eye view\b", "surgical view"),
    # "view it the way the surgeon sees it": the surgeon's viewpoint is the surgical view
    (r"\b(the way|how|as) (the |a |our )?(operating )?(surgeon|surgeons|operator) "
     r"(sees|see|views|looks at|would see|will see|is seeing)( it| them| the model| this)?\b",
     "from the surgical view"),
    # a number said as "sixty-something" is a remark, never an amount ("sixty-something,
    # wasn't she? let me see the age")
    (r"\b(\d+|(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)) ?something\b", ""),
    (r"\b(\d+) ish\b", "\\1"),  # "down 20ish": about 20
    # a number said of a person is her age, never a slice ("she's 60 ish, show the age")
    (r"\b(she|he)( is| was| must be| should be)? (about |around |maybe |nearly |over )?"
     r"\d+( ish)?\b", "\\1"),
    # a tag question adds nothing ("her FEV1 was borderline, wasn't it, ...")
    (r",? (is|was|are|were|does|did|has|have|do) not (it|she|he|they|there) ?(,|$)", ","),
    (r"\b(closer|further|farther|bigger|smaller|larger|higher|lower|more|less) than "
     r"(that|this|before|now|it is|that one)\b", "\\1"),
    (r"\b(ditch|scrap|bin|lose|drop|kill) (it|that|this|them|those)\b", "remove \\2"),
    # "the lower lobe on the right": the side named after the lobe
    (r"\b(upper|middle|lower) lobe (on|of) the (right|left)( side| lung)?\b", "\\3 \\1 lobe"),  # "flip to the front view"
    # "two more slices up": the number is the step ("more" only says it goes on)
    (r"\b(\d+) more (slices?|steps?|images?)\b", "\\1 \\2"),
    (r"\bpull up\b|\bbring up\b|\bput up\b|\bopen up\b|\bpop up\b|\bcall up\b",
     "show"),
)]


# Inflected forms of the verbs the grammar reads ("would you mind showing the CT").
# Verb forms read as the verb ("swinging it upward", "taking the RLL out"): generated for the
# grammar's verbs, then the forms the rules do not cover.
_LEMMA = {**verb_lemmas(
    SHOW_VERBS | HIDE_VERBS | MOVE_VERBS | ROTATE_VERBS | RESET_VERBS
    | {"zoom", "add", "enlarge", "include", "magnify", "shrink"},
    set(PLANE_WORDS) | set(DIRECTIONS) | set(STRUCT_WORDS) | set(FIELD_WORDS)
    | set(AR_VIEW_WORDS) | set(NAMED_POS)),
    "showing": "show", "shows": "show", "showed": "show", "shown": "show",
    "displaying": "display", "displayed": "display", "opening": "open", "opened": "open",
    "hiding": "hide", "hidden": "hide", "removing": "remove", "removed": "remove",
    "clearing": "clear", "cleared": "clear", "closing": "close", "closed": "close",
    "resetting": "reset", "zooming": "zoom", "zoomed": "zoom", "enlarging": "enlarge",
    "enlarged": "enlarge", "magnifying": "magnify", "magnified": "magnify",
    "increasing": "increase", "decreasing": "decrease", "scrolling": "scroll",
    "going": "go", "bringing": "bring", "adding": "add", "added": "add",
    "rotated": "rotate", "turned": "turn", "spun": "spin", "moved": "move",
    "nudge": "move", "bump": "move", "scrolls": "scroll", "including": "include",
    "initialise": "initialize", "initialized": "initialize", "restoring": "restore",
    "displays": "display", "opens": "open", "zooms": "zoom", "rotates": "rotate",
    "visualizing": "visualize", "erasing": "erase", "deleting": "delete",
    "functioning": "function", "functions": "function",
}


def canonical(text: str) -> str:
    """The corrected text with multi-word expressions and verb forms in the grammar's words."""
    for pat, rep in _CANON:
        text = pat.sub(rep, text)
    text = " ".join(_LEMMA.get(t, t) for t in text.split())
    return re.sub(r"\s+", " ", text).strip()
