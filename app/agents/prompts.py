"""Per-stage LLM prompts and output schemas (DESIGN §3 tier 4 and the visa strategy).

Design rules, because prompt tokens are the cost on a CPU (~12-34 tokens/s prefill):

* **Progressive disclosure**: a decision prompt shows only the actions of the likely agent(s)
  (``guess_agents``, a cheap keyword cue count), so a stage prefix is ~200-350 tokens instead
  of one prompt with everything; the "all" stage is the fallback for composites and unclear
  commands.
* Each prompt is a fixed **prefix** (system text + 1-3 terse few-shot turns), warmed and cached
  by the runtime, and a short **suffix**: a compact context line and the user's words LAST.
* The output is a JSON plan constrained by a schema generated from the command registry's own
  parameter schemas (one source of truth), so the grammar already rules out unknown actions,
  unknown parameter names and most bad values; the registry validates again afterwards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from app.agents.decision import Memory
from app.agents.llm_types import StagePrompt
from app.core.actions import ACTIONS, Action
from app.core.params import Param
from app.core.state import ConsoleState
from app.core.vocab import (
    AGENTS,
    AR_GROUPS,
    AR_ROTATIONS,
    AR_STRUCTURES,
    AR_VIEWS,
    IR_FIELDS,
    WINDOW_PRESETS,
)

ACTION_BY_ID: dict[str, Action] = {a.id: a for a in ACTIONS}
ACTION_IDS: tuple[str, ...] = tuple(ACTION_BY_ID)
MAX_STEPS = 4

# ------------------------------------------------------------------ output schemas
_SLICE_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "integer", "minimum": 0, "maximum": 4999},
    {"type": "string", "pattern": "^[+-][0-9]{1,4}$"},
    {"type": "string", "enum": ["middle", "max", "min"]},
]}


def param_schema(p: Param) -> dict[str, Any]:
    """JSON schema of one registry parameter (canonical keys plus group names only)."""
    if p.kind == "slice":
        return dict(_SLICE_SCHEMA)
    if p.kind == "enum":
        return {"type": "string", "enum": list(p.choices)}
    if p.kind == "enum_list":
        groups = [k for k, v in (p.aliases or {}).items() if len(v) > 1 and k in AR_GROUPS]
        if p.name == "fields":
            groups = ["all"]
        return {"type": "array", "items": {"type": "string", "enum": [*p.choices, *groups]},
                "minItems": 1, "maxItems": 8}
    if p.kind == "int":
        return {"type": "integer"}
    return {"type": "boolean"}


def action_schema(action: Action) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "action": {"const": action.id},
            "params": {
                "type": "object",
                "properties": {p.name: param_schema(p) for p in action.params},
                "required": [p.name for p in action.params if p.required],
                "additionalProperties": False,
            },
        },
        "required": ["action", "params"],
        "additionalProperties": False,
    }


def plan_schema(agents: Iterable[str] = AGENTS) -> dict[str, Any]:
    """``{"valid": bool, "steps": [{"action": id, "params": {...}}]}`` for these agents."""
    wanted = set(agents)
    actions = [a for a in ACTIONS if a.agent in wanted]
    return {
        "type": "object",
        "properties": {
            "valid": {"type": "boolean"},
            "steps": {"type": "array", "items": {"oneOf": [action_schema(a) for a in actions]},
                      "maxItems": MAX_STEPS},
        },
        "required": ["valid", "steps"],
        "additionalProperties": False,
    }


# ------------------------------------------------------------------ decision prompts
_HEADER = (
    "You turn a surgeon's spoken command into actions for the console beside the robot. "
    'Reply with JSON only: {"valid":true,"steps":[{"action":ID,"params":{...}}]}. '
    "Several requests: several steps, in the order spoken. "
    'Not a console command (instruments, suction, vital signs, chatter): {"valid":false,"steps":[]}. '
    "Use the state and recent commands only to resolve words like it, again, more, zoom in."
)

_SECTIONS = {
    "IV": (
        "CT viewer (IV):\n"
        "IV.SHOW_MOVE {axial,coronal,sagittal,window}: show the CT views, move slices\n"
        "IV.ZOOM_IN_MOVE {plane,axial,coronal,sagittal,window}: enlarge one plane\n"
        "IV.ZOOM_OUT {}: back to the small views\n"
        "IV.REMOVE {}: remove the CT views\n"
        "IV.RESET {}: middle slices, small views\n"
        'Slice values: "+N"/"-N" relative, N absolute slice, "middle", "max", "min". '
        "No number: 10 per direction word (repeats add up). "
        "right = sagittal +, left = sagittal -, forward/front/anterior = coronal +, "
        "back/posterior = coronal -, up/superior = axial +, down/inferior = axial -. "
        f"window: {', '.join(WINDOW_PRESETS)}."
    ),
    "AR": (
        "3D lung model (AR):\n"
        "AR.SHOW {structures,op,view}: show the model, choose structures or a viewpoint\n"
        f"AR.ROTATE {{direction}}: {', '.join(AR_ROTATIONS[1:])} or static\n"
        "AR.ZOOM_IN {target}: zoom in, optionally toward a structure\n"
        "AR.ZOOM_OUT {}: zoom out\n"
        "AR.REMOVE {}: hide the model\n"
        "AR.RESET {}: default structures and view\n"
        f"structures: {', '.join(AR_STRUCTURES)}; groups: {', '.join(AR_GROUPS)}. "
        f"op: set (default), add, remove. views: {', '.join(AR_VIEWS)}."
    ),
    "IR": (
        "Patient information (IR):\n"
        "IR.SHOW {fields,op}: show fields (none named = all)\n"
        "IR.HIDE {}: hide the information box\n"
        "IR.RESET {}: show all fields\n"
        f"fields: {', '.join(IR_FIELDS)}, all. op: set (default), add, remove."
    ),
}


def _ex(command: str, steps: list[tuple[str, dict[str, Any]]] | None) -> tuple[str, str]:
    plan = ({"valid": False, "steps": []} if steps is None else
            {"valid": True, "steps": [{"action": a, "params": p} for a, p in steps]})
    return f"command: {command}", json.dumps(plan, separators=(",", ":"))


_EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "IV": (
        _ex("coronal plus 100", [("IV.SHOW_MOVE", {"coronal": "+100"})]),
        _ex("go left left and enlarge that view",
            [("IV.SHOW_MOVE", {"sagittal": "-20"}), ("IV.ZOOM_IN_MOVE", {"plane": "sagittal"})]),
        _ex("prepare the stapler", None),
    ),
    "AR": (
        _ex("rotate the model to the left", [("AR.ROTATE", {"direction": "left"})]),
        _ex("show only the right upper lobe from the front",
            [("AR.SHOW", {"structures": ["right_upper_lobe"], "view": "anterior"})]),
        _ex("apply suction", None),
    ),
    "IR": (
        _ex("show age and bmi", [("IR.SHOW", {"fields": ["age", "bmi"]})]),
        _ex("hide the patient info", [("IR.HIDE", {})]),
        _ex("is the patient stable", None),
    ),
    "all": (
        _ex("move axial to the middle slice and zoom in",
            [("IV.SHOW_MOVE", {"axial": "middle"}), ("IV.ZOOM_IN_MOVE", {"plane": "axial"})]),
        _ex("show the nodules and the pft values",
            [("AR.SHOW", {"structures": ["lung_nodules"]}), ("IR.SHOW", {"fields": ["pft"]})]),
        _ex("prepare the stapler", None),
    ),
}


def stage_name(agents: Sequence[str]) -> str:
    return f"decide.{agents[0]}" if len(agents) == 1 else "decide.all"


def stage_agents(stage: str) -> tuple[str, ...]:
    tail = stage.split(".", 1)[1] if "." in stage else stage
    return (tail,) if tail in AGENTS else AGENTS


def decision_prompt(agents: Sequence[str]) -> StagePrompt:
    """The stage prompt for one agent, or for all of them (the fallback / composite stage)."""
    agents = tuple(agents) if len(agents) == 1 else AGENTS
    key = agents[0] if len(agents) == 1 else "all"
    body = "\n".join(_SECTIONS[a] for a in agents)
    return StagePrompt(stage_name(agents), f"{_HEADER}\n{body}", _EXAMPLES[key])


def all_decision_prompts() -> list[StagePrompt]:
    """Every decision stage, most general first (the warm-up order)."""
    return [decision_prompt(AGENTS), *(decision_prompt((a,)) for a in ("IV", "AR", "IR"))]


# ------------------------------------------------------------------ progressive disclosure
_CUES: dict[str, tuple[str, ...]] = {
    "IV": ("ct", "cat scan", "scan", "slice", "slices", "axial", "coronal", "sagittal",
           "plane", "planes", "window", "mediastin", "soft tissue", "bone", "views",
           "forward", "backward", "anterior slice", "posterior slice", "superior", "inferior",
           "image", "images"),
    "AR": ("3d", "three d", "model", "lobe", "lobes", "lung", "lungs", "nodule", "nodules",
           "airway", "airways", "trachea", "bronch", "rotate", "rotation", "turn", "spin",
           "swing", "anatomy", "rul", "rml", "rll", "lul", "lll", "surgical view",
           "tumor", "tumour"),
    "IR": ("patient", "info", "information", "age", "sex", "gender", "bmi", "pft", "fev",
           "fvc", "dlco", "weight", "height", "diagnosis", "comorbid", "operation", "procedure",
           "tumor location", "tumour location", "demographic", "history", "details", "data"),
}


def _has(text: str, cue: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(cue)}", text) is not None


def guess_agents(text: str, memory: Memory | None = None) -> tuple[str, ...]:
    """The agent(s) whose actions the decision prompt should show.

    One agent named by cue words: that agent. Several: all (a composite or an unclear
    command). None (bare "zoom in", "a bit more", "reset"): the last agent when there is one.
    """
    low = text.lower()
    hits = [a for a in AGENTS if any(_has(low, c) for c in _CUES[a])]
    if len(hits) == 1:
        return (hits[0],)
    if not hits and memory is not None and memory.last_agent in AGENTS:
        return (memory.last_agent,)
    return AGENTS


# ------------------------------------------------------------------ the suffix (context)
def state_summary(state: ConsoleState, agents: Sequence[str] = AGENTS) -> str:
    """The console state in one compact line, only for the agents shown in the prompt."""
    parts: list[str] = []
    if "IV" in agents:
        iv = state.iv
        if not iv.size:
            parts.append("CT: none loaded")
        else:
            pos = iv.pos_dict()
            slices = " ".join(f"{p} {pos[p]}" for p in pos)
            mode = "hidden" if iv.mode == "none" else iv.mode
            main = f" main {iv.main}" if iv.main else ""
            parts.append(f"CT: {mode}{main}, {slices}")
    if "AR" in agents:
        ar = state.ar
        if ar.visible:
            zoom = f", zoom {ar.zoom_level}" + (f" on {ar.zoom_target}" if ar.zoom_target else "")
            parts.append(f"3D: {','.join(ar.structures)}; view {ar.view}, "
                         f"rotation {ar.rotation}{zoom}")
        else:
            parts.append("3D: hidden")
    if "IR" in agents:
        ir = state.ir
        parts.append(f"info: {','.join(ir.fields)}" if ir.visible else "info: hidden")
    return " | ".join(parts)


def context_message(state: ConsoleState, memory: Memory | None,
                    agents: Sequence[str] = AGENTS) -> str:
    """The per-call context (state, last agent, recent commands), known before the command is
    spoken - so the runtime can warm it (``warm_context``). Ends with a newline."""
    lines = [f"state: {state_summary(state, agents)}"]
    if memory is not None and (memory.last_agent or memory.recent):
        recent = "; ".join(json.dumps(r[:60]) for r in memory.recent[-3:])
        lines.append(f"last agent: {memory.last_agent or 'none'}"
                     + (f"; recent: {recent}" if recent else ""))
    return "\n".join(lines) + "\n"


def command_message(command: str) -> str:
    """The user's words: always the last thing in the prompt."""
    return f"command: {command.strip()}"


def user_message(command: str, state: ConsoleState, memory: Memory | None,
                 agents: Sequence[str] = AGENTS) -> str:
    """The whole per-call suffix: context first, the user's words last."""
    return context_message(state, memory, agents) + command_message(command)


# ------------------------------------------------------------------ visa (reference) stages
VISA_FUNCTIONS: dict[str, str] = {
    "record_audio": "record a new voice command",
    "speech_to_text": "transcribe the recorded audio",
    "correct_and_validate": "fix recognition errors and check the command is valid",
    "route_to_agent": "choose the agent (IR, IV or AR) for a valid command",
    "IR_agent": "patient information actions",
    "IV_agent": "CT viewer actions",
    "AR_agent": "3D lung model actions",
    "end": "finish the workflow",
}

# status -> the function the rules expect next (also the fallback when the LLM fails).
VISA_RULES: dict[str, str] = {
    "no audio recorded": "record_audio",
    "audio recorded, not transcribed": "speech_to_text",
    "command recorded": "correct_and_validate",
    "command valid, agent not chosen": "route_to_agent",
    "command routed to the IR agent": "IR_agent",
    "command routed to the IV agent": "IV_agent",
    "command routed to the AR agent": "AR_agent",
    "last command invalid, need new input": "record_audio",
    "agent completed, workflow finished": "end",
}

VISA_ORCHESTRATOR = StagePrompt(
    "visa.orchestrate",
    "You are the workflow orchestrator of a voice assistant for a surgical console. "
    "Given the current status, give the probability (0 to 1) that each function should run "
    "next. Functions:\n"
    + "\n".join(f"{k}: {v}" for k, v in VISA_FUNCTIONS.items())
    + "\nRules:\n" + "\n".join(f"{s} -> {f}" for s, f in VISA_RULES.items())
    + "\nReply with JSON only.",
    (("status: no audio recorded", '{"record_audio":0.97,"speech_to_text":0.03}'),
     ("status: command valid, agent not chosen",
      '{"route_to_agent":0.93,"correct_and_validate":0.07}'),
     ("status: command routed to the AR agent", '{"AR_agent":0.95,"route_to_agent":0.05}')),
)


def visa_orchestrator_schema() -> dict[str, Any]:
    return {"type": "object",
            "properties": {k: {"type": "number", "minimum": 0, "maximum": 1}
                           for k in VISA_FUNCTIONS},
            "additionalProperties": False}


VISA_CORRECT = StagePrompt(
    "visa.correct",
    "You fix speech-recognition errors in a surgeon's command to a console that shows patient "
    "information (IR), a CT viewer (IV) and a 3D lung model (AR), and decide whether it is a "
    "valid console command. Typical errors: city -> CT, corona -> coronal, write -> right, "
    "June -> zoom, at -> add, long -> lung. Otherwise keep the words. Commands about "
    "instruments, suction, vital signs or chatter are invalid. "
    'Reply with JSON only: {"command": corrected text, "valid": true or false}.',
    (("command: city corona plus 100", '{"command":"CT coronal plus 100","valid":true}'),
     ("command: prepare the stapler", '{"command":"prepare the stapler","valid":false}')),
)


def visa_correct_schema() -> dict[str, Any]:
    return {"type": "object",
            "properties": {"command": {"type": "string"}, "valid": {"type": "boolean"}},
            "required": ["command", "valid"], "additionalProperties": False}


VISA_ROUTE = StagePrompt(
    "visa.route",
    "Choose the agent for a surgeon's console command. IR: patient information (age, sex, "
    "diagnosis, height, weight, BMI, PFT, operation). IV: CT viewer (slices, axial, coronal, "
    "sagittal, CT zoom, windows). AR: 3D lung model (lobes, nodules, airway, rotation, "
    "viewpoints, 3D zoom). Commands that name no agent (zoom in, zoom out, reset, remove) go "
    'to the last agent. Reply with JSON only: {"agent": "IR" or "IV" or "AR"}.',
    (("last agent: IV\ncommand: rotate the lungs to the right", '{"agent":"AR"}'),
     ("last agent: AR\ncommand: show the age and sex", '{"agent":"IR"}')),
)


def visa_route_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"agent": {"type": "string", "enum": list(AGENTS)}},
            "required": ["agent"], "additionalProperties": False}


def visa_prompts() -> list[StagePrompt]:
    """Every visa stage prefix (for warming)."""
    return [VISA_ORCHESTRATOR, VISA_CORRECT, VISA_ROUTE,
            *(decision_prompt((a,)) for a in AGENTS)]
