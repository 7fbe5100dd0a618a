"""What the synchronous and the asynchronous client share: configuration, the requests each
call makes (method, path, query, body) and how each answer is read. The two clients only do
the I/O, so they cannot drift apart.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

import httpx

from ._errors import CoordinatorUnreachable, GamesolverError, api_error
from ._progress import ProgressArg, ProgressBar
from ._sse import SseParser
from ._types import (
    JobPage,
    JobSpec,
    JobStatus,
    JobSummary,
    OptionSpec,
    Setting,
    Svg,
    TaskInfo,
    TaskPage,
)

DEFAULT_URL = "http://127.0.0.1:8080"
"""The coordinator's address when neither ``url`` nor ``GAMESOLVER_URL`` gives one."""

STREAM_READ_TIMEOUT = 45.0
"""Read timeout of an event stream, seconds: the coordinator sends a keep-alive every 15 s."""

POLL_EVERY = 0.25
"""First wait before reopening a dropped event stream, seconds; it doubles up to POLL_MAX."""

POLL_MAX = 4.0
"""Longest wait between attempts to reopen the stream, seconds."""

STREAM_FAILURES = 3
"""Streams in a row that carry no event before following falls back to polling the status."""

DEFAULT_RECONNECT = 10.0
"""How long following a job keeps trying to reach a coordinator that stopped answering
before it raises :class:`CoordinatorUnreachable`, seconds."""


ROUTES: tuple[tuple[str, str], ...] = (
    ("POST", "/v1/jobs"),
    ("GET", "/v1/jobs"),
    ("GET", "/v1/jobs/{id}"),
    ("POST", "/v1/jobs/{id}/cancel"),
    ("GET", "/v1/jobs/{id}/events"),
    ("GET", "/v1/jobs/{id}/tasks"),
    ("GET", "/v1/jobs/{id}/proof"),
    ("GET", "/v1/jobs/{id}/board.svg"),
    ("GET", "/v1/jobs/{id}/plot.svg"),
    ("GET", "/v1/board.svg"),
    ("GET", "/v1/score-words"),
    ("GET", "/v1/options"),
    ("GET", "/v1/status"),
    ("GET", "/healthz"),
    ("GET", "/openapi.json"),
)
"""Every route this client calls, as the OpenAPI document names them; a test checks each
against the coordinator's ``/openapi.json``."""


def resolve_url(url: str | None) -> str:
    """``url``, else ``GAMESOLVER_URL``, else :data:`DEFAULT_URL`; checked to be http(s)."""
    u = (url or os.environ.get("GAMESOLVER_URL") or DEFAULT_URL).rstrip("/")
    if not (u.startswith("http://") or u.startswith("https://")):
        raise ValueError(f"coordinator URL {u!r} must start with http:// or https://")
    return u


def resolve_token(token: str | None) -> str | None:
    """``token``, else ``GAMESOLVER_API_TOKEN`` (as the CLI reads it); empty means none."""
    t = token if token is not None else os.environ.get("GAMESOLVER_API_TOKEN")
    return t or None


def headers(token: str | None) -> dict[str, str]:
    """The headers of every request: JSON, and the bearer token when there is one."""
    h = {"Accept": "application/json", "User-Agent": "gamesolver-client-python/0.1"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    return h


def timeouts(timeout: float) -> httpx.Timeout:
    """Timeouts of the short requests."""
    return httpx.Timeout(timeout, connect=min(timeout, 10.0))


def stream_timeouts(timeout: float) -> httpx.Timeout:
    """Timeouts of an event stream: no overall bound, a read timeout above the keep-alive."""
    return httpx.Timeout(timeout, connect=min(timeout, 10.0), read=STREAM_READ_TIMEOUT)


def unreachable(url: str, e: Exception) -> CoordinatorUnreachable:
    """The error for a transport failure reaching ``url``."""
    what = type(e).__name__
    detail = str(e) or what
    return CoordinatorUnreachable(f"cannot reach the coordinator at {url}: {detail} ({what})")


def decode(resp: httpx.Response) -> Any:
    """The JSON of a successful answer; an error answer raises its :class:`ApiError`."""
    check(resp)
    if resp.status_code == 204 or not resp.content:
        return None
    try:
        return resp.json()
    except json.JSONDecodeError as e:
        raise GamesolverError(
            f"{resp.request.method} {resp.request.url.path}: the coordinator's answer is not JSON: {e}"
        ) from e


def check(resp: httpx.Response) -> None:
    """Raises the :class:`ApiError` of an error answer (the body must have been read)."""
    if resp.status_code < 400:
        return
    try:
        body = resp.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    raise api_error(resp.status_code, body, resp.text if body is None else "")


def job_spec(
    game: str,
    position: str,
    algorithm: str,
    game_params: Mapping[str, Setting] | None,
    options: Mapping[str, Setting] | None,
    time_ms: int | None,
    node_limit: int | None,
) -> JobSpec:
    """A job from the arguments of ``submit``."""
    return JobSpec(
        game=game,
        algorithm=algorithm,
        position=position,
        game_params=dict(game_params or {}),
        options=dict(options or {}),
        time_ms=time_ms,
        node_limit=node_limit,
    )


def with_analysis(options: Mapping[str, Setting] | None) -> dict[str, Setting]:
    """``options`` with ``analyse=all``."""
    out = dict(options or {})
    out["analyse"] = "all"
    return out


@dataclass(frozen=True)
class Request:
    """One call: method, path, query and JSON body."""

    method: str
    path: str
    params: Mapping[str, str | int] | None = None
    body: Any = None


def job_path(job_id: int, tail: str = "") -> str:
    """``/v1/jobs/{id}`` and a tail."""
    if isinstance(job_id, bool) or not isinstance(job_id, int) or job_id < 0:
        raise ValueError(f"a job id is a non-negative integer, not {job_id!r}")
    return f"/v1/jobs/{job_id}{tail}"


def page_params(limit: int | None, key: str, at: int | None) -> dict[str, str | int]:
    """The query of a paged listing."""
    q: dict[str, str | int] = {}
    if limit is not None:
        q["limit"] = limit
    if at is not None:
        q[key] = at
    return q


def read_job_page(d: Any) -> JobPage:
    """``GET /v1/jobs``."""
    return JobPage(
        jobs=[
            JobSummary(
                id=int(j["id"]),
                state=str(j["state"]),
                summary=str(j.get("summary", "")),
                created_ms=int(j.get("created_ms") or 0),
            )
            for j in d.get("jobs") or []
        ],
        next_before=d.get("next_before"),
    )


def read_task_page(d: Any) -> TaskPage:
    """``GET /v1/jobs/{id}/tasks``."""
    return TaskPage(
        tasks=[TaskInfo.from_json(t) for t in d.get("tasks") or []],
        next_after=d.get("next_after"),
    )


def read_options(d: Any) -> list[OptionSpec]:
    """``GET /v1/options``."""
    return [OptionSpec.from_json(o) for o in d.get("options") or []]


def read_status(d: Any) -> JobStatus:
    """A job's status."""
    if not isinstance(d, dict) or "id" not in d:
        raise GamesolverError(f"the coordinator's answer is not a job status: {str(d)[:200]}")
    return JobStatus.from_json(d)


def board_params(game: str, position: str, params: Mapping[str, Setting]) -> dict[str, str]:
    """The query of ``GET /v1/board.svg``: the game, the position and its game parameters."""
    q = {"game": game, "position": position}
    for k, v in params.items():
        if k in ("game", "position"):
            raise ValueError(f"game parameter {k!r} clashes with the query's own key")
        q[k] = "true" if v is True else "false" if v is False else str(v)
    return q


def read_svg(resp: httpx.Response) -> Svg | None:
    """A picture answer: ``None`` for 204 (the game has no picture)."""
    check(resp)
    if resp.status_code == 204:
        return None
    return Svg(resp.text)


def exact_scores(result_moves: Any) -> list[int]:
    """The distinct whole-number exact scores of a result's ``moves`` (no MCTS means)."""
    out: set[int] = set()
    if isinstance(result_moves, dict):
        for s in result_moves.values():
            if isinstance(s, dict) and "visits" not in s:
                v = s.get("value")
                if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
                    out.add(int(v))
    return sorted(out)[:64]


def score_words_request(job: JobSpec, values: list[int]) -> Request | None:
    """``GET /v1/score-words`` for ``values`` of ``job``'s position; ``None`` when there is
    nothing to ask (no exact score, or a depth-limited job, whose numbers are estimates)."""
    if not values or "depth" in job.options:
        return None
    q: dict[str, str | int] = dict(board_params(job.game, job.position, job.game_params))
    q["values"] = ",".join(str(v) for v in values)
    return Request("GET", "/v1/score-words", params=q)


def read_score_words(d: Any) -> dict[int, str]:
    """The answer of ``GET /v1/score-words``: ``{"words": {score: words}}``."""
    words = d.get("words") if isinstance(d, dict) else None
    out: dict[int, str] = {}
    if isinstance(words, dict):
        for k, v in words.items():
            try:
                out[int(k)] = str(v)
            except (TypeError, ValueError):
                continue
    return out


def stream_status(parser: SseParser, line: str) -> tuple[JobStatus | None, bool]:
    """Feeds one line of a job's event stream to ``parser``: the status it completes (``None``
    for anything else: comments, other events, a status that does not parse, which the stream
    skips) and whether that status is the stream's last."""
    ev = parser.feed(line)
    if ev is None or ev.event not in ("status", "end"):
        return None, False
    try:
        st = read_status(json.loads(ev.data))
    except (ValueError, GamesolverError):
        return None, False
    return st, ev.event == "end" or st.ended


class Reconnect:
    """How following a job retries, without the I/O: the event stream, reopened when it drops,
    polling the status instead after STREAM_FAILURES empty streams, waits doubling from
    POLL_EVERY to POLL_MAX, and giving up once the coordinator has been unreachable for
    ``reconnect`` seconds."""

    def __init__(self, reconnect: float) -> None:
        self.reconnect = reconnect
        self.failures = 0
        self.wait = POLL_EVERY
        self.down_since: float | None = None

    @property
    def streaming(self) -> bool:
        """Whether the next attempt opens the event stream (else it only reads the status)."""
        return self.failures < STREAM_FAILURES

    def reached(self) -> None:
        """The coordinator answered."""
        self.down_since = None

    def stream_closed(self, seen: int) -> None:
        """A stream ended (or dropped) after carrying ``seen`` statuses."""
        if seen:
            self.failures, self.wait = 0, POLL_EVERY
        else:
            self.failures += 1

    def gave_up(self) -> bool:
        """The coordinator could not be reached: whether it has not been for ``reconnect``
        seconds now."""
        now = time.monotonic()
        self.down_since = now if self.down_since is None else self.down_since
        return now - self.down_since >= self.reconnect

    def pause(self) -> float:
        """Seconds to wait before the next attempt."""
        p = self.wait if self.streaming else POLL_EVERY
        self.wait = min(self.wait * 2, POLL_MAX)
        return p


class Follower:
    """What following a job shows: a tqdm bar when ``progress`` is ``True``, the function
    ``progress`` called with each new status, and the latest status seen."""

    def __init__(self, job_id: int, progress: ProgressArg) -> None:
        self.bar = ProgressBar(job_id) if progress is True else None
        self.callback = progress if callable(progress) else None
        self.last: Mapping[str, Any] | None = None
        self.latest: JobStatus | None = None

    def see(self, st: JobStatus) -> None:
        """Takes one status of the job; shows it when it differs from the one before."""
        self.latest = st
        if st.raw == self.last:
            return
        self.last = st.raw
        if self.bar is not None:
            self.bar.update(st)
        if self.callback is not None:
            self.callback(st)

    def close(self) -> None:
        """Closes the bar."""
        if self.bar is not None:
            self.bar.close()
