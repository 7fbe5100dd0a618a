"""The figure that matters in a job's progress, and a tqdm bar that shows it.

A job's status carries its plan's progress (docs/API.md, section 2.5) and, while a task runs,
``kernel: {"task", "report"}`` with the running kernel's latest report. :func:`figure` picks
what to count for the job's kind:

============================  ==========================================  ====================
plan or kernel                counted (``n`` of ``total``)                 shown beside it
============================  ==========================================  ====================
moves (``analyse=all``)       moves finished of the legal moves            tasks done
runs (MCTS ``tasks``, NRPA)   runs finished of ``runs``                    best score, playouts
rounds (NRPA ``shared``)      iterations done of ``iterations``            best score
job-level tree (``jlpns``)    thresholds decided                           bounds, leaf tasks
probes (exact, proof-number)  probes done                                  bounds or the value
one MCTS task                 playouts of the job's ``playouts``           best move's visits
one NRPA/NMCS task            rollouts                                     best score
iterative deepening           nodes                                        depth
anything else                 nodes of the running task, or tasks done
============================  ==========================================  ====================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from ._types import JobStatus

ProgressArg = Union[bool, Callable[[JobStatus], None]]
"""What ``progress=`` takes: ``True`` for a tqdm bar, ``False`` for nothing, or a function
called with each new status."""

MCTS_DEFAULT_PLAYOUTS = 100_000
"""MCTS without ``playouts`` and without limits runs this many (section 2.3)."""


@dataclass(frozen=True)
class Figure:
    """What a progress bar shows: ``n`` of ``total`` (``None``: open-ended) ``unit``, and a
    short ``text`` beside it."""

    n: float
    total: float | None
    unit: str
    text: str


def _num(d: Mapping[str, Any], key: str) -> float | None:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v


def _g(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e6 else f"{x:.3g}"


def _bounds_text(p: Mapping[str, Any]) -> str | None:
    lo, hi = _num(p, "lower"), _num(p, "upper")
    if lo is None or hi is None:
        return None
    return f"value {_g(lo)}" if lo == hi else f"bounds [{_g(lo)}, {_g(hi)}]"


def figure(status: JobStatus) -> Figure:
    """The figure that matters for ``status``'s job now (see the module's table)."""
    p = status.progress
    kernel = p.get("kernel")
    report: Mapping[str, Any] = {}
    if isinstance(kernel, dict) and isinstance(kernel.get("report"), dict):
        report = kernel["report"]
    parts: list[str] = []
    bounds = _bounds_text(p)
    best = _num(p, "best")
    if best is None:
        best = _num(report, "best")

    best_text = f"best {_g(best)}" if best is not None else None

    def text(*extra: str | None) -> str:
        return ", ".join(x for x in [*parts, *extra] if x)

    def done_of(unit: str, *extra: str | None) -> Figure:
        """``<unit>_done`` out of ``<unit>`` (a plan's count of moves, iterations, runs)."""
        return Figure(_num(p, f"{unit}_done") or 0, _num(p, unit), unit, text(*extra))

    if _num(p, "moves") is not None:
        tasks = _num(p, "tasks_done")
        return done_of("moves", bounds, f"{_g(tasks)} tasks" if tasks is not None else None)
    if _num(p, "iterations") is not None and _num(p, "iterations_done") is not None:
        return done_of("iterations", best_text)
    if _num(p, "runs") is not None:
        playouts = _num(report, "playouts")
        running = f"{_g(playouts)} playouts in the running task" if playouts is not None else None
        return done_of("runs", best_text, running)
    if _num(p, "thresholds_done") is not None:
        leaves = _num(p, "leaf_tasks")
        return Figure(
            _num(p, "thresholds_done") or 0,
            None,
            "thresholds",
            text(bounds, f"{_g(leaves)} leaf tasks" if leaves is not None else None),
        )
    if _num(p, "probes_done") is not None:
        return Figure(_num(p, "probes_done") or 0, None, "probes", text(bounds))
    # One task: the kernel's own report.
    playouts = _num(report, "playouts")
    if playouts is not None:
        total: float | None = None
        job = status.job
        given = job.options.get("playouts")
        try:
            total = float(given) if given is not None else None
        except (TypeError, ValueError):
            total = None
        if total is None and job.time_ms is None and job.node_limit is None:
            total = MCTS_DEFAULT_PLAYOUTS
        visits = report.get("visits")
        top = None
        if isinstance(visits, dict) and visits:
            mv, n = max(visits.items(), key=lambda kv: kv[1] if isinstance(kv[1], (int, float)) else -1)
            top = f"most visited {mv} ({n})"
        return Figure(playouts, total, "playouts", text(top))
    rollouts = _num(report, "rollouts")
    if rollouts is not None:
        return Figure(rollouts, None, "rollouts", text(best_text))
    nodes = _num(report, "nodes")
    if nodes is not None:
        depth = _num(report, "depth")
        return Figure(nodes, None, "nodes", text(f"depth {_g(depth)}" if depth is not None else None))
    return Figure(status.tasks.done, status.tasks.total or None, "tasks", text(bounds))


class ProgressBar:
    """A tqdm bar (``tqdm.auto``: a widget in Jupyter) following one job's statuses."""

    def __init__(self, job_id: int, **tqdm_args: Any) -> None:
        self._job_id = job_id
        self._args = tqdm_args
        self._bar: Any = None
        self._unit = ""

    def update(self, status: JobStatus) -> None:
        """Shows ``status``'s figure (and the state once the job has ended)."""
        f = figure(status)
        if self._bar is None:
            # Made at the first status, so that it opens with the job's own unit.
            from tqdm.auto import tqdm

            self._bar = tqdm(desc=f"job {self._job_id}", total=f.total, unit=f" {f.unit}", **self._args)
            self._unit = f.unit
        bar = self._bar
        if f.unit != self._unit:
            bar.unit = f" {f.unit}"
            self._unit = f.unit
        bar.total = f.total
        bar.n = f.n
        post = f.text
        if status.ended or status.state == "queued":
            post = ", ".join(x for x in (status.state, post) if x)
        bar.set_postfix_str(post, refresh=False)
        bar.refresh()

    def close(self) -> None:
        """Leaves the bar as it is."""
        if self._bar is not None:
            self._bar.close()
