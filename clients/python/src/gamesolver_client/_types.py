"""Typed records of the coordinator's answers (docs/API.md, sections 2 and 6).

Each record keeps the JSON it was read from in ``raw``: the algorithm-specific keys of a result
(``pv``, ``visits``, ``sequence``, ...; section 2.4) are there, and ``Result.get`` reads them.
Values are from the point of view of the side to move at the root (negamax), on the job's value
scale; a multi-player value is a list, an unknown one ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping, Union

if TYPE_CHECKING:
    import pandas

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
"""A job's state; the last three are final."""

FINAL_STATES: frozenset[str] = frozenset({"done", "failed", "cancelled"})

Setting = Union[str, int, float, bool]
"""An option or game parameter value: the coordinator keeps each as its text."""

Value = Union[int, float, list[float], None]
"""A result's value: a number, one number per player, or unknown."""


def _int_or_none(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _number(v: Any) -> int | float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v


@dataclass(frozen=True)
class JobSpec:
    """A job as ``POST /v1/jobs`` takes it (section 2.1)."""

    game: str
    algorithm: str
    position: str = ""
    game_params: Mapping[str, Setting] = field(default_factory=dict)
    options: Mapping[str, Setting] = field(default_factory=dict)
    time_ms: int | None = None
    node_limit: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The job JSON; empty parts are left out."""
        body: dict[str, Any] = {"game": self.game, "algorithm": self.algorithm}
        if self.position:
            body["position"] = self.position
        if self.game_params:
            body["game_params"] = dict(self.game_params)
        if self.options:
            body["options"] = dict(self.options)
        limits: dict[str, int] = {}
        if self.time_ms is not None:
            limits["time_ms"] = self.time_ms
        if self.node_limit is not None:
            limits["node_limit"] = self.node_limit
        if limits:
            body["limits"] = limits
        return body

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> JobSpec:
        """A job from its JSON (as a status's ``job`` shows it)."""
        limits = d.get("limits") or {}
        return cls(
            game=str(d.get("game", "")),
            algorithm=str(d.get("algorithm", "")),
            position=str(d.get("position") or ""),
            game_params=dict(d.get("game_params") or {}),
            options=dict(d.get("options") or {}),
            time_ms=_int_or_none(limits.get("time_ms")),
            node_limit=_int_or_none(limits.get("node_limit")),
        )


@dataclass(frozen=True)
class MoveScore:
    """One legal root move's score in an analysis (``moves``, section 2.4), from the point of
    view of the side to move at the root.

    Exact algorithms: ``value`` when the move is proven, else ``lower`` and ``upper`` (a limit
    stopped the job first). MCTS: ``visits`` (playouts through the move) and ``value``, their
    mean result (``None`` for a move never visited).
    """

    move: str
    value: float | int | None = None
    lower: float | int | None = None
    upper: float | int | None = None
    visits: int | None = None
    meaning: str | None = None
    """What an exact score means in the game's words, as ``gamesolver analyse`` and the
    dashboard write it (the coordinator's ``GET /v1/score-words``, the game's own wording):
    Connect Four ``win with your 3rd stone from here``, Othello ``win by 4 discs``, tic-tac-toe
    ``win`` / ``draw`` / ``loss``; ``None`` where the number says it all."""

    @property
    def exact(self) -> bool:
        """Whether the score is a proven exact value (not bounds, not an MCTS mean)."""
        return self.visits is None and self.value is not None

    def _key(self) -> tuple[float, float]:
        # The order of `gamesolver analyse`: MCTS by visits then mean; exact by value; bounds
        # by lower then upper.
        low = -math.inf
        if self.visits is not None:
            return (float(self.visits), float(self.value) if self.value is not None else low)
        if self.value is not None:
            return (float(self.value), float(self.value))
        return (
            float(self.lower) if self.lower is not None else low,
            float(self.upper) if self.upper is not None else low,
        )

    def __str__(self) -> str:
        if self.visits is not None:
            q = "-" if self.value is None else f"{self.value:g}"
            return f"{q}  visits {self.visits}"
        if self.value is not None:
            return f"{self.value:g}  {self.meaning}" if self.meaning else f"{self.value:g}"
        if self.lower is not None and self.upper is not None:
            return f"{self.lower:g}..{self.upper:g}  (not finished)"
        return "-"


@dataclass(frozen=True)
class Result:
    """A job's result (section 2.4): the keys every result has, and ``raw`` with all of them."""

    game: str
    algorithm: str
    value: Value
    best_move: str | None
    nodes: int
    elapsed_ms: int
    raw: Mapping[str, Any]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Result:
        """A result from its JSON."""
        return cls(
            game=str(d.get("game", "")),
            algorithm=str(d.get("algorithm", "")),
            value=d.get("value"),
            best_move=d.get("best_move"),
            nodes=int(d.get("nodes") or 0),
            elapsed_ms=int(d.get("elapsed_ms") or 0),
            raw=dict(d),
        )

    def get(self, key: str, default: Any = None) -> Any:
        """An algorithm-specific key of the result (``pv``, ``visits``, ``sequence``, ...)."""
        return self.raw.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    @property
    def stopped(self) -> str | None:
        """``time``, ``nodes`` or ``memory`` when a limit ended the search early."""
        s = self.raw.get("stopped")
        return str(s) if s is not None else None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """``(lower, upper)`` on the exact value, when the result has them."""
        b = self.raw.get("bounds")
        if isinstance(b, list) and len(b) == 2:
            return (b[0], b[1])
        return None

    @property
    def moves(self) -> list[MoveScore]:
        """Every legal root move's score, best first (empty without ``analyse=all``)."""
        return Analysis.from_result(self).moves if isinstance(self.raw.get("moves"), dict) else []


@dataclass(frozen=True)
class Analysis:
    """A job's analysis (option ``analyse=all``): every legal root move's score, best first,
    in the order ``gamesolver analyse`` prints them, with the job's result."""

    moves: list[MoveScore]
    result: Result

    @classmethod
    def from_result(
        cls, result: Result, job: JobSpec | None = None, words: Mapping[int, str] | None = None
    ) -> Analysis:
        """The analysis in a result; a result without ``moves`` gives an empty list. ``words``
        (exact score -> meaning, from the coordinator's ``GET /v1/score-words``; the clients'
        ``analyse`` and ``analysis`` fetch them) fill :attr:`MoveScore.meaning`."""
        raw = result.raw.get("moves")
        moves: list[MoveScore] = []
        if isinstance(raw, dict):
            for mv, s in raw.items():
                s = s if isinstance(s, dict) else {}
                value = _number(s.get("value"))
                visits = _int_or_none(s.get("visits"))
                meaning = None
                if words and visits is None and value is not None and float(value).is_integer():
                    meaning = words.get(int(value))
                moves.append(
                    MoveScore(
                        move=str(mv),
                        value=value,
                        lower=_number(s.get("lower")),
                        upper=_number(s.get("upper")),
                        visits=visits,
                        meaning=meaning,
                    )
                )
        best = result.best_move
        moves.sort(key=lambda m: (m._key(), m.move == best), reverse=True)
        return cls(moves=moves, result=result)

    @property
    def value(self) -> Value:
        """The position's value (the best move's score); ``None`` when not proved."""
        return self.result.value

    @property
    def best_move(self) -> str | None:
        """A move with the top score."""
        return self.result.best_move

    def score(self, move: str) -> MoveScore:
        """The score of ``move`` (``KeyError`` when it is not a legal root move)."""
        for m in self.moves:
            if m.move == move:
                return m
        raise KeyError(move)

    def to_dataframe(self) -> pandas.DataFrame:
        """The moves as a pandas DataFrame (columns ``move``, ``value``, ``lower``, ``upper``,
        ``visits``, ``exact``, ``meaning``), best first. Needs pandas (``pip install
        'gamesolver-client[pandas]'``)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Analysis.to_dataframe needs pandas: pip install 'gamesolver-client[pandas]'"
            ) from e
        frame: pandas.DataFrame = pd.DataFrame(
            [
                {
                    "move": m.move,
                    "value": m.value,
                    "lower": m.lower,
                    "upper": m.upper,
                    "visits": m.visits,
                    "exact": m.exact,
                    "meaning": m.meaning,
                }
                for m in self.moves
            ],
            columns=["move", "value", "lower", "upper", "visits", "exact", "meaning"],
        )
        return frame


@dataclass(frozen=True)
class TaskCounts:
    """A job's tasks by state; each task counted once."""

    total: int = 0
    queued: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> TaskCounts:
        d = d or {}
        return cls(**{k: int(d.get(k) or 0) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class TaskInfo:
    """A task of a job: what it does (``probe value >= 1``, ``run 3``, ...), its state, the
    leases it had, the workers that held it, its latest error and, in a job's status while it
    runs, its worker's latest report."""

    id: int
    what: str
    state: str
    attempts: int
    workers: list[str]
    last_error: str | None
    progress: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TaskInfo:
        p = d.get("progress")
        return cls(
            id=int(d["id"]),
            what=str(d.get("what", "")),
            state=str(d.get("state", "")),
            attempts=int(d.get("attempts") or 0),
            workers=[str(w) for w in d.get("workers") or []],
            last_error=d.get("last_error"),
            progress=p if isinstance(p, dict) else None,
        )


@dataclass(frozen=True)
class JobStatus:
    """``GET /v1/jobs/{id}`` (section 6.2): the job's state, progress, tasks and, once done,
    its result."""

    id: int
    state: str
    progress: Mapping[str, Any]
    tasks: TaskCounts
    task_list: list[TaskInfo]
    result: Result | None
    error: str | None
    created_ms: int
    finished_ms: int | None
    job: JobSpec
    raw: Mapping[str, Any]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> JobStatus:
        """A status from its JSON."""
        r = d.get("result")
        p = d.get("progress")
        return cls(
            id=int(d["id"]),
            state=str(d.get("state", "")),
            progress=p if isinstance(p, dict) else {},
            tasks=TaskCounts.from_json(d.get("tasks")),
            task_list=[TaskInfo.from_json(t) for t in d.get("task_list") or []],
            result=Result.from_json(r) if isinstance(r, dict) else None,
            error=d.get("error"),
            created_ms=int(d.get("created_ms") or 0),
            finished_ms=_int_or_none(d.get("finished_ms")),
            job=JobSpec.from_json(d.get("job") or {}),
            raw=dict(d),
        )

    @property
    def ended(self) -> bool:
        """Whether the job has ended (``done``, ``failed`` or ``cancelled``)."""
        return self.state in FINAL_STATES


@dataclass(frozen=True)
class JobSummary:
    """One job in a listing: id, state, a one-line summary, submission time (Unix ms)."""

    id: int
    state: str
    summary: str
    created_ms: int


@dataclass(frozen=True)
class JobPage:
    """A page of ``GET /v1/jobs``, newest first; ``next_before`` fetches the next page."""

    jobs: list[JobSummary]
    next_before: int | None


@dataclass(frozen=True)
class TaskPage:
    """A page of ``GET /v1/jobs/{id}/tasks``, by id; ``next_after`` fetches the next page."""

    tasks: list[TaskInfo]
    next_after: int | None


@dataclass(frozen=True)
class OptionSpec:
    """An option (``param`` false) or game parameter (``param`` true) a job of a game and
    algorithm accepts, from ``GET /v1/options``: type, bounds (numbers only), default, meaning."""

    name: str
    param: bool
    type: str
    minimum: int | float | None
    maximum: int | float | None
    default: str
    description: str
    why: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> OptionSpec:
        return cls(
            name=str(d["name"]),
            param=bool(d.get("param")),
            type=str(d.get("type", "string")),
            minimum=_number(d.get("minimum")),
            maximum=_number(d.get("maximum")),
            default=str(d.get("default", "")),
            description=str(d.get("description", "")),
            why=str(d.get("why", "")),
        )


@dataclass(frozen=True)
class Svg:
    """An SVG picture (a board, a progress chart); Jupyter shows it (``_repr_svg_``)."""

    text: str

    def _repr_svg_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def save(self, path: str | Path) -> Path:
        """Writes the picture to ``path``; returns it."""
        p = Path(path)
        p.write_text(self.text, encoding="utf-8")
        return p
