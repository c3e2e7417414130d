"""Composite commands as a plan DAG, ordered by a layered topological sort (Kahn).

A composite command ("move axial to the middle and zoom in, then rotate the model left")
becomes steps with dependencies: a step depends on the previous step of the same agent (a
zoom-in without a plane uses the plane the move before it chose; structures shown before a
zoom decide what the zoom targets). Steps on different agents are independent, so they share
a layer and may run together. One extra edge keeps the spoken-last step last: it decides
which agent the console has selected afterwards (DESIGN §4 memory).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from app.core.registry import Step

T = TypeVar("T", bound=Hashable)


class PlanCycleError(ValueError):
    """A plan whose steps wait on each other in a circle: it can never run."""


def layered_toposort(nodes: Sequence[T], edges: Iterable[tuple[T, T]]) -> list[list[T]]:
    """Kahn's algorithm in layers: each layer holds nodes whose dependencies are all earlier.

    ``edges`` are ``(before, after)`` pairs. Inside a layer nodes keep their order in
    ``nodes`` (the spoken order). A cycle raises ``PlanCycleError`` naming the stuck nodes.
    """
    order = {n: i for i, n in enumerate(nodes)}
    if len(order) != len(nodes):
        raise ValueError("plan nodes must be distinct")
    indeg = dict.fromkeys(nodes, 0)
    succ: dict[T, list[T]] = {n: [] for n in nodes}
    for a, b in edges:
        if a not in order or b not in order:
            missing = a if a not in order else b
            raise ValueError(f"plan edge names an unknown step: {missing!r}")
        if a == b:
            raise PlanCycleError(f"The plan cannot run: step {a!r} waits on itself.")
        if b in succ[a]:
            continue
        succ[a].append(b)
        indeg[b] += 1
    layers: list[list[T]] = []
    ready = [n for n in nodes if indeg[n] == 0]
    done = 0
    while ready:
        layers.append(ready)
        done += len(ready)
        nxt: list[T] = []
        for n in ready:
            for m in succ[n]:
                indeg[m] -= 1
                if indeg[m] == 0:
                    nxt.append(m)
        ready = sorted(nxt, key=order.__getitem__)
    if done != len(nodes):
        stuck = [n for n in nodes if indeg[n] > 0]
        raise PlanCycleError(
            "The plan cannot run: these steps wait on each other in a circle: "
            + ", ".join(repr(s) for s in stuck) + ".")
    return layers


@dataclass(frozen=True, eq=False)  # identity: two equal steps are still two steps
class PlanNode:
    index: int  # spoken position
    step: Step

    @property
    def agent(self) -> str:
        return self.step.action_id.split(".", 1)[0]

    def __repr__(self) -> str:
        return f"#{self.index} {self.step.action_id}"


@dataclass
class Plan:
    nodes: list[PlanNode]
    edges: list[tuple[PlanNode, PlanNode]] = field(default_factory=list)
    why: dict[tuple[int, int], str] = field(default_factory=dict)

    def layers(self) -> list[list[PlanNode]]:
        return layered_toposort(self.nodes, self.edges)

    def ordered_steps(self) -> list[Step]:
        """Layers flattened; inside a layer the spoken order is kept."""
        return [n.step for layer in self.layers() for n in layer]


def build_plan(steps: Sequence[Step], extra_edges: Iterable[tuple[int, int]] = ()) -> Plan:
    """The dependency DAG of a composite command's steps (indices are spoken positions)."""
    nodes = [PlanNode(i, s) for i, s in enumerate(steps)]
    plan = Plan(nodes)
    last_of: dict[str, PlanNode] = {}
    for node in nodes:
        prev = last_of.get(node.agent)
        if prev is not None:
            plan.edges.append((prev, node))
            plan.why[(prev.index, node.index)] = f"both act on {node.agent}"
        last_of[node.agent] = node
    if len(nodes) > 1:
        last = nodes[-1]
        for node in nodes[:-1]:
            if (node, last) not in plan.edges:
                plan.edges.append((node, last))
                plan.why[(node.index, last.index)] = "the last spoken step selects the agent"
    for a, b in extra_edges:
        plan.edges.append((nodes[a], nodes[b]))
        plan.why[(a, b)] = "stated dependency"
    return plan


def order_steps(steps: Sequence[Step]) -> list[Step]:
    """The execution order of a composite command's steps."""
    if len(steps) < 2:
        return list(steps)
    return build_plan(steps).ordered_steps()


__all__ = [
    "Plan", "PlanCycleError", "PlanNode", "build_plan", "layered_toposort", "order_steps",
]
