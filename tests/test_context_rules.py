"""The context rules are one declared, ordered inventory (DESIGN §3, §4): each has a name, a
docstring saying what it does, and examples; every example is read by the lexicon tier with
that rule applying, and the trace names the rules that applied."""

from __future__ import annotations

import pytest

from app.agents.context_rules import CONTEXT_RULES, LexiconTier, Rule
from tests.test_lexicon import Console


def test_the_inventory_names_each_rule_once_with_what_it_does() -> None:
    names = [r.name for r in CONTEXT_RULES]
    assert len(names) == len(set(names))
    for rule in CONTEXT_RULES:
        assert len(rule.doc) > 20, rule.name
        assert rule.examples, rule.name


def test_the_lexicon_tier_applies_the_inventory_in_its_order() -> None:
    assert LexiconTier().rules == CONTEXT_RULES


@pytest.mark.parametrize(("rule", "before", "said"), [
    pytest.param(rule, before, said, id=f"{rule.name}: {said}")
    for rule in CONTEXT_RULES for before, said in rule.examples])
def test_each_example_is_read_with_its_rule(rule: Rule, before: tuple[str, ...],
                                            said: str) -> None:
    con = Console()
    con.say_after(list(before), said)
    assert con.last is not None
    fired = (con.last.decision.diagnostics or {}).get("context_rules") or []
    assert rule.name in fired, (con.last.decision.reason, fired)


def test_a_plain_command_applies_no_context_rule() -> None:
    con = Console()
    con.say("show the CT")
    assert "context_rules" not in (con.last.decision.diagnostics or {})
