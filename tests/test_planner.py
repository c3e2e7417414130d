"""Composite plans: dependency DAG, layered topological sort, cycles (issue 4 item 3)."""

from __future__ import annotations

import pytest

from app.agents.planner import PlanCycleError, build_plan, layered_toposort, order_steps
from app.core.registry import CommandRegistry, Step
from app.core.state import CaseContext, ConsoleState


def test_layers_put_independent_nodes_together_in_input_order():
    layers = layered_toposort(["a", "b", "c", "d"], [("a", "c"), ("b", "c"), ("c", "d")])
    assert layers == [["a", "b"], ["c"], ["d"]]


def test_no_edges_is_one_layer_in_spoken_order():
    assert layered_toposort(["z", "y", "x"], []) == [["z", "y", "x"]]


def test_diamond():
    layers = layered_toposort([1, 2, 3, 4], [(1, 2), (1, 3), (2, 4), (3, 4)])
    assert layers == [[1], [2, 3], [4]]


def test_layer_order_follows_the_input_not_discovery():
    # 3 becomes ready before 2 is discovered, but 2 was spoken first
    layers = layered_toposort([0, 2, 3], [(0, 3), (0, 2)])
    assert layers == [[0], [2, 3]]


def test_duplicate_edges_are_harmless():
    assert layered_toposort(["a", "b"], [("a", "b"), ("a", "b")]) == [["a"], ["b"]]


@pytest.mark.parametrize("edges", [
    [("a", "b"), ("b", "a")],
    [("a", "b"), ("b", "c"), ("c", "a")],
    [("a", "a")],
])
def test_cycles_are_rejected_with_a_plain_message(edges):
    with pytest.raises(PlanCycleError, match="cannot run"):
        layered_toposort(["a", "b", "c"], edges)


def test_cycle_message_names_the_stuck_steps():
    with pytest.raises(PlanCycleError) as err:
        layered_toposort(["move", "zoom", "rotate"], [("move", "zoom"), ("zoom", "move")])
    assert "'move'" in str(err.value) and "'zoom'" in str(err.value)
    assert "'rotate'" not in str(err.value)


def test_unknown_nodes_in_edges_are_errors():
    with pytest.raises(ValueError, match="unknown step"):
        layered_toposort(["a"], [("a", "b")])


def test_same_agent_steps_chain_and_other_agents_run_alongside():
    steps = [Step("IV.SHOW_MOVE", {"axial": "middle"}), Step("IV.ZOOM_IN_MOVE", {}),
             Step("AR.ROTATE", {"direction": "left"}), Step("IR.SHOW", {"fields": ["bmi"]})]
    plan = build_plan(steps)
    layers = [[n.step.action_id for n in layer] for layer in plan.layers()]
    # the zoom uses the plane the move chose; the AR rotation needs nothing before it; the
    # spoken-last step stays last so its agent ends up selected
    assert layers == [["IV.SHOW_MOVE", "AR.ROTATE"], ["IV.ZOOM_IN_MOVE"], ["IR.SHOW"]]
    assert plan.why[(0, 1)] == "both act on IV"


def test_order_steps_keeps_single_and_same_agent_plans_as_spoken():
    one = [Step("AR.RESET", {})]
    assert order_steps(one) == one
    chain = [Step("AR.ZOOM_IN", {"target": "right_lung"}),
             Step("AR.ZOOM_IN", {"target": "lung_nodules"}), Step("AR.ROTATE", {"direction": "up"})]
    assert order_steps(chain) == chain


def test_stated_dependencies_can_make_a_cycle():
    steps = [Step("IV.SHOW_MOVE", {}), Step("IV.ZOOM_IN_MOVE", {})]
    with pytest.raises(PlanCycleError):
        build_plan(steps, extra_edges=[(1, 0)]).layers()


def test_ordered_plan_dispatches_to_the_same_state_as_spoken_order():
    def run(steps):
        state = ConsoleState()
        state.set_case(CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512)),
                                   tumor_lobes=("right_upper_lobe",)))
        res = CommandRegistry(state).dispatch_plan(steps)
        assert res.ok, res.message
        return state.snapshot()

    steps = [Step("IV.SHOW_MOVE", {"coronal": "+100"}), Step("AR.SHOW", {}),
             Step("IV.ZOOM_IN_MOVE", {}), Step("IR.SHOW", {"fields": ["age"]}),
             Step("AR.ROTATE", {"direction": "horizontal"})]
    assert run(order_steps(steps)) == run(steps)
