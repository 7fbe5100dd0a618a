"""The client's parts without a service: the event-stream parser, the progress figure, the
option checks, error answers, and following a job through a stream that drops or fails (an
in-memory transport plays the coordinator)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from gamesolver_client import (
    AsyncClient,
    BadRequest,
    Client,
    CoordinatorUnreachable,
    InvalidJob,
    JobFailed,
    JobStatus,
    OptionSpec,
    Result,
    ServerError,
    figure,
)
from gamesolver_client._options import check_settings
from gamesolver_client._sse import SseParser


def status(state: str = "running", progress: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": 7, "state": state, "progress": progress or {}, "tasks": {"total": 1},
        "task_list": [], "result": None, "error": None, "created_ms": 1, "finished_ms": None,
        "job": {"game": "connect4", "algorithm": "mcts", "position": "", "options": {}},
    }
    d.update(extra)
    return d


DONE = status(
    "done", {"tasks_done": 1},
    result={"game": "connect4", "algorithm": "alphabeta", "value": -2, "best_move": "6", "nodes": 9, "elapsed_ms": 1},
)


def test_the_event_parser_reads_events_and_skips_comments() -> None:
    p = SseParser()
    lines = [": keep-alive", "", "event: status", 'data: {"a":', "data: 1}", "", "event: end", "data:x", ""]
    events = [e for e in (p.feed(line) for line in lines) if e is not None]
    assert [(e.event, e.data) for e in events] == [("status", '{"a":\n1}'), ("end", "x")]


@pytest.mark.parametrize(
    "progress, job, unit, n, total, text",
    [
        ({"lower": -3, "upper": 1, "probes_done": 2}, {}, "probes", 2, None, "bounds [-3, 1]"),
        ({"lower": -2, "upper": -2, "probes_done": 4}, {}, "probes", 4, None, "value -2"),
        ({"moves_done": 3, "moves": 7, "tasks_done": 9, "bounds": {}}, {}, "moves", 3, 7, "9 tasks"),
        ({"runs_done": 1, "runs": 4, "kernel": {"task": 1, "report": {"best": 41}}}, {}, "runs", 1, 4, "best 41"),
        ({"iterations_done": 20, "iterations": 100, "rounds_done": 2, "best": 80}, {}, "iterations", 20, 100, "best 80"),
        ({"lower": 0, "upper": 2, "thresholds_done": 1, "leaf_tasks": 12}, {}, "thresholds", 1, None, "12 leaf tasks"),
        ({"tasks_done": 0, "kernel": {"task": 1, "report": {"playouts": 500, "visits": {"3": 9, "4": 400}}}},
         {"options": {"playouts": "1000"}}, "playouts", 500, 1000, "most visited 4 (400)"),
        ({"tasks_done": 0, "kernel": {"task": 1, "report": {"playouts": 500}}}, {}, "playouts", 500, 100000, ""),
        ({"tasks_done": 0, "kernel": {"task": 1, "report": {"playouts": 500}}}, {"limits": {"time_ms": 5}}, "playouts", 500, None, ""),
        ({"tasks_done": 0, "kernel": {"task": 1, "report": {"best": 23, "rollouts": 900}}}, {}, "rollouts", 900, None, "best 23"),
        ({"tasks_done": 0, "kernel": {"task": 1, "report": {"nodes": 5000, "depth": 6}}}, {}, "nodes", 5000, None, "depth 6"),
        ({"tasks_done": 0}, {}, "tasks", 0, 1, ""),
    ],
)
def test_the_figure_that_matters_for_each_kind_of_job(
    progress: dict[str, Any], job: dict[str, Any], unit: str, n: float, total: float | None, text: str
) -> None:
    d = status(progress=progress)
    d["job"].update(job)
    f = figure(JobStatus.from_json(d))
    assert (f.unit, f.n, f.total) == (unit, n, total)
    assert text in f.text


SPECS = [
    OptionSpec("playouts", False, "integer", 1, 10**12, "100000", ""),
    OptionSpec("seed", False, "integer", 0, 2**64 - 1, "0", ""),
    OptionSpec("c", False, "number", 0.0, 1e6, "sqrt 2", ""),
    OptionSpec("solver", False, "boolean", None, None, "true", ""),
    OptionSpec("merge", False, "string", None, None, "sum", ""),
    OptionSpec("width", True, "integer", 1, 35, "7", ""),
]


def test_options_are_checked_against_the_declared_specs() -> None:
    opts, params = check_settings(
        "connect4", "mcts", SPECS,
        {"playouts": 1e5, "seed": "18446744073709551615", "c": "1.5e-1", "solver": False, "merge": "vote"},
        {"width": "+5"},
    )
    assert opts["playouts"] == 100000 and isinstance(opts["playouts"], int)
    assert params == {"width": "+5"}
    bad: list[tuple[dict[str, object], dict[str, object], str]] = [
        ({"playouts": 0}, {}, "out of bounds"),
        ({"playouts": "1_000"}, {}, "malformed"),
        ({"playouts": 2.5}, {}, "malformed"),
        ({"playouts": True}, {}, "must be a whole number"),
        ({"seed": "18446744073709551616"}, {}, "out of bounds"),
        ({"seed": -1}, {}, "out of bounds"),
        ({"c": "inf"}, {}, "out of bounds"),
        ({"c": "1,5"}, {}, "malformed"),
        ({"solver": "yes"}, {}, "true or false"),
        ({"merge": ["sum"]}, {}, "string, number or boolean"),
        ({"width": 7}, {}, "unknown option 'width'"),
        ({}, {"playouts": 7}, "unknown game parameter 'playouts'"),
        ({}, {"width": 36}, "out of bounds (1 to 35)"),
    ]
    for options, game_params, message in bad:
        with pytest.raises(InvalidJob, match=message.replace("(", r"\(").replace(")", r"\)")):
            check_settings("connect4", "mcts", SPECS, options, game_params)


def mock(handler: Any, **kw: Any) -> Client:
    return Client("http://coordinator.test", token="t", transport=httpx.MockTransport(handler), **kw)


def test_error_answers_carry_the_servers_code_and_message() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        assert req.headers["authorization"] == "Bearer t"
        if req.url.path == "/v1/jobs/1":
            return httpx.Response(400, json={"error": {"code": "bad_request", "message": "no"}})
        return httpx.Response(502, text="<html>bad gateway</html>")

    c = mock(handler)
    with pytest.raises(BadRequest) as e:
        c.status(1)
    assert (e.value.status, e.value.code, e.value.message) == (400, "bad_request", "no")
    with pytest.raises(ServerError) as s:
        c.status(2)
    assert s.value.status == 502 and "bad gateway" in s.value.message


def sse(*statuses: dict[str, Any]) -> bytes:
    out = ": keep-alive\n\n"
    for st in statuses:
        kind = "end" if st["state"] in ("done", "failed", "cancelled") else "status"
        out += f"event: {kind}\ndata: {json.dumps(st)}\n\n"
    return out.encode()


def test_a_dropped_stream_is_reopened_and_the_end_read_from_the_status() -> None:
    calls = {"stream": 0, "status": 0}

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path.endswith("/events"):
            calls["stream"] += 1
            return httpx.Response(200, content=sse(status(progress={"lower": -1, "upper": 1, "probes_done": 1})))
        calls["status"] += 1
        return httpx.Response(200, json=DONE if calls["status"] >= 2 else status(progress={"lower": -1, "upper": 1, "probes_done": 1}))

    seen: list[JobStatus] = []
    final = mock(handler).follow(7, progress=seen.append)
    assert final.state == "done" and final.result is not None and final.result.value == -2
    assert calls["stream"] >= 2 and calls["status"] == 2
    # Each new status once.
    assert [s.state for s in seen] == ["running", "done"]


def test_without_a_working_stream_the_client_polls() -> None:
    calls = {"stream": 0, "status": 0}

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path.endswith("/events"):
            calls["stream"] += 1
            return httpx.Response(503, json={"error": {"code": "busy", "message": "too many streams"}})
        calls["status"] += 1
        return httpx.Response(200, json=DONE if calls["status"] >= 5 else status())

    assert mock(handler).follow(7, progress=False).state == "done"
    assert calls["stream"] == 3 and calls["status"] == 5


def test_an_unreachable_coordinator_ends_following_with_an_error() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=req)

    with pytest.raises(CoordinatorUnreachable, match="cannot reach the coordinator"):
        mock(handler, reconnect=0.3).follow(7, progress=False, timeout=30)

    async def run() -> None:
        c = AsyncClient("http://coordinator.test", transport=httpx.MockTransport(handler), reconnect=0.3)
        with pytest.raises(CoordinatorUnreachable):
            await c.wait(7, timeout=30)

    asyncio.run(run())


def test_a_failed_job_raises_with_the_coordinators_reason() -> None:
    failed = status("failed", error="task 3 failed 3 times")

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse(failed)) if req.url.path.endswith("/events") else httpx.Response(200, json=failed)

    with pytest.raises(JobFailed) as e:
        mock(handler).wait(7)
    assert e.value.reason == "task 3 failed 3 times" and e.value.status.state == "failed"


def test_analysis_order_follows_the_cli() -> None:
    r = Result.from_json({
        "game": "connect4", "algorithm": "alphabeta", "value": None, "best_move": "3", "nodes": 1, "elapsed_ms": 1,
        "moves": {"1": {"value": -1}, "2": {"lower": -3, "upper": 2}, "3": {"value": 1}, "4": {"value": 1}},
    })
    assert [m.move for m in r.moves] == ["3", "4", "1", "2"]
    assert str(r.moves[-1]) == "-3..2  (not finished)" and not r.moves[-1].exact
    mcts = Result.from_json({
        "game": "connect4", "algorithm": "mcts", "value": 0.1, "best_move": "4", "nodes": 10, "elapsed_ms": 1,
        "moves": {"1": {"visits": 0}, "4": {"visits": 9, "value": 0.25}, "7": {"visits": 1, "value": -1}},
    })
    assert [(m.move, m.visits) for m in mcts.moves] == [("4", 9), ("7", 1), ("1", 0)]
    assert str(mcts.moves[0]) == "0.25  visits 9" and str(mcts.moves[2]) == "-  visits 0"


def test_the_async_client_has_every_call_of_the_sync_one() -> None:
    from gamesolver_client import AsyncJob, Job

    def public(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_")}

    assert public(Client) - public(AsyncClient) == set()
    assert public(Job) - public(AsyncJob) == set()
